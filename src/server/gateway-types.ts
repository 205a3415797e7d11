import type { Server } from "node:http";
import type { LanguageModel } from "ai";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { AgentConfig, ProviderDescriptor, ResolvedAgentDef } from "../manifest/index.js";
import type { Env } from "../pipeline/providers/llm/index.js";
import type { VoiceProviders } from "../session/voice-runner.js";
import type { S2sProvider } from "../s2s/s2s-port.js";
import type { SessionStore } from "../session/store.js";
import type { CarrierName } from "../transport/carriers/index.js";
import type { Limits } from "../transport/protocol.js";
import type { Coordinator } from "./coordination.js";
import type { GatewayMetrics } from "./metrics.js";
import type { SessionOwnership } from "./redis-store.js";
import type { CarrierClient } from "./telephony/carrier-client.js";
import type { EntryPoint } from "./telephony/entry-points.js";
import type { WorkflowEngine } from "../workflows/index.js";
import type { CallPlacer } from "../workflows/engine.js";

/** What `createGateway` takes and returns (the public API: `switchboard`'s `createGateway`). */
export interface GatewayOptions<Session = unknown> {
  /** The agent: a definition with its tools attached (`withTools`), as `loadAgent` returns it. */
  readonly agent: ResolvedAgentDef<Session>;
  /** The agent's offline script (offline.json), for the `scripted` model. */
  readonly script?: unknown;
  /**
   * The agent's `waitingAudio` files, decoded: `loadAgent` returns them, or an embedder calls
   * `loadWaitingSounds(dir, config)`. Required when the agent sets `waitingAudio`.
   */
  readonly waitingAudio?: WaitingSounds | undefined;
  /** `true` forces the offline stack; `"auto"` uses it when a provider's key is missing. Default false. */
  readonly offline?: boolean | "auto";
  readonly env?: Env;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Where resume records live. Default: Redis when `SWITCHBOARD_REDIS_URL` is set, else this process's memory. */
  readonly store?: SessionStore;
  /** Cross-instance session ownership (takeover). Default: the Redis store's, when that is used. */
  readonly ownership?: SessionOwnership;
  /** Turns auth on (default: `SWITCHBOARD_API_KEY` from env). */
  readonly apiKey?: string;
  /**
   * Origins a browser may connect to `/websocket` from (exact `Origin` values, e.g.
   * `https://app.example.com`); a request with another `Origin` is refused, one without an
   * `Origin` (not a browser) is not. Default: `SWITCHBOARD_ALLOWED_ORIGINS` (comma-separated), else any.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Connections and webhooks one client address may make per minute, on every upgrade
   * (`/websocket`, `/telephony/*`), every telephony webhook, every request to one of the agent's
   * `routes` or the workflows API and `POST /v1/sessions` (a token bucket shared by them and by every process of the
   * deployment; bursts up to it pass). Default:
   * `SWITCHBOARD_CONNECTIONS_PER_MINUTE`, else off. It keys on the socket's peer address: behind
   * a proxy that is the proxy's (limit there instead), and a carrier's media servers are few
   * addresses carrying many calls (size it for the busiest minute).
   */
  readonly connectionsPerMinute?: number;
  /**
   * Carriers served without a secret while auth is on — only for a network that authenticates
   * them itself (Exotel's IP allow-listing). Default: `SWITCHBOARD_OPEN_CARRIERS` (comma-separated).
   */
  readonly openCarriers?: readonly CarrierName[];
  /**
   * Where call tickets, replay records and connection budgets live, shared by every process of the
   * deployment. Default: Redis when `SWITCHBOARD_REDIS_URL` is set, else this process's memory
   * (`serve --workers` passes the primary's).
   */
  readonly coordinator?: Coordinator;
  /** When set (default: `SWITCHBOARD_METRICS_TOKEN`), `GET /metrics` needs `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  readonly tokenTtlMs?: number;
  readonly limits?: Partial<Limits>;
  readonly startTimeoutMs?: number;
  readonly resumeGraceMs?: number;
  /** Replace how LLM descriptors become models (tests, custom providers). */
  readonly resolveModel?: (descriptor: ProviderDescriptor) => LanguageModel | Promise<LanguageModel>;
  /** Replace how STT/TTS descriptors become providers (tests, custom providers). */
  readonly voice?: VoiceProviders;
  /** Replace how s2s descriptors become providers. */
  readonly s2s?: (descriptor: ProviderDescriptor) => S2sProvider;
  /** Collect process metrics (CPU, memory, event-loop lag) too. Default true. */
  readonly processMetrics?: boolean;
  /** Where `GET /metrics` comes from (default: this gateway's registry); `--workers` aggregates the group. */
  readonly metricsText?: () => Promise<string>;
  /** Hangs calls up through the carriers' APIs (default: from TWILIO_* / TELNYX_* in env). */
  readonly carrierClient?: CarrierClient;
  /**
   * The engine the agent's `workflows` run on (docs/workflows.md), the caller's to close. Default:
   * when the agent declares workflows, `listen` opens one on `SWITCHBOARD_WORKFLOWS_DIR`, and
   * `close` (or `drain`) closes it.
   */
  readonly workflowEngine?: WorkflowEngine;
}

/** An agent to swap into a running gateway (`Gateway.reload`): its definition and offline script, as `loadAgent` returns them. */
export interface ReloadedAgent<Session = unknown> {
  readonly def: ResolvedAgentDef<Session>;
  readonly script?: unknown;
  readonly waitingAudio?: WaitingSounds | undefined;
}

export interface Gateway {
  readonly server: Server;
  /** The config new sessions run with (after the offline choice): the latest `reload`'s, else the first. */
  readonly config: AgentConfig;
  readonly metrics: GatewayMetrics;
  /** Live sessions. */
  readonly sessions: number;
  /** Every entry point with what authenticates it (start-up output, docs/security.md): the gateway's own, then the current agent's `routes`. */
  readonly entryPoints: readonly EntryPoint[];
  /** The engine the agent's workflows run on: given, or opened by `listen`; undefined before that, or without workflows. */
  readonly workflows: WorkflowEngine | undefined;
  listen(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /**
   * `ctx.calls` for the workflow engine: the engine `listen` opens gets it, and an engine given as
   * `workflowEngine` is lent it by `listen` (`useCalls`; taken back by `close`). Undefined when the
   * agent has no workflows or mounts no telephony.
   */
  readonly workflowCalls: CallPlacer | undefined;
  /**
   * Swap the agent (`switchboard dev`): sessions that start from now on run the new definition,
   * config and offline script; live sessions finish on the one they started with; its `routes`
   * answer from now on (a change of them logs the entry points again). Validated
   * first — a `ConfigError` leaves the current agent in place. What the gateway set up at start
   * stays: the routes and carriers mounted for `telephony` (a change is logged: it needs a
   * restart), the entry points, and the name session tokens are minted for. Returns the new config.
   */
  reload<Session>(agent: ReloadedAgent<Session>): AgentConfig;
  /** Stop accepting, let live sessions finish up to the deadline, close the rest 1001, close the server. */
  drain(deadlineMs?: number): Promise<void>;
  close(): Promise<void>;
}
