/** `switchboard serve <agent>` and `switchboard start` (the bundled demo agent). */
import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createLogger, type Logger } from "../log.js";
import type { Gateway, GatewayOptions } from "../server/gateway-types.js";
import type { LoadedAgent } from "../server/loader.js";
import { clusterCoordinator, clusterMetrics, joinCluster, prepareWorker, runPrimary } from "../server/workers.js";
import { wsMasking } from "../server/ws-masking.js";
import { describe, EXIT, fail, flag, text, type Command, type Values } from "./command.js";
import { dotEnvFor, type DotEnvResult } from "./env.js";

// The gateway and the loader load on demand: a `--workers` primary only supervises, and should
// not hold the whole gateway in memory.
const server = () => import("../server/index.js");
const loader = () => import("../server/loader.js");

const DEMO_AGENT = fileURLToPath(new URL("../../examples/support", import.meta.url));

const SERVE_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  offline: { type: "boolean" },
  workers: { type: "string" },
  "allowed-origins": { type: "string" },
} as const;

const SERVE_HELP = `      --port <n>              port to listen on (default 3000; 0 picks a free one)
      --host <addr>           address to bind (default 127.0.0.1)
      --offline               run on the offline stack even when keys are set
      --workers <n>           one gateway process per core (default: the number of cores when
                              SWITCHBOARD_REDIS_URL is set, else 1: resume needs a shared store)
      --allowed-origins <list>  browser origins allowed on /websocket, comma-separated
                              (default: SWITCHBOARD_ALLOWED_ORIGINS, else any)
`;

/** What a gateway serves: voice sessions (the demo page, `/websocket`), the workflows API, or both. */
export interface Serves {
  readonly sessions: boolean;
  readonly workflows: boolean;
}

/**
 * What `serve` prints once it listens; `open` lists the entry points anyone who reaches the port
 * can use; `serves` says which of the demo page and client protocol, and the workflows API, it shows.
 */
