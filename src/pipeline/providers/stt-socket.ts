/**
 * The socket plumbing both STT adapters share (Deepgram, AssemblyAI: docs/vendors.md): dialing
 * with the key header, waiting for the session to become usable under a timeout and the caller's
 * abort signal, reading an HTTP refusal at upgrade (401/403 name the key variable), closing with
 * the vendor's close message, and telling a close the session asked for from a drop.
 *
 * Errors while opening reject `open()` (a GatewayError, `fatal` when a retry cannot help) and are
 * not reported through the events; after `open()` resolved, a drop goes to `events.error` +
 * `events.closed({expected:false})`, and a close the session asked for to `closed({expected:true})`.
 * What a close code means, and which message makes the session usable, are the vendor's.
 */
import type { IncomingMessage } from "node:http";
import type { RawData, WebSocket } from "ws";
import { systemClock, type Clock, type Timer } from "../../clock.js";
import { GatewayError, messageOf } from "../../errors.js";
import { LogThrottle, type Logger } from "../../log.js";
import type { SttEvents } from "../stt-port.js";
import { isKeyRefused, isRetryableStatus, sttKeyRefused } from "../../providers/key-refusal.js";
import { NO_LOG, type ProviderLog } from "../../providers/provider-log.js";
import { shieldSttEvents } from "./provider-runtime.js";
import { sendAudioOrDrop } from "../../providers/ws-backlog.js";
import { abortReason, newWebSocket, openDeadline, type OpenDeadline, type SocketFactory } from "../../providers/ws-connect.js";
import { rawText } from "../../providers/ws-frames.js";

/** Runtime knobs (not user config) every STT adapter takes: logging, time, timeouts, and a socket factory for tests. */
export interface SttSocketOptions {
  /** A pino logger (or anything with `debug`/`warn(obj, msg)`); default: silent. */
  readonly log?: Logger | ProviderLog;
  readonly clock?: Clock;
  /** `open()` fails after this long without a usable session. Default 10000. */
  readonly openTimeoutMs?: number;
  /** After the vendor's close message, wait this long for the server to close before dropping the socket. Default 3000. */
  readonly closeTimeoutMs?: number;
  /** Build the socket (tests inject a subclass, e.g. one with a large `bufferedAmount`). */
  readonly connect?: SocketFactory;
}

/** `SttSocketOptions` with the defaults filled in. */
export interface SttRuntime {
  readonly log: ProviderLog;
  readonly clock: Clock;
  readonly openTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly connect: SocketFactory;
}

export function sttRuntime(options: SttSocketOptions): SttRuntime {
  return {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    openTimeoutMs: options.openTimeoutMs ?? 10_000,
    closeTimeoutMs: options.closeTimeoutMs ?? 3000,
    connect: options.connect ?? newWebSocket,
  };
}

/** A failure as the port reports it: the error, and whether reconnecting may help. */
export interface SttFailure {
  readonly error: GatewayError;
  readonly recoverable: boolean;
}

export function sttFailure(message: string, recoverable: boolean, cause?: unknown): SttFailure {
  return { error: new GatewayError("stt", message, { fatal: !recoverable, ...(cause === undefined ? {} : { cause }) }), recoverable };
}

/** The vendor refused the key (`how`: "HTTP 401", "close 4001", …): fatal, naming the variable to check. */
export function keyRefused(vendor: string, how: string, keyVariable: string, detail: string): SttFailure {
  return { error: sttKeyRefused(vendor, how, keyVariable, detail), recoverable: false };
}

/** An HTTP status at upgrade → failure. 401/403 name the key variable; 4xx other than 408/429 are not retried. */
export function upgradeFailure(vendor: string, status: number, detail: string, keyVariable: string): SttFailure {
  if (isKeyRefused(status)) return keyRefused(vendor, `HTTP ${status}`, keyVariable, detail);
  const recoverable = isRetryableStatus(status);
  return sttFailure(`${vendor} refused the connection (HTTP ${status})${detail === "" ? "" : `: ${detail}`}`, recoverable);
}

/** `open()`'s first step: an aborted signal rejects with its reason before anything is dialled. */
export function throwIfAborted(signal: AbortSignal | undefined, vendor: string): void {
  if (signal?.aborted === true) throw abortReason(signal, `${vendor} open aborted`);
}

/** Build the socket; a factory that throws is fatal (a retry would throw again). */
export function dialStt(vendor: string, runtime: SttRuntime, url: string, headers: Readonly<Record<string, string>>): WebSocket {
  runtime.log.debug({ url }, `${vendor} connecting`);
  try {
    return runtime.connect(url, { headers });
  } catch (error) {
    throw sttFailure(`${vendor} connection failed: ${messageOf(error)}`, false, error).error;
  }
}

export interface SttSocketConfig {
  readonly vendor: string;
  readonly keyVariable: string;
  /** What becoming usable is called in the timeout message: `<vendor> did not <readyPhrase> within N ms`. */
  readonly readyPhrase: string;
  /** A response header giving a refusal's reason, preferred to the body (Deepgram: `dg-error`). */
  readonly refusalHeader?: string;
}

/** What the vendor's session tells the socket. */
export interface SttSocketHandlers {
  /** A text frame, parsed as JSON (binary frames, and frames after the close, never come here). */
  message(message: unknown): void;
  /**
   * What a close the session did not ask for means: `opening` for one before the session was
   * usable (and not an HTTP refusal, which the socket reads itself), else a drop.
   */
  closeFailure(code: number, reason: string, cause: Error | undefined, opening: boolean): SttFailure;
  /** The open session's socket closed, before `closed` is reported: stop timers, hand over what is pending. */
  ended?(): void;
}

export type SttPhase = "opening" | "open" | "closed";

