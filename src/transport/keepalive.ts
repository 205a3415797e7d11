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
 * media server never answers pings.
 */
export function keepAlive(ws: WebSocket, clock: Clock, log: Logger, intervalMs: number, dead: () => void): { stop(): void; seen(): void } {
  let missed = 0;
  let timer: Timer | undefined;
  let stopped = false;
  ws.on("pong", () => {
    missed = 0;
  });
  const schedule = (): void => {
    timer = clock.setTimeout(() => {
      if (stopped) return;
      if (missed >= MAX_MISSED_PONGS) {
        log.info({ missed }, "peer missed pongs");
        stopped = true;
        dead();
        return;
      }
      missed += 1;
      try {
        ws.ping();
      } catch (err) {
        log.debug({ err }, "ping failed");
      }
      schedule();
    }, intervalMs);
  };
  schedule();
  return {
    stop() {
      stopped = true;
      timer?.cancel();
    },
    seen() {
      missed = 0;
    },
  };
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

type Frame = { readonly data: Buffer | ArrayBuffer | Buffer[]; readonly isBinary: boolean; readonly bytes: number };

/**
 * Deliver a peer's frames to `receive`. Nothing a peer sends may take the process down: a throw
 * downstream (a bug) is logged and contained, and the link goes on. With `metering`, the peer is
 * held to its budget: every frame is handled, in order, but while the peer is in debt its socket
 * is not read; frames the socket layer had already read wait until the budget allows them.
 */
export function onPeerMessage(ws: WebSocket, log: Logger, receive: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void, metering?: Metering): void {
  const held: Frame[] = [];
  let heldBytes = 0;
  let resumeAt: Timer | undefined;
  let dropped = 0;
  let reportedAt = -Infinity;
  const handle = (frame: Frame): void => {
    metering?.budget.spend(frame.isBinary ? "audio" : "text", frame.bytes);
    try {
      receive(frame.data, frame.isBinary);
    } catch (err) {
      log.error({ err }, "input handling failed");
    }
  };
  /** In debt: stop reading, and come back when the budget has refilled. */
  const wait = (m: Metering): boolean => {
    const debt = m.budget.debtMs();
    if (debt === 0) return false;
    ws.pause();
    resumeAt = m.clock.setTimeout(() => drain(m), debt);
    return true;
  };
  const drain = (m: Metering): void => {
    resumeAt = undefined;
    for (let frame = held.shift(); frame !== undefined; frame = held.shift()) {
      heldBytes -= frame.bytes;
      handle(frame);
      if (wait(m)) return;
    }
    ws.resume();
  };
  ws.on("close", () => resumeAt?.cancel());
  ws.on("message", (data, isBinary) => {
    const bytes = Array.isArray(data) ? data.reduce((sum, b) => sum + b.byteLength, 0) : data.byteLength;
    const frame: Frame = { data, isBinary, bytes };
    if (metering === undefined) return handle(frame);
    if (resumeAt !== undefined) {
      if (heldBytes + bytes > MAX_HELD_BYTES) {
        dropped += 1;
        const now = metering.clock.now();
        if (now - reportedAt >= DROP_REPORT_EVERY_MS) {
          reportedAt = now;
          metering.dropped(dropped);
          dropped = 0;
        }
        return;
      }
      held.push(frame);
      heldBytes += bytes;
      return;
    }
    handle(frame);
    wait(metering);
  });
}