export function banner(title: string, url: string, workers: number, open: readonly string[], serves: Serves = { sessions: true, workflows: false }): string {
  const processes = workers > 1 ? `, ${workers} worker processes` : "";
  // Each open carrier's webhook and stream, said once by the carrier's name.
  const carriers = [...new Set(open.flatMap((e) => /^(?:WS )?\/telephony\/([a-z]+)/.exec(e)?.[1] ?? []))];
  const others = open.filter((e) => !/^(?:WS )?\/telephony\//.test(e));
  const listed = [...others, ...(carriers.length === 0 ? [] : [`telephony (${carriers.join(", ")})`])];
  const warning = listed.length === 0 ? "" : `  unauthenticated: ${listed.join(", ")} — see docs/security.md\n`;
  const sessions = serves.sessions ? `  ${url}/               the demo page\n  ${url.replace(/^http/, "ws")}/websocket  the client protocol\n` : "";
  const workflows = serves.workflows ? `  ${url}/workflows      the workflows API\n` : "";
  return `\nSwitchboard is serving ${title}${processes}\n${sessions}${workflows}${warning}\n`;
}

/** `--port` as a number (default 3000), or the message saying why it is not one. */
export function portOf(value: string | undefined): number | { readonly error: string } {
  const port = value === undefined ? 3000 : Number(value);
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : { error: `--port must be a port number (got ${value}).` };
}

/** What to tell someone whose gateway could not listen: a port in use names the flag that picks another. */
export function cannotListen(host: string, port: number, error: unknown): string {
  const where = `cannot listen on ${host}:${port}`;
  if ((error as NodeJS.ErrnoException | undefined)?.code === "EADDRINUSE") return `${where}: the port is in use; pass --port <n> (0 picks a free one)`;
  return `${where}: ${describe(error)}`;
}

/** Log which `.env` files were loaded, by name (never their values); once per process group. */
export function logDotEnv(log: Logger, loaded: DotEnvResult): void {
  if (loaded.files.length > 0 && !cluster.isWorker) log.info({ files: loaded.files, variables: loaded.variables }, "loaded .env files");
}

/** SIGTERM / SIGINT drain the gateway and exit 0 (1 if the drain fails); a second signal exits 1 at once. */
export function stopOnSignals(log: Logger, drain: () => Promise<void>, before: () => void = () => {}): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.exit(EXIT.failed);
    }
    stopping = true;
    before();
    log.info({ signal }, "shutting down");
    drain().then(
      () => process.exit(EXIT.ok),
      (err: unknown) => {
        log.error({ err }, "drain failed");
        process.exit(EXIT.failed);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

async function serve(path: string, values: Values, loaded: DotEnvResult): Promise<number> {
  const flags = { port: text(values, "port"), host: text(values, "host"), workers: text(values, "workers"), origins: text(values, "allowed-origins"), offline: flag(values, "offline") };
  const port = portOf(flags.port);
  if (typeof port !== "number") return fail(port.error, EXIT.usage);
  const host = flags.host ?? "127.0.0.1";
  // Read after the .env files: SWITCHBOARD_REDIS_URL may come from one.
  const defaultWorkers = (process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? 1 : availableParallelism();
  const workers = flags.workers === undefined ? defaultWorkers : Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) return fail(`--workers must be a whole number from 1 to 256 (got ${flags.workers}).`, EXIT.usage);
  const log = createLogger();
  logDotEnv(log, loaded);
  if (workers > 1 && cluster.isPrimary) {
    if ((process.env.SWITCHBOARD_REDIS_URL ?? "") === "") log.warn({ workers }, "several workers without SWITCHBOARD_REDIS_URL: a client resumes only if it reconnects to the same worker");
    return runPrimary(workers, log, (title, url, open, serves) => process.stdout.write(banner(title, url, workers, open, serves)));
  }
  const worker = cluster.isWorker;
  // Answer the primary's metrics requests from the start, so an aggregation never waits on a worker still loading.
  if (worker) prepareWorker();
  const made = await gatewayFor(path, {
    log,
    offline: flags.offline,
    origins: flags.origins,
    logger: worker ? log.child({ worker: cluster.worker?.id }) : log,
    // Every worker sees the same call tickets, replays and connection budgets (Redis, when set, holds them instead).
    ...(worker ? { metricsText: () => clusterMetrics(), ...((process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? { coordinator: clusterCoordinator() } : {}) } : {}),
  });
  if (typeof made === "number") return made;
  const { gateway } = made;
  // Runs in a directory are one process's: several would each resume the same runs. A database is shared (docs/workflows.md "Where runs live").
  if (workers > 1 && Object.keys(made.agent.def.workflows ?? {}).length > 0 && (process.env.SWITCHBOARD_WORKFLOWS_DATABASE_URL ?? "").trim() === "") {
    return fail(`this agent declares workflows, and their runs are kept in a directory one process owns: serve it with --workers 1, or keep runs in PostgreSQL (SWITCHBOARD_WORKFLOWS_DATABASE_URL) so every worker shares them (docs/workflows.md "Where runs live").`, EXIT.usage);
  }
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "::1" && (process.env.SWITCHBOARD_API_KEY ?? "") === "") {
    log.warn({ host }, "auth is off on a non-loopback address: set SWITCHBOARD_API_KEY");
  }
  // Said once: by the process, or by the first of its workers.
  const masking = wsMasking();
  if (!masking.native && (!worker || cluster.worker?.id === 1)) log.warn({ why: masking.why }, "ws masks WebSocket frames in JavaScript, about ten times bufferutil's CPU: npm install bufferutil (docs/deploy.md)");
  const listening = await listenOn(gateway, host, port);
  if (typeof listening === "number") return listening;
  const { url, title, open, serves } = listening;
  if (worker) joinCluster(gateway.metrics.registry, title, url, open, serves);
  else process.stdout.write(banner(title, url, 1, open, serves));
  stopOnSignals(log, () => gateway.drain());
  return new Promise<number>(() => {});
}


/** How `serve` and `dev` make a gateway: the flags, the logger (warnings go to `log`), and anything else `createGateway` takes. */
export type GatewayFlags = Partial<GatewayOptions> & { readonly log: Logger; readonly offline: boolean; readonly origins: string | undefined };

/** The agent at `path` loaded and its gateway made; or, said already, the exit code of a failure. */
export async function gatewayFor(path: string, flags: GatewayFlags): Promise<{ agent: LoadedAgent; gateway: Gateway } | number> {
  const { log, offline, origins, ...options } = flags;
  const { loadAgent } = await loader();
  const { createGateway } = await server();
  try {
    const agent = await loadAgent(path, { warn: (message) => log.warn({}, message) });
    const allowedOrigins = origins?.split(",").map((o) => o.trim()).filter((o) => o !== "");
    const gateway = createGateway({
      agent: agent.def,
      script: agent.script,
      waitingAudio: agent.waitingAudio,
      offline: offline ? true : "auto",
      logger: log,
      ...(allowedOrigins === undefined ? {} : { allowedOrigins }),
      ...options,
    });
    return { agent, gateway };
  } catch (error) {
    return fail(describe(error));
  }
}

/** A listening gateway's URL and what its banner says of it; or, said already, the exit code of a failure to listen. */
export async function listenOn(gateway: Gateway, host: string, port: number): Promise<{ url: string; title: string; open: string[]; serves: Serves } | number> {
  let url: string;
  try {
    ({ url } = await gateway.listen(port, host));
  } catch (error) {
    return fail(cannotListen(host, port, error));
  }
  const { config } = gateway;
  const title = `"${config.name}" (${config.mode}${config.llm?.kind === "scripted" ? ", offline demo brain" : ""})`;
  const serves: Serves = { sessions: config.mode !== "workflow-app", workflows: gateway.entryPoints.some((e) => e.entry === "GET /workflows") };
  return { url, title, open: gateway.entryPoints.filter((e) => e.open).map((e) => e.entry), serves };
}

/**
 * A command's `run` for `<agent>`: refused (exit 2) without one, else the `.env` files loaded
 * (src/cli/env.ts) before `serve` runs; `fallback` stands in for a missing agent (`start`).
 */
export function agentRun(verb: string, serve: (agent: string, values: Values, loaded: DotEnvResult) => Promise<number>, fallback?: string): Command["run"] {
  return ([target = fallback], values) => {
    if (target === undefined) return Promise.resolve(fail(`${verb} needs an agent directory or file.`, EXIT.usage));
    const loaded = dotEnvFor(target);
    return "error" in loaded ? Promise.resolve(fail(loaded.error)) : serve(target, values, loaded);
  };
}

export const serveCommand: Command = {
  name: "serve",
  args: "<agent-dir-or-file>",
  summary: "run the gateway for an agent",
  optionHelp: SERVE_HELP,
  options: SERVE_OPTIONS,
  run: agentRun("serve", serve),
};

export const startCommand: Command = {
  name: "start",
  args: "",
  summary: "serve the bundled demo agent (examples/support)",
  optionHelp: SERVE_HELP,
  options: SERVE_OPTIONS,
  run: agentRun("start", serve, DEMO_AGENT),
};
