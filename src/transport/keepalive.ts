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

/** How often a peer is told that frames of its were dropped over budget (ms). */
const DROP_REPORT_EVERY_MS = 1000;

/** A peer's input budget and what to do when it is spent (see input-budget.ts). */
export interface Metering {
  readonly budget: InputBudget;
  readonly clock: Clock;
  /** Frames dropped over budget: called at most once a second, with the count since the last call. */
  readonly dropped: (count: number) => void;
}

/**
 * Deliver a peer's frames to `receive`. Nothing a peer sends may take the process down: a throw
 * downstream (a bug) is logged and contained, and the link goes on. With `metering`, the peer's
 * frames are held to its budget first: over it, the socket stops being read until the budget has
 * refilled (the peer waits, this process does not), and frames already read past one more
 * budget's worth are dropped and reported.
 */
export function onPeerMessage(ws: WebSocket, log: Logger, receive: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void, metering?: Metering): void {
  let resumeAt: Timer | undefined;
  let reportedAt = -Infinity;
  ws.on("close", () => resumeAt?.cancel());
  ws.on("message", (data, isBinary) => {
    if (metering !== undefined) {
      const bytes = Array.isArray(data) ? data.reduce((sum, b) => sum + b.byteLength, 0) : data.byteLength;
      const verdict = metering.budget.take(isBinary ? "audio" : "text", bytes);
      if (verdict === "drop") {
        const now = metering.clock.now();
        if (now - reportedAt >= DROP_REPORT_EVERY_MS) {
          reportedAt = now;
          metering.dropped(metering.budget.takeDropped());
        }
        return;
      }
      if (verdict === "pause" && resumeAt === undefined) {
        ws.pause();
        resumeAt = metering.clock.setTimeout(() => {
          resumeAt = undefined;
          ws.resume();
        }, metering.budget.resumeInMs());
      }
    }
    try {
      receive(data, isBinary);
    } catch (err) {
      log.error({ err }, "input handling failed");
    }
  });
}
