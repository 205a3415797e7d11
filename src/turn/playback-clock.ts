import { Deadline, type Clock } from "../clock.js";
import { SmallSet } from "../small-map.js";

/** After agent audio stops playing, the agent still counts as audible this long (ms; docs/protocol.md "Behaviour in detail", "Held speech"). */
export const AUDIBLE_GRACE_MS = 750;

/**
 * Where the caller's playback is — the gateway's one playback estimator: audio handed to the
 * output plays in real time from when it is sent; the link's reports (`ConnectionHandler.playback`:
 * a browser's `playback_progress` plus what the link holds, a carrier's mark echoes) can only push
 * the estimate later (the listener buffers more than we assumed), never earlier.
 */
/** Model audio in a reply's timeline: [start, end) ms, and the model stream's offset (ms) at start. */
interface ModelRange {
  readonly start: number;
  readonly end: number;
  readonly offset: number;
}

export class PlaybackClock {
  readonly #clock: Clock;
  /** Epoch ms at which everything queued so far has played. */
  #playEnd = 0;
  /** Epoch ms at which the last model (non-filler) audio has played. */
  #modelPlayEnd = 0;
  /** Ms of audio queued since `resetTimeline()`. */
  #timelineMs = 0;
  /**
   * Timeline ranges of model audio before the last: [start, end) in the reply's timeline, and the
   * model-stream offset at start; contiguous model audio is one range.
   */
  #modelRanges: ModelRange[] = [];
  /**
   * The last range, which model audio right after it extends, as numbers in this object's fields
   * (start −1: none yet): a chunk reads no array and no range object of its own, each a cache line
   * cold by the call's next chunk on a loaded process (docs/benchmarks.md, `bench:carrier-counts`).
   */
  #lastStart = -1;
  #lastEnd = 0;
  #lastOffset = 0;
  #modelMs = 0;
  /** Epoch ms at which this timeline's first audio starts playing, by the estimate (reports can push it later). */
  #startAt: number | undefined;
  /** `playedOut` waits, each a check that settles it when it is over; run at the end of playback and when playback is cleared. */
  readonly #waits = new SmallSet<() => void>();
  /** The end of playback, while anyone waits for it: one timer, moved later by reports and new audio. */
  readonly #end: Deadline;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#end = new Deadline(clock, () => this.#checkWaits());
  }

  /** A new reply: its audio timeline starts at 0. */
  resetTimeline(): void {
    this.#timelineMs = 0;
    this.#modelRanges = [];
    this.#lastStart = -1;
    this.#modelMs = 0;
    this.#startAt = undefined;
  }

  /** Audio of `ms` was handed to the output. */
  queued(ms: number, kind: "model" | "filler"): void {
    const now = this.#clock.now();
    if (this.#timelineMs === 0) this.#startAt = Math.max(this.#playEnd, now);
    this.#playEnd = Math.max(this.#playEnd, now) + ms;
    if (kind === "model") {
      // Model audio right after model audio extends its range: one range per run of model audio
      // between fillers, not one per chunk (a long reply of 20 ms deltas would hold thousands).
      if (this.#lastStart >= 0 && this.#lastEnd === this.#timelineMs) this.#lastEnd += ms;
      else {
        if (this.#lastStart >= 0) this.#modelRanges.push({ start: this.#lastStart, end: this.#lastEnd, offset: this.#lastOffset });
        this.#lastStart = this.#timelineMs;
        this.#lastEnd = this.#timelineMs + ms;
        this.#lastOffset = this.#modelMs;
      }
      this.#modelMs += ms;
      this.#modelPlayEnd = this.#playEnd;
    }
    this.#timelineMs += ms;
  }

  /** The link says `bufferedMs` of agent audio is still unplayed. Only ever pushes playback later. */
  report(bufferedMs: number): void {
    const now = this.#clock.now();
    const end = now + bufferedMs;
    if (end > this.#playEnd) {
      const late = end - this.#playEnd;
      this.#modelPlayEnd += late;
      this.#playEnd = end;
    }
    // The timeline's audio is the last `timelineMs` of what is still buffered: it cannot have started before now + buffered − timeline.
    if (this.#startAt !== undefined && bufferedMs >= this.#timelineMs) this.#startAt = Math.max(this.#startAt, now + bufferedMs - this.#timelineMs);
  }

  /** Playback was flushed (reply.cancelled): nothing is pending any more. */
  cleared(): void {
    const now = this.#clock.now();
    this.#playEnd = Math.min(this.#playEnd, now);
    this.#modelPlayEnd = Math.min(this.#modelPlayEnd, now);
    this.#checkWaits();
  }

  /** When this timeline's first audio started (or starts) playing at the client, by the estimate; undefined before any audio. */
  get startedAt(): number | undefined {
    return this.#startAt;
  }

  /** Ms of queued audio not yet played. */
  get pendingMs(): number {
    return Math.max(0, this.#playEnd - this.#clock.now());
  }

  /** Model audio is playing, or stopped less than the grace ago. Filler never counts. */
  get modelAudible(): boolean {
    return this.#modelMs > 0 && this.#clock.now() < this.#modelPlayEnd + AUDIBLE_GRACE_MS;
  }

  /** Ms of this reply's timeline played so far. */
  get playedMs(): number {
    return Math.max(0, this.#timelineMs - this.pendingMs);
  }

  /**
   * Resolves once everything queued has played at the listener (reports can push that later),
   * or when `signal` aborts, or — checked when playback is cleared, at `recheck()` and when
   * playback ends — `stopped()` is true. A stop that clears nothing (a flag alone) is seen at the
   * end of playback at the latest, or at once by a `recheck()`. Event-driven: one timer for all
   * waits, not a poll each (docs/benchmarks.md, "Telephony"). An owner whose waits end with it
   * (a runner closing) calls `recheck()` rather than giving each wait a signal: a listener added
   * and removed every reply is work on the path of every turn.
   */
  playedOut(stopped: () => boolean, signal?: AbortSignal): Promise<void> {
    if (stopped() || signal?.aborted === true || this.pendingMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!stopped() && signal?.aborted !== true && this.pendingMs > 0) return;
        this.#waits.delete(check);
        signal?.removeEventListener("abort", check);
        resolve();
      };
      this.#waits.add(check);
      signal?.addEventListener("abort", check, { once: true });
      this.#end.set(this.#playEnd);
    });
  }

  /** Settle the waits whose `stopped()` now holds (or that are over), now rather than at the end of playback. */
  recheck(): void {
    this.#checkWaits();
  }

  /** Settle the waits that are over; the rest wait for the (possibly later) end of playback. */
  #checkWaits(): void {
    for (const check of this.#waits.values()) check();
    if (this.#waits.size === 0) this.#end.cancel();
    else this.#end.set(this.#playEnd);
  }

  /** Ms of the reply's model stream heard by now, given an ear lag. */
  heardModelMs(earLagMs: number): number {
    return modelMsAt(this.#ranges(), this.playedMs - earLagMs);
  }

  /**
   * This reply's timeline as it stands, frozen: ms into its audio (model and filler, as the
   * listener received it) → ms of its model stream by then. A client's report of where it stopped
   * playing a reply (`conversation.item.truncate`'s `audio_end_ms`) is read through it, also after
   * the next reply has reset the timeline.
   */
  timeline(): (timelineMs: number) => number {
    const ranges = this.#ranges();
    return (timelineMs) => modelMsAt(ranges, timelineMs);
  }

  /** Every model range of the timeline, the last included, as it stands: later audio does not move them. */
  #ranges(): readonly ModelRange[] {
    return this.#lastStart < 0 ? this.#modelRanges.slice() : [...this.#modelRanges, { start: this.#lastStart, end: this.#lastEnd, offset: this.#lastOffset }];
  }
}

/** Ms of the model stream within the first `timelineMs` of a timeline whose model audio lies in `ranges`. */
function modelMsAt(ranges: readonly { readonly start: number; readonly end: number; readonly offset: number }[], timelineMs: number): number {
  let total = 0;
  for (const range of ranges) {
    if (timelineMs <= range.start) break;
    total = range.offset + Math.min(timelineMs, range.end) - range.start;
  }
  return Math.max(0, total);
}
