/** `switchboard serve <agent>` and `switchboard start` (the bundled demo agent). */
import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createLogger } from "../log.js";
import { clusterCoordinator, clusterMetrics, joinCluster, prepareWorker, runPrimary } from "../server/workers.js";
import { describe, EXIT, fail, flag, text, type Command, type Values } from "./command.js";

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

/** What `serve` prints once it listens; `open` lists the entry points anyone who reaches the port can use. */
function banner(title: string, url: string, workers: number, open: readonly string[]): string {
  const processes = workers > 1 ? `, ${workers} worker processes` : "";
  // Each open carrier's webhook and stream, said once by the carrier's name.
  const carriers = [...new Set(open.flatMap((e) => /^(?:WS )?\/telephony\/([a-z]+)/.exec(e)?.[1] ?? []))];
  const others = open.filter((e) => !/^(?:WS )?\/telephony\//.test(e));
  const listed = [...others, ...(carriers.length === 0 ? [] : [`telephony (${carriers.join(", ")})`])];
  const warning = listed.length === 0 ? "" : `  unauthenticated: ${listed.join(", ")} — see docs/security.md\n`;
  return `\nSwitchboard is serving ${title}${processes}\n  ${url}/               the demo page\n  ${url.replace(/^http/, "ws")}/websocket  the client protocol\n${warning}\n`;
}

async function serve(path: string, values: Values, defaultWorkers = 1): Promise<number> {
  const flags = { port: text(values, "port"), host: text(values, "host"), workers: text(values, "workers"), origins: text(values, "allowed-origins"), offline: flag(values, "offline") };
  const log = createLogger();
  const port = flags.port === undefined ? 3000 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail(`--port must be a port number (got ${flags.port}).`);
  const host = flags.host ?? "127.0.0.1";
  const workers = flags.workers === undefined ? defaultWorkers : Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) return fail(`--workers must be a whole number from 1 to 256 (got ${flags.workers}).`);
  if (workers > 1 && cluster.isPrimary) {
    if ((process.env.SWITCHBOARD_REDIS_URL ?? "") === "") log.warn({ workers }, "several workers without SWITCHBOARD_REDIS_URL: a client resumes only if it reconnects to the same worker");
    return runPrimary(workers, log, (title, url, open) => process.stdout.write(banner(title, url, workers, open)));
  }
  const worker = cluster.isWorker;
  // Answer the primary's metrics requests from the start, so an aggregation never waits on a worker still loading.
  if (worker) prepareWorker();
  const { loadAgent } = await loader();
  const { createGateway } = await server();
  let agent;
  try {
    agent = await loadAgent(path, { warn: (message) => log.warn({}, message) });
  } catch (error) {
    return fail(describe(error));
  }
  const origins = flags.origins?.split(",").map((o) => o.trim()).filter((o) => o !== "");
  let gateway;
  try {
    gateway = createGateway({
      agent: agent.def,
      script: agent.script,
      offline: flags.offline ? true : "auto",
      logger: worker ? log.child({ worker: cluster.worker?.id }) : log,
      ...(origins === undefined ? {} : { allowedOrigins: origins }),
      // Every worker sees the same call tickets, replays and connection budgets (Redis, when set, holds them instead).
      ...(worker ? { metricsText: () => clusterMetrics(), ...((process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? { coordinator: clusterCoordinator() } : {}) } : {}),
    });
  } catch (error) {
    return fail(describe(error));
  }
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "::1" && (process.env.SWITCHBOARD_API_KEY ?? "") === "") {
    log.warn({ host }, "auth is off on a non-loopback address: set SWITCHBOARD_API_KEY");
  }
  let url: string;
  try {
    ({ url } = await gateway.listen(port, host));
  } catch (error) {
    return fail(`cannot listen on ${host}:${port}: ${describe(error)}`);
  }
  const { config } = gateway;
  const title = `"${config.name}" (${config.mode}${config.llm?.kind === "scripted" ? ", offline demo brain" : ""})`;
  const open = gateway.entryPoints.filter((e) => e.open).map((e) => e.entry);
  if (worker) joinCluster(gateway.metrics.registry, title, url, open);
  else process.stdout.write(banner(title, url, 1, open));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    gateway.drain().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "drain failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  return new Promise<number>(() => {});
}


export const serveCommand: Command = {
  name: "serve",
  args: "<agent-dir-or-file>",
  summary: "run the gateway for an agent",
  optionHelp: SERVE_HELP,
  options: SERVE_OPTIONS,
  run: ([target], values) => {
    if (target === undefined) return Promise.resolve(fail("serve needs an agent directory or file.", EXIT.usage));
    return serve(target, values, (process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? 1 : availableParallelism());
  },
};

export const startCommand: Command = {
  name: "start",
  args: "",
  summary: "serve the bundled demo agent (examples/support)",
  optionHelp: SERVE_HELP,
  options: SERVE_OPTIONS,
  run: ([target], values) => serve(target ?? DEMO_AGENT, values),
};
