/**
 * What a carrier has been sent and what it has played (docs/telephony.md "Playback truth"). The
 * carrier buffers seconds of audio, so "sent" is not "played": a mark goes out after audio, and
 * its echo says everything before it has played; until it echoes, nothing after it has. Between
 * those facts playout runs in real time from when audio was sent, on a `PlaybackClock`
 * (src/turn/playback-clock.ts, the gateway's one estimator).
 *
 * The bridge owns the wire (it encodes and sends the marks this names); this owns the
 * bookkeeping: ms sent, the marks outstanding and when each should have played, and the estimate
 * of what is still unplayed. Pure apart from the injected clock.
 */
import type { Clock } from "../clock.js";
import { PlaybackClock } from "../turn/playback-clock.js";

/**
 * A mark at least this often within a segment (ms of audio): the heard cursor never runs past an
 * unechoed mark, so this bounds its error when the carrier plays late. 4 marks a second each way
 * is small beside 50 media frames a second.
 */
export const MARK_EVERY_MS = 250;
/** How long a closing call may keep playing what was already said (ms), past its estimated end, waiting for the last echo. */
const CLOSE_GRACE_MS = 5000;
/**
 * A carrier without marks (Vonage) closes this long after the real-time estimate says its audio
 * has played (ms): its own playout (jitter) buffer, which nothing on the socket reports and its
 * docs do not size, holds the last frames longer. A second of silence after a goodbye costs
 * nothing; closing early cuts the goodbye off.
 */
export const MARKLESS_PLAYOUT_MARGIN_MS = 1000;
/**
 * A mark not echoed this long after its audio should have played is given up on (ms): the
 * carrier is not echoing, and playback is estimated in real time from then on.
 */
export const MARK_OVERDUE_MS = 5000;

interface Mark {
  readonly name: string;
  /** Ms of audio sent before it. */
  readonly position: number;
  /** When its audio should have played, by the real-time estimate (epoch ms). */
  readonly due: number;
}

export class CarrierPlayout {
  readonly #clock: Clock;
  /** The carrier echoes marks (Vonage does not). */
  readonly #marksEchoed: boolean;
  /** Audio plays in real time from when it is sent; marks only push it later. */
  readonly #played: PlaybackClock;
  /** Sent and not yet echoed, oldest first. */
  readonly #marks: Mark[] = [];
  /** Ms of audio written to the carrier. */
  #sentMs = 0;
  /** `#sentMs` when the last mark was named (or the buffer cleared). */
  #lastMarkAt = 0;
  #seq = 0;

  constructor(clock: Clock, marksEchoed: boolean) {
    this.#clock = clock;
    this.#marksEchoed = marksEchoed;
    this.#played = new PlaybackClock(clock);
  }

  /** Ms of audio written to the carrier, over the call. */
  get sentMs(): number {
    return this.#sentMs;
  }

  /** Marks sent and not yet echoed. */
  get outstanding(): number {
    return this.#marks.length;
  }

  /** Ms sent and not yet played, by the estimate: never ahead of the oldest unechoed mark. */
  get unplayedMs(): number {
    const oldest = this.#marks[0];
    if (oldest !== undefined) this.#played.report(this.#sentMs - oldest.position);
    return this.#played.pendingMs;
  }

  /**
   * `ms` of audio written to the carrier. Queued as "filler", which keeps no model ranges: the
   * link needs only what is unplayed, never the heard cursor (the runner's own `PlaybackClock`
   * keeps the model/filler distinction).
   */
  sent(ms: number): void {
    this.#sentMs += ms;
    this.#played.queued(ms, "filler");
  }

  /** Names a mark after everything sent so far; `placed` once it is on the wire (a carrier without marks sends none). */
  nextMark(): string {
    this.#lastMarkAt = this.#sentMs;
    return `sb${++this.#seq}`;
  }

  /** The mark `name` went out after everything sent so far. */
  placed(name: string): void {
    const due = this.#clock.now() + this.unplayedMs;
    this.#marks.push({ name, position: this.#sentMs, due });
  }

  /**
   * At a segment's end: a mark is owed when audio was sent after the last one. Not after a clear
   * with nothing sent since, nor for a segment with no audio: such a mark follows no audio, so
   * its echo would say nothing, at the cost of a frame each way (one per barge-in).
   */
  get markOwed(): boolean {
    return this.#sentMs > this.#lastMarkAt;
  }

  /** A segment's audio has all been sent: the next one starts a new timeline. */
  segmentEnded(): void {
    this.#played.resetTimeline();
  }

  /**
   * The carrier echoed `name`: everything before it has played, everything after it is still at
   * the carrier. False when the mark is not ours, or was flushed by a clear (Twilio and Telnyx
   * echo pending marks on clear).
   */
  echoed(name: string): boolean {
    const index = this.#marks.findIndex((m) => m.name === name);
    const mark = this.#marks[index];
    if (mark === undefined) return false;
    this.#marks.splice(0, index + 1);
    this.#played.report(this.#sentMs - mark.position);
    return true;
  }

  /**
   * The oldest mark, if it is over MARK_OVERDUE_MS past due now: every outstanding mark is then
   * given up on and playback is estimated in real time.
   */
  giveUpIfOverdue(): { readonly name: string; readonly overdueMs: number } | undefined {
    const oldest = this.#marks[0];
    if (oldest === undefined) return undefined;
    const overdueMs = this.#clock.now() - oldest.due;
    if (overdueMs <= MARK_OVERDUE_MS) return undefined;
    this.#marks.length = 0;
    return { name: oldest.name, overdueMs };
  }

  /**
   * A normal close lets the caller hear what was already said: how long it may still play (ms),
   * or undefined when nothing is playing. With marks, the last echo says it all played (the bridge
   * closes on it; this is the bound). Without (Vonage), nothing does: the real-time estimate of
   * what is unplayed, plus the carrier's own playout delay, which nothing reports.
   * `heldMs`: audio the link has not yet sent.
   */
  closingPlayMs(heldMs: number): number | undefined {
    const playing = (this.#marksEchoed ? this.#marks.length > 0 : this.#sentMs > 0) || heldMs > 0;
    if (!playing) return undefined;
    return this.unplayedMs + heldMs + (this.#marksEchoed ? CLOSE_GRACE_MS : MARKLESS_PLAYOUT_MARGIN_MS);
  }

  /** The carrier dropped its buffer (barge-in, reset): nothing sent before counts as pending, nor do marks before it. */
  cleared(): void {
    this.#marks.length = 0;
    this.#played.cleared();
    this.#played.resetTimeline();
    this.#lastMarkAt = this.#sentMs;
  }
}
