/**
 * OpenAI Realtime (GA, `gpt-realtime`) as an S2sProvider: docs/vendors.md (OpenAI Realtime).
 *
 * The vendor's wire mapping lives in `openai-realtime/` (config, wire messages, the in-band
 * response slot, the socket over time, the session); the socket toolkit is `src/providers/`.
 *
 * One WebSocket per session, PCM16 24 kHz both ways. Per socket: ← `session.created`, then exactly
 * one → `session.update`, ← `session.updated`, then the conversation so far is replayed
 * (`conversation.item.create`) and `open()` resolves. A transient drop (1001/1006/1011/1012/1013, a
 * network error) reconnects with backoff on the injected clock and replays the conversation, plus
 * any tool results whose follow-up response never started, so each call is answered exactly once.
 *
 * One in-band response at a time, by state (`InBandSlot`: idle | requested | running), never by the
 * wording of an error: see `#next`, `#inBandStarted` and `#expectedError`. `response.cancel` goes out
 * only while the response it names runs.
 *
 * Errors while opening reject `open()` (a GatewayError; `fatal` when a retry cannot help, e.g. a
 * refused key) and are not reported through the events. After `open()`, in-band `error` events are
 * non-fatal, except those the adapter expects (a refusal of a request that crossed a response, a
 * cancel that crossed a response's end), which are not reported; a link gone for good reports one
 * fatal error, then `closed({expected:false})`.
 */
import { systemClock, type Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import { NO_LOG, type ProviderLog } from "../../providers/provider-log.js";
import { RECONNECT_DELAYS_MS } from "../../providers/reconnect.js";
import { newWebSocket, type SocketFactory } from "../../providers/ws-connect.js";
import type { S2sEvents, S2sOpenOptions, S2sProvider } from "../s2s-port.js";
import { AUDIO_FORMATS, KIND, readConfig } from "./openai-realtime/config.js";
import { openAborted, type Runtime } from "./openai-realtime/connection.js";
import { RealtimeSession, type OpenAiRealtimeSession } from "./openai-realtime/session.js";

const DEFAULT_OPEN_TIMEOUT_MS = 10_000;

/** Runtime knobs (not user config). */
export interface OpenAiRealtimeOptions {
  /** Default: silent. */
  readonly log?: Logger | ProviderLog;
  /** Timers: the open timeout and the reconnect backoff. Default: the system clock. */
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; the list's length is the budget. Default `RECONNECT_DELAYS_MS` (docs/vendors.md, "Reconnects"). */
  readonly reconnectDelaysMs?: readonly number[];
  /** `open()` (and each reconnect) fails without `session.updated` within this long. Default 10000. */
  readonly openTimeoutMs?: number;
  /** Build the socket. Default: `newWebSocket` (no permessage-deflate). */
  readonly connect?: SocketFactory;
}

export interface OpenAiRealtimeProvider extends S2sProvider {
  open(options: S2sOpenOptions, events: S2sEvents): Promise<OpenAiRealtimeSession>;
}

/**
 * The OpenAI Realtime provider; options (`s2s.options.*`): `readConfig` in `openai-realtime/config.ts`.
 * A missing key throws MissingKeyError here, not on the first call.
 */
export function openAiRealtime(descriptor: ProviderDescriptor, env: Readonly<Record<string, string | undefined>>, options: OpenAiRealtimeOptions = {}): OpenAiRealtimeProvider {
  const config = readConfig(descriptor, env);
  const runtime: Runtime = {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    reconnectDelaysMs: options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS,
    openTimeoutMs: options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS,
    connect: options.connect ?? newWebSocket,
  };
  return {
    kind: KIND,
    audioFormats: AUDIO_FORMATS,
    async open(openOptions, events) {
      const { signal } = openOptions;
      if (signal?.aborted === true) throw openAborted(signal);
      const session = new RealtimeSession(config, runtime, openOptions, events);
      await session.start(signal);
      return session;
    },
  };
}
