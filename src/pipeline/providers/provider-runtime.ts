/**
 * Runtime knobs (not user config) the provider adapters share: the log they write to, and the
 * retry budget of the adapters that retry (TTS reconnects, re-sent TTS requests).
 */
import { systemClock, type Clock } from "../../clock.js";

/** The part of a pino logger the adapters use (pino's `Logger` fits). */
export interface ProviderLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The default log: silent. */
export const NO_LOG: ProviderLog = { debug: () => undefined, warn: () => undefined };

/** Wait before each retry (ms); the list's length is the retry budget. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [100, 300, 1000];

/** The knobs of an adapter that retries. */
export interface RetryOptions {
  /** Log lines for ignored server messages and retries (default: none). */
  readonly log?: ProviderLog;
  /** Timers (timeouts, retry backoff); default the system clock. */
  readonly clock?: Clock;
  /** Wait before each retry (a reconnect, or a re-sent request); its length is the retry budget. Default [100, 300, 1000]. */
  readonly retryDelaysMs?: readonly number[];
}

/** `RetryOptions` with the defaults filled in. */
export interface Retrying {
  readonly log: ProviderLog;
  readonly clock: Clock;
  readonly retryDelaysMs: readonly number[];
}

export function retrying(options: RetryOptions): Retrying {
  return {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
  };
}
