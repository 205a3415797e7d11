import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { systemClock, type Clock } from "../clock.js";
import { CLOSE } from "../errors.js";
import { resamplerEngine } from "../audio/resample.js";
import { createLogger, LogThrottle } from "../log.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import { ConfigError, DEFAULTS, resolveConfig, toAgentConfig, type AgentConfig, type PhoneLine, type ResolvedAgentDef, type Team } from "../manifest/index.js";
import { resolveLanguageModel, type Env } from "../pipeline/providers/llm/index.js";
import { connectMcpServers } from "../session/mcp.js";
import type { ModelResolver } from "../session/reply-agent.js";
import { Session } from "../session/session.js";
import { sessionMode } from "../session/session-deps.js";
import { loadMode } from "../session/modes.js";
import { MemorySessionStore, type SessionStore } from "../session/store.js";
import { resumeKeyMatches } from "../session/resume-key.js";
import { RedisSessionStore } from "./redis-store.js";
import { parseClientFormat } from "../transport/audio-edge.js";
import { parseEventSubscription } from "../transport/event-subscription.js";
import { ClientConnection, clipReason } from "../transport/client-connection.js";
import { DEFAULT_LIMITS, stamp, type Limits } from "../transport/protocol.js";
import { TOKEN_TTL_MS, verifyToken } from "./auth.js";
import { ConnectionBudget } from "./connection-budget.js";
import { GatewayMetrics } from "./metrics.js";
import { chooseTeamProviders } from "./offline.js";
import { serveRequests, serveUpgrades } from "./entry.js";
import { agentRoutes, agentRouteTable, routeEntryPoints, type AgentRouteTable } from "./agent-routes.js";
import { gatewayRoutes } from "./routes.js";
import { acceptUpgrade, gatewaySocketServer, refuseUpgrade } from "./upgrade.js";
import { chooseRealtimeProtocol, REALTIME_PATH } from "./realtime-handshake.js";
import { MAX_REALTIME_FRAME_BYTES } from "../realtime/frame-limits.js";
import type { RealtimeConnection } from "../realtime/connection.js";
import { MemoryCoordinator, type Coordinator } from "./coordination.js";
import { carrierClient } from "./telephony/carrier-client.js";
import type { Gateway, GatewayOptions, ReloadedAgent } from "./gateway-types.js";
import { createTelephony, mountedCarriers, parseOpenCarriers, type PlacedSession } from "./telephony/index.js";
import type { EntryPoint } from "./telephony/entry-points.js";
import { parseCallsPerMinute } from "./telephony/outbound-calls.js";
import type { WorkflowEngine } from "../workflows/engine.js";
import { hasWorkflows, openWorkflowEngine } from "./workflow-engine.js";
import { parseRunsPerMinute, workflowRoutes } from "./workflow-routes.js";
import type { CallScreening } from "../session/voicemail-screen.js";
import type { ClientLink } from "../transport/client-connection.js";
import type * as RealtimeRoute from "./realtime-route.js";
import { spread } from "../spread.js";

/** How long a draining gateway lets live sessions run before closing them 1001 (ms). */
export const DRAIN_DEADLINE_MS = 30_000;

/** How long phone calls may take to hear the shutdown notice at the drain deadline (ms). */
export const FAREWELL_MS = 10_000;

/** A request (a WebSocket upgrade too) must have sent all its headers within this long (ms); else 408 and closed. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole HTTP request must have arrived within this long (ms). */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * How often Node checks those two timeouts (ms). Its default is 30 s, which let a slow-loris
 * upgrade (headers dribbled a byte at a time) hold its socket up to 40 s instead of 10 s.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Session ids a client may ask to resume (protocol.md); anything else is ignored. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The Realtime front door (`realtime-route.ts`), imported by the first Realtime client of the process and kept for the rest. */
let realtimeRoute: Promise<typeof RealtimeRoute> | undefined;

/** A refusal on an open socket: `error.reported` first, then the close (protocol.md). */
function refuseSocket(ws: WebSocket, clock: Clock, code: "auth" | "protocol", message: string): void {
  ws.send(JSON.stringify(stamp({ type: "error.reported", code, message, fatal: true }, clock.now())));
  ws.close(CLOSE.policy, clipReason(message));
}

