# syntax=docker/dockerfile:1
# Switchboard gateway image. It runs the package `npm pack` makes, installed into a project at
# /app — the install an agent project gets (README "Use it in your project") — so an agent
# directory at /app/agent imports `switchboard` and @sinclair/typebox from /app/node_modules:
#   docker build -t switchboard .
#   docker run -p 3000:3000 switchboard                                          # the `switchboard init` agent
#   docker run -p 3000:3000 -v "$PWD/my-agent:/app/agent:ro" -e OPENAI_API_KEY=… switchboard   # your agent
# test/e2e/package-install.test.ts runs the /app steps and the ENTRYPOINT + CMD below on a packed
# install (CI has no Docker daemon). See docs/deploy.md.

FROM node:22-bookworm-slim AS build
# @discordjs/opus (optional) builds from source when its prebuilt binary is unavailable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied next.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build && npm pack --ignore-scripts && mkdir /app && mv switchboard-*.tgz /app/switchboard.tgz
# The tarball installed into an ES-module project (so an agent directory mounted without a
# package.json of its own is an ES module too), production dependencies only, and the
# default agent scaffolded beside it. The tarball stays: /app/package.json depends on it.
WORKDIR /app
RUN echo '{"private": true, "type": "module"}' > package.json
RUN npm install --omit=dev --no-audit --no-fund ./switchboard.tgz
RUN npx switchboard init agent

FROM node:22-bookworm-slim
# tini reaps children and forwards SIGTERM, so a drain runs; pocketsphinx is the offline STT (optional).
RUN apt-get update && apt-get install -y --no-install-recommends tini pocketsphinx pocketsphinx-en-us && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PATH=/app/node_modules/.bin:$PATH
COPY --from=build /app ./
USER node
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--", "switchboard"]
CMD ["serve", "/app/agent", "--host", "0.0.0.0", "--port", "3000"]
