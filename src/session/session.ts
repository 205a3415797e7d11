import { randomBytes } from "node:crypto";
import type { LanguageModel } from "ai";
import type { Clock, Timer } from "../clock.js";
import { CLOSE, GatewayError, messageOf, type ErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import {
  DEFAULTS,
  resolveConfig,
  buildSystemPrompt,
  type AgentConfig,
  type ProviderDescriptor,
  type RandomSource,
  type ResolvedConfig,
  type ResolvedAgentDef,
  type SessionMode,
} from "../manifest/index.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { EventBody, SessionCommand } from "../transport/protocol.js";
import { TurnLedger, type SettledInfo } from "../turn/ledger.js";
import { Conversation, MAX_QUEUED_TURNS } from "./conversation.js";
import type { McpTools } from "./mcp.js";
import { noMetrics, type SessionMetrics } from "./metrics-port.js";
import { RESUME_GRACE_MS, type SessionStore } from "./store.js";
import { newResumeKey, resumeKeyHash } from "./resume-key.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import { DtmfEntry } from "./dtmf-entry.js";
import { composeToolTable } from "./tool-table.js";
import { MODES } from "./modes.js";
import { TurnTracer } from "./turn-tracer.js";
import { ToolRunner } from "./tool-runner.js";
import type { VoiceProviders } from "./voice-runner.js";
import type { S2sProvider } from "../s2s/s2s-port.js";

/** What a session runs: the agent as the host holds it. */
export interface SessionAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The agent's offline script (offline.json), if any. */
  readonly script?: unknown;
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
  readonly resolveModel: (descriptor: ProviderDescriptor) => LanguageModel | Promise<LanguageModel>;
  /** Speech providers for pipeline sessions (STT, TTS, local VAD). */
  readonly voice?: VoiceProviders | undefined;
  /** Speech-to-speech providers for s2s sessions. */
  readonly s2s?: ((descriptor: ProviderDescriptor) => S2sProvider) | undefined;
  readonly connectMcp?: ((def: ResolvedAgentDef) => Promise<McpTools>) | undefined;
  readonly metrics?: SessionMetrics;
  readonly random?: RandomSource;
  /** The transport's name for metrics ("websocket", "twilio", …). */
  readonly transport?: string;
  /** Providers must open within this (ms); default 10 s. */
  readonly startTimeoutMs?: number;
  /** How long the resume record outlives the socket (ms); default 120 s. */
  readonly resumeGraceMs?: number;
  /** Telephony: the call ends after this long, with `DEFAULTS.callLimitPhrase` spoken first (ms; 0 or absent = no limit). */
  readonly maxCallDurationMs?: number;
  /** Called once when the session has ended. */
  readonly ended?: (session: Session) => void;
}

/** Providers must open within this long (protocol.md). */
export const START_TIMEOUT_MS = 10_000;

/** How long the call-limit notice may take before the call is closed regardless (ms). */
const CALL_LIMIT_NOTICE_MS = 20_000;

type Phase = "starting" | "live" | "ended";

/** A fresh session id: 22 URL-safe characters. */
export function newSessionId(): string {
  return randomBytes(16).toString("base64url");
}

/** The text modes can run today; pipeline and s2s plug in through the same session. */
function sessionMode(config: AgentConfig): SessionMode {
  const mode = config.mode ?? "pipeline";
  if (mode === "workflow-app") throw new GatewayError("internal", "a workflow-app agent serves workflows, not sessions.", { fatal: true });
  return mode;
}

/**
 * One connection's life: start (providers, tool table, resume), serialized turns under epochs,
 * cancel and reset, client tools, idle timeout, and the record that outlives the socket.
 */
