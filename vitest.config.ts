import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    // Sessions and sockets are per test; isolation by file keeps fake servers apart.
    pool: "forks",
  },
});
