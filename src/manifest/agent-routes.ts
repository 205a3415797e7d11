/**
 * An agent's `routes` (docs/config.md, "routes: HTTP routes of the agent's own"): extra HTTP
 * routes the gateway mounts, keyed `"<METHOD> <path>"`, each answered by a Fetch handler. This
 * module reads the keys and values and says what is wrong with them, in the author's words; the
 * gateway refuses a path it serves itself and serves the rest (server/agent-routes.ts).
 */
import { didYouMean, kindOf, type ConfigIssue } from "./errors.js";

/** The methods a route may answer. */
export const ROUTE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** Answers one request: a Fetch `Request` in, a Fetch `Response` out. */
export type AgentRouteHandler = (request: Request) => Response | Promise<Response>;

/**
 * Who may call a route: `"gateway"`, whoever passes the gateway's auth (what a bare handler
 * gets); `"none"`, anyone who reaches the port — an opt-out written out, never a default.
 */
export type RouteAuth = "gateway" | "none";

/** A route as authored: the handler alone (the gateway's auth applies), or with its `auth` spelled out. */
export type AgentRoute = AgentRouteHandler | { readonly handler: AgentRouteHandler; readonly auth: RouteAuth };

/** One route, read. */
export interface AgentRouteEntry {
  /** The key as written: `"GET /status"`. */
  readonly key: string;
  readonly method: RouteMethod;
  /** Matched exactly against the request's path (no parameters, no prefix matching). */
  readonly path: string;
  readonly handler: AgentRouteHandler;
  readonly auth: RouteAuth;
}

const EXAMPLE = 'e.g. "GET /status"';
/** What a path segment may hold (RFC 3986 pchar without percent-encoding); `:` not first: that would read as a parameter. */
const SEGMENT = /^[A-Za-z0-9._~!$&'()+,;=@-][A-Za-z0-9._~!$&'()+,;=@:-]*$/;

/** Where an issue about `key` is reported: `routes["GET foo"]`. */
export function routePath(key: string): string {
  return `routes[${JSON.stringify(key)}]`;
}

/** What is wrong with the path of a route key, or undefined. */
function pathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return `the path must start with "/" (${EXAMPLE}).`;
  if (/[?#]/.test(path)) return "the path must not hold a query or a fragment: a route matches the path alone; read the query from new URL(request.url).searchParams.";
  if (path === "/") return undefined;
  const segments = path.replace(/\/$/, "").slice(1).split("/");
  for (const segment of segments) {
    if (segment === "") return 'the path has an empty segment ("//"): a request for it never arrives as written.';
    if (segment === "." || segment === "..") return `the path has a "${segment}" segment: requests are resolved before matching, so it would never match.`;
    if (segment.startsWith(":")) {
      return `path parameters (\`${segment}\`) are not supported: a route matches one exact path. Put the value in the query (/orders?id=…) and read it with new URL(request.url).searchParams.`;
    }
    if (segment.includes("*")) return "wildcards are not supported: a route matches one exact path.";
    if (!SEGMENT.test(segment)) {
      const bad = [...segment].find((c) => !/[A-Za-z0-9._~!$&'()+,;=@:-]/.test(c)) ?? segment;
      return `the path may hold only letters, digits and - . _ ~ ! $ & ' ( ) + , ; = : @ (got ${JSON.stringify(bad)}).`;
    }
  }
  return undefined;
}

/** The method and path of a route key, or what is wrong with it. */
function readKey(key: string): { method: RouteMethod; path: string } | { problem: string } {
  const space = key.indexOf(" ");
  if (space === -1) return { problem: `a route key is "<METHOD> <path>", ${EXAMPLE}.` };
  const method = key.slice(0, space);
  const path = key.slice(space + 1);
  if (/\s/.test(path) || /\s/.test(method) || method === "") return { problem: `a route key is "<METHOD> <path>" with one space and no other whitespace, ${EXAMPLE}.` };
  const methods: readonly string[] = ROUTE_METHODS;
  if (!methods.includes(method)) {
    const upper = method.toUpperCase();
    const hint = methods.includes(upper) ? ` Methods are upper case: "${upper} ${path}".` : didYouMean(upper, methods);
    return { problem: `unknown method ${JSON.stringify(method)}.${hint} Known: ${ROUTE_METHODS.join(", ")}.` };
  }
  const problem = pathProblem(path);
  return problem === undefined ? { method: method as RouteMethod, path } : { problem };
}

const VALUE_SHAPE = 'a route is a handler (request) => Response, or { handler, auth: "none" } to serve it without the gateway\'s auth';

/** The handler and auth of a route value, or its issues (paths under `where`). */
function readValue(value: unknown, where: string): { handler: AgentRouteHandler; auth: RouteAuth } | { issues: ConfigIssue[] } {
  if (typeof value === "function") return { handler: value as AgentRouteHandler, auth: "gateway" };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { issues: [{ path: where, message: `${VALUE_SHAPE} (got ${kindOf(value)}).` }] };
  const fields = value as Record<string, unknown>;
  const issues: ConfigIssue[] = [];
  for (const field of Object.keys(fields)) {
    if (field !== "handler" && field !== "auth") issues.push({ path: `${where}.${field}`, message: `\`${field}\` is not a field of a route.${didYouMean(field, ["handler", "auth"])} A route has handler and auth.` });
  }
  if (typeof fields.handler !== "function") issues.push({ path: `${where}.handler`, message: `must be a function (request) => Response (got ${kindOf(fields.handler)}).` });
  if (fields.auth !== "none" && fields.auth !== "gateway") {
    const got = fields.auth === undefined ? "nothing" : JSON.stringify(fields.auth) ?? kindOf(fields.auth);
    issues.push({
      path: `${where}.auth`,
      message: `must be "none" (anyone who reaches the gateway may call it) or "gateway" (the gateway's auth, as for a bare handler) (got ${got}).`,
    });
  }
  return issues.length > 0 ? { issues } : { handler: fields.handler as AgentRouteHandler, auth: fields.auth as RouteAuth };
}

/**
 * Read an agent's `routes`: each key's method and path, each value's handler and auth. Never
 * throws: what is wrong comes back as issues under `routes["<key>"]`, for one `ConfigError`.
 */
export function parseAgentRoutes(routes: unknown): { readonly routes: readonly AgentRouteEntry[]; readonly issues: readonly ConfigIssue[] } {
  if (routes === undefined || routes === null) return { routes: [], issues: [] };
  if (typeof routes !== "object" || Array.isArray(routes)) {
    return { routes: [], issues: [{ path: "routes", message: `must be an object keyed "<METHOD> <path>", such as { "GET /status": () => Response.json({ ok: true }) } (got ${kindOf(routes)}).` }] };
  }
  const entries: AgentRouteEntry[] = [];
  const issues: ConfigIssue[] = [];
  for (const [key, value] of Object.entries(routes as Record<string, unknown>)) {
    const where = routePath(key);
    const read = readKey(key);
    if ("problem" in read) issues.push({ path: where, message: read.problem });
    const parts = readValue(value, where);
    if ("issues" in parts) issues.push(...parts.issues);
    if (!("problem" in read) && !("issues" in parts)) entries.push({ key, method: read.method, path: read.path, handler: parts.handler, auth: parts.auth });
  }
  return { routes: entries, issues };
}
