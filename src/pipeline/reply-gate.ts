import { durationMs } from "../audio/pcm.js";
import type { Clock, Timer } from "../clock.js";
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import type { PlaybackClock } from "../turn/playback-clock.js";
import { heardOf } from "./heard-cursor.js";
import { joinSpoken } from "./join-spoken.js";
import type { TtsSession, TtsStream, WordTiming } from "./tts-port.js";

/** Model speech (the reply itself) or filler (tool lines, dead-air cover, the error phrase). */
export type SpeechKind = "model" | "filler";

export interface ReplyGateDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly tts: TtsSession;
  /** The only playback estimator: every chunk that leaves is queued on it. */
  readonly playback: PlaybackClock;
  readonly emit: (event: EventBody) => void;
  /** Agent audio to the client, PCM16 at `tts.sampleRate`. */
  readonly audio: (pcm: Uint8Array, durationMs: number) => void;
  /** False once another reply took the floor: late audio of this one is dropped. */
  readonly current: () => boolean;
  readonly closed: () => boolean;
  /** A chunk left (its first model chunk makes the reply audible; dead-air cover re-arms). */
  readonly sent: (kind: SpeechKind) => void;
}

/**
 * One reply's way out: its TTS streams, the gate (open until barge-in or cancel), audio held
 * until `releaseAt` (the start-speaking floor, the post-interruption backoff), and what the
 * model has said and sent so far — the inputs of the heard cursor.
 */
export class ReplyGate {
  readonly #deps: ReplyGateDeps;
  #open = true;
  #held: { readonly pcm: Uint8Array; readonly ms: number; readonly kind: SpeechKind }[] = [];
  readonly #releaseAt: number;
  #releaseTimer: Timer | undefined;
  readonly #streams = new Set<TtsStream>();
  #idleWaiters: (() => void)[] = [];
  /** Everything the model said so far, as pushed to TTS (what the heard cursor measures). */
  #modelText = "";
  #modelAudioMs = 0;
  readonly #modelWords: WordTiming[] = [];
  #firstAudioAt: number | undefined;

  /** `releaseAt`: epoch ms before which audio is held (the floor, or the backoff after a barge-in). */
  constructor(deps: ReplyGateDeps, releaseAt: number) {
    this.#deps = deps;
    this.#releaseAt = releaseAt;
  }

  get open(): boolean {
    return this.#open;
  }

  /** Nothing held back: all audio of the reply so far has left. */
  get empty(): boolean {
    return this.#held.length === 0;
  }

  /** When the reply's first model audio left (epoch ms). */
  get firstAudioAt(): number | undefined {
    return this.#firstAudioAt;
  }

  /** Text the model is speaking, appended as it goes to TTS. */
  addModelText(text: string): void {
    this.#modelText = joinSpoken([this.#modelText, text]);
  }

