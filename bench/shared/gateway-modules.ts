/**
 * Where a bench takes the gateway it hosts from: its sources through tsx (the default), this
 * checkout's build (`--dist`, as deployed: run `npm run build` first) or another checkout's build
 * (`--dist-of DIR`, for a before/after). `dist/` is `src/` compiled, so the API is the same.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as LogModule from "../../src/log.js";
import type * as ManifestModule from "../../src/manifest/index.js";
import type * as ServerModule from "../../src/server/index.js";
import { flagValue } from "./common.js";

export interface GatewaySource {
  readonly gatewayRoot: URL;
  readonly gatewayFrom: "src" | "dist";
}

/** The gateway's root from `--dist` / `--dist-of DIR` (default: the sources). */
export function gatewaySource(argv: readonly string[]): GatewaySource {
  const other = flagValue(argv, "dist-of");
  if (other !== undefined) return { gatewayRoot: pathToFileURL(`${resolve(other, "dist")}/`), gatewayFrom: "dist" };
  return argv.includes("--dist") ? { gatewayRoot: new URL("../../dist/", import.meta.url), gatewayFrom: "dist" } : { gatewayRoot: new URL("../../src/", import.meta.url), gatewayFrom: "src" };
}

/** How a report says where the gateway came from. */
export function gatewayFromText(from: GatewaySource["gatewayFrom"]): string {
  return from === "dist" ? "built (`dist/`, as deployed)" : "from its sources through tsx";
}

/** The gateway's modules a bench hosts it with, from `root`. */
export async function gatewayModules(root: URL) {
  if (root.pathname.endsWith("/dist/") && !existsSync(new URL("server/index.js", root))) throw new Error(`no ${fileURLToPath(root)}server/index.js: run \`npm run build\` in that checkout first`);
  const [log, manifest, server] = await Promise.all([
    import(new URL("log.js", root).href) as Promise<typeof LogModule>,
    import(new URL("manifest/index.js", root).href) as Promise<typeof ManifestModule>,
    import(new URL("server/index.js", root).href) as Promise<typeof ServerModule>,
  ]);
  return { createLogger: log.createLogger, agent: manifest.agent, createGateway: server.createGateway };
}
