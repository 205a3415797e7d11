/**
 * `switchboard serve --workers N`: one gateway per core with Node's `cluster` (issue 8). The
 * workers share the listening socket (the primary hands connections out round-robin), so sessions
 * spread across them; the primary only supervises: it replaces a crashed worker, turns SIGTERM /
 * SIGINT into a drain of every worker, and aggregates their Prometheus registries so any worker's
 * `GET /metrics` shows the whole process group (each series labelled with its `worker`), and holds
 * the group's `Coordinator` (call tickets, replays, connection budgets) so that a call whose
 * webhook one worker answered can stream to another.
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, Registry } from "prom-client";
import type { Logger } from "../log.js";
import { MemoryCoordinator, type Coordinator } from "./coordination.js";

const METRICS_REQUEST = "switchboard:metrics-request";
const METRICS_RESPONSE = "switchboard:metrics-response";
const LISTENING = "switchboard:listening";
const COORD_REQUEST = "switchboard:coord-request";
const COORD_RESPONSE = "switchboard:coord-response";
/** A worker that dies sooner than this after its start counts as failing to start (ms). */
const EARLY_DEATH_MS = 5000;
/** Give up after this many early deaths in a row: something is wrong with every worker (a port in use, a bad agent). */
const MAX_EARLY_DEATHS = 5;

interface Message {
  readonly type?: unknown;
  readonly id?: unknown;
  readonly text?: unknown;
  readonly error?: unknown;
  readonly url?: unknown;
  readonly title?: unknown;
  readonly open?: unknown;
  readonly serves?: { readonly sessions?: unknown; readonly workflows?: unknown };
  readonly op?: unknown;
  readonly args?: unknown;
  readonly result?: unknown;
}

type CoordinatorOp = keyof Coordinator;
const COORDINATOR_OPS: readonly CoordinatorOp[] = ["hold", "take", "admit"];

/** Run one worker's coordinator request on the primary's coordinator; undefined when the request is malformed. */
async function coordinate(coordinator: Coordinator, op: unknown, args: unknown): Promise<unknown> {
  if (!Array.isArray(args) || !COORDINATOR_OPS.includes(op as CoordinatorOp)) return undefined;
  const [a, b, c] = args as unknown[];
  if (op === "hold" && typeof a === "string" && typeof b === "string" && typeof c === "number") return coordinator.hold(a, b, c);
  if (op === "take" && typeof a === "string") return coordinator.take(a);
  if (op === "admit" && typeof a === "string" && typeof b === "number") return coordinator.admit(a, b);
  return undefined;
}

/**
 * The primary: fork `count` workers (they re-run this CLI and serve), replace crashed ones, drain
 * them all on SIGTERM/SIGINT. Resolves with the exit code once every worker has exited.
 */