/** One STT session's socket: its phase, the open wait, the close handshake, drops, and shielded events. */
export class SttSocket {
  /** The session's events, each call shielded: a handler that throws cannot break the socket's event loop. */
  readonly events: SttEvents;
  #phase: SttPhase = "opening";
  #closeRequested = false;
  #dropped = 0;
  #closeTimer: Timer | undefined;
  #upgradeStatus: number | undefined;
  #upgradeDetail = "";
  #socketError: Error | undefined;
  #opening: OpenDeadline<void> | undefined;
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;
  /** Frames the vendor should not send (not JSON): at most a line every 10 s. */
  readonly #warnings: LogThrottle;

  constructor(
    readonly ws: WebSocket,
    private readonly config: SttSocketConfig,
    private readonly runtime: SttRuntime,
    events: SttEvents,
    private readonly handlers: SttSocketHandlers,
  ) {
    this.events = shieldSttEvents(events, runtime.log);
    this.#warnings = new LogThrottle(() => runtime.clock.now());
    this.#closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));
    ws.binaryType = "nodebuffer";
    ws.on("unexpected-response", (_req, res: IncomingMessage) => this.#onUnexpectedResponse(res));
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onMessage(data, isBinary));
    ws.on("error", (error: Error) => {
      this.#socketError ??= error;
      runtime.log.debug({ err: messageOf(error) }, `${config.vendor} socket error`);
    });
    ws.on("close", (code: number, reason: Buffer) => this.#onClose(code, reason.toString()));
  }

  get phase(): SttPhase {
    return this.#phase;
  }

  /** The session asked to close (its close message is sent or the socket terminated). */
  get closeRequested(): boolean {
    return this.#closeRequested;
  }

  get droppedBytes(): number {
    return this.#dropped;
  }

  /** Resolves when `markOpen()` is called; rejects on failure, abort or timeout. */
  waitOpen(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
    const { vendor, readyPhrase } = this.config;
    this.#opening = openDeadline<void>({
      clock: this.runtime.clock,
      timeoutMs,
      signal,
      timedOut: () => sttFailure(`${vendor} did not ${readyPhrase} within ${timeoutMs} ms`, true).error,
      aborted: () => abortReason(signal, `${vendor} open aborted`),
      settled: (error) => {
        // Timed out or aborted while opening: abandon the socket (a close has already closed it).
        if (error === undefined || this.#phase !== "opening") return;
        this.#phase = "closed";
        this.ws.terminate();
      },
    });
    return this.#opening.promise;
  }

  /** The session is usable (the socket opened, or the vendor's ready message came). False when the open was abandoned. */
  markOpen(): boolean {
    if (this.#opening?.pending !== true) return false;
    this.#phase = "open";
    this.#opening.resolve();
    return true;
  }

  /** Send audio unless the socket's backlog is over the limit; returns the bytes dropped (and counted). */
  sendAudio(chunk: Uint8Array): number {
    const dropped = sendAudioOrDrop(this.ws, chunk, chunk.byteLength);
    this.#dropped += dropped;
    return dropped;
  }

  /** A control message: a text frame, never dropped by the backlog policy. */
  control(message: { type: string }): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    try {
      this.ws.send(JSON.stringify(message));
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error), type: message.type }, `${this.config.vendor} control message not sent`);
    }
  }

  /**
   * Close: on an open socket `goodbye` sends the vendor's close message and the server gets
   * `closeTimeoutMs` to close before the socket is dropped; any other socket is dropped at once.
   */
  close(goodbye: () => void): Promise<void> {
    if (this.#phase === "closed") return this.#closed;
    if (!this.#closeRequested) {
      this.#closeRequested = true;
      if (this.ws.readyState === this.ws.OPEN) {
        goodbye();
        this.#closeTimer = this.runtime.clock.setTimeout(() => this.ws.terminate(), this.runtime.closeTimeoutMs);
      } else {
        this.ws.terminate();
      }
    }
    return this.#closed;
  }

  #onUnexpectedResponse(res: IncomingMessage): void {
    this.#upgradeStatus = res.statusCode ?? 0;
    const header = this.config.refusalHeader === undefined ? undefined : res.headers[this.config.refusalHeader];
    this.#upgradeDetail = typeof header === "string" ? header : "";
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (body.length < 500) body += chunk;
    });
    res.on("error", () => {});
    res.on("end", () => {
      if (this.#upgradeDetail === "") this.#upgradeDetail = body.slice(0, 500).trim();
      this.ws.terminate();
    });
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary || this.#phase === "closed") return;
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch (error) {
      this.#warnings.warn(this.runtime.log, { err: messageOf(error) }, `${this.config.vendor} sent malformed JSON; ignored`);
      return;
    }
    this.handlers.message(message);
  }

  #onClose(code: number, reason: string): void {
    const { vendor, keyVariable } = this.config;
    const wasPhase = this.#phase;
    this.#phase = "closed";
    this.#closeTimer?.cancel();
    this.#resolveClosed();
    if (wasPhase === "opening") {
      const f =
        this.#upgradeStatus !== undefined
          ? upgradeFailure(vendor, this.#upgradeStatus, this.#upgradeDetail, keyVariable)
          : this.handlers.closeFailure(code, reason, this.#socketError, true);
      this.#opening?.reject(f.error);
      return;
    }
    if (wasPhase === "closed") return;
    this.handlers.ended?.();
    if (this.#closeRequested) {
      this.events.closed({ expected: true });
      return;
    }
    const f = this.handlers.closeFailure(code, reason, this.#socketError, false);
    this.runtime.log.warn({ code, reason, err: f.error.message }, `${vendor} connection dropped`);
    this.events.error(f.error, { recoverable: f.recoverable });
    this.events.closed({ expected: false });
  }
}

