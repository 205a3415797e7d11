/** Socket liveness (pings, and any frame as a sign of life) and the guarded delivery of a peer's frames. */
import type { WebSocket } from "ws";
import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../log.js";
import type { InputBudget } from "./input-budget.js";

/** Pings missed in a row before the peer counts as gone. */
const MAX_MISSED_PONGS = 2;

/**
 * WebSocket pings every `intervalMs` (RFC 6455 §5.5.2: the peer must answer with a pong); a peer
 * that misses two in a row is gone (half-open TCP, a sleeping laptop) and `dead` is called. Any
 * message counts as a pong (`seen()`): a carrier streaming 20 ms frames is alive even if its
 * media server never answers pings. One object with its state in fields: `seen()` runs on every
 * frame, and on a loaded process each object a frame touches is a cache miss.
 */
export class KeepAlive {
  readonly #ws: WebSocket;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #dead: () => void;
  #missed = 0;
  #timer: Timer | undefined;
  #stopped = false;

  constructor(ws: WebSocket, clock: Clock, log: Logger, intervalMs: number, dead: () => void) {
    this.#ws = ws;
    this.#clock = clock;
    this.#log = log;
    this.#intervalMs = intervalMs;
    this.#dead = dead;
    ws.on("pong", () => this.seen());
    this.#schedule();
  }

  /** The peer showed a sign of life. */
  seen(): void {
    this.#missed = 0;
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => this.#ping(), this.#intervalMs);
  }

  #ping(): void {
    if (this.#stopped) return;
    if (this.#missed >= MAX_MISSED_PONGS) {
      this.#log.info({ missed: this.#missed }, "peer missed pongs");
      this.#stopped = true;
      this.#dead();
      return;
    }
    this.#missed += 1;
    try {
      this.#ws.ping();
    } catch (err) {
      this.#log.debug({ err }, "ping failed");
    }
    this.#schedule();
  }
}

/**
 * Frames a paused socket may still hand over, held until its budget allows them (bytes): ws
 * emits the rest of what it had already read (one socket read, up to 64 KiB, plus one frame of at
 * most `maxPayload`) after `pause()`. Past this something is wrong; frames are dropped and said so.
 */
const MAX_HELD_BYTES = 8 * 1024 * 1024;
/** How often a peer is told that frames of its were dropped (ms). */
const DROP_REPORT_EVERY_MS = 1000;

/** A peer's input budget and what to do if its held frames overflow (see input-budget.ts). */
export interface Metering {
  readonly budget: InputBudget;
  readonly clock: Clock;
  /** Frames dropped: called at most once a second, with the count since the last call. */
  readonly dropped: (count: number) => void;
}

type Data = Buffer | ArrayBuffer | Buffer[];
type Frame = { readonly data: Data; readonly isBinary: boolean; readonly bytes: number };

/**
 * Deliver a peer's frames to `receive`. Nothing a peer sends may take the process down: a throw
 * downstream (a bug) is logged and contained, and the link goes on. With `metering`, the peer is
 * held to its budget: every frame is handled, in order, but while the peer is in debt its socket
 * is not read; frames the socket layer had already read wait until the budget allows them.
 */
export function onPeerMessage(ws: WebSocket, log: Logger, receive: (data: Data, isBinary: boolean) => void, metering?: Metering): void {
  new PeerFrames(ws, log, receive, metering);
}

/** `onPeerMessage`'s state, in the fields of one object (it runs on every frame a peer sends). */
class PeerFrames {
  readonly #ws: WebSocket;
  readonly #log: Logger;
  readonly #receive: (data: Data, isBinary: boolean) => void;
  readonly #metering: Metering | undefined;
  /** Frames read while the peer was in debt, in order. */
  readonly #held: Frame[] = [];
  #heldBytes = 0;
  #resumeAt: Timer | undefined;
  #dropped = 0;
  #reportedAt = -Infinity;

  constructor(ws: WebSocket, log: Logger, receive: (data: Data, isBinary: boolean) => void, metering: Metering | undefined) {
    this.#ws = ws;
    this.#log = log;
    this.#receive = receive;
    this.#metering = metering;
    ws.on("close", () => this.#resumeAt?.cancel());
    ws.on("message", (data: Data, isBinary: boolean) => this.#message(data, isBinary));
  }

  #message(data: Data, isBinary: boolean): void {
    const bytes = Array.isArray(data) ? data.reduce((sum, b) => sum + b.byteLength, 0) : data.byteLength;
    const metering = this.#metering;
    if (metering === undefined) return this.#handle(data, isBinary, bytes);
    if (this.#resumeAt === undefined) {
      this.#handle(data, isBinary, bytes);
      this.#wait(metering);
      return;
    }
    if (this.#heldBytes + bytes > MAX_HELD_BYTES) {
      this.#dropped += 1;
      const now = metering.clock.now();
      if (now - this.#reportedAt >= DROP_REPORT_EVERY_MS) {
        this.#reportedAt = now;
        metering.dropped(this.#dropped);
        this.#dropped = 0;
      }
      return;
    }
    this.#held.push({ data, isBinary, bytes });
    this.#heldBytes += bytes;
  }

  #handle(data: Data, isBinary: boolean, bytes: number): void {
    this.#metering?.budget.spend(isBinary ? "audio" : "text", bytes);
    try {
      this.#receive(data, isBinary);
    } catch (err) {
      this.#log.error({ err }, "input handling failed");
    }
  }

  /**
   * In debt: stop reading, and come back when the budget has refilled. Right after `#handle`'s
   * charge, so the debt is the budget's as of that charge (or of a retune the frame caused).
   */
  #wait(metering: Metering): boolean {
    const debt = metering.budget.owedMs();
    if (debt === 0) return false;
    this.#ws.pause();
    this.#resumeAt = metering.clock.setTimeout(() => this.#drain(metering), debt);
    return true;
  }

  #drain(metering: Metering): void {
    this.#resumeAt = undefined;
    for (let frame = this.#held.shift(); frame !== undefined; frame = this.#held.shift()) {
      this.#heldBytes -= frame.bytes;
      this.#handle(frame.data, frame.isBinary, frame.bytes);
      if (this.#wait(metering)) return;
    }
    this.#ws.resume();
  }
}
