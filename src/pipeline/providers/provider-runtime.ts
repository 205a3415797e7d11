/**
 * Runtime knobs (not user config) the provider adapters share: the log they write to, the
 * retry budget of the adapters that retry (TTS reconnects, re-sent TTS requests), and the shield
 * around the session's STT event handlers.
 */
import { systemClock, type Clock } from "../../clock.js";
import { messageOf } from "../../errors.js";
import { NO_LOG, type ProviderLog } from "../../providers/provider-log.js";
import type { SttEvents } from "../stt-port.js";

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

/** STT `events` with every call caught and logged: a throwing handler never reaches the provider's socket or child. */
export function shieldSttEvents(events: SttEvents, log: ProviderLog): SttEvents {
  const call = (deliver: () => void): void => {
    try {
      deliver();
    } catch (error) {
      log.warn({ err: messageOf(error) }, "an STT event handler threw; ignored");
    }
  };
  return {
    partial: (text, info) => call(() => events.partial(text, info)),
    final: (text, info) => call(() => events.final(text, info)),
    speechStarted: () => call(() => events.speechStarted()),
    error: (error, info) => call(() => events.error(error, info)),
    closed: (info) => call(() => events.closed(info)),
  };
}
