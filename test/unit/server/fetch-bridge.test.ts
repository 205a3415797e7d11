// The Fetch bridge on a bare node:http server (through entry.ts, as the gateway serves it): what
// a handler is given, how its Response is written back, and every way a handler can misbehave —
// each answered, bounded and logged, with the server still answering afterwards.
import { request as httpRequest, createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { createLogger, LogThrottle } from "../../../src/log.js";
import { serveRequests } from "../../../src/server/entry.js";
import { BodyTooLargeError, serveFetch, type FetchBridgeOptions } from "../../../src/server/fetch-bridge.js";

let server: Server | undefined;
let lines: Record<string, unknown>[] = [];

afterEach(async () => {
  const closing = server;
  server = undefined;
  lines = [];
  if (closing === undefined) return;
  await new Promise<void>((resolve) => {
    closing.close(() => resolve());
    closing.closeAllConnections();
  });
});

type Handler = (request: Request) => Response | Promise<Response>;

/** `handler` behind the bridge on 127.0.0.1:<free port>: a 1 KiB body limit, 200 ms to answer, 200 ms of body silence. */
async function serve(handler: Handler, overrides: Partial<FetchBridgeOptions> = {}): Promise<string> {
  const log = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }) });
  const options: FetchBridgeOptions = { clock: systemClock, log, throttle: new LogThrottle(() => Date.now()), route: "POST /echo", maxBodyBytes: 1024, answerMs: 200, idleMs: 200, ...overrides };
  server = createServer();
  serveRequests(server, log, (req, res, url) => serveFetch(req, res, url, handler, options));
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

/** A request through node:http (any Host header, HEAD), answered in full. */
function send(base: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const decoder = new TextDecoder();

/** The next chunk of a response body, as text ("" once it has ended). */
async function nextChunk(reader: ReadableStreamDefaultReader<Uint8Array> | undefined): Promise<string> {
  const next = await reader?.read();
  return next?.value === undefined ? "" : decoder.decode(next.value);
}

describe("the request a handler is given", () => {
  it("its method, its URL with the host it was sent to, its headers (repeats kept) and its body", async () => {
    const base = await serve(async (request) =>
      Response.json({ method: request.method, url: request.url, tag: request.headers.get("x-tag"), body: await request.text() }),
    );
    const answer = await fetch(`${base}/echo?order=A1`, { method: "POST", headers: [["x-tag", "a"], ["x-tag", "b"]], body: "hello" });
    expect(await answer.json()).toEqual({ method: "POST", url: `${base}/echo?order=A1`, tag: "a, b", body: "hello" });
  });

  it("https behind a TLS-terminating proxy; localhost when the Host header names no host", async () => {
    const base = await serve((request) => new Response(request.url));
    expect((await send(base, "/echo?x=1", { headers: { host: "gw.example.com:8443", "x-forwarded-proto": "https" } })).body).toBe("https://gw.example.com:8443/echo?x=1");
    expect((await send(base, "/echo", { headers: { host: "bad host/../x" } })).body).toBe("http://localhost/echo");
    expect((await send(base, "/echo", { headers: { host: "gw.example.com:99999" } })).body).toBe("http://localhost/echo");
  });
});

describe("the Response written back", () => {
  it("status, headers and every Set-Cookie", async () => {
    const base = await serve(() => {
      const headers = new Headers({ "x-thing": "1", "content-type": "text/plain" });
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response("made", { status: 201, headers });
    });
    const answer = await send(base, "/echo");
    expect([answer.status, answer.headers["x-thing"], answer.headers["content-type"], answer.headers["set-cookie"], answer.body]).toEqual([201, "1", "text/plain", ["a=1", "b=2"], "made"]);
  });

  it("streams the body as it is produced: the first chunk arrives before the handler has made the second", async () => {
    let release = (): void => undefined;
    const later = new Promise<void>((resolve) => (release = resolve));
    const base = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            async start(controller) {
              controller.enqueue(new TextEncoder().encode("one "));
              await later;
              controller.enqueue(new TextEncoder().encode("two"));
              controller.close();
            },
          }),
        ),
    );
    const reader = (await fetch(`${base}/echo`)).body?.getReader();
    expect(await nextChunk(reader)).toBe("one ");
    release();
    expect(await nextChunk(reader)).toBe("two");
    expect((await reader?.read())?.done).toBe(true);
  });

  it("HEAD: the headers, no body", async () => {
    const base = await serve((request) => new Response(request.method === "HEAD" ? "ignored" : "x", { headers: { "x-method": request.method } }));
    const answer = await send(base, "/echo", { method: "HEAD" });
    expect([answer.status, answer.headers["x-method"], answer.body]).toEqual([200, "HEAD", ""]);
  });
});

