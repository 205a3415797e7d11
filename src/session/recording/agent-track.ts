import type { Clock } from "../../clock.js";
import { PlaybackClock } from "../../turn/playback-clock.js";

/** Agent audio queued but not yet played that the track holds at most (ms); past it the oldest is placed where it is estimated to play. */
const MAX_PENDING_MS = 120_000;

interface Segment {
  /** Sample offset from the session's start where it plays. */
  start: number;
  samples: Int16Array;
}

/** Where a played stretch of agent audio went, for the transcript's timings. */
export interface PlayedSpan {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * The agent channel, placed where the caller heard it: audio handed to the link plays from
 * when it is sent or when the audio before it ends, by the gateway's one playback estimate
 * (`PlaybackClock`), which the link's reports (a browser's `playback_progress`, a carrier's mark
 * echoes) only push later. Audio waits here until it has played, so a report can still move it
 * and a barge-in cut (`cleared`) drops what was never heard: the channel stops where the caller
 * stopped hearing it. `place` receives each played stretch at its sample offset, in order.
 */
export class AgentTrack {
  readonly #clock: Clock;
  readonly #playback: PlaybackClock;
  readonly #startedAt: number;
  readonly #rate: number;
  readonly #place: (offset: number, samples: Int16Array) => void;
  #pending: Segment[] = [];
  #pendingSamples = 0;
  /** The played span of the current reply's audio (since `mark`). */
  #span: { readonly first: Segment; end: number } | undefined;

  constructor(clock: Clock, startedAt: number, rate: number, place: (offset: number, samples: Int16Array) => void) {
    this.#clock = clock;
    this.#playback = new PlaybackClock(clock);
    this.#startedAt = startedAt;
    this.#rate = rate;
    this.#place = place;
  }

  /** Agent audio (at the track's rate) handed to the link now. */
  queued(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.#settle();
    const now = this.#clock.now();
    const start = this.#offsetAt(now + this.#playback.pendingMs);
    const previous = this.#pending.at(-1);
    // Back to back with what is queued: sample rounding never opens a gap or overlaps.
    const at = previous === undefined ? start : Math.max(start, previous.start + previous.samples.length);
    this.#playback.queued((samples.length / this.#rate) * 1000, "model");
    const segment = { start: at, samples };
    this.#pending.push(segment);
    this.#pendingSamples += samples.length;
    // The span starts with its first segment, wherever a report moves it.
    this.#span = { first: this.#span?.first ?? segment, end: at + samples.length };
    while (this.#pendingSamples > (MAX_PENDING_MS / 1000) * this.#rate) this.#emitFirst();
  }

  /** The link says `bufferedMs` is still to play: audio not yet started moves later by what the estimate moved. */
  report(bufferedMs: number): void {
    this.#settle();
    const before = this.#playback.pendingMs;
    this.#playback.report(bufferedMs);
    const late = Math.round(((this.#playback.pendingMs - before) / 1000) * this.#rate);
    if (late <= 0) return;
    const now = this.#nowOffset();
    for (const segment of this.#pending) if (segment.start >= now) segment.start += late;
    // The span ends with its last audio, wherever that is now (audio already played stays put).
    const last = this.#pending.at(-1);
    if (this.#span !== undefined && last !== undefined) this.#span.end = Math.max(this.#span.first.start, last.start + last.samples.length);
  }

  /** The listener's playback was flushed (a barge-in, a reset): what had not played is dropped. */
  cleared(): void {
    this.#settle();
    const now = this.#nowOffset();
    const first = this.#pending[0];
    if (first !== undefined && first.start < now) this.#place(first.start, first.samples.subarray(0, now - first.start));
    this.#pending = [];
    this.#pendingSamples = 0;
    this.#playback.cleared();
    if (this.#span !== undefined) this.#span.end = Math.max(this.#span.first.start, Math.min(this.#span.end, now));
  }

  /** Ends the current reply's span: where its audio played (ms from the start), or undefined if it had none. */
  mark(): PlayedSpan | undefined {
    const span = this.#span;
    this.#span = undefined;
    if (span === undefined) return undefined;
    return { startMs: (span.first.start / this.#rate) * 1000, endMs: (span.end / this.#rate) * 1000 };
  }

  /** Places everything that has played by now. */
  #settle(): void {
    const now = this.#nowOffset();
    while (this.#pending.length > 0) {
      const first = this.#pending[0] as Segment;
      if (first.start + first.samples.length > now) break;
      this.#emitFirst();
    }
  }

  #emitFirst(): void {
    const first = this.#pending.shift();
    if (first === undefined) return;
    this.#pendingSamples -= first.samples.length;
    this.#place(first.start, first.samples);
  }

  #offsetAt(ms: number): number {
    return Math.max(0, Math.round(((ms - this.#startedAt) / 1000) * this.#rate));
  }

  #nowOffset(): number {
    return this.#offsetAt(this.#clock.now());
  }
}
