import { createHash, randomBytes } from "node:crypto";
import type { LanguageModel } from "ai";
import type { Clock, Timer } from "../clock.js";
import { CLOSE, GatewayError, messageOf, type ErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import {
  DEFAULTS,
  agentToolsToSchemas,
  agentToolsets,
  buildSystemPrompt,
  composeToolsets,
  type AgentConfig,
  type ProviderDescriptor,
  type RandomSource,
  type ResolvedAgentDef,
  type SessionMode,
  type ToolTable,
  type Toolset,
} from "../manifest/index.js";
import { ReplyLoop, joinSpoken, type ReplyResult } from "../pipeline/reply-loop.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { Command, EventBody } from "../transport/protocol.js";
import { builtinToolset } from "./builtins/index.js";
import { Conversation } from "./conversation.js";
import type { McpTools } from "./mcp.js";
import { noMetrics, type SessionMetrics } from "./metrics-port.js";
import { RESUME_GRACE_MS, type SessionStore } from "./store.js";
import { ToolRunner, type ToolLine } from "./tool-runner.js";

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
  /** The id to resume (from `?sessionId=`), if the client asked. */
  readonly resumeId?: string | undefined;
  readonly resolveModel: (descriptor: ProviderDescriptor) => LanguageModel;
  readonly connectMcp?: ((def: ResolvedAgentDef) => Promise<McpTools>) | undefined;
  readonly metrics?: SessionMetrics;
  readonly random?: RandomSource;
  /** The transport's name for metrics ("websocket", "twilio", …). */
  readonly transport?: string;
  /** Providers must open within this (ms); default 10 s. */
  readonly startTimeoutMs?: number;
  /** How long the resume record outlives the socket (ms); default 120 s. */
  readonly resumeGraceMs?: number;
  /** Called once when the session has ended. */
  readonly ended?: (session: Session) => void;
}

