/**
 * The process's shared pool of local TTS workers (flite and eSpeak-NG run in worker threads, never
 * on the gateway's event loop): sentences queue first come, first served; a worker that dies is
 * replaced and its sentence retried, at most `MAX_CRASHES_PER_SENTENCE` times. `shutdownLocalTts()`
 * terminates it (tests, process exit); the next use starts a new one.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { LOCAL_TTS_WORKER, type LocalVoice, type Speech, type WorkerReply, type WorkerRequest } from "./local-worker.js";
import { spread } from "../../../spread.js";

/** Workers in the shared pool: at most this many, and no more than the cores. */
const MAX_WORKERS = 2;
/** A sentence whose worker dies is tried again on a new one; after this many deaths it fails. */
const MAX_CRASHES_PER_SENTENCE = 2;

/** Build the local TTS provider. Throws a fatal GatewayError for a bad `voice` or `speed`. */

/** Terminate the shared worker pool: its pending sentences fail. The next use starts a new one. */
export async function shutdownLocalTts(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.shutdown();
}

/** What the shared pool holds now, and how many workers it has started (more than its size: some died). */
export interface LocalTtsPoolStats {
  readonly workers: number;
  readonly busy: number;
  readonly queued: number;
  readonly started: number;
}

/** The shared pool's state (monitoring, tests); all zero when there is none. */
export function localTtsPoolStats(): LocalTtsPoolStats {
  return pool?.stats() ?? { workers: 0, busy: 0, queued: 0, started: 0 };
}

/** Tests only: make a worker of the pool crash (an uncaught error in it), a busy one if any. False when there is none. */
export function crashLocalTtsWorkerForTesting(): boolean {
  return pool?.crashOne() ?? false;
}

/** Tests only: the next sentence handed to the pool kills every worker that takes it (a poisoned sentence). */
export function poisonNextLocalTtsSentenceForTesting(): void {
  poisonNext = true;
}
let poisonNext = false;

export type SynthesisRequest = Omit<Extract<WorkerRequest, { type: "synthesize" }>, "type" | "id">;

/** One sentence for the pool. `cancel` drops it while queued; its `result` then rejects. */
export interface PoolJob {
  readonly result: Promise<Speech>;
  cancel(): void;
}

interface Job {
  readonly id: number;
  readonly request: SynthesisRequest;
  readonly resolve: (speech: Speech) => void;
  readonly reject: (error: Error) => void;
  /** Workers that died holding it. */
  crashes: number;
  /** Its stream no longer wants it: not retried after a crash. */
  cancelled: boolean;
  /** Tests: it kills the worker that takes it. */
  readonly poison: boolean;
}

interface Slot {
  readonly worker: Worker;
  /** The job it is running (one at a time). */
  job: Job | undefined;
  /** Terminated on purpose: its exit is not a crash. */
  retired: boolean;
  /** The uncaught error that killed it, reported by 'error' before 'exit'. */
  crash: Error | undefined;
}

let pool: WorkerPool | undefined;

export function sharedPool(log: ProviderLog): WorkerPool {
  pool ??= new WorkerPool(Math.max(1, Math.min(MAX_WORKERS, availableParallelism())), log);
  return pool;
}

class WorkerPool {
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #started = 0;

  constructor(
    readonly size: number,
    private readonly log: ProviderLog,
  ) {}

