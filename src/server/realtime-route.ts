/**
 * `WS /v1/realtime` at the edge (docs/realtime.md "Connecting", docs/security.md "Entry points"):
 * who may connect, and the link a session starts on. Auth as on `/websocket`: with an API key,
 * the key itself or a session token from `POST /v1/sessions`, presented the ways Realtime clients
 * present a key — `Authorization: Bearer <x>` (servers), the `openai-insecure-api-key.<x>`
 * WebSocket subprotocol (browsers, which cannot set headers) — or as `?token=` (as `/websocket`
 * takes it). The Origin allow-list as on `/websocket`. The per-address budget and the draining
 * refusal are the upgrade's, shared with every path. The server imports this module on the
 * first `/v1/realtime` upgrade (the path and the handshake are `realtime-handshake.ts`): a gateway
 * no Realtime client reaches does not hold the Realtime front door (issue 23).
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import type { Clock } from "../clock.js";
import { CLOSE } from "../errors.js";
import type { LogThrottle, Logger } from "../log.js";
import { isClientTool, type SessionMode, type Team } from "../manifest/index.js";
import type { ClientToolSpec } from "../realtime/client-tools.js";
import { RealtimeConnection } from "../realtime/connection.js";
import { errorEvent } from "../realtime/server-events.js";
import type { Modality } from "../realtime/server-events.js";
import type { AgentTurns } from "../realtime/session-settings.js";
import { clipReason } from "../transport/client-connection.js";
import { ulid, type Limits } from "../transport/protocol.js";
import { bearer, keyMatches, verifyToken, type TokenCheck } from "./auth.js";
import { KEY_SUBPROTOCOL_PREFIX } from "./realtime-handshake.js";

/** What the client presented, in order: the bearer header, the key subprotocol, `?token=`. */
export function realtimeCredential(req: IncomingMessage, url: URL): string | undefined {
  const fromHeader = bearer(req.headers.authorization);
  if (fromHeader !== undefined && fromHeader !== "") return fromHeader;
  const protocols = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  const fromProtocol = protocols.find((p) => p.startsWith(KEY_SUBPROTOCOL_PREFIX))?.slice(KEY_SUBPROTOCOL_PREFIX.length);
  if (fromProtocol !== undefined && fromProtocol !== "") return fromProtocol;
  return url.searchParams.get("token") ?? undefined;
}

/** The API key itself, or a session token minted with it for `agent` and not expired. Constant-time; never throws. */
export function realtimeAuthorized(apiKey: string, presented: string | undefined, agent: string, now: number): TokenCheck {
  if (presented === undefined || presented === "") {
    return { ok: false, reason: "an API key or session token is required: Authorization: Bearer <key>, or the openai-insecure-api-key.<token> subprotocol" };
  }
  if (keyMatches(apiKey, presented)) return { ok: true };
  const check = verifyToken(apiKey, presented, agent, now);
  // A presented value that is neither: the key is not named, and the token's own reason stands.
  return check.ok || presented.includes(".") ? check : { ok: false, reason: "the API key or session token is not valid" };
}

/** The clientTools of the agent and of those it may hand the session to (a sub-agent has none), by the name the model calls, with the description and JSON Schema the model reads. */
export function clientTools(team: Team): ReadonlyMap<string, ClientToolSpec> {
  const members = team.agents.filter((member) => member.role !== "subagent");
  return new Map(members.flatMap((member) => Object.entries(member.def.tools ?? {}).flatMap(([name, def]) => (isClientTool(def) ? [[name, { description: def.description, parameters: def.parameters.json }] as const] : []))));
}

/** What the agent answers in, as Realtime sees it. */
export function realtimeModality(mode: SessionMode): Modality {
  return mode === "text" ? "text" : "audio";
}

export interface RealtimeAcceptDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly throttle: LogThrottle;
  readonly limits: Limits;
  readonly apiKey: string | undefined;
  readonly allowedOrigins: readonly string[] | undefined;
  /** The token audience: the agent the gateway was started with. */
  readonly tokenAgent: string;
  /** The agent new sessions start with (a reload may change it). */
  readonly agent: () => { readonly name: string; readonly mode: SessionMode; readonly clientTools: ReadonlyMap<string, ClientToolSpec>; readonly tokenLimit?: number | undefined; readonly turns?: AgentTurns; readonly interrupts?: boolean };
  /** Start the gateway's own session on the link (the same as `/websocket`'s). */
  readonly startSession: (link: RealtimeConnection) => void;
}

/** A refusal on the open socket: one Realtime `error`, then close 1008 (as `/websocket` refuses). */
function refuse(ws: WebSocket, clock: Clock, code: string, message: string): void {
  ws.send(JSON.stringify(errorEvent(`event_${ulid(clock.now())}`, { type: "invalid_request_error", code, message })));
  ws.close(CLOSE.policy, clipReason(message));
}

/** Check the origin and the credential, then start a session on a Realtime link. */
export function acceptRealtime(ws: WebSocket, req: IncomingMessage, url: URL, deps: RealtimeAcceptDeps): void {
  const { clock, log, throttle } = deps;
  const origin = req.headers.origin;
  if (deps.allowedOrigins !== undefined && origin !== undefined && !deps.allowedOrigins.includes(origin)) {
    throttle.warn(log, { origin }, "origin refused");
    return refuse(ws, clock, "origin_not_allowed", `origin ${origin} is not allowed`);
  }
  if (deps.apiKey !== undefined) {
    const check = realtimeAuthorized(deps.apiKey, realtimeCredential(req, url), deps.tokenAgent, clock.now());
    if (!check.ok) {
      throttle.warn(log, { remote: req.socket.remoteAddress, reason: check.reason }, "session refused");
      return refuse(ws, clock, "invalid_api_key", check.reason);
    }
  }
  const agent = deps.agent();
  const link = new RealtimeConnection(ws, {
    clock,
    log,
    limits: deps.limits,
    agent: agent.name,
    modality: realtimeModality(agent.mode),
    clientTools: agent.clientTools,
    ...(agent.tokenLimit === undefined ? {} : { tokenLimit: agent.tokenLimit }),
    outOfBand: agent.mode !== "s2s",
    ...(agent.turns === undefined ? {} : { turns: agent.turns }),
    ...(agent.interrupts === undefined ? {} : { interrupts: agent.interrupts }),
    socket: req.socket,
  });
  deps.startSession(link);
}
