// The gateway's HTTP routes on their own, served by a bare node:http server through entry.ts:
// each route's answer, the metrics token, minting session tokens, the connection budget, and
// the hand-offs (telephony, the agent's routes, the demo page, 404). test/integration/gateway-text.test.ts drives
// them inside a whole gateway.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { agent, toAgentConfig } from "../../../src/manifest/index.js";
import { verifyToken } from "../../../src/server/auth.js";
import { ConnectionBudget } from "../../../src/server/connection-budget.js";
import { MemoryCoordinator } from "../../../src/server/coordination.js";
import { serveRequests } from "../../../src/server/entry.js";
import { GatewayMetrics } from "../../../src/server/metrics.js";
import { GATEWAY_ROUTES, gatewayRouteAt, gatewayRoutes, type RoutesDeps } from "../../../src/server/routes.js";
import { virtualClock } from "../../../src/clock.js";

const config = toAgentConfig(agent({ name: "shop", greeting: "Welcome to the shop." }), { warn: () => undefined });
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** The routes on 127.0.0.1:<free port>, with `overrides` over a default gateway (auth off, no metrics token). */
async function serve(overrides: Partial<RoutesDeps> = {}): Promise<string> {
  const clock = virtualClock();
  const deps: RoutesDeps = {
    clock,
    log: silentLogger,
    apiKey: undefined,
    metricsToken: undefined,
    tokenTtlMs: 60_000,
    tokenAgent: "shop",
    metrics: new GatewayMetrics({ processMetrics: false }),
    metricsText: undefined,
    agent: () => ({ config, offline: true }),
    draining: () => false,
    sessions: () => 2,
    budget: new ConnectionBudget(new MemoryCoordinator(() => clock.now()), 0, silentLogger, () => clock.now()),
    telephony: {
      carriers: [],
      placeCall: () => Promise.reject(new Error("no carriers")),
      handleRequest: (_req, res, url) => {
        if (url.pathname !== "/telephony/twilio/voice") return Promise.resolve(false);
        res.end("<Response/>");
        return Promise.resolve(true);
      },
    },
    agentRoutes: {
      handleRequest: (_req, res, url) => {
        if (url.pathname !== "/shop/status") return Promise.resolve(false);
        res.end("open");
        return Promise.resolve(true);
      },
    },
    workflows: {
      handleRequest: (_req, res, url) => {
        if (!url.pathname.startsWith("/workflows")) return Promise.resolve(false);
        res.end("workflows");
        return Promise.resolve(true);
      },
    },
    ...overrides,
  };
  server = createServer();
  serveRequests(server, silentLogger, gatewayRoutes(deps));
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

describe("the gateway's HTTP routes", () => {
  it("health, readiness (503 once draining) and the client config of the agent new sessions get", async () => {
    let draining = false;
    const base = await serve({ draining: () => draining });
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok" });
    expect(await (await fetch(`${base}/ready`)).json()).toEqual({ status: "ready", sessions: 2 });
    draining = true;
    const ready = await fetch(`${base}/ready`);
    expect([ready.status, await ready.json()]).toEqual([503, { status: "draining", sessions: 2 }]);
    const client = (await (await fetch(`${base}/client-config`, { headers: { "x-forwarded-proto": "https, http" } })).json()) as Record<string, unknown>;
    expect(client).toMatchObject({ name: "shop", greeting: "Welcome to the shop.", mode: "pipeline", sampleRate: 16000, ttsSampleRate: 24000, auth: false, offline: true });
    expect(client.sessionUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/websocket$/);
  });

  it("/metrics: behind its token when set; the group's text when given, this gateway's if that fails", async () => {
    let group: () => Promise<string> = () => Promise.resolve("group 1\n");
    const base = await serve({ metricsToken: "scrape-me", metricsText: () => group() });
    const refused = await fetch(`${base}/metrics`, { headers: { authorization: "Bearer nope" } });
    expect([refused.status, refused.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);
    const auth = { headers: { authorization: "Bearer scrape-me" } };
    expect(await (await fetch(`${base}/metrics`, auth)).text()).toBe("group 1\n");
    group = () => Promise.reject(new Error("primary gone"));
    expect(await (await fetch(`${base}/metrics`, auth)).text()).toContain("switchboard_sessions_total");
  });

  it("POST /v1/sessions: 404 with auth off; with auth on, 401 without the key, else a token for the agent the gateway started with", async () => {
    expect((await fetch(`${await serve()}/v1/sessions`, { method: "POST" })).status).toBe(404);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    const base = await serve({ apiKey: "key", tokenAgent: "shop", agent: () => ({ config: { ...config, name: "reloaded" }, offline: false }) });
    expect((await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const minted = await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer key" } });
    const body = (await minted.json()) as { token: string; agent: string; sessionUrl: string };
    expect([minted.status, body.agent]).toEqual([201, "shop"]);
    expect(body.sessionUrl).toBe(`${base.replace(/^http/, "ws")}/websocket?token=${body.token}`);
    expect(verifyToken("key", body.token, "shop", 0).ok).toBe(true);
  });

  it("the connection budget covers POST /v1/sessions and telephony webhooks (429 with the reason), not the other routes", async () => {
    const budget = new ConnectionBudget(new MemoryCoordinator(() => 0), 1, silentLogger, () => 0);
    const base = await serve({ budget, apiKey: "key" });
    expect((await fetch(`${base}/telephony/twilio/voice`, { method: "POST" })).status).toBe(200);
    const refused = await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer key" } });
    expect([refused.status, refused.headers.get("retry-after"), await refused.json()]).toEqual([429, "60", { error: "more than 1 connections a minute from this address; retry later" }]);
    expect((await fetch(`${base}/telephony/twilio/voice`, { method: "POST" })).status).toBe(429);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it("hands telephony webhooks, the agent's routes and the demo page on; anything else is a 404 naming the route", async () => {
    const base = await serve();
    expect(await (await fetch(`${base}/telephony/twilio/voice`, { method: "POST" })).text()).toBe("<Response/>");
    expect(await (await fetch(`${base}/shop/status`)).text()).toBe("open");
    const page = await fetch(`${base}/`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const missing = await fetch(`${base}/nope`, { method: "DELETE" });
    expect([missing.status, await missing.json()]).toEqual([404, { error: "no route DELETE /nope" }]);
  });
});

describe("the paths the gateway keeps for itself", () => {
  it("every route this file serves, the upgrade, /telephony/… and the demo page's files", () => {
    // The switch in routes.ts: a case added there and not to GATEWAY_ROUTES would let an agent take its path at load, and never be answered.
    const source = readFileSync(new URL("../../../src/server/routes.ts", import.meta.url), "utf8");
    const cases = [...source.matchAll(/case "([A-Z]+ (\/[^"]*))":/g)].map((m) => [m[2], m[1]]);
    expect(cases.length).toBeGreaterThan(0);
    for (const [path, route] of cases) expect(GATEWAY_ROUTES[path as string], path).toBe(route);
    expect(gatewayRouteAt("/health")).toBe("the gateway's GET /health");
    expect(gatewayRouteAt("/websocket")).toBe("the gateway's WS /websocket");
    expect(gatewayRouteAt("/telephony")).toMatch(/telephony webhooks/);
    expect(gatewayRouteAt("/telephony/acme/voice")).toMatch(/telephony webhooks/);
    expect(gatewayRouteAt("/workflows")).toBe("the gateway's workflows API (all of /workflows/)");
    expect(gatewayRouteAt("/workflows/runs/x")).toBe("the gateway's workflows API (all of /workflows/)");
    expect(gatewayRouteAt("/")).toBe("the gateway's demo page (public/index.html)");
    expect(gatewayRouteAt("/app.js")).toBe("the gateway's demo page (public/app.js)");
    for (const path of ["/status", "/health/", "/v1/orders", "/telephonyx", "/workflowsx", "/app.jsx", "/toString", "/constructor"]) expect(gatewayRouteAt(path), path).toBeUndefined();
  });
});
