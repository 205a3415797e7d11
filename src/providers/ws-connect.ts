/**
 * Opening a provider WebSocket, the part every socket adapter shares: building the socket (the key
 * goes in a handshake header), and waiting for it under a deadline on the injected clock and the
 * caller's abort signal. What a refusal at upgrade means: `key-refusal.ts`.
 */
import type { Socket } from "node:net";
import { WebSocket, type ClientOptions } from "ws";
import type { Clock } from "../clock.js";
import { readFramesWhole } from "./frame-reader.js";
import { WholeTextFrames } from "./text-frame.js";

/** ws's default `maxPayload` for a client (bytes): what a provider socket accepts unless its options say. */
const WS_CLIENT_MAX_PAYLOAD = 100 * 1024 * 1024;

/** Builds a provider socket (tests inject one, e.g. a subclass with a large `bufferedAmount`). */
export type SocketFactory = (url: string, options: ClientOptions) => WebSocket;

type SendOptions = Exclude<Parameters<WebSocket["send"]>[1], ((err?: Error) => void) | undefined>;
type SendCallback = (err?: Error) => void;

/**
 * A provider socket whose text frames leave whole (`text-frame.ts`): once open, `send(text)` with
 * no options or callback writes one masked frame onto the socket the upgrade response came on
 * (ws's public `upgrade` event), rather than through ws's sender. Anything else (binary, options,
 * a callback, a socket not open, an extension negotiated) is ws's own `send`. And its text and
 * binary frames are read whole (`frame-reader.ts`).
 */
export class ProviderSocket extends WebSocket {
  #frames: WholeTextFrames | undefined;

  constructor(url: string, options: ClientOptions) {
    super(url, options);
    let socket: Socket | undefined;
    this.once("upgrade", (response) => {
      socket = response.socket;
    });
    // Registered first, so it runs before any other `open` listener sends.
    this.once("open", () => {
      if (socket === undefined || this.extensions !== "") return;
      this.#frames = new WholeTextFrames(socket, true);
      readFramesWhole(this, socket, false, options.maxPayload ?? WS_CLIENT_MAX_PAYLOAD);
    });
  }

  override send(data: Parameters<WebSocket["send"]>[0], cb?: SendCallback): void;
  override send(data: Parameters<WebSocket["send"]>[0], options: SendOptions, cb?: SendCallback): void;
  override send(data: Parameters<WebSocket["send"]>[0], options?: SendOptions | SendCallback, cb?: SendCallback): void {
    const frames = this.#frames;
    if (frames !== undefined && typeof data === "string" && options === undefined && this.readyState === WebSocket.OPEN) {
      frames.send(data);
      return;
    }
    if (typeof options === "function") super.send(data, options);
    else super.send(data, options ?? {}, cb);
  }
}

/** Audio is binary or base64: permessage-deflate would cost CPU and a zlib context per socket for little gain. */
export const newWebSocket: SocketFactory = (url, options) => new ProviderSocket(url, { perMessageDeflate: false, ...options });

/**
 * Close cleanly (1000), or drop the socket if the close handshake takes longer than `timeoutMs`;
 * a socket still connecting is dropped at once. Resolves once the socket is closed.
 */
export function closeGracefully(ws: WebSocket, clock: Clock, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) {
      resolve();
      return;
    }
    const timer = clock.setTimeout(() => {
      ws.terminate();
      resolve();
    }, timeoutMs);
    ws.once("close", () => {
      timer.cancel();
      resolve();
    });
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
}

/** What an aborted open rejects with: the signal's reason when it is an Error, else `fallback` (a message, or the adapter's own error). */
export function abortReason(signal: AbortSignal | undefined, fallback: string | (() => Error)): Error {
  if (signal?.reason instanceof Error) return signal.reason;
  return typeof fallback === "string" ? new Error(fallback) : fallback();
}

export interface OpenDeadlineOptions {
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** The error when `timeoutMs` passes first. */
  readonly timedOut: () => Error;
  /** The error when the signal aborts first. */
  readonly aborted: () => Error;
  /** Runs once as the wait settles (with its error, if it failed), before the promise settles. */
  readonly settled?: (error: Error | undefined) => void;
}

export interface OpenDeadline<T> {
  readonly promise: Promise<T>;
  /** Not settled yet. */
  readonly pending: boolean;
  resolve(value: T): void;
  reject(error: Error): void;
}

/**
 * Wait for a connection to become usable (its handshake, or the vendor's first message) under a
 * deadline and an abort signal. Settles once: by `resolve`/`reject`, the timeout or the signal;
 * the timer and the abort listener are removed then.
 */
export function openDeadline<T>(options: OpenDeadlineOptions): OpenDeadline<T> {
  const { clock, timeoutMs, signal } = options;
  let pending = true;
  let fulfil!: (value: T) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<T>((resolve, reject) => {
    fulfil = resolve;
    fail = reject;
  });
  const settle = (outcome: { readonly value: T } | { readonly error: Error }): void => {
    if (!pending) return;
    pending = false;
    timer.cancel();
    signal?.removeEventListener("abort", onAbort);
    const error = "error" in outcome ? outcome.error : undefined;
    options.settled?.(error);
    if ("error" in outcome) fail(outcome.error);
    else fulfil(outcome.value);
  };
  const onAbort = (): void => settle({ error: options.aborted() });
  const timer = clock.setTimeout(() => settle({ error: options.timedOut() }), timeoutMs);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted === true) onAbort();
  return {
    promise,
    get pending() {
      return pending;
    },
    resolve: (value) => settle({ value }),
    reject: (error) => settle({ error }),
  };
}
