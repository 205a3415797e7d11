/**
 * The gateway's plain HTTP routes (docs/protocol.md "HTTP routes"): `GET /health`, `GET /ready`,
 * `GET /metrics` (behind its token when one is set), `GET /client-config`, `POST /v1/sessions`
 * (mints a session token; auth on only), `POST /v1/calls` (places a call, telephony/outbound-calls.ts), then the workflows API
 * (everything under `/workflows`, workflow-routes.ts), the telephony webhooks, the agent's own `routes`
 * (agent-routes.ts), the demo page, and a 404 naming the route. The WebSocket upgrades are not
 * here: createGateway routes those.
 */
import type { IncomingMessage } from "node:http";
import { relative, sep } from "node:path";
import type { Clock } from "../clock.js";
import { opusAvailable } from "../audio/opus.js";
import { MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE } from "../audio/rates.js";
import type { Logger } from "../log.js";
import type { AgentConfig } from "../manifest/index.js";
import type { AgentRoutes } from "./agent-routes.js";
import { bearer, keyMatches, mintToken } from "./auth.js";
import type { ConnectionBudget } from "./connection-budget.js";
import type { RequestHandler } from "./entry.js";
import { json, tooMany } from "./json-reply.js";
import type { GatewayMetrics } from "./metrics.js";
import { PUBLIC_DIR, publicFileAt, serveStatic } from "./static.js";
import type { Telephony } from "./telephony/index.js";
import { WORKFLOWS_PATH, type WorkflowRoutes } from "./workflow-routes.js";
import { spread } from "../spread.js";

export interface RoutesDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Auth is on when set: `POST /v1/sessions` takes it as a bearer key and mints tokens with it. */
  readonly apiKey: string | undefined;
  /** When set, `GET /metrics` needs it as a bearer token. */
  readonly metricsToken: string | undefined;
  /** A minted token's lifetime (ms). */
  readonly tokenTtlMs: number;
  /** The agent name tokens are minted for: the one the gateway started with (a reload keeps it). */
  readonly tokenAgent: string;
  readonly metrics: GatewayMetrics;
  /** Where `GET /metrics` comes from when not this gateway's registry (`--workers`: the group's). */
  readonly metricsText: (() => Promise<string>) | undefined;
  /** The agent new sessions start with now (after any reload), and whether it runs offline. */
  readonly agent: () => { readonly config: AgentConfig; readonly offline: boolean };
  readonly draining: () => boolean;
  /** Live sessions. */
  readonly sessions: () => number;
  readonly budget: ConnectionBudget;
  readonly telephony: Pick<Telephony, "handleRequest" | "placeCall" | "carriers">;
  /** The agent's `routes` (agent-routes.ts): answers and returns true when the path is one of them. */
  readonly agentRoutes: Pick<AgentRoutes, "handleRequest">;
  /** The workflows API (workflow-routes.ts): answers and returns true when the path is under `/workflows`. */
  readonly workflows: Pick<WorkflowRoutes, "handleRequest">;
}

/**
 * The paths the gateway answers itself, by the route it serves there: the routes below and the
 * client protocol's upgrade. An agent route may take none of them, whatever its method
 * (server/agent-routes.ts).
 */
export const GATEWAY_ROUTES: Readonly<Record<string, string>> = {
  "/health": "GET /health",
  "/ready": "GET /ready",
  "/metrics": "GET /metrics",
  "/client-config": "GET /client-config",
  "/v1/sessions": "POST /v1/sessions",
  "/v1/calls": "POST /v1/calls",
  "/websocket": "WS /websocket",
};

/**
 * What of the gateway's own takes `path` (for any method), or undefined: its routes, the telephony
 * webhooks and streams (all of `/telephony/`), the workflows API (all of `/workflows/`), the demo
 * page (`/` and the files of `public/`).
 */
export function gatewayRouteAt(path: string, publicRoot: string = PUBLIC_DIR): string | undefined {
  if (Object.hasOwn(GATEWAY_ROUTES, path)) return `the gateway's ${GATEWAY_ROUTES[path]}`;
  if (path === "/telephony" || path.startsWith("/telephony/")) return "the gateway's telephony webhooks and streams (all of /telephony/)";
  if (path === WORKFLOWS_PATH || path.startsWith(`${WORKFLOWS_PATH}/`)) return "the gateway's workflows API (all of /workflows/)";
  const file = publicFileAt(path, publicRoot);
  if (file !== undefined) return `the gateway's demo page (public/${relative(publicRoot, file).split(sep).join("/")})`;
  return undefined;
}

