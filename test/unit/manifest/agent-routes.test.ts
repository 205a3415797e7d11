// An agent's `routes` as the manifest reads them: each key's method and path, each value's
// handler and auth, and every bad one refused in the one ConfigError with its field path and fix.
import { describe, expect, it } from "vitest";
import { ConfigError, parseAgentRoutes, toAgentConfig, type AgentConfigSource } from "../../../src/manifest/index.js";

const ok = (): Response => new Response("ok");

/** The issues `toAgentConfig` reports for an agent with `routes`, as `path: message` lines. */
function refusals(routes: unknown): string[] {
  try {
    toAgentConfig({ name: "shop", mode: "text", routes } as unknown as AgentConfigSource, { warn: () => undefined });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  return [];
}

describe("routes keys and values", () => {
  it("reads each route's method, path, handler and auth: a bare handler is behind the gateway's auth", () => {
    const read = parseAgentRoutes({
      "GET /status": ok,
      "POST /shop/orders/": { handler: ok, auth: "none" },
      "DELETE /a/b.c_d~e": { handler: ok, auth: "gateway" },
      "OPTIONS /v1:batch": ok,
    });
    expect(read.issues).toEqual([]);
    expect(read.routes.map(({ key, method, path, auth }) => [key, method, path, auth])).toEqual([
      ["GET /status", "GET", "/status", "gateway"],
      ["POST /shop/orders/", "POST", "/shop/orders/", "none"],
      ["DELETE /a/b.c_d~e", "DELETE", "/a/b.c_d~e", "gateway"],
      ["OPTIONS /v1:batch", "OPTIONS", "/v1:batch", "gateway"],
    ]);
    expect(read.routes[0]?.handler).toBe(ok);
  });

  it("no routes, an empty object: nothing to serve, nothing wrong", () => {
    expect(parseAgentRoutes(undefined)).toEqual({ routes: [], issues: [] });
    expect(parseAgentRoutes({})).toEqual({ routes: [], issues: [] });
    expect(refusals({})).toEqual([]);
  });

  it("refuses each bad key under routes[\"<key>\"], with the fix", () => {
    expect(
      refusals({
        "GET foo": ok,
        "/status": ok,
        "get /status": ok,
        "FETCH /status": ok,
        "GET  /status": ok,
        " GET /status": ok,
        "GET /status?x=1": ok,
        "GET /orders/:id": ok,
        "GET /files/*": ok,
        "GET /a//b": ok,
        "GET /a/../b": ok,
        "GET /café": ok,
        "GET /a b": ok,
      }),
    ).toEqual([
      'routes["GET foo"]: the path must start with "/" (e.g. "GET /status").',
      'routes["/status"]: a route key is "<METHOD> <path>", e.g. "GET /status".',
      'routes["get /status"]: unknown method "get". Methods are upper case: "GET /status". Known: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS.',
      'routes["FETCH /status"]: unknown method "FETCH". Did you mean `PATCH`? Known: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS.',
      'routes["GET  /status"]: a route key is "<METHOD> <path>" with one space and no other whitespace, e.g. "GET /status".',
      'routes[" GET /status"]: a route key is "<METHOD> <path>" with one space and no other whitespace, e.g. "GET /status".',
      'routes["GET /status?x=1"]: the path must not hold a query or a fragment: a route matches the path alone; read the query from new URL(request.url).searchParams.',
      'routes["GET /orders/:id"]: path parameters (`:id`) are not supported: a route matches one exact path. Put the value in the query (/orders?id=…) and read it with new URL(request.url).searchParams.',
      'routes["GET /files/*"]: wildcards are not supported: a route matches one exact path.',
      'routes["GET /a//b"]: the path has an empty segment ("//"): a request for it never arrives as written.',
      'routes["GET /a/../b"]: the path has a ".." segment: requests are resolved before matching, so it would never match.',
      'routes["GET /café"]: the path may hold only letters, digits and - . _ ~ ! $ & \' ( ) + , ; = : @ (got "é").',
      'routes["GET /a b"]: a route key is "<METHOD> <path>" with one space and no other whitespace, e.g. "GET /status".',
    ]);
  });

  it("refuses a value that is neither a handler nor { handler, auth }, naming the field", () => {
    expect(
      refusals({
        "GET /a": "hello",
        "GET /b": { handler: ok },
        "GET /c": { handler: ok, auth: "public" },
        "GET /d": { handler: "nope", auth: "none" },
        "GET /e": { handler: ok, auth: "none", pubic: true },
        "GET /f": null,
      }),
    ).toEqual([
      'routes["GET /a"]: a route is a handler (request) => Response, or { handler, auth: "none" } to serve it without the gateway\'s auth (got a string).',
      'routes["GET /b"].auth: must be "none" (anyone who reaches the gateway may call it) or "gateway" (the gateway\'s auth, as for a bare handler) (got nothing).',
      'routes["GET /c"].auth: must be "none" (anyone who reaches the gateway may call it) or "gateway" (the gateway\'s auth, as for a bare handler) (got "public").',
      'routes["GET /d"].handler: must be a function (request) => Response (got a string).',
      'routes["GET /e"].pubic: `pubic` is not a field of a route. A route has handler and auth.',
      'routes["GET /f"]: a route is a handler (request) => Response, or { handler, auth: "none" } to serve it without the gateway\'s auth (got null).',
    ]);
  });

  it("refuses routes that are not an object keyed by route", () => {
    expect(refusals([ok])).toEqual([
      'routes: must be an object keyed "<METHOD> <path>", such as { "GET /status": () => Response.json({ ok: true }) } (got an array).',
    ]);
  });

  it("reports route issues with the agent's other problems, in one ConfigError", () => {
    expect(() => toAgentConfig({ name: "shop", greting: "hi", routes: { "GET status": ok } } as unknown as AgentConfigSource, { warn: () => undefined })).toThrow(
      /Invalid agent "shop": 2 problems\n {2}- greting: .*\n {2}- routes\["GET status"\]: the path must start with "\/"/,
    );
  });

  it("are honoured: a valid route draws no 'not honoured' warning", () => {
    const warnings: string[] = [];
    toAgentConfig({ name: "shop", mode: "text", routes: { "GET /status": ok } } as unknown as AgentConfigSource, { warn: (message) => warnings.push(message) });
    expect(warnings).toEqual([]);
  });
});