describe("the request body limit", () => {
  it("a declared Content-Length over it is a 413 before the handler runs", async () => {
    let called = false;
    const base = await serve(() => ((called = true), new Response("ok")));
    const answer = await send(base, "/echo", { method: "POST", body: "x".repeat(2000) });
    expect([answer.status, JSON.parse(answer.body), called]).toEqual([413, { error: "the request body is over 1024 bytes" }, false]);
  });

  it("a streamed body is a 413 once it passes the limit; the handler never holds more than the limit", async () => {
    let read = 0;
    let failure: unknown;
    const base = await serve(async (request) => {
      const reader = request.body?.getReader();
      try {
        for (;;) {
          const next = await reader?.read();
          if (next === undefined || next.done) break;
          read += next.value.byteLength;
        }
      } catch (error) {
        failure = error;
      }
      return new Response("read it all");
    });
    // No Content-Length: sent chunked, 16 × 256 bytes.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 16; i++) controller.enqueue(new Uint8Array(256));
        controller.close();
      },
    });
    const answer = await fetch(`${base}/echo`, { method: "POST", body: chunks, duplex: "half" });
    expect([answer.status, await answer.json()]).toEqual([413, { error: "the request body is over 1024 bytes" }]);
    expect(failure).toBeInstanceOf(BodyTooLargeError);
    expect(read).toBeLessThanOrEqual(1024);
    expect((await send(base, "/echo", { method: "POST", body: "small" })).body).toBe("read it all");
  });
});

describe("a handler that misbehaves", () => {
  it("a throw, a rejection or no Response: 500 with a generic body, logged with the route; the server goes on", async () => {
    const handlers: Handler[] = [
      () => {
        throw new Error("secret detail");
      },
      () => Promise.reject(new Error("secret detail")),
      () => ({ ok: true }) as unknown as Response,
    ];
    let which = 0;
    const base = await serve((request) => (handlers[which] as Handler)(request));
    for (which = 0; which < handlers.length; which++) {
      const answer = await send(base, "/echo");
      expect([answer.status, answer.body]).toEqual([500, '{"error":"internal error"}']);
    }
    const logged = lines.filter((line) => line.level === 50).map((line) => [line.msg, line.route]);
    // One line per kind every 10 s: the rejection rides on the throw's throttle window.
    expect(logged).toEqual([
      ["agent route failed", "POST /echo"],
      ["agent route returned no Response", "POST /echo"],
    ]);
  });

  it("no Response within answerMs: 504, and the request's signal aborts so the handler can stop", async () => {
    let aborted: unknown;
    const base = await serve(
      (request) =>
        new Promise<Response>((resolve) => {
          request.signal.addEventListener("abort", () => {
            aborted = request.signal.reason;
            resolve(new Response("too late"));
          });
        }),
      { answerMs: 100 },
    );
    const started = Date.now();
    const answer = await send(base, "/echo");
    expect([answer.status, JSON.parse(answer.body)]).toEqual([504, { error: "the route did not answer in time" }]);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(String(aborted)).toMatch(/did not answer within 100 ms/);
    expect(lines.map((line) => line.msg)).toContain("agent route did not answer in time");
  });

  it("a body that goes silent for idleMs has its connection cut", async () => {
    const base = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode("first"));
            },
          }),
        ),
      { idleMs: 100 },
    );
    const reader = (await fetch(`${base}/echo`)).body?.getReader();
    expect(await nextChunk(reader)).toBe("first");
    await expect(reader?.read()).rejects.toThrow();
    expect(lines.map((line) => line.msg)).toContain("agent route body stalled; connection cut");
  });

  it("a client that goes away aborts the request's signal and cancels the body", async () => {
    let signalled = false;
    let cancelled: () => void = () => undefined;
    const cancel = new Promise<void>((resolve) => (cancelled = resolve));
    const base = await serve(
      (request) => {
        request.signal.addEventListener("abort", () => (signalled = true));
        let n = 0;
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(controller) {
              await new Promise((resolve) => setTimeout(resolve, 10));
              controller.enqueue(new TextEncoder().encode(`chunk ${n++}\n`));
            },
            cancel: () => cancelled(),
          }),
        );
      },
      { idleMs: 5000 },
    );
    const client = new AbortController();
    const reader = (await fetch(`${base}/echo`, { signal: client.signal })).body?.getReader();
    expect(await nextChunk(reader)).toMatch(/^chunk 0/);
    client.abort();
    await cancel;
    expect(signalled).toBe(true);
  });
});
