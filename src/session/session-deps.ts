import { randomBytes } from "node:crypto";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../log.js";
import { buildSystemPrompt, type AgentConfig, type OutboundCall, type PhoneLine, type ProviderDescriptor, type RandomSource, type ResolvedAgentDef, type SessionMode, type Team } from "../manifest/index.js";
import type { Env } from "../pipeline/providers/keys.js";
import type { S2sProvider } from "../s2s/s2s-port.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { McpTools } from "./mcp.js";
import type { ModelResolver } from "./reply-agent.js";
import type { SessionMetrics } from "./metrics-port.js";
import type { SessionStore } from "./store.js";
import type { VoiceProviders } from "./voice-runner.js";
import type { Session } from "./session.js";
import type { CallScreening } from "./voicemail-screen.js";
import type { WorkflowEngine } from "../workflows/index.js";
import { spread } from "../spread.js";

/** What a session runs: the agent as the host holds it. */
export interface SessionAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The agent's offline script (offline.json), if any. */
  readonly script?: unknown;
  /** The agent's team (its sub-agents), as the host resolved it; default `resolveTeam(def, config)`. */
  readonly team?: Team;
  /** Its `waitingAudio` files, decoded (server/waiting-sounds.ts): played on the link once the mode opens. */
  readonly waitingAudio?: WaitingSounds | undefined;
}

/** Everything a session needs, injected: a test builds one with fakes and a virtual clock. */
export interface SessionDeps {
  readonly agent: SessionAgent;
  readonly link: ClientLink;
  readonly clock: Clock;
  readonly log: Logger;
  readonly store: SessionStore;
  /**
   * The id to resume (from `?sessionId=`), once the host has checked the client holds its resume
   * key; the session trusts it. Absent = a fresh id.
   */
  readonly resumeId?: string | undefined;
  /** The resume key the client presented with `resumeId`: the session keeps it. Absent = a fresh key. */
  readonly resumeKey?: string | undefined;
  /** The client asked to resume a session it could not (unknown, expired, or a wrong key): told so after `session.configured`. */
  readonly resumeRefused?: boolean;
  /** Said once the session has started (after `history.restored`, or instead of the greeting): a warm transfer nobody answered comes back with it. */
  readonly resumeNotice?: string | undefined;
  readonly resolveModel: ModelResolver;
  /** Speech providers for pipeline sessions (STT, TTS, local VAD); absent = the gateway's own adapters, reading keys from `env`. */
  readonly voice?: VoiceProviders | undefined;
  /** Speech-to-speech providers for s2s sessions; absent = the gateway's own adapters, reading keys from `env`. */
  readonly s2s?: ((descriptor: ProviderDescriptor) => S2sProvider) | undefined;
  /** Where the gateway's own provider adapters read their keys (the gateway's `env`); default `process.env`. */
  readonly env?: Env | undefined;
  readonly connectMcp?: ((def: ResolvedAgentDef) => Promise<McpTools>) | undefined;
  readonly metrics?: SessionMetrics;
  readonly random?: RandomSource;
  /** The transport's name for metrics ("websocket", "realtime" for `/v1/realtime`, "twilio", …): anything but the first two is a phone call. */
  readonly transport?: string;
  /** Providers must open within this (ms); default 10 s. */
  readonly startTimeoutMs?: number;
  /** How long the resume record outlives the socket (ms); default 120 s. */
  readonly resumeGraceMs?: number;
  /** Telephony: the call ends after this long, with `DEFAULTS.callLimitPhrase` spoken first (ms; 0 or absent = no limit). */
  readonly maxCallDurationMs?: number;
  /** A phone call the agent's `voicemail` may screen for an answering machine: whether the gateway placed it, and the carrier's verdicts on it. */
  readonly screening?: CallScreening | undefined;
  /**
   * The gateway's engine for the agent's `workflows` (one per process, docs/workflows.md): the
   * session's tools start and find runs through it (`ctx.workflows`), and are told when a run
   * they started with `notify` ends. Absent when the agent declares no workflows.
   */
  readonly workflows?: WorkflowEngine | undefined;
  /** A call a workflow placed: the run, to whom and why (the agent's `sessionContext` and `onSessionEnd` see it). */
  readonly outbound?: OutboundCall | undefined;
  /** A phone call's numbers, as its carrier's verified webhook named them (the agent's `sessionContext` and `onSessionEnd` see them). */
  readonly phone?: PhoneLine | undefined;
  /** Called once when the session has ended. */
  readonly ended?: (session: Session) => void;
}

/** What the agent's `sessionContext` and `onSessionEnd` learn of the call beyond the session: `outbound` and `phone`, each only when known. */
export function callInfo(deps: Pick<SessionDeps, "outbound" | "phone">): { outbound?: OutboundCall; phone?: PhoneLine } {
  return spread(deps.outbound === undefined ? {} : { outbound: deps.outbound }, deps.phone === undefined ? {} : { phone: deps.phone });
}

/** A fresh session id: 22 URL-safe characters. */
export function newSessionId(): string {
  return randomBytes(16).toString("base64url");
}

/** The mode a session of this agent runs (a workflow app serves workflows, not sessions). */
export function sessionMode(config: AgentConfig): SessionMode {
  const mode = config.mode ?? "pipeline";
  if (mode === "workflow-app") throw new GatewayError("internal", "a workflow-app agent serves workflows, not sessions.", { fatal: true });
  return mode;
}

/**
 * A session's system prompt, asked for at every model request: the agent's `systemPrompt` and
 * `promptContext` functions called for it each time (else their text), with the voice presets.
 * An agent with neither function gets the same text every time, so it is built once, at the
 * first request (docs/benchmarks.md, bench:pipeline-turn-counts).
 */
export function sessionInstructions(agent: SessionAgent, sessionId: string): () => Promise<string> {
  const { def, config } = agent;
  if (typeof def.systemPrompt !== "function" && typeof def.promptContext !== "function") {
    let built: Promise<string> | undefined;
    return () => (built ??= Promise.resolve(buildSystemPrompt({ systemPrompt: config.systemPrompt, voicePresets: config.voicePresets, promptContext: config.promptContext })));
  }
  const info = { sessionId };
  return async () => {
    const systemPrompt = typeof def.systemPrompt === "function" ? await def.systemPrompt(info) : config.systemPrompt;
    const promptContext = typeof def.promptContext === "function" ? await def.promptContext(info) : config.promptContext;
    return buildSystemPrompt({ systemPrompt, voicePresets: config.voicePresets, promptContext });
  };
}

/** Who a session is, as its parts log, trace, count and record it. */
export interface SessionIdentity {
  readonly clock: Clock;
  readonly log: Logger;
  readonly sessionId: string;
  readonly agentName: string;
  readonly mode: SessionMode;
  /** The transport's name for metrics, traces and records ("websocket", "twilio", …). */
  readonly transport: string;
}
