# syntax=docker/dockerfile:1
# Switchboard gateway image: `docker build -t switchboard .` then
# `docker run -p 3000:3000 -e OPENAI_API_KEY=… switchboard` (the demo agent), or mount your agent
# and run `node dist/cli.js serve /agent --host 0.0.0.0`. See docs/deploy.md.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# @discordjs/opus (optional) builds from source when its prebuilt binary is unavailable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
# tini reaps children and forwards SIGTERM, so a drain runs; pocketsphinx is the offline STT (optional).
RUN apt-get update && apt-get install -y --no-install-recommends tini pocketsphinx pocketsphinx-en-us && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/src ./src
COPY --from=build /app/public ./public
COPY --from=build /app/examples ./examples
USER node
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/cli.js", "serve", "examples/support", "--host", "0.0.0.0", "--port", "3000"]