export function runPrimary(count: number, log: Logger, listening: (title: string, url: string, open: readonly string[], serves: { readonly sessions: boolean; readonly workflows: boolean }) => void): Promise<number> {
  const aggregator = new AggregatorRegistry();
  const coordinator = new MemoryCoordinator(() => Date.now());
  const started = new Map<number, number>();
  let stopping = false;
  let earlyDeaths = 0;
  let announced = false;
  const ready = new Set<number>();

  const fork = (): void => {
    const worker = cluster.fork();
    started.set(worker.id, Date.now());
  };

  cluster.on("message", (worker: Worker, message: Message) => {
    // Announced once every worker listens: before that, connections would all land on the ready ones.
    if (message.type === LISTENING && typeof message.url === "string") {
      ready.add(worker.id);
      if (!announced && ready.size >= count) {
        announced = true;
        const open = Array.isArray(message.open) ? message.open.filter((e): e is string => typeof e === "string") : [];
        const serves = { sessions: message.serves?.sessions !== false, workflows: message.serves?.workflows === true };
        listening(typeof message.title === "string" ? message.title : "the agent", message.url, open, serves);
      }
    }
    if (message.type === COORD_REQUEST) {
      coordinate(coordinator, message.op, message.args).then(
        (result) => worker.send({ type: COORD_RESPONSE, id: message.id, result }),
        (error: unknown) => worker.send({ type: COORD_RESPONSE, id: message.id, error: String(error) }),
      );
      return;
    }
    if (message.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_RESPONSE, id: message.id, text }),
      (error: unknown) => worker.send({ type: METRICS_RESPONSE, id: message.id, error: String(error) }),
    );
  });

  return new Promise((resolve) => {
    cluster.on("exit", (worker, code, signal) => {
      const lived = Date.now() - (started.get(worker.id) ?? 0);
      started.delete(worker.id);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
        return;
      }
      earlyDeaths = lived < EARLY_DEATH_MS ? earlyDeaths + 1 : 0;
      if (earlyDeaths >= MAX_EARLY_DEATHS) {
        log.error({ code, signal, deaths: earlyDeaths }, "workers keep dying at start; giving up");
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.kill("SIGTERM");
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve(1);
        return;
      }
      log.warn({ worker: worker.id, code, signal }, "worker exited; starting a replacement");
      setTimeout(fork, earlyDeaths > 0 ? 1000 : 0).unref();
    });
    const stop = (signal: string): void => {
      if (stopping) process.exit(1);
      stopping = true;
      log.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, "draining workers");
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
    for (let i = 0; i < count; i++) fork();
  });
}

/** In a worker, first thing: answer the primary's aggregation requests (with nothing yet, until `joinCluster`). */
export function prepareWorker(): void {
  AggregatorRegistry.setRegistries([new Registry()]);
  // Constructing one installs prom-client's worker-side listener for the primary's requests.
  new AggregatorRegistry();
}

/** In a worker, once it listens: label its series, aggregate its registry, and tell the primary. */
export function joinCluster(registry: Registry, title: string, url: string, open: readonly string[], serves: { readonly sessions: boolean; readonly workflows: boolean }): void {
  registry.setDefaultLabels({ worker: String(cluster.worker?.id ?? 0) });
  AggregatorRegistry.setRegistries([registry]);
  process.send?.({ type: LISTENING, title, url, open, serves });
}

let nextRequest = 0;

/** In a worker: the whole group's metrics, aggregated by the primary (rejects after `timeoutMs`). */
export function clusterMetrics(timeoutMs = 5000): Promise<string> {
  const id = ++nextRequest;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off("message", onMessage);
      reject(new Error("the primary did not answer the metrics request"));
    }, timeoutMs);
    const onMessage = (message: Message): void => {
      if (message.type !== METRICS_RESPONSE || message.id !== id) return;
      clearTimeout(timer);
      process.off("message", onMessage);
      if (typeof message.text === "string") resolve(message.text);
      else reject(new Error(typeof message.error === "string" ? message.error : "metrics aggregation failed"));
    };
    process.on("message", onMessage);
    process.send?.({ type: METRICS_REQUEST, id });
  });
}

/**
 * In a worker: the group's coordinator, held by the primary and reached over the cluster's IPC
 * (a round trip of well under a millisecond on one machine). A request the primary does not
 * answer within `timeoutMs` rejects: callers refuse what they cannot check.
 */
export function clusterCoordinator(timeoutMs = 2000): Coordinator {
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let next = 0;
  process.on("message", (message: Message) => {
    if (message.type !== COORD_RESPONSE || typeof message.id !== "number") return;
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (typeof message.error === "string") waiting.reject(new Error(message.error));
    else waiting.resolve(message.result);
  });
  const ask = (op: CoordinatorOp, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer the ${op} request within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      process.send?.({ type: COORD_REQUEST, id, op, args });
    });
  return {
    hold: async (key, value, ttlMs) => (await ask("hold", [key, value, ttlMs])) === true,
    take: async (key) => {
      const result = await ask("take", [key]);
      return typeof result === "string" ? result : undefined;
    },
    admit: async (address, perMinute) => (await ask("admit", [address, perMinute])) === true,
  };
}
