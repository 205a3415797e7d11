/**
 * Runtime knobs (not user config) the provider adapters share: the log they write to, the
 * retry schedule of the adapters that retry (TTS reconnects, re-sent TTS requests: both on
 * src/providers/reconnect.ts), and the shield around the session's STT event handlers.
 */
import { systemClock, type Clock } from "../../clock.js";
import { messageOf } from "../../errors.js";
import { NO_LOG, type ProviderLog } from "../../providers/provider-log.js";
import type { SttEvents } from "../stt-port.js";

/**
 * The TTS schedule, passed to the one retry loop (src/providers/reconnect.ts) as its `delaysMs`:
 * wait before each retry (ms); the list's length is the retry budget. Faster than the shared
 * `RECONNECT_DELAYS_MS` (250/1000/2000 ms) because a TTS retry happens mid-reply: the caller hears
 * dead air until it succeeds. Documented in docs/vendors.md (Cartesia "Socket drop", ElevenLabs
 * "Bounds", OpenAI TTS "Retries"); the adapters' tests pass shorter ones (`retryDelaysMs`).
 */
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
