/**
 * `switchboard serve --workers N`: one gateway per core with Node's `cluster` (issue 8). The
 * workers share the listening socket (the primary hands connections out round-robin), so sessions
 * spread across them; the primary only supervises: it replaces a crashed worker, turns SIGTERM /
 * SIGINT into a drain of every worker, and aggregates their Prometheus registries so any worker's
 * `GET /metrics` shows the whole process group (each series labelled with its `worker`).
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, Registry } from "prom-client";
import type { Logger } from "../log.js";

const METRICS_REQUEST = "switchboard:metrics-request";
const METRICS_RESPONSE = "switchboard:metrics-response";
const LISTENING = "switchboard:listening";
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
}

/**
 * The primary: fork `count` workers (they re-run this CLI and serve), replace crashed ones, drain
 * them all on SIGTERM/SIGINT. Resolves with the exit code once every worker has exited.
 */
export function runPrimary(count: number, log: Logger, listening: (title: string, url: string) => void): Promise<number> {
  const aggregator = new AggregatorRegistry();
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
        listening(typeof message.title === "string" ? message.title : "the agent", message.url);
      }
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
export function joinCluster(registry: Registry, title: string, url: string): void {
  registry.setDefaultLabels({ worker: String(cluster.worker?.id ?? 0) });
  AggregatorRegistry.setRegistries([registry]);
  process.send?.({ type: LISTENING, title, url });
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
