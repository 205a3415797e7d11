import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** The package's own name means its source here, as tsconfig.json "paths" says for tsc and tsx. */
const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^switchboard$/, replacement: source("./src/index.ts") },
      { find: /^switchboard\/manifest$/, replacement: source("./src/manifest/index.ts") },
      { find: /^switchboard\/ai$/, replacement: source("./src/ai.ts") },
      { find: /^switchboard\/testing$/, replacement: source("./src/testing/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    // Sessions and sockets are per test; isolation by file keeps fake servers apart.
    pool: "forks",
  },
});
