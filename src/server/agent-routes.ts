/**
 * An agent's `routes` on the gateway (docs/config.md §5, "routes"): which request is whose, who
 * may call it, and what is refused when the agent loads. One gateway serves one agent, so its
 * routes are mounted at the paths written; a path the gateway serves itself (its own routes, the
 * telephony prefix, the demo page's files) is refused at load, naming the route. A route answers
 * behind the gateway's auth unless it says `auth: "none"`; with the per-address budget; through
 * the Fetch bridge (fetch-bridge.ts), which holds the handler to its limits.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../clock.js";
import type { LogThrottle, Logger } from "../log.js";
import { ConfigError, parseAgentRoutes, routePath, type AgentRouteEntry, type ConfigIssue } from "../manifest/index.js";
import { bearerAuthorized } from "./auth.js";
import type { ConnectionBudget } from "./connection-budget.js";
import { serveFetch } from "./fetch-bridge.js";
import { json, tooMany } from "./json-reply.js";
import { gatewayRouteAt } from "./routes.js";
import { MAX_WEBHOOK_BYTES } from "./telephony/http.js";
import type { EntryPoint } from "./telephony/entry-points.js";

/** How long a route's handler has to return its Response (ms); past it, 504. */
export const ROUTE_ANSWER_MS = 10_000;
/** How long a route's response body may send nothing (ms); past it, the connection is cut. */
export const ROUTE_IDLE_MS = 30_000;
/** The most a route's request body may hold (bytes): the gateway's one body limit, the webhooks' 64 KiB. */
export const MAX_ROUTE_BODY_BYTES = MAX_WEBHOOK_BYTES;

/** A request on a route's path: the route for its method, or the methods the path does answer. */
export type RouteMatch = { readonly entry: AgentRouteEntry } | { readonly allowed: readonly string[] };

/** An agent's routes, read and checked, by path and method. */
export interface AgentRouteTable {
  readonly entries: readonly AgentRouteEntry[];
  /** The route `method path` names (HEAD falls back to GET), the path's methods when it has others, or undefined when the path is none of the agent's. */
  match(method: string, path: string): RouteMatch | undefined;
}

/** An agent definition as far as its routes go. */
interface RoutedAgent {
  readonly name: string;
  readonly routes?: unknown;
}

/** A prefix of the agent's own to suggest for a path the gateway keeps: `/support`. */
function ownPrefix(name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return `/${slug === "" ? "agent" : slug}`;
}

/** What is wrong with an agent's routes: each bad key or value, and each path the gateway serves itself. */
export function agentRouteIssues(agent: RoutedAgent): ConfigIssue[] {
  const parsed = parseAgentRoutes(agent.routes);
  const issues = [...parsed.issues];
  for (const entry of parsed.routes) {
    const own = gatewayRouteAt(entry.path);
    if (own === undefined) continue;
    issues.push({
      path: routePath(entry.key),
      message: `${entry.path} is taken by ${own}, whatever the method: give the route a path of its own, e.g. "${entry.method} ${ownPrefix(agent.name)}${entry.path === "/" ? "" : entry.path}".`,
    });
  }
  return issues;
}

/** The agent's routes, ready to serve; a `ConfigError` naming each route that cannot be. */
export function agentRouteTable(agent: RoutedAgent): AgentRouteTable {
  const issues = agentRouteIssues(agent);
  if (issues.length > 0) throw new ConfigError(`Invalid agent "${agent.name}"`, issues);
  const entries = parseAgentRoutes(agent.routes).routes;
  const byPath = new Map<string, Map<string, AgentRouteEntry>>();
  for (const entry of entries) {
    const methods = byPath.get(entry.path) ?? new Map<string, AgentRouteEntry>();
    methods.set(entry.method, entry);
    byPath.set(entry.path, methods);
  }
  return {
    entries,
    match(method, path) {
      const methods = byPath.get(path);
      if (methods === undefined) return undefined;
      const entry = methods.get(method) ?? (method === "HEAD" ? methods.get("GET") : undefined);
      if (entry !== undefined) return { entry };
      const allowed = [...methods.keys()];
      if (methods.has("GET") && !methods.has("HEAD")) allowed.push("HEAD");
      return { allowed };
    },
  };
}

/** Each route as an entry point (start-up output, docs/security.md): who may call it. */
export function routeEntryPoints(entries: readonly AgentRouteEntry[], authOn: boolean): EntryPoint[] {
  return entries.map((entry): EntryPoint => {
    if (entry.auth === "none") return { entry: entry.key, auth: 'none: the agent\'s route opts out (auth: "none")', open: true };
    if (!authOn) return { entry: entry.key, auth: "none: set SWITCHBOARD_API_KEY", open: true };
    return { entry: entry.key, auth: "API key or session token as Authorization: Bearer", open: false };
  });
}

export interface AgentRoutesDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Refusals and handler failures a stranger can repeat, at most one line per kind every 10 s. */
  readonly throttle: LogThrottle;
  /** The gateway's auth is on when set. */
  readonly apiKey: string | undefined;
  /** The agent session tokens are minted for: a token for another agent is refused. */
  readonly tokenAgent: string;
  readonly budget: ConnectionBudget;
  /** The routes of the agent new requests go to (after any reload). */
  readonly table: () => AgentRouteTable;
}

export interface AgentRoutes {
  /** Answer `req` when its path is one of the agent's routes (true), else write nothing (false). */
  handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
}

export function agentRoutes(deps: AgentRoutesDeps): AgentRoutes {
  const { clock, log, throttle, apiKey, tokenAgent, budget } = deps;
  return {
    async handleRequest(req, res, url) {
      const method = req.method ?? "GET";
      const match = deps.table().match(method, url.pathname);
      if (match === undefined) return false;
      if ("allowed" in match) {
        json(res, 405, { error: `no route ${method} ${url.pathname}: this path answers ${match.allowed.join(", ")}` }, { allow: match.allowed.join(", ") });
        return true;
      }
      const { entry } = match;
      if (!(await budget.admit(req.socket.remoteAddress))) {
        tooMany(res, budget.refusal);
        return true;
      }
      if (entry.auth === "gateway" && apiKey !== undefined && !bearerAuthorized(apiKey, req.headers.authorization, tokenAgent, clock.now())) {
        throttle.warn(log, { remote: req.socket.remoteAddress, route: entry.key }, "agent route refused: no valid credentials");
        json(res, 401, { error: "send your API key or a session token as Authorization: Bearer <key>" }, { "www-authenticate": "Bearer" });
        return true;
      }
      await serveFetch(req, res, url, entry.handler, {
        clock,
        log,
        throttle,
        route: entry.key,
        maxBodyBytes: MAX_ROUTE_BODY_BYTES,
        answerMs: ROUTE_ANSWER_MS,
        idleMs: ROUTE_IDLE_MS,
      });
      return true;
    },
  };
}