  synthesize(request: SynthesisRequest): PoolJob {
    let job: Job | undefined;
    const result = new Promise<Speech>((resolve, reject) => {
      job = { id: this.#nextId++, request, resolve, reject, crashes: 0, cancelled: false, poison: poisonNext && request.text !== "" };
    });
    if (job === undefined) throw new Error("unreachable");
    if (job.poison) poisonNext = false;
    const queued = job;
    this.#queue.push(queued);
    this.#dispatch();
    return {
      result,
      cancel: () => {
        queued.cancelled = true;
        const index = this.#queue.indexOf(queued);
        if (index < 0) return; // in a worker: its reply is ignored by the stream
        this.#queue.splice(index, 1);
        queued.reject(new GatewayError("tts", "local tts: cancelled"));
      },
    };
  }

  /** Start a worker and load the voice in it, if none is running yet: the first sentence then waits less. */
  warm(voice: LocalVoice): void {
    if (this.#slots.size > 0 || this.#queue.length > 0) return;
    this.synthesize({ voice, text: "", speed: 1 }).result.catch((error: unknown) => this.log.warn({ err: error }, "local tts: warming a worker failed"));
  }

  stats(): LocalTtsPoolStats {
    const slots = [...this.#slots];
    return { workers: slots.length, busy: slots.filter((s) => s.job !== undefined).length, queued: this.#queue.length, started: this.#started };
  }

  crashOne(): boolean {
    const slots = [...this.#slots];
    const slot = slots.find((s) => s.job !== undefined) ?? slots[0];
    if (slot === undefined) return false;
    const request: WorkerRequest = { type: "crash" };
    slot.worker.postMessage(request);
    return true;
  }

  async shutdown(): Promise<void> {
    const slots = [...this.#slots];
    this.#slots.clear();
    const error = new GatewayError("tts", "local tts: the synthesis pool was shut down.");
    for (const job of this.#queue.splice(0)) job.reject(error);
    for (const slot of slots) {
      slot.retired = true;
      slot.job?.reject(error);
      slot.job = undefined;
    }
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Give queued jobs to idle workers, starting workers up to the pool's size. */
  #dispatch(): void {
    for (let job = this.#queue[0]; job !== undefined; job = this.#queue[0]) {
      let slot = [...this.#slots].find((s) => s.job === undefined && !s.retired);
      if (slot === undefined && this.#slots.size < this.size) {
        try {
          slot = this.#spawn();
        } catch (error) {
          const failure = new GatewayError("tts", `local tts: could not start a synthesis worker: ${messageOf(error)}`, { cause: error });
          for (const queued of this.#queue.splice(0)) queued.reject(failure);
          return;
        }
      }
      if (slot === undefined) return; // all busy: the next reply dispatches
      this.#queue.shift();
      slot.job = job;
      slot.worker.ref(); // a sentence in progress keeps the process alive
      const request: WorkerRequest = { type: "synthesize", id: job.id, ...job.request, ...(job.poison ? { poison: true } : {}) };
      slot.worker.postMessage(request);
    }
  }

  #spawn(): Slot {
    const worker = startWorker();
    this.#started++;
    const slot: Slot = { worker, job: undefined, retired: false, crash: undefined };
    this.#slots.add(slot);
    worker.unref();
    worker.on("message", (reply: WorkerReply) => this.#onReply(slot, reply));
    worker.on("error", (error) => {
      slot.crash = error;
    });
    worker.on("exit", (code) => this.#onExit(slot, code));
    return slot;
  }

  #onReply(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (job === undefined || job.id !== reply.id) return;
    slot.job = undefined;
    slot.worker.unref();
    if (reply.type === "speech") job.resolve({ samples: reply.samples, sampleRate: reply.sampleRate, words: reply.words });
    else job.reject(new GatewayError("tts", `local tts: ${reply.message}`));
    this.#dispatch();
  }

  #onExit(slot: Slot, code: number): void {
    this.#slots.delete(slot);
    if (slot.retired) return;
    const reason = slot.crash === undefined ? `exited with code ${code}` : `crashed: ${slot.crash.message}`;
    this.log.warn({ err: slot.crash, code }, "local tts: a synthesis worker died; it is replaced");
    const job = slot.job;
    slot.job = undefined;
    if (job !== undefined && !job.cancelled && ++job.crashes < MAX_CRASHES_PER_SENTENCE) this.#queue.unshift(job); // first in line on a new worker
    else job?.reject(new GatewayError("tts", `local tts: the synthesis worker ${reason}`, { cause: slot.crash }));
    this.#dispatch(); // jobs waiting for a worker get a new one
  }
}

/**
 * The worker entry next to this file: local-worker.ts under tsx (dev, tests), local-worker.js in
 * the compiled dist/. Picked by what exists, this file's own extension first.
 */
function workerEntry(): URL {
  const own = import.meta.url.endsWith(".ts") ? [".ts", ".js"] : [".js", ".ts"];
  for (const extension of own) {
    const entry = new URL(`./local-worker${extension}`, import.meta.url);
    if (existsSync(fileURLToPath(entry))) return entry;
  }
  throw new Error(`no local-worker.js or local-worker.ts next to ${fileURLToPath(import.meta.url)}`);
}

function startWorker(): Worker {
  const entry = workerEntry();
  // No flags of the parent's (a V8 or tsx flag there is no business of the worker's).
  const options = { workerData: LOCAL_TTS_WORKER, execArgv: [] };
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, options);
  // TypeScript source: Node 20 does not apply `--import tsx` from a worker's execArgv to its entry
  // (ERR_UNKNOWN_FILE_EXTENSION), so the worker registers tsx's loader itself, then imports the entry.
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, spread(options, { eval: true }));
}
