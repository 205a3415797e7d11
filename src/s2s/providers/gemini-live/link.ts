/**
 * Gemini Live: one socket, dialed (the key as the `key` query parameter), given its one `setup`
 * and ready on `setupComplete` (docs/vendors.md (Gemini Live), "Endpoint", "Setup", "Messages").
 * A failure before then rejects with a GatewayError, `fatal` when a retry cannot help: the HTTP
 * refusal and close-code tables of `src/providers`.
 */
import type { RawData, WebSocket } from "ws";
import type { Clock } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import { isTransientClose } from "../../../providers/close-codes.js";
import { isKeyRefused, isRetryableStatus } from "../../../providers/key-refusal.js";
import type { LogThrottle } from "../../../log.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { abortReason, openDeadline, type SocketFactory } from "../../../providers/ws-connect.js";
import { isRecord, rawText } from "../../../providers/ws-frames.js";
import type { GeminiLiveSettings } from "./settings.js";

/** One socket. `ready` after `setupComplete`; `retired` once the session stopped listening to it. */
export interface Link {
  readonly ws: WebSocket;
  readonly id: number;
  readonly resumed: boolean;
  ready: boolean;
  retired: boolean;
  /** The service sent a resumable handle on this socket (it sends one after each turn). */
  sentHandle: boolean;
  httpStatus?: number;
}

export interface DialOptions {
  readonly settings: GeminiLiveSettings;
  /** Builds the socket (tests inject one, e.g. with a congested send buffer). */
  readonly connect: SocketFactory;
  readonly clock: Clock;
  readonly log: ProviderLog;
  /** The session's: frames the service should not send are logged at most once a kind every 10 s. */
  readonly warnings: LogThrottle;
  readonly openTimeoutMs: number;
  readonly id: number;
  /** The resumption handle the `setup` carries, if any. */
  readonly handle: string | undefined;
  /** The `setup` message of this socket. */
  readonly setup: () => object;
  readonly signal: AbortSignal | undefined;
  /** The link exists (before any event of its socket). */
  readonly created: (link: Link) => void;
  /** Whether messages of this link still matter (it is the session's socket). */
  readonly current: (link: Link) => boolean;
  /** A server message on the ready link. */
  readonly message: (link: Link, message: Record<string, unknown>) => void;
  /** The ready link closed. */
  readonly closed: (link: Link, code: number, reason: string) => void;
}

/** What an aborted open rejects with. */
export function openAborted(signal: AbortSignal | undefined): Error {
  return abortReason(signal, () => new GatewayError("s2s", "Gemini Live open aborted"));
}

/** Open a socket, send its one `setup`, and resolve on `setupComplete`. */
export function dialLink(options: DialOptions): Promise<void> {
  const { settings, log, signal } = options;
  const url = new URL(settings.url);
  url.searchParams.set("key", settings.apiKey); // docs/vendors.md (Gemini Live): the key is the `key` query parameter
  const ws = options.connect(url.toString(), {});
  const link: Link = { ws, id: options.id, resumed: options.handle !== undefined, ready: false, retired: false, sentHandle: false };
  options.created(link);
  log.debug({ link: link.id, resumed: link.resumed }, "gemini-live: connecting");
  let socketError: Error | undefined;
  const opening = openDeadline<void>({
    clock: options.clock,
    timeoutMs: options.openTimeoutMs,
    signal,
    timedOut: () => new GatewayError("s2s", `Gemini Live did not complete setup within ${options.openTimeoutMs} ms`),
    aborted: () => openAborted(signal),
    settled: (error) => {
      if (error === undefined) return;
      link.retired = true;
      ws.terminate();
    },
  });
  ws.on("open", () => {
    if (link.retired) return;
    // The one `setup` of this socket, first (docs/vendors.md (Gemini Live)).
    ws.send(JSON.stringify(options.setup()));
  });
  ws.on("unexpected-response", (_request, response) => {
    link.httpStatus = response.statusCode ?? 0;
    response.resume();
    ws.terminate();
  });
  ws.on("error", (error: Error) => {
    socketError ??= error;
    log.debug({ link: link.id, err: error.message }, "gemini-live: socket error");
  });
  ws.on("message", (data: RawData) => {
    if (link.retired || !options.current(link)) return;
    const message = parse(data, log, options.warnings);
    if (message === undefined) return;
    if (!link.ready) {
      if (!("setupComplete" in message)) {
        log.warn({ keys: Object.keys(message) }, "gemini-live: a message before setupComplete; ignored");
        return;
      }
      link.ready = true;
      log.debug({ link: link.id }, "gemini-live: setup complete");
      opening.resolve();
      return;
    }
    options.message(link, message);
  });
  ws.on("close", (code: number, reason: Buffer) => {
    const why = reason.toString();
    if (!link.ready) opening.reject(dialFailure(settings.keyVariables, link.httpStatus, code, why, socketError));
    else options.closed(link, code, why);
  });
  return opening.promise;
}

function parse(data: RawData, log: ProviderLog, warnings: LogThrottle): Record<string, unknown> | undefined {
  // Frames may be text or binary, both UTF-8 JSON (docs/vendors.md (Gemini Live), "Messages").
  try {
    const message: unknown = JSON.parse(rawText(data));
    if (isRecord(message)) return message;
    warnings.warn(log, {}, "gemini-live: a frame that is not a JSON object; ignored");
  } catch (error) {
    warnings.warn(log, { err: messageOf(error) }, "gemini-live: malformed JSON frame; ignored");
  }
  return undefined;
}

/** Why a socket failed before `setupComplete`; `fatal` when another attempt cannot help. */
function dialFailure(keyVariables: readonly string[], httpStatus: number | undefined, code: number, reason: string, cause: Error | undefined): GatewayError {
  if (httpStatus !== undefined) {
    const keyRefused = isKeyRefused(httpStatus);
    const message = keyRefused
      ? `Gemini Live refused the API key (HTTP ${httpStatus}): check ${keyVariables.join(" / ")}`
      : `Gemini Live refused the connection (HTTP ${httpStatus})`;
    return new GatewayError(keyRefused ? "auth" : "s2s", message, { fatal: !isRetryableStatus(httpStatus) });
  }
  const detail = reason !== "" ? `: ${reason}` : cause !== undefined ? `: ${cause.message}` : "";
  return new GatewayError("s2s", `Gemini Live closed before setupComplete (${code}${detail})`, { fatal: !isTransientClose(code), ...(cause === undefined ? {} : { cause }) });
}