  /** The prefix of the model's speech heard at `heardMs` of its audio. */
  heard(heardMs: number): string {
    return heardOf({ text: this.#modelText, kind: "model", audioMs: this.#modelAudioMs, startMs: 0, words: this.#modelWords }, heardMs);
  }

  /** A TTS stream whose audio passes this gate. */
  stream(kind: SpeechKind): TtsStream {
    const { tts, log, emit } = this.#deps;
    const ref: { stream?: TtsStream } = {};
    const settle = (): void => {
      if (ref.stream !== undefined) this.#streams.delete(ref.stream);
      this.#wake();
    };
    const stream = tts.stream({
      audio: (pcm) => this.#out(pcm, durationMs(pcm.byteLength, tts.sampleRate), kind),
      words: (timings) => {
        if (kind === "model") this.#modelWords.push(...timings);
      },
      done: settle,
      error: (error) => {
        log.warn({ err: error }, "tts stream failed");
        emit({ type: "error.reported", code: "tts", message: `speech synthesis failed: ${error.message}`, fatal: false });
        settle();
      },
    });
    ref.stream = stream;
    this.#streams.add(stream);
    return stream;
  }

  /**
   * A TTS stream whose audio passes this gate, opened at `open()` or at its first text, whichever
   * comes first (`DeferredStream`); never opened once the gate has closed.
   */
  deferredStream(kind: SpeechKind): DeferredStream {
    return new DeferredStream(() => (this.#open ? this.stream(kind) : undefined));
  }

  /** Speak a whole line on its own stream; resolves when every stream of the reply is done (or cancelled). */
  speak(text: string, kind: SpeechKind): Promise<void> {
    const stream = this.stream(kind);
    if (kind === "model") this.addModelText(text);
    stream.push(text);
    stream.end();
    return this.drain();
  }

  /** Wait until every stream of the reply is done (or cancelled). */
  async drain(): Promise<void> {
    while (this.#streams.size > 0 && !this.#deps.closed()) {
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    }
  }

  /** Send what is held, floor or not (the reply's text is complete). */
  flush(): void {
    this.#release(true);
  }

  /** Close the gate: drop held audio, cancel every stream, wake the drain. */
  close(): void {
    this.#open = false;
    this.#held = [];
    this.#releaseTimer?.cancel();
    for (const stream of this.#streams) stream.cancel();
    this.#streams.clear();
    this.#wake();
  }

  /** The reply ended: no release is pending. */
  end(): void {
    this.#releaseTimer?.cancel();
  }

  /** TTS audio → the gate → (held for the floor/backoff) → the client. */
  #out(pcm: Uint8Array, ms: number, kind: SpeechKind): void {
    if (!this.#open || !this.#deps.current()) return;
    const now = this.#deps.clock.now();
    if (now < this.#releaseAt || this.#held.length > 0) {
      this.#held.push({ pcm, ms, kind });
      this.#releaseTimer ??= this.#deps.clock.setTimeout(() => this.#release(false), this.#releaseAt - now);
      return;
    }
    this.#send(pcm, ms, kind);
  }

  #release(force: boolean): void {
    if (!force && this.#deps.clock.now() < this.#releaseAt) return;
    for (const chunk of this.#held.splice(0)) this.#send(chunk.pcm, chunk.ms, chunk.kind);
  }

  #send(pcm: Uint8Array, ms: number, kind: SpeechKind): void {
    if (!this.#open) return;
    if (kind === "model") {
      this.#firstAudioAt ??= this.#deps.clock.now();
      this.#modelAudioMs += ms;
    }
    this.#deps.playback.queued(ms, kind);
    this.#deps.audio(pcm, ms);
    this.#deps.sent(kind);
  }

  #wake(): void {
    if (this.#streams.size > 0) return;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }
}

/**
 * A TTS stream opened when it is asked to (`open`) or at its first text, whichever comes first.
 * A reply's model stream is opened once its model request is out, as the floor relay does it,
 * so the path from the caller's last word to the model request does not also set up the TTS
 * (docs/benchmarks.md, "Pipeline"); the TTS is still ready long before a real model's first
 * token. Ended or cancelled before it opened, it never opens: there was nothing to speak.
 */
export class DeferredStream implements TtsStream {
  #state: { readonly kind: "waiting" } | { readonly kind: "open"; readonly stream: TtsStream } | { readonly kind: "over" } = { kind: "waiting" };
  /** Opens the stream, or undefined when it must not open (the gate has closed). */
  readonly #opener: () => TtsStream | undefined;

  constructor(opener: () => TtsStream | undefined) {
    this.#opener = opener;
  }

  /** Open it now (if it is still waiting). */
  open(): void {
    if (this.#state.kind !== "waiting") return;
    const stream = this.#opener();
    this.#state = stream === undefined ? { kind: "over" } : { kind: "open", stream };
  }

  push(text: string): void {
    this.open();
    if (this.#state.kind === "open") this.#state.stream.push(text);
  }

  end(): void {
    if (this.#state.kind === "open") this.#state.stream.end();
    else this.#state = { kind: "over" };
  }

  cancel(): void {
    if (this.#state.kind === "open") this.#state.stream.cancel();
    else this.#state = { kind: "over" };
  }
}
