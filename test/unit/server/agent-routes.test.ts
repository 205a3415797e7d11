// An agent's routes as the gateway holds them: a path the gateway serves itself refused at load
// (naming the route), which route a request is, and who may call each (the entry points).
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/manifest/index.js";
import { agentRouteIssues, agentRouteTable, routeEntryPoints } from "../../../src/server/agent-routes.js";

const ok = (): Response => new Response("ok");

describe("a route on a path the gateway serves itself", () => {
  it("is refused, for any method, naming the route, what owns the path and a path to use instead", () => {
    const issues = agentRouteIssues({
      name: "Order Desk",
      routes: {
        "POST /health": ok,
        "GET /websocket": ok,
        "GET /telephony/twilio/voice": ok,
        "GET /telephony": ok,
        "GET /": { handler: ok, auth: "none" },
        "GET /app.js": ok,
        "GET /status": ok,
      },
    });
    expect(issues).toEqual([
      { path: 'routes["POST /health"]', message: '/health is taken by the gateway\'s GET /health, whatever the method: give the route a path of its own, e.g. "POST /order-desk/health".' },
      { path: 'routes["GET /websocket"]', message: '/websocket is taken by the gateway\'s WS /websocket, whatever the method: give the route a path of its own, e.g. "GET /order-desk/websocket".' },
      {
        path: 'routes["GET /telephony/twilio/voice"]',
        message: '/telephony/twilio/voice is taken by the gateway\'s telephony webhooks and streams (all of /telephony/), whatever the method: give the route a path of its own, e.g. "GET /order-desk/telephony/twilio/voice".',
      },
      {
        path: 'routes["GET /telephony"]',
        message: '/telephony is taken by the gateway\'s telephony webhooks and streams (all of /telephony/), whatever the method: give the route a path of its own, e.g. "GET /order-desk/telephony".',
      },
      { path: 'routes["GET /"]', message: '/ is taken by the gateway\'s demo page (public/index.html), whatever the method: give the route a path of its own, e.g. "GET /order-desk".' },
      { path: 'routes["GET /app.js"]', message: '/app.js is taken by the gateway\'s demo page (public/app.js), whatever the method: give the route a path of its own, e.g. "GET /order-desk/app.js".' },
    ]);
  });

  it("makes the table refuse the agent: one ConfigError with every such route", () => {
    expect(() => agentRouteTable({ name: "shop", routes: { "GET /metrics": ok, "GET /status": ok, "GET status": ok } })).toThrow(ConfigError);
    expect(() => agentRouteTable({ name: "shop", routes: { "GET /metrics": ok, "GET status": ok } })).toThrow(
      /^Invalid agent "shop": 2 problems\n {2}- routes\["GET status"\]: the path must start with "\/".*\n {2}- routes\["GET \/metrics"\]: \/metrics is taken by the gateway's GET \/metrics/,
    );
  });
});

describe("which route a request is", () => {
  const table = agentRouteTable({
    name: "shop",
    routes: { "GET /shop/status": ok, "POST /shop/status": ok, "PUT /shop/item": ok, "HEAD /shop/ping": ok, "GET /shop/ping": ok },
  });

  it("the route of its method and exact path; HEAD is the GET route's unless a HEAD route is set", () => {
    expect(table.match("GET", "/shop/status")).toMatchObject({ entry: { key: "GET /shop/status" } });
    expect(table.match("POST", "/shop/status")).toMatchObject({ entry: { key: "POST /shop/status" } });
    expect(table.match("HEAD", "/shop/status")).toMatchObject({ entry: { key: "GET /shop/status" } });
    expect(table.match("HEAD", "/shop/ping")).toMatchObject({ entry: { key: "HEAD /shop/ping" } });
  });

  it("another method on its path: the methods it answers (for 405 and Allow); another path: none of the agent's", () => {
    expect(table.match("DELETE", "/shop/status")).toEqual({ allowed: ["GET", "POST", "HEAD"] });
    expect(table.match("GET", "/shop/item")).toEqual({ allowed: ["PUT"] });
    expect(table.match("GET", "/shop/status/")).toBeUndefined();
    expect(table.match("GET", "/shop")).toBeUndefined();
  });
});

describe("the routes as entry points", () => {
  const entries = agentRouteTable({ name: "shop", routes: { "GET /shop/status": ok, "GET /shop/hours": { handler: ok, auth: "none" } } }).entries;

  it("behind the gateway's auth when it is on; open when it is off, or when the route opts out", () => {
    expect(routeEntryPoints(entries, true)).toEqual([
      { entry: "GET /shop/status", auth: "API key or session token as Authorization: Bearer", open: false },
      { entry: "GET /shop/hours", auth: 'none: the agent\'s route opts out (auth: "none")', open: true },
    ]);
    expect(routeEntryPoints(entries, false).map((point) => [point.entry, point.open])).toEqual([
      ["GET /shop/status", true],
      ["GET /shop/hours", true],
    ]);
  });
});