/** Providers must open within this long (protocol.md). */
export const START_TIMEOUT_MS = 10_000;

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
  readonly #deps: SessionDeps;
  readonly #log: Logger;
  readonly #metrics: SessionMetrics;
  readonly #conversation = new Conversation();
  #phase: Phase = "starting";
  #runner: ToolRunner | undefined;
  #loop: ReplyLoop | undefined;
  #mcp: McpTools | undefined;
  #sessionValue: unknown;
  #lastState: string | undefined;
  #idle: Timer | undefined;
  #queue: string[] = [];
  #reply: AbortController | undefined;
  #pumping = false;
  #turnCount = 0;
  #totalTokens = 0;
  #usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, steps: 0 };
  #endAfterReply = false;
  #audioWarned = false;
  #idleStopped = false;

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.id = deps.resumeId ?? newSessionId();
    this.mode = sessionMode(deps.agent.config);
    this.#log = deps.log.child({ sessionId: this.id, agent: deps.agent.config.name, mode: this.mode });
    this.#metrics = deps.metrics ?? noMetrics;
  }

  get ended(): boolean {
    return this.#phase === "ended";
  }

  /** Zero-RTT `session.configured`, then providers and the tool table under the start timeout. */
  async start(): Promise<void> {
    const { link, clock } = this.#deps;
    link.emit({ type: "session.configured", audioFormat: "pcm16", sampleRate: 16000, ttsSampleRate: 24000, sessionId: this.id, mode: this.mode });
    this.#metrics.sessionStarted(this.mode, this.#deps.transport ?? "websocket");
    const timeoutMs = this.#deps.startTimeoutMs ?? START_TIMEOUT_MS;
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => reject(new GatewayError("internal", `providers did not open within ${timeoutMs} ms`, { fatal: true })), timeoutMs);
    });
    try {
      await Promise.race([this.#open(), timeout]);
    } catch (error) {
      timer?.cancel();
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
      audio: () => this.#audio(),
      closed: (code, reason) => {
        this.#log.info({ code, reason }, "client closed");
        void this.end();
      },
    });
    this.#armIdle();
  }

  /** Close the client because another connection took this session id over. */
  takeOver(): void {
    this.#deps.link.close(CLOSE.normal, "session resumed by another connection");
    void this.end();
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
    this.#reply?.abort(new Error("session ended"));
    this.#queue = [];
    this.#deps.link.close(CLOSE.normal, "session ended");
    this.#metrics.sessionEnded(this.mode, this.#deps.transport ?? "websocket");
    try {
      await this.#save();
      await this.#mcp?.close();
      await this.#deps.agent.def.onSessionEnd?.({ sessionId: this.id, mode: this.mode, session: this.#sessionValue });
    } catch (error) {
      this.#log.warn({ err: error }, "session cleanup failed");
    }
    this.#log.info({ turns: this.#turnCount }, "session ended");
    this.#deps.ended?.(this);
  }

  // ── start ─────────────────────────────────────────────────────────────────────────────

  async #open(): Promise<void> {
    const { agent, clock } = this.#deps;
    const { config, def } = agent;
    if (this.mode !== "text") {
      throw new GatewayError("internal", `${this.mode} sessions are not available in this build yet; run the agent in text mode (mode: "text").`, { fatal: true });
    }
    if (config.llm === undefined) throw new GatewayError("internal", "a text agent needs an llm provider.", { fatal: true });
    const model = this.#deps.resolveModel(config.llm);
    this.#sessionValue = def.sessionContext?.({ sessionId: this.id, mode: this.mode });
    this.#mcp = await this.#deps.connectMcp?.(def);
    const table = this.#composeTools();
    const schemas = agentToolsToSchemas(table.tools.map((t) => t.toolset));
    this.#log.info({ tools: table.tools.map((t) => t.name), toolsHash: createHash("sha256").update(JSON.stringify(schemas)).digest("hex").slice(0, 16) }, "tool table frozen");

    this.#runner = new ToolRunner({
      table,
      clock,
      random: this.#deps.random ?? Math.random,
      log: this.#log,
      sessionId: this.id,
      session: this.#sessionValue,
      emit: (event) => this.#emit(event),
      line: (line) => this.#toolLine(line),
      settled: (_call, outcome) => {
        this.#metrics.toolCall(outcome.status);
        this.#touch();
        this.#projectState();
      },
    });
    this.#loop = new ReplyLoop({
      model,
      tools: table.tools.map(({ name, entry }) => ({ name, description: entry.def.description, parameters: entry.def.parameters.json })),
      invoke: async (call) => {
        // Recorded under the conversation the call started in: a reset strands it.
        const epoch = this.#conversation.epoch;
        const outcome = await (this.#runner as ToolRunner).call(call);
        this.#conversation.recordTool(epoch, {
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args: call.args,
          result: outcome.modelText,
          ...(outcome.isError ? { isError: true } : {}),
        });
        return outcome;
      },
      settings: {
        maxSteps: config.maxSteps ?? DEFAULTS.maxSteps,
        toolChoice: config.toolChoice ?? DEFAULTS.toolChoice,
        resetToolChoice: config.resetToolChoice ?? DEFAULTS.resetToolChoice,
        maxRetries: config.maxRetries ?? DEFAULTS.maxRetries,
        temperature: config.temperature,
        maxOutputTokens: config.maxOutputTokens,
      },
      clock,
      instructions: () => this.#instructions(),
    });
  }

  #composeTools(): ToolTable {
    const { def, config } = this.#deps.agent;
    const sets: Toolset[] = [...agentToolsets(def)];
    if (config.builtinTools !== undefined && config.builtinTools.length > 0) {
      sets.push(
        builtinToolset(config.builtinTools, {
          now: () => new Date(this.#deps.clock.now()),
          endCall: () => {
            this.#endAfterReply = true;
          },
        }),
      );
    }
    if (this.#mcp !== undefined) sets.push(this.#mcp.toolset);
    return composeToolsets(sets, (name, kept, dropped) =>
      this.#log.warn({ tool: name, kept: kept.toolset.source, dropped: dropped.toolset.source }, "tool shadowed"),
    );
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
    const greeting = this.#deps.agent.config.greeting;
    if (greeting === "") return;
    const epoch = this.#conversation.epoch;
    this.#emit({ type: "agent-transcript.updated", text: greeting });
    this.#emit({ type: "agent-transcript.committed", text: greeting });
    this.#conversation.commit(epoch, { role: "assistant", text: greeting });
    this.#conversation.append(epoch, [{ role: "assistant", content: greeting }]);
    this.#emit({ type: "reply.completed" });
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  #command(command: Command): void {
    if (this.#phase !== "live") return;
    switch (command.type) {
      case "user_text":
        this.#touch();
        this.#queue.push(command.text);
        void this.#pump();
        return;
      case "cancel":
        this.#cancel();
        return;
      case "reset":
        this.#reset();
        return;
      case "tool_result":
        if (this.#runner?.settleClientCall(command.toolCallId, command.result, command.error) !== true) {
          this.#report("protocol", `tool_result: no call ${command.toolCallId} is waiting for a result`);
        }
        return;
      case "playback_progress":
      case "audio_ready":
        return;
      case "user_turn_start":
      case "user_turn_commit":
      case "user_turn_clear":
        this.#log.debug({ type: command.type }, "manual turn command ignored in text mode");
        return;
    }
  }

  #audio(): void {
    if (this.#audioWarned) return;
    this.#audioWarned = true;
    this.#report("audio", "this is a text agent: audio frames are ignored; send user_text");
  }

  #cancel(): void {
    this.#queue = [];
    this.#reply?.abort(new Error("cancelled"));
    this.#emit({ type: "reply.cancelled" });
  }

  #reset(): void {
    this.#queue = [];
    this.#reply?.abort(new Error("reset"));
    this.#conversation.reset();
    // Usage is counted per session, not per conversation: a reset does not lift usageLimits.
    this.#emit({ type: "reply.cancelled" });
    this.#emit({ type: "session.reset" });
    this.#greet();
    void this.#save();
    this.#touch();
  }

  // ── turns ─────────────────────────────────────────────────────────────────────────────

  /** One turn at a time: queued user texts run in order; a cancel or reset strands the queue. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (let text = this.#queue.shift(); text !== undefined && this.#phase === "live"; text = this.#queue.shift()) {
        await this.#turn(text);
      }
    } finally {
      this.#pumping = false;
    }
  }

  async #turn(text: string): Promise<void> {
    const { config } = this.#deps.agent;
    const limit = config.usageLimits?.totalTokens;
    if (limit !== undefined && this.#totalTokens >= limit) {
      this.#fail(new GatewayError("llm", `usage limit reached: ${this.#totalTokens} of ${limit} tokens used`, { fatal: true, closeCode: CLOSE.policy }));
      return;
    }
    const epoch = this.#conversation.epoch;
    const turnId = `turn_${++this.#turnCount}`;
    this.#metrics.turn(this.mode);
    this.#emit({ type: "user-transcript.committed", text });
    this.#conversation.commit(epoch, { role: "user", text });
    this.#conversation.append(epoch, [{ role: "user", content: text }]);

    const controller = new AbortController();
    this.#reply = controller;
    this.#shown = [];
    this.#modelText = "";
    let firstTokenMs: number | undefined;
    const result = await (this.#loop as ReplyLoop).run(this.#conversation.history, controller.signal, {
      text: (delta) => {
        this.#modelText += delta;
        this.#emitSnapshot();
      },
      firstToken: (ms) => {
        firstTokenMs = ms;
        this.#metrics.providerLatency(this.#deps.agent.config.llm?.kind ?? "llm", "llm_first_token", ms);
      },
    });
    if (this.#reply === controller) this.#reply = undefined;
    this.#settleReply(epoch, turnId, result, firstTokenMs);
  }

  /** Lines shown in this reply besides model text (tool messages), in order. */
  #shown: string[] = [];
  #modelText = "";

  #emitSnapshot(): void {
    this.#emit({ type: "agent-transcript.updated", text: joinSpoken([...this.#shown, this.#modelText]) });
  }

  #toolLine(line: ToolLine): void {
    this.#modelText = joinSpoken([this.#modelText]);
    this.#shown.push(...(this.#modelText === "" ? [] : [this.#modelText]), line.text);
    this.#modelText = "";
    this.#emitSnapshot();
  }

  #settleReply(epoch: number, turnId: string, result: ReplyResult, firstTokenMs: number | undefined): void {
    if (epoch !== this.#conversation.epoch || this.#phase !== "live") return;
    this.#conversation.append(epoch, result.messages);
    this.#usage = {
      inputTokens: this.#usage.inputTokens + result.usage.inputTokens,
      outputTokens: this.#usage.outputTokens + result.usage.outputTokens,
      totalTokens: this.#usage.totalTokens + result.usage.totalTokens,
      steps: this.#usage.steps + result.usage.steps,
    };
    this.#totalTokens = this.#usage.totalTokens;
    if (this.#deps.agent.config.usageLimits !== undefined) this.#emit({ type: "usage.updated", ...this.#usage });

    if (result.status === "completed") {
      if (result.text !== "") {
        this.#emit({ type: "agent-transcript.committed", text: result.text });
        this.#conversation.commit(epoch, { role: "assistant", text: result.text });
      }
      this.#emit({ type: "reply.completed" });
    } else if (result.status === "failed") {
      this.#log.warn({ err: result.error }, "llm failed");
      this.#report("llm", `the model failed: ${messageOf(result.error)}`);
      const phrase = this.#deps.agent.config.errorPhrase ?? DEFAULTS.errorPhrase;
      this.#emit({ type: "agent-transcript.updated", text: phrase });
      this.#emit({ type: "agent-transcript.committed", text: phrase });
      this.#emit({ type: "reply.completed" });
    }
    this.#emit({ type: "metrics.turn", turnId, ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }) });
    this.#projectState();
    this.#touch();
    void this.#save();
    if (this.#endAfterReply) {
      this.#log.info({}, "end_call");
      this.#deps.link.close(CLOSE.normal, "call ended by the agent");
      void this.end();
    }
  }

  // ── helpers ───────────────────────────────────────────────────────────────────────────

  #emit(event: EventBody): void {
    if (this.#phase === "ended") return;
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
    const ms = this.#deps.agent.config.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs;
    if (ms === 0 || this.#idleStopped) return;
    this.#idle = this.#deps.clock.setTimeout(() => {
      if (this.#phase !== "live") return;
      if (this.#reply !== undefined || (this.#runner?.pendingClientCalls ?? 0) > 0) {
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
      await store.save(this.#conversation.record(this.id, agent.config.name, clock.now()), this.#deps.resumeGraceMs ?? RESUME_GRACE_MS);
    } catch (error) {
      this.#log.warn({ err: error }, "session record not saved");
    }
  }
}
