import type { Clock, Timer } from "../clock.js";
import { AFTER_AUDIO_EVENTS, CLEARING_EVENTS, type ServerEvent } from "./protocol.js";

/** Where paced output goes: a socket, a carrier bridge, a test. */
export interface PacerSink {
  sendText(text: string): void;
  sendAudio(chunk: Uint8Array): void;
  /** The feed's filler (the waiting sounds); absent: sent as audio. */
  sendFiller?(chunk: Uint8Array): void;
}

/** How far ahead of real time agent audio may be sent (ms): enough to ride out jitter, small enough to cancel fast. */
export const DEFAULT_LEAD_MS = 1500;
/**
 * Filler (the waiting sounds) is sent at most this far ahead of real time (ms): agent speech that
 * arrives queues behind it, so this is the most the filler delays speech; two 40 ms chunks ride
 * out a late timer.
 */
export const FILL_LEAD_MS = 80;
/** Filler is asked for in chunks of this much audio (ms): two 20 ms Opus or carrier frames. */
export const FILL_CHUNK_MS = 40;
/** At most this many chunks per wake-up (a carrier whose minimum frame is larger than a chunk needs several before one leaves: Exotel's 3.2 KB is 200 ms at 8 kHz L16). */
const FILL_CHUNKS_PER_WAKE = 16;

/**
 * Audio the line carries while the pacer holds no agent audio: the link's waiting sounds
 * (docs/telephony.md "Audio while waiting"). Asked only when nothing is queued, so it never
 * plays under or ahead of agent speech.
 */
