import type { Clock, Timer } from "../clock.js";
import { CLOSE, GatewayError, messageOf } from "../errors.js";
import type { Logger } from "../log.js";

/** Providers must open within this long (ms; protocol.md). */
export const START_TIMEOUT_MS = 10_000;

export interface StartDeadline {
  readonly clock: Clock;
  readonly log: Logger;
  /** The deadline (ms from now). */
  readonly timeoutMs: number;
  /** Resolves when the client hangs up. */
  readonly hungUp: Promise<unknown>;
}

/**
 * A session's providers opened under its start deadline: `open` races the deadline, and the
 * signal it is handed aborts when the client hangs up meanwhile, when the open fails or when the
 * deadline passes, so no half-open, billed provider socket outlives a failed start. Resolves to
 * undefined once opened, or to the fatal error the session ends with (closing 1011 unless the
 * error carries a fatal close code of its own).
 */
export async function openWithin(deadline: StartDeadline, open: (signal: AbortSignal) => Promise<void>): Promise<GatewayError | undefined> {
  const { clock, log, timeoutMs } = deadline;
  const starting = new AbortController();
  // A client that hangs up while providers are still opening aborts their handshakes.
  void deadline.hungUp.then(() => starting.abort(new GatewayError("connection", "the client hung up during start")));
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(new GatewayError("internal", `providers did not open within ${timeoutMs} ms`, { fatal: true })), timeoutMs);
  });
  try {
    await Promise.race([open(starting.signal), timeout]);
  } catch (error) {
    timer?.cancel();
    starting.abort(error);
    const failure = error instanceof GatewayError ? error : new GatewayError("internal", `session could not start: ${messageOf(error)}`, { fatal: true, cause: error });
    log.error({ err: error }, "session start failed");
    return failure.fatal ? failure : new GatewayError(failure.code, failure.message, { fatal: true, closeCode: CLOSE.internal });
  }
  timer?.cancel();
  return undefined;
}
