/**
 * Opening a provider WebSocket, the part every socket adapter shares: building the socket (the key
 * goes in a handshake header), and waiting for it under a deadline on the injected clock and the
 * caller's abort signal. What a refusal at upgrade means: `key-refusal.ts`.
 */
import { WebSocket, type ClientOptions } from "ws";
import type { Clock } from "../clock.js";

/** Builds a provider socket (tests inject one, e.g. a subclass with a large `bufferedAmount`). */
export type SocketFactory = (url: string, options: ClientOptions) => WebSocket;

/** Audio is binary or base64: permessage-deflate would cost CPU and a zlib context per socket for little gain. */
export const newWebSocket: SocketFactory = (url, options) => new WebSocket(url, { perMessageDeflate: false, ...options });

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