export interface PacerFeed {
  /**
   * When filler is next due (epoch ms; now or earlier: now), given when the agent audio sent so
   * far ends playing (`agentEndsAt`, by the real-time estimate); undefined: none until `wake()`.
   */
  nextAt(now: number, agentEndsAt: number): number | undefined;
  /** The link's frames for the next `ms` of filler, each with its duration (empty: none yet, or held for a whole frame). */
  take(ms: number, now: number, agentEndsAt: number): readonly { readonly data: Uint8Array; readonly ms: number }[];
}

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
  /** Ms of the audio in `#queue`, kept as items come and go (read per inbound carrier frame: no walk of the queue). */
  #heldMs = 0;
  /**
   * Epoch ms at which audio already sent would finish playing in real time: the lead is measured
   * against it. Pacing only — what the listener has played is the session's `PlaybackClock`
   * (src/turn/playback-clock.ts), fed by the link's reports.
   */
  #playEnd = 0;
  /** Epoch ms at which the agent audio sent so far ends playing, by the same estimate. */
  #agentEnd = 0;
  /** Ms of filler sent since the last agent audio: what the listener plays after the agent's last word. */
  #fillerTailMs = 0;
  #feed: PacerFeed | undefined;
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
      this.#flush();
    } else if (AFTER_AUDIO_EVENTS.has(event.type) && this.#queue.length > 0) {
      this.#queue.push({ kind: "event", text });
    } else {
      this.#sink.sendText(text);
    }
  }

  /** Queue agent audio of a known duration; it leaves as the lead allows. */
  audio(chunk: Uint8Array, durationMs: number): void {
    if (this.#closed || chunk.byteLength === 0) return;
    // The common case, every 20 ms of a call whose audio arrives in real time: nothing held, no
    // feed, no timer, within the lead. It leaves now, as `#flush` would send it, without an item
    // stored into the (long-lived) queue and taken out again.
    if (this.#queue.length === 0 && this.#feed === undefined && this.#timer === undefined) {
      const now = this.#clock.now();
      if (this.#playEnd < now) this.#playEnd = now;
      if (this.#playEnd - now < this.#leadMs) {
        this.#sent(chunk, durationMs);
        return;
      }
    }
    this.#queue.push({ kind: "audio", chunk, ms: durationMs });
    this.#heldMs += durationMs;
    this.#flush();
  }

  /** Run `run` once every audio queued so far has been sent (now, if none is held); dropped by `clear`. */
  afterAudio(run: () => void): void {
    if (this.#closed) return;
    if (this.#queue.length === 0) run();
    else this.#queue.push({ kind: "after", run });
  }

  /**
   * Keep the line fed with `feed`'s filler whenever no agent audio is held (undefined: stop).
   * Filler that was sent is not held back: the listener plays it, after any agent audio before it.
   */
  feed(feed: PacerFeed | undefined): void {
    this.#feed = feed;
    if (!this.#closed) this.#flush();
  }

  /** The feed's filler may be due sooner than it last said (a cue): look again now. */
  wake(): void {
    if (!this.#closed && this.#feed !== undefined && this.#queue.length === 0) this.#flush();
  }

  /**
   * Drop held audio and the boundaries queued behind it. The listener drops what it holds too
   * (the clearing event, a carrier's clear), so filler sent so far no longer counts; the feed
   * goes on at the next wake-up, after the clearing event has gone out.
   */
  clear(): void {
    this.#queue.length = 0;
    this.#heldMs = 0;
    this.#timer?.cancel();
    this.#timer = undefined;
    const now = this.#clock.now();
    this.#playEnd = now;
    this.#agentEnd = Math.min(this.#agentEnd, now);
    this.#fillerTailMs = 0;
  }

  /**
   * The listener says `bufferedMs` of what was sent is still unplayed: how long until the agent's
   * own audio has played, filler left out (0 when only filler is left). Held agent audio plays
   * after everything sent, filler included; with none held, the filler sent since the agent's
   * last audio is the tail of what the listener holds.
   */
  agentBacklogMs(bufferedMs: number): number {
    const held = this.heldMs;
    return held > 0 ? bufferedMs + held : Math.max(0, bufferedMs - this.#fillerTailMs);
  }

  /** Audio held back, in ms of playback. */
  get heldMs(): number {
    return this.#heldMs;
  }

  close(): void {
    this.#closed = true;
    this.#feed = undefined;
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
      this.#heldMs -= head.ms;
      if (this.#queue.length === 0) this.#heldMs = 0; // no float drift left behind
      this.#sent(head.chunk, head.ms);
    }
    if (this.#queue.length > 0) {
      const wait = Math.max(1, this.#playEnd - this.#leadMs - now);
      this.#timer = this.#clock.setTimeout(() => this.#flush(), wait);
    } else if (this.#feed !== undefined && !this.#closed) {
      this.#fill(this.#feed, now);
    }
  }

  /** Agent audio leaves: it plays after everything sent so far. */
  #sent(chunk: Uint8Array, ms: number): void {
    this.#sink.sendAudio(chunk);
    this.#playEnd += ms;
    this.#agentEnd = this.#playEnd;
    this.#fillerTailMs = 0;
  }

  /** Nothing held: send the feed's filler up to its lead, then sleep until more is due. */
  #fill(feed: PacerFeed, now: number): void {
    for (let chunks = 0; this.#playEnd - now < FILL_LEAD_MS; chunks++) {
      const due = feed.nextAt(now, this.#agentEnd);
      if (due === undefined) return;
      if (due > now) {
        this.#timer = this.#clock.setTimeout(() => this.#flush(), Math.max(1, due - now));
        return;
      }
      if (chunks === FILL_CHUNKS_PER_WAKE) break;
      for (const frame of feed.take(FILL_CHUNK_MS, now, this.#agentEnd)) {
        if (this.#sink.sendFiller === undefined) this.#sink.sendAudio(frame.data);
        else this.#sink.sendFiller(frame.data);
        this.#playEnd += frame.ms;
        this.#fillerTailMs += frame.ms;
      }
    }
    this.#timer = this.#clock.setTimeout(() => this.#flush(), Math.max(1, this.#playEnd - FILL_LEAD_MS - now));
  }
}
