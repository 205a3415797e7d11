// An agent's `routes` through a real gateway (createGateway on 127.0.0.1:0): they answer at the
// paths written, behind the gateway's auth unless they opt out, within the per-address budget;
// a clash with the gateway's own paths is refused at load; a reload swaps them.
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, ConfigError, type AgentRoute } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway, GatewayOptions } from "../../src/server/gateway-types.js";

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const ROUTES: Readonly<Record<string, AgentRoute>> = {
  "GET /shop/status": (request) => Response.json({ open: true, asked: new URL(request.url).searchParams.get("store") }),
  "POST /shop/orders": async (request) => Response.json({ received: await request.json() }, { status: 201 }),
  "GET /shop/hours": { handler: () => new Response("Mon–Fri 9–17"), auth: "none" },
  "GET /shop/broken": () => {
    throw new Error("the database is down");
  },
};

const shop = (routes: Readonly<Record<string, AgentRoute>> = ROUTES) => agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} }, routes });

async function start(options: Partial<GatewayOptions> = {}): Promise<string> {
  gateway = createGateway({ agent: shop(), logger: silentLogger, env: {}, processMetrics: false, ...options });
  return (await gateway.listen(0)).url;
}

describe("an agent's routes on the gateway", () => {
  it("answer at the paths written: the handler's status, headers and body; other paths stay the gateway's", async () => {
    const base = await start();
    const status = await fetch(`${base}/shop/status?store=berlin`);
    expect([status.status, status.headers.get("content-type"), await status.json()]).toEqual([200, "application/json", { open: true, asked: "berlin" }]);
    const order = await fetch(`${base}/shop/orders`, { method: "POST", body: JSON.stringify({ item: "tea" }) });
    expect([order.status, await order.json()]).toEqual([201, { received: { item: "tea" } }]);
    const wrongMethod = await fetch(`${base}/shop/orders`);
    expect([wrongMethod.status, wrongMethod.headers.get("allow")]).toEqual([405, "POST"]);
    expect((await fetch(`${base}/shop/nope`)).status).toBe(404);
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok" });
  });

  it("a handler that throws is a 500 with a generic body, and the gateway goes on", async () => {
    const base = await start();
    const broken = await fetch(`${base}/shop/broken`);
    expect([broken.status, await broken.text()]).toEqual([500, '{"error":"internal error"}']);
    expect((await fetch(`${base}/shop/status`)).status).toBe(200);
  });

  it("with auth on: 401 without the API key or a session token, answered with either; a route with auth: \"none\" answers anyone", async () => {
    const base = await start({ apiKey: "sk-gateway" });
    const bare = await fetch(`${base}/shop/status`);
    expect([bare.status, bare.headers.get("www-authenticate"), await bare.json()]).toEqual([401, "Bearer", { error: "send your API key or a session token as Authorization: Bearer <key>" }]);
    expect((await fetch(`${base}/shop/status`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(`${base}/shop/orders`, { method: "POST", body: "{}" })).status).toBe(401);
    expect((await fetch(`${base}/shop/status`, { headers: { authorization: "Bearer sk-gateway" } })).status).toBe(200);
    const minted = (await (await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer sk-gateway" } })).json()) as { token: string };
    expect((await fetch(`${base}/shop/status`, { headers: { authorization: `Bearer ${minted.token}` } })).status).toBe(200);
    expect(await (await fetch(`${base}/shop/hours`)).text()).toBe("Mon–Fri 9–17");
    expect(gateway?.entryPoints.filter((point) => point.entry.startsWith("GET /shop/")).map((point) => [point.entry, point.open])).toEqual([
      ["GET /shop/status", false],
      ["GET /shop/hours", true],
      ["GET /shop/broken", false],
    ]);
  });

  it("with auth off: every route answers without credentials, and the entry points say they are open", async () => {
    const base = await start();
    expect((await fetch(`${base}/shop/status`)).status).toBe(200);
    expect(gateway?.entryPoints).toContainEqual({ entry: "GET /shop/status", auth: "none: set SWITCHBOARD_API_KEY", open: true });
  });

  it("count against the per-address budget (429 with the reason)", async () => {
    const base = await start({ connectionsPerMinute: 1 });
    expect((await fetch(`${base}/shop/hours`)).status).toBe(200);
    const refused = await fetch(`${base}/shop/hours`);
    expect([refused.status, refused.headers.get("retry-after")]).toEqual([429, "60"]);
  });

  it("a route on a path of the gateway's own is refused at load, naming the route", () => {
    const clash = () => createGateway({ agent: shop({ ...ROUTES, "POST /metrics": () => new Response() }), logger: silentLogger, env: {}, processMetrics: false });
    expect(clash).toThrow(ConfigError);
    expect(clash).toThrow(/routes\["POST \/metrics"\]: \/metrics is taken by the gateway's GET \/metrics/);
  });

  it("follow a reload: the new agent's routes answer, the old agent's are gone; a clash keeps the old agent", async () => {
    const base = await start();
    gateway?.reload({ def: shop({ "GET /shop/v2": () => new Response("two") }) });
    expect(await (await fetch(`${base}/shop/v2`)).text()).toBe("two");
    expect((await fetch(`${base}/shop/status`)).status).toBe(404);
    expect(() => gateway?.reload({ def: shop({ "GET /ready": () => new Response() }) })).toThrow(/routes\["GET \/ready"\]/);
    expect(await (await fetch(`${base}/shop/v2`)).text()).toBe("two");
    expect(await (await fetch(`${base}/ready`)).json()).toMatchObject({ status: "ready" });
  });
});
