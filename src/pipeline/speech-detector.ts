/**
 * Speech start/end from a stream of VAD frame verdicts, with hysteresis. Pure: driven only by
 * frames (their `atMs` is the clock), no timers — the turn loop adds its own with an injected
 * clock.
 *
 * - Start: once the speech frames among those that began within the last `startWindowMs` add up
 *   to `startMs`. Isolated false positives (a click, a cough of one frame) do not start speech.
 * - End: after `minSilenceMs` of uninterrupted non-speech; any speech frame restarts the count.
 *
 * Frame durations come from consecutive `atMs` values (the first frame's from 0), so frames of
 * any size work. All times are ms of audio since the stream started.
 */
import { DEFAULTS } from "../manifest/defaults.js";
import type { VadFrame } from "./vad.js";

export type SpeechEvent =
  | {
      readonly type: "start";
      /** Onset: where the first speech frame of the qualifying window began. */
      readonly atMs: number;
      /** End of the frame that completed `startMs` (≥ atMs + startMs). */
      readonly detectedAtMs: number;
    }
  | {
      readonly type: "end";
      /** Where the speech stopped: the end of the last speech frame. */
      readonly atMs: number;
      /** From the start event's onset to `atMs`. */
      readonly speechMs: number;
      /** End of the frame that completed `minSilenceMs` of silence (= atMs + minSilenceMs or a little more). */
      readonly detectedAtMs: number;
    };

export interface SpeechDetectorOptions {
  /** Speech (ms) needed within `startWindowMs` to start. Default 60. */
  readonly startMs?: number | undefined;
  /** Window (ms) in which `startMs` of speech frames must fall; ≥ startMs. Default 2 × startMs. */
  readonly startWindowMs?: number | undefined;
  /** Non-speech (ms) that ends speech. Default DEFAULTS.turnTaking.minSilenceMs (1600). */
  readonly minSilenceMs?: number | undefined;
}

export const DEFAULT_SPEECH_START_MS = 60;

interface WindowFrame {
  readonly startMs: number;
  readonly durationMs: number;
  readonly speech: boolean;
}

export class SpeechDetector {
  readonly startMs: number;
  readonly startWindowMs: number;
  readonly minSilenceMs: number;
  /** Recent frames while not speaking (those that began within the start window). */
  #window: WindowFrame[] = [];
  #speechInWindow = 0;
  #lastAtMs = 0;
  #speaking = false;
  #onsetMs = 0;
  #lastSpeechEndMs = 0;
  #silenceMs = 0;

  constructor(options: SpeechDetectorOptions = {}) {
    this.startMs = options.startMs ?? DEFAULT_SPEECH_START_MS;
    this.startWindowMs = options.startWindowMs ?? 2 * this.startMs;
    this.minSilenceMs = options.minSilenceMs ?? DEFAULTS.turnTaking.minSilenceMs;
    if (!(this.startMs >= 0)) throw new RangeError(`SpeechDetector: startMs must be ≥ 0 (got ${this.startMs})`);
    if (!(this.startWindowMs >= this.startMs)) {
      throw new RangeError(`SpeechDetector: startWindowMs (${this.startWindowMs}) must be ≥ startMs (${this.startMs})`);
    }
    if (!(this.minSilenceMs > 0)) throw new RangeError(`SpeechDetector: minSilenceMs must be > 0 (got ${this.minSilenceMs})`);
  }

  /** True between a start event and the next end event. */
  get speaking(): boolean {
    return this.#speaking;
  }

  /** Non-speech (ms) since the last speech frame (since the stream started, if none yet). */
  get silenceMs(): number {
    return this.#silenceMs;
  }

  /** Feeds one frame; returns the event it causes, if any. Frames must come in order of `atMs`. */
  push(frame: VadFrame): SpeechEvent | undefined {
    const startMs = this.#lastAtMs;
    const durationMs = frame.atMs - startMs;
    if (!(durationMs > 0)) throw new RangeError(`SpeechDetector: frame at ${frame.atMs} ms does not follow ${startMs} ms`);
    this.#lastAtMs = frame.atMs;

    if (frame.speech) {
      this.#silenceMs = 0;
      this.#lastSpeechEndMs = frame.atMs;
    } else {
      this.#silenceMs += durationMs;
    }

    if (this.#speaking) {
      if (frame.speech || this.#silenceMs < this.minSilenceMs) return undefined;
      this.#speaking = false;
      return { type: "end", atMs: this.#lastSpeechEndMs, speechMs: this.#lastSpeechEndMs - this.#onsetMs, detectedAtMs: frame.atMs };
    }

    this.#window.push({ startMs, durationMs, speech: frame.speech });
    if (frame.speech) this.#speechInWindow += durationMs;
    const windowStart = frame.atMs - this.startWindowMs;
    while (this.#window.length > 0 && (this.#window[0]?.startMs ?? 0) < windowStart) {
      const dropped = this.#window.shift();
      if (dropped?.speech === true) this.#speechInWindow -= dropped.durationMs;
    }
    if (!frame.speech || this.#speechInWindow < this.startMs) return undefined;

    this.#speaking = true;
    this.#onsetMs = this.#window.find((f) => f.speech)?.startMs ?? startMs;
    this.#window = [];
    this.#speechInWindow = 0;
    return { type: "start", atMs: this.#onsetMs, detectedAtMs: frame.atMs };
  }

  /** Feeds frames in order; returns the events they cause. */
  pushAll(frames: readonly VadFrame[]): SpeechEvent[] {
    const events: SpeechEvent[] = [];
    for (const frame of frames) {
      const event = this.push(frame);
      if (event !== undefined) events.push(event);
    }
    return events;
  }
}
