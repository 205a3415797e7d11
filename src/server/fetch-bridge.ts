/**
 * A Fetch handler served on node:http (an agent's `routes`, docs/config.md §5): the request
 * becomes a Fetch `Request` — its method, a URL with the host it was sent to, its headers, its
 * body as a stream held to `maxBodyBytes` — and the handler's `Response` is written back: status,
 * headers, the body streamed as it is produced, at the pace the client reads it.
 *
 * Nothing a handler does may break the gateway or another request: a throw, a rejection or a
 * value that is not a Response is a 500 with a generic body; no Response within `answerMs` is a
 * 504; a body over the limit is a 413 (never buffered past the limit); a response body that sends
 * nothing for `idleMs` has its connection cut. Each is logged, throttled (a stranger can repeat it).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock, Timer } from "../clock.js";
import type { LogThrottle, Logger } from "../log.js";
import { kindOf } from "../manifest/errors.js";
import { json } from "./json-reply.js";

export interface FetchBridgeOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly throttle: LogThrottle;
  /** What the log lines name: the route's key (`GET /status`). */
  readonly route: string;
  /** The most a request body may hold (bytes); past it, 413. */
  readonly maxBodyBytes: number;
  /** How long the handler has to return its Response (ms); past it, 504 and the request's signal aborts. */
  readonly answerMs: number;
  /** How long a response body may go without a chunk (ms); past it, the connection is cut. */
  readonly idleMs: number;
}

/** A host as a Host header may name it: a DNS name or IPv4 address, or a bracketed IPv6 literal, and a port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The request's URL as its client addressed it: `https` when a TLS-terminating proxy says so in
 * X-Forwarded-Proto, the Host header when it is a host (else `localhost`), then the path and query.
 */
export function fetchUrl(req: IncomingMessage, url: URL): string {
  const scheme = String(req.headers["x-forwarded-proto"] ?? "").split(",")[0]?.trim() === "https" ? "https" : "http";
  const target = `${url.pathname}${url.search}`;
  const host = req.headers.host;
  if (host !== undefined && HOST.test(host)) {
    try {
      return new URL(`${scheme}://${host}${target}`).href;
    } catch {
      // A port out of range or a malformed IPv6 literal: localhost, below.
    }
  }
  return new URL(`${scheme}://localhost${target}`).href;
}

/** The request's headers as Fetch `Headers`, repeats kept; a name or value Fetch refuses is left out. */
function fetchHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // Left out: the handler sees the headers Fetch can carry.
    }
  }
  return headers;
}

/** Thrown into a request body's stream when the client sends more than the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`the request body is over ${limit} bytes`);
  }
}

/**
 * A request body as a Fetch stream: read from the socket only as the handler reads it (the
 * socket is paused while a chunk waits), counted, and errored with `BodyTooLargeError` past the
 * limit — what was read is never more than the limit plus one socket chunk.
 */
class BoundedBody {
  readonly stream: ReadableStream<Uint8Array>;
  #received = 0;
  #over = false;
  #settled = false;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  readonly #req: IncomingMessage;
  readonly #limit: number;

  constructor(req: IncomingMessage, limit: number) {
    this.#req = req;
    this.#limit = limit;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        req.on("data", this.#data);
        req.on("end", this.#end);
        req.on("error", this.#fail);
        req.on("close", this.#closed);
      },
      pull: () => {
        req.resume();
      },
      cancel: () => {
        this.#settled = true;
        req.resume();
      },
    });
  }

  /** The client sent more than the limit. */
  get overLimit(): boolean {
    return this.#over;
  }

  readonly #data = (chunk: Buffer): void => {
    if (this.#settled) return;
    this.#received += chunk.byteLength;
    if (this.#received > this.#limit) {
      this.#over = true;
      this.#fail(new BodyTooLargeError(this.#limit));
      return;
    }
    this.#controller?.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((this.#controller?.desiredSize ?? 0) <= 0) this.#req.pause();
  };

  readonly #end = (): void => {
    if (this.#settled) return;
    this.#settled = true;
    this.#controller?.close();
  };

  readonly #fail = (error: unknown): void => {
    if (this.#settled) return;
    this.#settled = true;
    this.#controller?.error(error);
    // The rest is read and dropped (bounded by the server's request timeout), never kept.
    this.#req.resume();
  };

  readonly #closed = (): void => this.#fail(new Error("the client closed the request before its body ended"));

  /** The exchange is over: a reader still waiting is failed, and what the client still sends is dropped. */
  release(): void {
    this.#fail(new Error("the exchange is over"));
    this.#req.off("data", this.#data);
    this.#req.off("end", this.#end);
    this.#req.off("error", this.#fail);
    this.#req.off("close", this.#closed);
  }
}