/**
 * The gateway: plain node:http + ws. Routes (protocol.md): WS /websocket and the telephony
 * streams here; the HTTP routes (GET /client-config, /health, /ready, /metrics, POST
 * /v1/sessions, webhooks, the workflows API, the agent's own routes, the demo page) in routes.ts.
 * An agent with workflows gets its engine when the gateway starts listening (workflow-engine.ts);
 * a `workflow-app` agent serves the workflows API and refuses voice sessions.
 */
export function createGateway<S = unknown>(options: GatewayOptions<S>): Gateway {
  const clock = options.clock ?? systemClock;
  const env: Env = options.env ?? process.env;
  const log = options.logger ?? createLogger();
  const limits: Limits = spread(DEFAULT_LIMITS, options.limits);
  const redisUrl = options.store === undefined && env.SWITCHBOARD_REDIS_URL !== undefined && env.SWITCHBOARD_REDIS_URL !== "" ? env.SWITCHBOARD_REDIS_URL : undefined;
  const redis = redisUrl === undefined ? undefined : new RedisSessionStore({ url: redisUrl, log });
  const store: SessionStore = options.store ?? redis ?? new MemorySessionStore(clock);
  const ownership = options.ownership ?? redis;
  const metrics = new GatewayMetrics({ processMetrics: options.processMetrics ?? true });
  const apiKey = options.apiKey ?? (env.SWITCHBOARD_API_KEY === "" ? undefined : env.SWITCHBOARD_API_KEY);
  const metricsToken = options.metricsToken ?? (env.SWITCHBOARD_METRICS_TOKEN === "" ? undefined : env.SWITCHBOARD_METRICS_TOKEN);
  const coordinator: Coordinator = options.coordinator ?? redis ?? new MemoryCoordinator(() => clock.now());
  const budget = new ConnectionBudget(coordinator, options.connectionsPerMinute ?? Number(env.SWITCHBOARD_CONNECTIONS_PER_MINUTE ?? 0), log, () => clock.now());
  const allowedOrigins = options.allowedOrigins ?? commaList(env.SWITCHBOARD_ALLOWED_ORIGINS);
  /** Warnings strangers cause (refused connections), at most one line per kind every 10 s. */
  const throttle = new LogThrottle(() => clock.now());
  /**
   * The agent new sessions start with: its definition (session type erased; its own functions
   * keep theirs), its config after the offline choice, its offline script, and the model resolver
   * bound to that script. Read once per session, at its start; `reload` replaces it whole.
   */
  interface AgentSlot {
    readonly def: ResolvedAgentDef;
    readonly config: AgentConfig;
    /** The agent and its sub-agents, their configs after the offline choice. */
    readonly team: Team;
    readonly script?: unknown;
    /** Its `waitingAudio` files, decoded. */
    readonly waitingAudio?: WaitingSounds | undefined;
    readonly offline: boolean;
    readonly resolveModel: ModelResolver;
    /** Its `routes`, checked against the gateway's own paths. */
    readonly routes: AgentRouteTable;
  }
  const prepare = <T>(agent: ResolvedAgentDef<T>, script: unknown, waitingAudio: WaitingSounds | undefined): AgentSlot => {
    const def = agent as ResolvedAgentDef;
    const warn = (message: string): void => log.warn({ agent: def.name }, message);
    const choice = chooseTeamProviders(def, toAgentConfig(def, { warn }), env, options.offline ?? false, warn);
    const config = choice.team.root.config;
    if (config.waitingAudio !== undefined && waitingAudio === undefined) {
      throw new ConfigError(`Invalid agent "${config.name}"`, [
        { path: "waitingAudio", message: "its sound files were not loaded: load the agent with loadAgent(dir), or pass createGateway({ waitingAudio: await loadWaitingSounds(dir, config) })." },
      ]);
    }
    const routes = agentRouteTable(def);
    if (choice.offline) {
      log.info({ agent: config.name, missing: choice.missing }, "running on the offline stack; set the missing keys to use the configured providers");
    }
    // A sub-agent with a scripted llm of its own answers from its own script; everyone else from offline.json.
    const resolveModel: ModelResolver =
      options.resolveModel ?? ((descriptor, own = script) => resolveLanguageModel(descriptor, { env, ...(own === undefined ? {} : { script: own }) }));
    return { def, config, team: choice.team, ...(script === undefined ? {} : { script }), waitingAudio, offline: choice.offline, resolveModel, routes };
  };
  let current = prepare(options.agent, options.script, options.waitingAudio);
  const runsPerMinute = parseRunsPerMinute(env.SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE);
  const servesWorkflows = options.workflowEngine !== undefined || hasWorkflows(options.agent.workflows);
  /** What the gateway was set up with: telephony routes, its own entry points and the token audience stay as first configured. */
  const config = current.config;
  const live = new Map<string, Session>();
  /** One engine per process for the agent's `workflows`: given, or opened by `listen` (then closed by `close`). */
  let workflows: WorkflowEngine | undefined = options.workflowEngine;
  /** The workflows the engine runs: a reload cannot change them (the engine holds their code). */
  let openedWorkflows = current.def.workflows ?? {};
  ownership?.onTakeover((sessionId) => {
    const session = live.get(sessionId);
    if (session === undefined) return;
    live.delete(sessionId);
    log.info({ sessionId }, "session taken over by another instance");
    session.takeOver();
  });
  const wss = gatewaySocketServer(limits.maxBinaryFrameBytes * 4);
  // Realtime frames over the event limit are answered with an error; twice it, ws closes 1009.
  const realtimeWss = gatewaySocketServer(MAX_REALTIME_FRAME_BYTES * 2, chooseRealtimeProtocol);
  let draining = false;
  const telephony = createTelephony({
    config,
    env,
    clock,
    log,
    limits,
    authOn: apiKey !== undefined,
    openCarriers: options.openCarriers ?? parseOpenCarriers(env.SWITCHBOARD_OPEN_CARRIERS),
    coordinator,
    client: options.carrierClient ?? carrierClient({ env }),
    draining: () => draining,
    apiKey,
    callsPerMinute: parseCallsPerMinute(env.SWITCHBOARD_CALLS_PER_MINUTE),
    // The agent's workflows may call out (ctx.calls): the engine remembers their placements beside the runs.
    workflowCalls: hasWorkflows(current.def.workflows),
    startSession: (link, call, resume, screening, placed, phone) =>
      startSession(link, {
        transport: call.carrier,
        maxCallDurationMs: resolveConfig(current.config).maxCallDurationMs,
        screening,
        placed,
        phone,
        ...(resume === undefined ? {} : { resumeId: resume.sessionId, resumeNotice: resume.notice }),
      }),
  });

  /** Every entry point of the gateway's own and what authenticates it: logged at start, listed in docs/security.md. */
  const ownEntryPoints: EntryPoint[] = [
    {
      entry: "WS /websocket",
      auth: apiKey === undefined ? "none: set SWITCHBOARD_API_KEY" : `session token from POST /v1/sessions${allowedOrigins === undefined ? "" : "; Origin allow-list"}`,
      open: apiKey === undefined,
    },
    ...(apiKey === undefined ? [] : [{ entry: "POST /v1/sessions", auth: "API key (SWITCHBOARD_API_KEY)", open: false }]),
    ...(telephony.carriers.length === 0
      ? []
      : [{ entry: "POST /v1/calls", auth: apiKey === undefined ? "refused: placing calls needs SWITCHBOARD_API_KEY" : "API key (SWITCHBOARD_API_KEY)", open: false }]),
    ...(servesWorkflows
      ? [
          { entry: "GET /workflows", auth: apiKey === undefined ? "none: set SWITCHBOARD_API_KEY" : "API key (SWITCHBOARD_API_KEY)", open: apiKey === undefined },
          {
            entry: "POST /workflows/<name>/runs, GET /workflows/runs/<id>[/events], POST /workflows/events/<token>",
            auth: apiKey === undefined ? "refused: the workflows API needs SWITCHBOARD_API_KEY" : "API key (SWITCHBOARD_API_KEY)",
            open: false,
          },
        ]
      : []),
    {
      entry: `WS ${REALTIME_PATH}`,
      auth:
        apiKey === undefined
          ? "none: set SWITCHBOARD_API_KEY"
          : `API key or session token (Authorization: Bearer, or the openai-insecure-api-key subprotocol)${allowedOrigins === undefined ? "" : "; Origin allow-list"}`,
      open: apiKey === undefined,
    },
    { entry: "GET /metrics", auth: metricsToken === undefined ? "none: set SWITCHBOARD_METRICS_TOKEN" : "bearer token (SWITCHBOARD_METRICS_TOKEN)", open: metricsToken === undefined },
    ...telephony.entryPoints,
  ];
  /** The gateway's entry points and the current agent's routes (a reload may change those). */
  const entryPoints = (): EntryPoint[] => [...ownEntryPoints, ...routeEntryPoints(current.routes.entries, apiKey !== undefined)];
  const logEntryPoints = (): void => log.info({ entryPoints: entryPoints().map((e) => `${e.entry}: ${e.auth}`) }, "entry points");
  logEntryPoints();

  const server = createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  serveRequests(
    server,
    log,
    gatewayRoutes({
      clock,
      log,
      apiKey,
      metricsToken,
      tokenTtlMs: options.tokenTtlMs ?? TOKEN_TTL_MS,
      tokenAgent: config.name,
      metrics,
      metricsText: options.metricsText,
      agent: () => current,
      draining: () => draining,
      sessions: () => live.size,
      budget,
      telephony,
      agentRoutes: agentRoutes({ clock, log, throttle, apiKey, tokenAgent: config.name, budget, table: () => current.routes }),
      workflows: workflowRoutes({ clock, log, throttle, apiKey, budget, coordinator, runsPerMinute, engine: () => workflows }),
    }),
  );
  serveUpgrades(server, log, upgrade);

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const stream = telephony.isStream(url);
    const realtime = url.pathname === REALTIME_PATH;
    if (!stream && !realtime && url.pathname !== "/websocket") return refuseUpgrade(socket, 404, "Not Found");
    if (current.config.mode === "workflow-app") return refuseUpgrade(socket, 404, "Not Found", WORKFLOW_APP_REFUSAL);
    if (!(await budget.admit(req.socket.remoteAddress))) return refuseUpgrade(socket, 429, "Too Many Requests", budget.refusal);
    if (stream) return telephony.handleUpgrade(req, socket, head, url);
    if (draining) return refuseUpgrade(socket, 503, "Service Unavailable", "gateway draining: connect again (to another instance)");
    if (realtime) {
      // The Realtime front door, imported by the first Realtime client and kept (a later `import()` would resolve it again).
      const { acceptRealtime, clientTools } = await (realtimeRoute ??= import("./realtime-route.js"));
      return acceptUpgrade(realtimeWss, req, socket, head, (ws) => {
        const deps = { clock, log, throttle, limits, apiKey, allowedOrigins, tokenAgent: config.name, agent: () => ({ name: current.config.name, mode: sessionMode(current.config), clientTools: clientTools(current.team), tokenLimit: current.config.usageLimits?.totalTokens, turns: current.config.turnTaking?.detection ?? "auto", interrupts: current.config.interruption !== "off" }) };
        acceptRealtime(ws, req, url, spread(deps, { startSession: (link: RealtimeConnection) => startSession(link, { transport: "realtime" }) }));
      });
    }
    acceptUpgrade(wss, req, socket, head, (ws) => {
      accept(ws, req, url).catch((err: unknown) => {
        log.error({ err }, "session refused");
        ws.close(CLOSE.internal, "session could not start");
      });
    });
  }

  async function accept(ws: WebSocket, req: IncomingMessage, url: URL): Promise<void> {
    const origin = req.headers.origin;
    if (allowedOrigins !== undefined && origin !== undefined && !allowedOrigins.includes(origin)) {
      throttle.warn(log, { origin }, "origin refused");
      return refuseSocket(ws, clock, "auth", `origin ${origin} is not allowed`);
    }
    if (apiKey !== undefined) {
      const check = verifyToken(apiKey, url.searchParams.get("token") ?? undefined, config.name, clock.now());
      if (!check.ok) {
        throttle.warn(log, { remote: req.socket.remoteAddress, reason: check.reason }, "session refused");
        return refuseSocket(ws, clock, "auth", check.reason);
      }
    }
    const format = parseClientFormat(url.searchParams.get("codec"), url.searchParams.get("sampleRate"));
    if ("error" in format) return refuseSocket(ws, clock, "protocol", format.error);
    const events = parseEventSubscription(url.searchParams.get("events"));
    if (events !== "all" && "error" in events) return refuseSocket(ws, clock, "protocol", events.error);
    // Listening (and buffering) starts now: frames sent right after the upgrade are kept.
    const connection = new ClientConnection(ws, { clock, log, limits, format, events, socket: req.socket });
    // A session is resumed (or taken over) only by a client holding its resume key, issued with
    // `session.configured`: the id alone is not a secret, and every client holds a valid token. An
    // unknown id, or a wrong key, gets a fresh session and is told so — the same answer for both.
    const requested = url.searchParams.get("sessionId");
    const candidate = requested !== null && SESSION_ID.test(requested) ? requested : undefined;
    const resumeKey = url.searchParams.get("resumeKey") ?? undefined;
    const keyHash = candidate === undefined ? undefined : (live.get(candidate)?.resumeKeyHash ?? (await store.load(candidate))?.resumeKeyHash);
    const resumeId = candidate !== undefined && resumeKeyMatches(keyHash, resumeKey) ? candidate : undefined;
    if (!connection.open) return;
    const previous = resumeId === undefined ? undefined : live.get(resumeId);
    if (previous !== undefined) {
      live.delete(resumeId as string);
      previous.takeOver();
    }
    // Another instance may hold it live: it closes its socket on this claim.
    if (resumeId !== undefined && ownership !== undefined) {
      await ownership.claim(resumeId).catch((err: unknown) => log.warn({ err }, "session claim not published"));
      if (!connection.open) return;
    }
    startSession(connection, { resumeId, resumeKey, resumeRefused: requested !== null && resumeId === undefined, transport: "websocket" });
  }

  /** One session on a link (a browser socket or a carrier bridge); refused with a fatal error if it cannot be built. */
  function startSession(
    link: ClientLink,
    extra: {
      resumeId?: string | undefined;
      resumeKey?: string | undefined;
      resumeRefused?: boolean;
      resumeNotice?: string;
      transport: string;
      maxCallDurationMs?: number;
      screening?: CallScreening;
      /** A call a workflow placed: what its session sees, and who hears of its end. */
      placed?: PlacedSession | undefined;
      /** A phone call's numbers, from its verified webhook. */
      phone?: PhoneLine | undefined;
    },
  ): void {
    // This session's agent for its whole life, whatever a later `reload` swaps in.
    const { def, config, team, script, waitingAudio, resolveModel } = current;
    let session: Session;
    try {
      session = new Session({
        agent: { def, config, team, ...(script === undefined ? {} : { script }), waitingAudio },
        link,
        clock,
        log,
        store,
        resumeId: extra.resumeId,
        resumeKey: extra.resumeKey,
        resumeRefused: extra.resumeRefused ?? false,
        resumeNotice: extra.resumeNotice,
        resolveModel,
        // Absent: the session's mode opens the gateway's own adapters, with the keys in env.
        voice: options.voice,
        s2s: options.s2s,
        env,
        connectMcp: (agent) => connectMcpServers(agent.mcpServers, { env, log }),
        ...(workflows === undefined ? {} : { workflows }),
        metrics,
        transport: extra.transport,
        ...(extra.maxCallDurationMs === undefined ? {} : { maxCallDurationMs: extra.maxCallDurationMs }),
        ...(extra.screening === undefined ? {} : { screening: extra.screening }),
        ...(extra.placed?.outbound === undefined ? {} : { outbound: extra.placed.outbound }),
        ...(extra.phone === undefined ? {} : { phone: extra.phone }),
        ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
        ...(options.resumeGraceMs === undefined ? {} : { resumeGraceMs: options.resumeGraceMs }),
        ended: (ended) => {
          if (live.get(ended.id) === ended) live.delete(ended.id);
          extra.placed?.ended?.({ sessionId: ended.id, answeredBy: ended.answeredBy });
        },
      });
    } catch (err) {
      log.error({ err }, "session refused");
      link.emit({ type: "error.reported", code: "internal", message: String(err), fatal: true });
      link.close(CLOSE.internal, "session could not start");
      return;
    }
    live.set(session.id, session);
    void session.start();
  }

  async function drain(deadlineMs = DRAIN_DEADLINE_MS): Promise<void> {
    draining = true;
    log.info({ sessions: live.size, deadlineMs }, "draining");
    const deadline = clock.now() + deadlineMs;
    while (live.size > 0 && clock.now() < deadline) await clock.sleep(Math.min(250, deadline - clock.now()));
    // Phone calls still live hear a short notice and end once it has played (bounded); the rest go at once.
    const calls = [...live.values()].filter((session) => session.telephony);
    if (calls.length > 0) {
      log.info({ calls: calls.length }, "drain deadline: ending phone calls with a notice");
      await Promise.race([Promise.all(calls.map((call) => call.farewell(DEFAULTS.shutdownPhrase))), clock.sleep(FAREWELL_MS)]);
    }
    for (const session of [...live.values()]) session.goAway();
    await close();
  }

  async function close(): Promise<void> {
    draining = true;
    for (const session of [...live.values()]) session.goAway();
    for (const client of [...wss.clients, ...realtimeWss.clients]) client.terminate();
    await Promise.all([wss, realtimeWss].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    await telephony.close();
    await redis?.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    // After the server: no request can reach the engine any more. Active runs resume when it opens again.
    if (options.workflowEngine === undefined) await workflows?.close();
    // A given engine is its owner's to close; the calls it was lent go back.
    else options.workflowEngine.useCalls(undefined);
  }

  /** The agent's workflows on the engine of docs/workflows.md "Where runs live", unless one was given: that one is lent the gateway's calls. */
  async function openWorkflows(): Promise<void> {
    if (options.workflowEngine !== undefined && telephony.workflowCalls !== undefined) options.workflowEngine.useCalls(telephony.workflowCalls);
    const declared = current.def.workflows ?? {};
    if (workflows !== undefined || Object.keys(declared).length === 0) return;
    workflows = await openWorkflowEngine({ workflows: declared, env, clock, log: log.child({ component: "workflows" }), ...(telephony.workflowCalls === undefined ? {} : { calls: telephony.workflowCalls }) });
    openedWorkflows = declared;
  }

  /**
   * The served agent's mode imported before its first session: its runner, its provider adapters
   * and, for a voice mode, the Speex resampler (session/voice-resampler.ts; the polyphase filter
   * if it cannot load). Sessions of another mode import theirs as they open.
   */
  async function loadServedMode(served: AgentConfig): Promise<void> {
    if (served.mode === "workflow-app") return;
    const mode = sessionMode(served);
    await loadMode(mode);
    const engine = resamplerEngine();
    if (mode !== "text" && engine !== "speex") log.warn({ engine }, "the speex resampler did not load; resampling with the slower polyphase filter");
  }

  function reload<T>(agent: ReloadedAgent<T>): AgentConfig {
    const next = prepare(agent.def, agent.script, agent.waitingAudio);
    // The carriers' routes were mounted at start, for the first config's `telephony`.
    const mounted = mountedCarriers(config).sort();
    const wanted = mountedCarriers(next.config).sort();
    if (mounted.join(",") !== wanted.join(",")) {
      log.warn({ agent: next.config.name, mounted, wanted }, "telephony changed: carrier changes need a restart; the carriers mounted at start stay");
    }
    const changed = [...new Set([...Object.keys(openedWorkflows), ...Object.keys(next.def.workflows ?? {})])].filter((name) => openedWorkflows[name] !== next.def.workflows?.[name]);
    if (changed.length > 0) log.warn({ agent: next.config.name, workflows: changed }, "workflows changed: runs use the workflows the gateway started with until a restart");
    const routesBefore = current.routes.entries.map((e) => `${e.key} ${e.auth}`).join("\n");
    current = next;
    log.info({ agent: next.config.name, mode: next.config.mode, live: live.size }, "agent reloaded; new sessions use it");
    loadServedMode(next.config).catch((err: unknown) => log.error({ err, agent: next.config.name }, "the reloaded agent's mode did not load; its sessions will fail to start"));
    // Routes follow the agent: a reload that changes them says who may now call what.
    if (next.routes.entries.map((e) => `${e.key} ${e.auth}`).join("\n") !== routesBefore) logEntryPoints();
    return next.config;
  }

  return {
    server,
    get config() {
      return current.config;
    },
    metrics,
    workflowCalls: telephony.workflowCalls,
    get sessions() {
      return live.size;
    },
    get workflows() {
      return workflows;
    },
    get entryPoints() {
      return entryPoints();
    },
    async listen(port = 3000, host = "127.0.0.1") {
      await redis?.ready();
      await openWorkflows();
      await loadServedMode(current.config);
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          const address = server.address() as AddressInfo;
          const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
          resolve({ url: `http://${shown}:${address.port}`, port: address.port });
        });
      });
    },
    reload,
    drain,
    close,
  };
}

/** Why a `workflow-app` agent refuses `/websocket` and telephony streams (the upgrade's 404 body). */
export const WORKFLOW_APP_REFUSAL = 'this agent is a workflow-app (mode "workflow-app"): it serves the workflows API (GET /workflows), not voice sessions';

/** A comma-separated environment list; undefined when unset or empty. */
function commaList(value: string | undefined): string[] | undefined {
  const items = (value ?? "").split(",").map((item) => item.trim()).filter((item) => item !== "");
  return items.length === 0 ? undefined : items;
}
