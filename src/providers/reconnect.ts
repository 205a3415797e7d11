/**
 * The one reconnect loop of the provider links (s2s sockets, the STT decorator, TTS sockets and
 * re-sent TTS requests): wait, dial, and again, within a budget, until a link is usable, a failure
 * says a retry cannot help, or the caller stops. Waits go through the injected clock, so tests run
 * it under virtual time.
 */
import type { Clock } from "../clock.js";
import { GatewayError, messageOf } from "../errors.js";

/**
 * The reconnect schedule (ms before each attempt; the list's length is the budget) of every
 * provider link that has no vendor reason for another: docs/vendors.md, "Reconnects".
 */
export const RECONNECT_DELAYS_MS: readonly number[] = [250, 1000, 2000];

export type ReconnectOutcome =
  /** `attempt` resolved: the link is usable. `attempts` counts this one. */
  | { readonly kind: "connected"; readonly attempts: number }
  /** An attempt failed in a way a retry cannot help (`retryable` said no): its error. */
  | { readonly kind: "refused"; readonly error: Error; readonly attempts: number }
  /** Every attempt of the budget failed: the last failure, if any attempt was made. */
  | { readonly kind: "exhausted"; readonly last: Error | undefined; readonly attempts: number }
  /** The signal aborted (the session closed): nothing more to do. */
  | { readonly kind: "stopped" };

export interface ReconnectOptions {
  readonly clock: Clock;
  /** Wait before each attempt (ms, on the clock even when 0); its length is the budget. */
  readonly delaysMs: readonly number[];
  /** One attempt at once first, before the schedule and outside its budget (a planned switch, a drop mid-speech). */
  readonly immediately?: boolean;
  /** Stops the loop, waiting or dialing: the outcome is then "stopped". */
  readonly signal: AbortSignal;
  /** One attempt (numbered from 1): resolves once the link is usable, rejects when it fails. */
  readonly attempt: (n: number) => Promise<void>;
  /** Whether another attempt may help after this failure. Default: anything but a fatal GatewayError. */
  readonly retryable?: (error: Error) => boolean;
  /** Each failed attempt, before the loop decides (`retry`: another attempt follows, budget allowing). */
  readonly failed?: (error: Error, n: number, retry: boolean) => void;
}

/** A failure a retry may cure: anything but a fatal GatewayError (a refused key, a rejected setup). */
export function isRetryable(error: Error): boolean {
  return !(error instanceof GatewayError && error.fatal);
}

const STOPPED: ReconnectOutcome = { kind: "stopped" };

export async function reconnect(options: ReconnectOptions): Promise<ReconnectOutcome> {
  const { clock, signal } = options;
  const retryable = options.retryable ?? isRetryable;
  let last: Error | undefined;
  let n = 0;
  const delays: readonly (number | undefined)[] = options.immediately === true ? [undefined, ...options.delaysMs] : options.delaysMs;
  for (const delay of delays) {
    if (signal.aborted) return STOPPED;
    if (delay !== undefined) {
      try {
        await clock.sleep(delay, signal);
      } catch {
        return STOPPED;
      }
    }
    if (signal.aborted) return STOPPED;
    n += 1;
    try {
      await options.attempt(n);
    } catch (caught) {
      if (signal.aborted) return STOPPED;
      const error = caught instanceof Error ? caught : new Error(messageOf(caught));
      last = error;
      const retry = retryable(error);
      options.failed?.(error, n, retry);
      if (!retry) return { kind: "refused", error, attempts: n };
      continue;
    }
    return signal.aborted ? STOPPED : { kind: "connected", attempts: n };
  }
  return { kind: "exhausted", last, attempts: n };
}