export class Session {
  readonly id: string;
  readonly mode: SessionMode;
  /** The hash of this session's resume key: a connection presenting the key may take it over. */
  readonly resumeKeyHash: string;
  readonly #resumeKey: string;
  readonly #deps: SessionDeps;
  readonly #log: Logger;
  readonly #metrics: SessionMetrics;
  readonly #tracer: TurnTracer;
  readonly #conversation = new Conversation();
  /** The agent's config with every default applied, resolved once. */
  readonly #settings: ResolvedConfig;
  #phase: Phase = "starting";
  #tools: ToolRunner | undefined;
  #mode: ModeRunner | undefined;
  #mcp: McpTools | undefined;
  #sessionValue: unknown;
  #lastState: string | undefined;
  #idle: Timer | undefined;
  #replies = 0;
  #usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, steps: 0 };
  /** Why the session ends once the current reply has been heard (end_call, the call limit). */
  #endAfterReply: string | undefined;
  #idleStopped = false;
  #callLimit: Timer | undefined;
  readonly #dtmf: DtmfEntry;
  #dtmfCalls = 0;
  readonly #starting = new AbortController();
  readonly #endedPromise: Promise<void>;
  #resolveEnded: () => void = () => {};
  /** Aborted when the session ends: work the session itself started (DTMF tool calls). */
  readonly #lifetime = new AbortController();

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.id = deps.resumeId ?? newSessionId();
    this.#resumeKey = deps.resumeId !== undefined && deps.resumeKey !== undefined ? deps.resumeKey : newResumeKey();
    this.resumeKeyHash = resumeKeyHash(this.#resumeKey);
    this.mode = sessionMode(deps.agent.config);
    this.#settings = resolveConfig(deps.agent.config);
    this.#dtmf = new DtmfEntry(deps.clock, (digits) => this.#onDtmfEntry(digits));
    this.#log = deps.log.child({ sessionId: this.id, agent: deps.agent.config.name, mode: this.mode });
    this.#metrics = deps.metrics ?? noMetrics;
    this.#tracer = new TurnTracer(deps.clock, {
      "switchboard.session.id": this.id,
      "switchboard.agent": deps.agent.config.name,
      "switchboard.mode": this.mode,
      "switchboard.transport": deps.transport ?? "websocket",
    });
    this.#endedPromise = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
  }

  get ended(): boolean {
    return this.#phase === "ended";
  }

  /** Zero-RTT `session.configured`, then providers and the tool table under the start timeout. */
  async start(): Promise<void> {
    const { link, clock } = this.#deps;
    let format;
    try {
      format = await link.ready;
    } catch (error) {
      this.#fail(error instanceof GatewayError ? error : new GatewayError("audio", messageOf(error), { fatal: true }));
      return;
    }
    link.emit({ type: "session.configured", ...format, sessionId: this.id, resumeKey: this.#resumeKey, mode: this.mode });
    if (this.#deps.resumeRefused === true) {
      link.emit({ type: "error.reported", code: "auth", message: "the session asked for could not be resumed (unknown, expired, or resumeKey does not match): this is a new session", fatal: false });
    }
    this.#metrics.sessionStarted(this.mode, this.#deps.transport ?? "websocket");
    // A client that hangs up while providers are still opening aborts their handshakes: no half-open, billed sockets.
    void link.hungUp.then(() => this.#starting.abort(new GatewayError("connection", "the client hung up during start")));
    const timeoutMs = this.#deps.startTimeoutMs ?? START_TIMEOUT_MS;
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => reject(new GatewayError("internal", `providers did not open within ${timeoutMs} ms`, { fatal: true })), timeoutMs);
    });
    try {
      await Promise.race([this.#open(), timeout]);
    } catch (error) {
      timer?.cancel();
      this.#starting.abort(error);
      const failure = error instanceof GatewayError ? error : new GatewayError("internal", `session could not start: ${messageOf(error)}`, { fatal: true, cause: error });
      this.#log.error({ err: error }, "session start failed");
      this.#fail(failure.fatal ? failure : new GatewayError(failure.code, failure.message, { fatal: true, closeCode: CLOSE.internal }));
      return;
    }
    timer?.cancel();
    if (this.#phase === "ended") return;
    this.#phase = "live";
    // History or greeting first: input buffered during start is answered after it.
    await this.#restoreOrGreet();
    if (this.#phase !== "live") return;
    link.attach({
      command: (command) => this.#command(command),
      audio: (chunk) => this.#mode?.audio(chunk),
      playback: (bufferedMs) => {
        if (this.#phase === "live") this.#mode?.playbackProgress(bufferedMs);
      },
      closed: (code, reason) => {
        this.#log.info({ code, reason }, "client closed");
        void this.end();
      },
      dtmf: (digit) => {
        if (this.#phase !== "live") return;
        this.#dtmf.digit(digit);
        this.#touch();
      },
    });
    this.#armIdle();
    this.#armCallLimit();
  }

  /** Close the client because another connection took this session id over. */
  takeOver(): void {
    this.#deps.link.close(CLOSE.normal, "session resumed by another connection");
    void this.end();
  }

  /** A phone call (a carrier transport, not the browser socket). */
  get telephony(): boolean {
    return this.#deps.transport !== undefined && this.#deps.transport !== "websocket";
  }

  /**
   * Drain deadline on a phone call: the caller hears `text`, then the call ends once it has been
   * heard (closed 1000 and hung up, as for end_call). Resolves once the session has ended and its
   * socket has closed (a carrier stream stays open while the notice plays out).
   */
  farewell(text: string): Promise<void> {
    if (this.#phase === "live" && this.mode !== "text") {
      this.#endAfterReply = "gateway shutting down";
      this.#log.info({}, "farewell before shutdown");
      this.#mode?.greet(text);
    } else if (this.#phase !== "ended") {
      this.goAway();
    }
    return this.#endedPromise.then(() => this.#deps.link.hungUp);
  }

  /** Gateway drain: close with 1001 (going away). */
  goAway(): void {
    this.#deps.link.close(CLOSE.goingAway, "gateway shutting down");
    void this.end();
  }

  /** End the session: cancel work, save the record for the grace window, release providers. */
  async end(): Promise<void> {
    if (this.#phase === "ended") return;
    this.#phase = "ended";
    this.#idle?.cancel();
    this.#callLimit?.cancel();
    this.#dtmf.close();
    this.#lifetime.abort(new GatewayError("connection", "the session ended"));
    this.#deps.link.close(CLOSE.normal, "session ended");
    this.#metrics.sessionEnded(this.mode, this.#deps.transport ?? "websocket");
    this.#tracer.close();
    try {
      await this.#mode?.close();
      await this.#save();
      await this.#mcp?.close();
      await this.#deps.agent.def.onSessionEnd?.({ sessionId: this.id, mode: this.mode, session: this.#sessionValue });
    } catch (error) {
      this.#log.warn({ err: error }, "session cleanup failed");
    }
    this.#log.info({ replies: this.#replies }, "session ended");
    this.#deps.ended?.(this);
    this.#resolveEnded();
  }

  // ── start ─────────────────────────────────────────────────────────────────────────────

  async #open(): Promise<void> {
    const { agent, clock } = this.#deps;
    const { config, def } = agent;
    this.#sessionValue = def.sessionContext?.({ sessionId: this.id, mode: this.mode });
    this.#mcp = await this.#deps.connectMcp?.(def);
    const table = composeToolTable({
      def,
      builtinTools: config.builtinTools,
      settings: this.#settings,
      mcp: this.#mcp,
      log: this.#log,
      now: () => new Date(clock.now()),
      endCall: () => {
        this.#endAfterReply = "call ended by the agent";
      },
    });

    const tools = new ToolRunner({
      table,
      clock,
      random: this.#deps.random ?? Math.random,
      log: this.#log,
      sessionId: this.id,
      session: this.#sessionValue,
      conversation: this.#conversation,
      emit: (event) => this.#emit(event),
      line: (line) => {
        if (line.kind === "start" || line.kind === "delayed") this.#mode?.toolLine(line);
      },
      userSpeaking: () => this.#mode?.userSpeaking === true,
      settled: (_call, outcome) => {
        this.#metrics.toolCall(outcome.status);
        this.#touch();
        this.#projectState();
      },
    });
    this.#tools = tools;
    const { resolveModel, voice, s2s } = this.#deps;
    this.#mode = await MODES[this.mode]({
      mode: this.mode,
      ctx: this.#runnerContext(),
      config,
      settings: this.#settings,
      table,
      tools,
      instructions: () => this.#instructions(),
      link: this.#deps.link,
      providers: { resolveModel, voice, s2s },
      signal: this.#starting.signal,
    });
  }

  #runnerContext(): RunnerContext {
    const ledger = new TurnLedger({
      history: this.#conversation,
      emit: (event) => this.#emit(event),
      activity: () => this.#touch(),
      settled: (info) => this.#replySettled(info),
    });
    return {
      ledger,
      conversation: this.#conversation,
      clock: this.#deps.clock,
      log: this.#log,
      emit: (event) => this.#emit(event),
      activity: () => this.#touch(),
      admitTurn: () => this.#admitTurn(),
      fatal: (error) => this.#fail(error),
      count: (what) => this.#metrics.count(this.mode, what),
      audioDropped: (where, bytes) => this.#metrics.audioDropped(where, bytes),
    };
  }

  async #instructions(): Promise<string> {
    const { def, config } = this.#deps.agent;
    const info = { sessionId: this.id };
    const systemPrompt = typeof def.systemPrompt === "function" ? await def.systemPrompt(info) : config.systemPrompt;
    const promptContext = typeof def.promptContext === "function" ? await def.promptContext(info) : config.promptContext;
    return buildSystemPrompt({ systemPrompt, voicePresets: config.voicePresets, promptContext });
  }

  async #restoreOrGreet(): Promise<void> {
    const { resumeId, store, agent } = this.#deps;
    if (resumeId !== undefined) {
      const record = await store.load(resumeId);
      if (record !== undefined && record.agent === agent.config.name && (record.transcript.length > 0 || record.history.length > 0)) {
        this.#conversation.restore(record);
        this.#emit({ type: "history.restored", ...this.#conversation.restoredEvent() });
        this.#log.info({ lines: record.transcript.length }, "session resumed");
        return;
      }
    }
    this.#greet();
  }

  #greet(): void {
    this.#mode?.greet(this.#deps.agent.config.greeting);
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  #command(command: SessionCommand): void {
    const mode = this.#mode;
    if (this.#phase !== "live" || mode === undefined) return;
    switch (command.type) {
      case "user_text":
        this.#touch();
        // Bounded: a client typing faster than the agent answers does not grow the queue.
        if (mode.queuedTurns >= MAX_QUEUED_TURNS) {
          this.#report("protocol", `too many turns waiting (${MAX_QUEUED_TURNS}): this one was dropped; wait for the reply`);
          return;
        }
        mode.userText(command.text);
        return;
      case "cancel":
        mode.cancel();
        return;
      case "reset":
        this.#reset(mode);
        return;
      case "tool_result":
        if (this.#tools?.settleClientCall(command.toolCallId, command.result, command.error) !== true) {
          this.#report("protocol", `tool_result: no call ${command.toolCallId} is waiting for a result`);
        }
        return;
      case "audio_ready":
        return;
      case "user_turn_start":
        mode.manual("start");
        return;
      case "user_turn_commit":
        mode.manual("commit");
        return;
      case "user_turn_clear":
        mode.manual("clear");
        return;
    }
  }

  #reset(mode: ModeRunner): void {
    mode.strand();
    this.#conversation.reset();
    // Usage is counted per session, not per conversation: a reset does not lift usageLimits.
    this.#emit({ type: "session.reset" });
    this.#greet();
    void this.#save();
    this.#touch();
  }

  /** A complete keypad entry: a text turn "The caller pressed 1234", or one call of the `dtmf.tool`. */
  #onDtmfEntry(digits: string): void {
    if (this.#phase !== "live") return;
    this.#log.info({ digits: digits.length }, "dtmf");
    const dtmf = this.#settings.dtmf;
    if (dtmf === "text") {
      // Keypad turns wait in the same bounded queue as typed ones.
      if ((this.#mode?.queuedTurns ?? 0) >= MAX_QUEUED_TURNS) {
        this.#log.warn({ digits: digits.length }, "dtmf dropped: too many turns waiting");
        return;
      }
      this.#mode?.userText(`The caller pressed ${digits}`);
      return;
    }
    void this.#tools?.call({ toolCallId: `dtmf_${++this.#dtmfCalls}`, toolName: dtmf.tool, args: { digits }, signal: this.#lifetime.signal });
  }

  /** Telephony's call limit: the notice is spoken, then the call ends once it has been heard. */
  #armCallLimit(): void {
    const ms = this.#deps.maxCallDurationMs ?? 0;
    if (ms <= 0) return;
    this.#callLimit = this.#deps.clock.setTimeout(() => {
      if (this.#phase !== "live") return;
      this.#log.info({ maxCallDurationMs: ms }, "call duration limit");
      this.#endAfterReply = "call duration limit";
      this.#mode?.greet(DEFAULTS.callLimitPhrase);
      // Bounded: a notice that never finishes (a stuck provider) still ends the call.
      this.#callLimit = this.#deps.clock.setTimeout(() => {
        this.#deps.link.close(CLOSE.normal, "call duration limit");
        void this.end();
      }, CALL_LIMIT_NOTICE_MS);
    }, ms);
  }

  // ── replies ───────────────────────────────────────────────────────────────────────────

  /** Before a model reply: the usage limit, once crossed, ends the session at the next turn. */
  #admitTurn(): boolean {
    const limit = this.#deps.agent.config.usageLimits?.totalTokens;
    if (limit === undefined || this.#usage.totalTokens < limit) return true;
    this.#fail(new GatewayError("llm", `usage limit reached: ${this.#usage.totalTokens} of ${limit} tokens used`, { fatal: true, closeCode: CLOSE.policy }));
    return false;
  }

  #replySettled(info: SettledInfo): void {
    if (this.#phase !== "live") return;
    this.#replies += 1;
    if (info.status !== "spoken") this.#metrics.turn(this.mode);
    if (info.llmFirstTokenMs !== undefined) this.#metrics.providerLatency(this.#deps.agent.config.llm?.kind ?? "llm", "llm_first_token", info.llmFirstTokenMs);
    if (info.status === "failed") this.#metrics.error("llm");
    if (info.usage !== undefined) {
      this.#usage = {
        inputTokens: this.#usage.inputTokens + info.usage.inputTokens,
        outputTokens: this.#usage.outputTokens + info.usage.outputTokens,
        totalTokens: this.#usage.totalTokens + info.usage.totalTokens,
        steps: this.#usage.steps + info.usage.steps,
      };
      if (this.#deps.agent.config.usageLimits !== undefined) this.#emit({ type: "usage.updated", ...this.#usage });
    }
    this.#projectState();
    this.#touch();
    void this.#save();
    if (this.#endAfterReply !== undefined) {
      this.#log.info({ reason: this.#endAfterReply }, "ending after the reply");
      this.#deps.link.close(CLOSE.normal, this.#endAfterReply);
      void this.end();
    }
  }

  // ── helpers ───────────────────────────────────────────────────────────────────────────

  #emit(event: EventBody): void {
    if (this.#phase === "ended") return;
    this.#metrics.event(this.mode, this.#deps.transport ?? "websocket", event);
    this.#tracer.event(event);
    this.#deps.link.emit(event);
  }

  #report(code: ErrorCode, message: string): void {
    this.#metrics.error(code);
    this.#emit({ type: "error.reported", code, message, fatal: false });
  }

  /** A fatal error: reported once, then the socket closes with the error's code. */
  #fail(error: GatewayError): void {
    if (this.#phase === "ended") return;
    this.#metrics.error(error.code);
    this.#emit({ type: "error.reported", code: error.code, message: error.message, fatal: true });
    this.#deps.link.close(error.closeCode, error.message);
    void this.end();
  }

  #projectState(): void {
    const sync = this.#deps.agent.def.syncState;
    if (sync === undefined) return;
    try {
      const state = sync(this.#sessionValue);
      const json = JSON.stringify(state);
      if (json === this.#lastState) return;
      this.#lastState = json;
      this.#emit({ type: "state.updated", state });
    } catch (error) {
      this.#log.warn({ err: error }, "syncState failed");
    }
  }

  /** Conversational activity re-arms the idle timer; raw audio and playback reports never do. */
  #touch(): void {
    if (this.#phase === "live") this.#armIdle();
  }

  #armIdle(): void {
    this.#idle?.cancel();
    const ms = this.#settings.idleTimeoutMs;
    if (ms === 0 || this.#idleStopped) return;
    this.#idle = this.#deps.clock.setTimeout(() => {
      if (this.#phase !== "live") return;
      if (this.#mode?.busy === true || (this.#tools?.pendingClientCalls ?? 0) > 0) {
        this.#armIdle();
        return;
      }
      this.#idleStopped = true;
      this.#log.info({ idleTimeoutMs: ms }, "session idle");
      this.#emit({ type: "session.timed-out" });
      this.#deps.link.close(CLOSE.normal, "idle timeout");
      void this.end();
    }, ms);
  }

  async #save(): Promise<void> {
    const { store, agent, clock } = this.#deps;
    try {
      // A record cut at a reset with nothing after it: nothing to resume.
      if (this.#conversation.empty) return await store.delete(this.id);
      await store.save(this.#conversation.record(this.id, agent.config.name, clock.now(), this.resumeKeyHash), this.#deps.resumeGraceMs ?? RESUME_GRACE_MS);
    } catch (error) {
      this.#log.warn({ err: error }, "session record not saved");
    }
  }
}