/** The scheme a browser reached us with (a TLS-terminating proxy says so in X-Forwarded-Proto). */
function wsBase(req: IncomingMessage): string {
  const secure = String(req.headers["x-forwarded-proto"] ?? "").split(",")[0]?.trim() === "https";
  return `${secure ? "wss" : "ws"}://${req.headers.host ?? "localhost"}`;
}

/** The request handler (for `serveRequests`, entry.ts, which contains its throws). */
export function gatewayRoutes(deps: RoutesDeps): RequestHandler {
  const { clock, log, apiKey, metricsToken, metrics, budget } = deps;

  return async (req, res, url) => {
    const route = `${req.method ?? "GET"} ${url.pathname}`;
    switch (route) {
      case "GET /health":
        return json(res, 200, { status: "ok" });
      case "GET /ready": {
        const draining = deps.draining();
        return json(res, draining ? 503 : 200, { status: draining ? "draining" : "ready", sessions: deps.sessions() });
      }
      case "GET /metrics": {
        if (metricsToken !== undefined && !keyMatches(metricsToken, bearer(req.headers.authorization))) {
          return json(res, 401, { error: "send the metrics token as Authorization: Bearer <token>" }, { "www-authenticate": "Bearer" });
        }
        // Under `--workers`, the whole group's metrics (aggregated by the primary); this worker's alone if that fails.
        const text = deps.metricsText === undefined ? await metrics.text() : await deps.metricsText().catch((err: unknown) => {
          log.warn({ err }, "cluster metrics unavailable; serving this worker's");
          return metrics.text();
        });
        res.writeHead(200, { "content-type": metrics.contentType });
        res.end(text);
        return;
      }
      case "GET /client-config": {
        const { config, offline } = deps.agent();
        return json(res, 200, {
          name: config.name,
          greeting: config.greeting,
          mode: config.mode,
          sessionUrl: `${wsBase(req)}/websocket`,
          sampleRate: MIC_SAMPLE_RATE,
          ttsSampleRate: PLAYBACK_SAMPLE_RATE,
          codecs: (await opusAvailable()) ? ["pcm16", "opus"] : ["pcm16"],
          auth: apiKey !== undefined,
          offline,
        });
      }
      case "POST /v1/sessions": {
        if (!(await budget.admit(req.socket.remoteAddress))) return tooMany(res, budget.refusal);
        if (deps.agent().config.mode === "workflow-app") return json(res, 404, { error: "this agent is a workflow-app: it serves the workflows API (GET /workflows), not sessions" });
        if (apiKey === undefined) return json(res, 404, { error: "auth is off on this gateway: connect to /websocket directly" });
        if (!keyMatches(apiKey, bearer(req.headers.authorization))) {
          log.warn({ remote: req.socket.remoteAddress }, "session token refused: bad api key");
          return json(res, 401, { error: "send your API key as Authorization: Bearer <key>" }, { "www-authenticate": "Bearer" });
        }
        const minted = mintToken(apiKey, deps.tokenAgent, clock.now(), deps.tokenTtlMs);
        return json(res, 201, spread(minted, { agent: deps.tokenAgent, sessionUrl: `${wsBase(req)}/websocket?token=${minted.token}` }));
      }
      case "POST /v1/calls":
        if (!(await budget.admit(req.socket.remoteAddress))) return tooMany(res, budget.refusal);
        if (deps.telephony.carriers.length === 0) return json(res, 404, { error: "this agent takes no phone calls: set its telephony field to place calls" });
        return deps.telephony.placeCall(req, res);
      default:
        if (await deps.workflows.handleRequest(req, res, url)) return;
        if (url.pathname.startsWith("/telephony/") && !(await budget.admit(req.socket.remoteAddress))) return tooMany(res, budget.refusal);
        if (await deps.telephony.handleRequest(req, res, url)) return;
        // The agent's own routes: none of them is a path above (refused at load, agent-routes.ts).
        if (await deps.agentRoutes.handleRequest(req, res, url)) return;
        if (serveStatic(req, res, url.pathname)) return; // the demo page: GET / and public/*
        return json(res, 404, { error: `no route ${route}` });
    }
  };
}