/** Whether the request says it carries a body (RFC 9112 §6.3: Transfer-Encoding, or a Content-Length above 0). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

const TIMED_OUT = Symbol("timed out");

/** `work`, or `TIMED_OUT` when it has not settled within `ms`. */
function within<T>(work: Promise<T>, ms: number, clock: Clock): Promise<T | typeof TIMED_OUT> {
  let timer: Timer | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = clock.setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([work, late]).finally(() => timer?.cancel());
}

/** Resolves when `res` can take more, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

function tooLarge(res: ServerResponse, limit: number): void {
  json(res, 413, { error: `the request body is over ${limit} bytes` }, { connection: "close" });
}

/** A Response nobody will send: its body is cancelled, so whatever produces it can stop. */
function discard(value: unknown): void {
  if (value instanceof Response && value.body !== null && !value.bodyUsed) value.body.cancel().catch(() => undefined);
}

type Outcome = { readonly value: unknown } | { readonly error: unknown };

/** Write the handler's Response: status and headers, then its body as it comes, at the client's pace. */
async function writeResponse(req: IncomingMessage, res: ServerResponse, response: Response, options: FetchBridgeOptions): Promise<void> {
  const { clock, log, throttle, route, idleMs } = options;
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  try {
    res.writeHead(response.status, headers);
  } catch (err) {
    // A header value Fetch allows and HTTP/1.1 cannot carry (a character past U+00FF).
    throttle.error(log, { err, route }, "agent route answered a header HTTP cannot carry");
    discard(response);
    if (res.headersSent) res.destroy();
    else json(res, 500, { error: "internal error" });
    return;
  }
  if (response.body === null || req.method === "HEAD") {
    discard(response);
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  res.once("close", cancel);
  try {
    for (;;) {
      const next = await within(reader.read(), idleMs, clock);
      if (next === TIMED_OUT) {
        throttle.warn(log, { route, idleMs }, "agent route body stalled; connection cut");
        cancel();
        res.destroy();
        return;
      }
      if (next.done || res.destroyed) break;
      if (!res.write(next.value)) await drained(res);
    }
    if (!res.destroyed) res.end();
  } catch (err) {
    throttle.error(log, { err, route }, "agent route body failed");
    cancel();
    res.destroy();
  } finally {
    res.off("close", cancel);
  }
}

/**
 * Answer `req` with `handler`: the request as a Fetch Request (its `signal` aborts when the client
 * goes away or the answer is late), the Response written back. Never rejects for anything the
 * handler or the client does.
 */
export async function serveFetch(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  handler: (request: Request) => Response | Promise<Response>,
  options: FetchBridgeOptions,
): Promise<void> {
  const { clock, log, throttle, route, maxBodyBytes, answerMs } = options;
  if (Number(req.headers["content-length"] ?? 0) > maxBodyBytes) return tooLarge(res, maxBodyBytes);
  const method = req.method ?? "GET";
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort(new Error("the client went away"));
  });
  // Fetch gives GET and HEAD no body; Node drops what such a request sends.
  const body = method !== "GET" && method !== "HEAD" && hasBody(req) ? new BoundedBody(req, maxBodyBytes) : undefined;
  try {
    const request = new Request(fetchUrl(req, url), {
      method,
      headers: fetchHeaders(req),
      signal: controller.signal,
      ...(body === undefined ? {} : { body: body.stream, duplex: "half" as const }),
    });
    const answer: Promise<Outcome> = Promise.resolve()
      .then(() => handler(request))
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    const outcome = await within(answer, answerMs, clock);
    if (outcome === TIMED_OUT) {
      controller.abort(new Error(`the route did not answer within ${answerMs} ms`));
      void answer.then((late) => ("value" in late ? discard(late.value) : undefined));
      throttle.warn(log, { route, answerMs }, "agent route did not answer in time");
      return json(res, 504, { error: "the route did not answer in time" });
    }
    if (body?.overLimit === true) {
      if ("value" in outcome) discard(outcome.value);
      return tooLarge(res, maxBodyBytes);
    }
    if ("error" in outcome) {
      throttle.error(log, { err: outcome.error, route }, "agent route failed");
      return json(res, 500, { error: "internal error" });
    }
    if (!(outcome.value instanceof Response)) {
      throttle.error(log, { route, returned: kindOf(outcome.value) }, "agent route returned no Response");
      return json(res, 500, { error: "internal error" });
    }
    if (res.destroyed) return discard(outcome.value);
    await writeResponse(req, res, outcome.value, options);
  } finally {
    body?.release();
  }
}
