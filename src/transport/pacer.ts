import type { Clock, Timer } from "../clock.js";
import { AFTER_AUDIO_EVENTS, CLEARING_EVENTS, type ServerEvent } from "./protocol.js";

/** Where paced output goes: a socket, a carrier bridge, a test. */
export interface PacerSink {
  sendText(text: string): void;
  sendAudio(chunk: Uint8Array): void;
}

/** How far ahead of real time agent audio may be sent (ms): enough to ride out jitter, small enough to cancel fast. */
export const DEFAULT_LEAD_MS = 1500;

type Item =
  | { readonly kind: "audio"; readonly chunk: Uint8Array; readonly ms: number }
  | { readonly kind: "event"; readonly text: string }
  | { readonly kind: "after"; readonly run: () => void };

/**
 * The ordering rules of protocol.md in one place:
 * - agent audio leaves with a bounded lead over real time;
 * - `audio.completed` / `reply.completed` wait behind held audio;
 * - `reply.cancelled` / `session.reset` drop held audio and boundaries and go out at once;
 * - every other event goes out immediately, in emit order.
 */
export class Pacer {
  readonly #sink: PacerSink;
  readonly #clock: Clock;
  readonly #leadMs: number;
  readonly #queue: Item[] = [];
  /**
   * Epoch ms at which audio already sent would finish playing in real time: the lead is measured
   * against it. Pacing only — what the listener has played is the session's `PlaybackClock`
   * (src/turn/playback-clock.ts), fed by the link's reports.
   */
  #playEnd = 0;
  #timer: Timer | undefined;
  #closed = false;

  constructor(sink: PacerSink, clock: Clock, options: { readonly leadMs?: number } = {}) {
    this.#sink = sink;
    this.#clock = clock;
    this.#leadMs = options.leadMs ?? DEFAULT_LEAD_MS;
  }

  /** Send or hold one event, by the ordering rules. */
  event(event: ServerEvent): void {
    if (this.#closed) return;
    const text = JSON.stringify(event);
    if (CLEARING_EVENTS.has(event.type)) {
      this.clear();
      this.#sink.sendText(text);
    } else if (AFTER_AUDIO_EVENTS.has(event.type) && this.#queue.length > 0) {
      this.#queue.push({ kind: "event", text });
    } else {
      this.#sink.sendText(text);
    }
  }

  /** Queue agent audio of a known duration; it leaves as the lead allows. */
  audio(chunk: Uint8Array, durationMs: number): void {
    if (this.#closed || chunk.byteLength === 0) return;
    this.#queue.push({ kind: "audio", chunk, ms: durationMs });
    this.#flush();
  }

  /** Run `run` once every audio queued so far has been sent (now, if none is held); dropped by `clear`. */
  afterAudio(run: () => void): void {
    if (this.#closed) return;
    if (this.#queue.length === 0) run();
    else this.#queue.push({ kind: "after", run });
  }

  /** Drop held audio and the boundaries queued behind it. */
  clear(): void {
    this.#queue.length = 0;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#playEnd = this.#clock.now();
  }

  /** Audio held back, in ms of playback. */
  get heldMs(): number {
    return this.#queue.reduce((sum, item) => sum + (item.kind === "audio" ? item.ms : 0), 0);
  }

  close(): void {
    this.#closed = true;
    this.clear();
  }

  #flush(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    const now = this.#clock.now();
    if (this.#playEnd < now) this.#playEnd = now;
    while (this.#queue.length > 0) {
      const head = this.#queue[0];
      if (head === undefined) break;
      if (head.kind === "event") {
        this.#queue.shift();
        this.#sink.sendText(head.text);
        continue;
      }
      if (head.kind === "after") {
        this.#queue.shift();
        head.run();
        continue;
      }
      if (this.#playEnd - now >= this.#leadMs) break;
      this.#queue.shift();
      this.#sink.sendAudio(head.chunk);
      this.#playEnd += head.ms;
    }
    if (this.#queue.length > 0) {
      const wait = Math.max(1, this.#playEnd - this.#leadMs - now);
      this.#timer = this.#clock.setTimeout(() => this.#flush(), wait);
    }
  }
}
