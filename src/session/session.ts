import { CLOSE, GatewayError, messageOf, type CloseCode } from "../errors.js";
import type { Logger } from "../log.js";
import { resolveConfig, resolveTeam, type ResolvedConfig, type SessionMode, type Team } from "../manifest/index.js";
import type { SessionCommand } from "../transport/protocol.js";
import { Guardrails } from "../turn/guardrails.js";
import { TurnLedger, type SettledInfo } from "../turn/ledger.js";
import { Conversation } from "./conversation.js";
import { Keypad } from "./keypad.js";
import type { McpTools } from "./mcp.js";
import { countReply, noMetrics, type SessionMetrics } from "./metrics-port.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import { MODES } from "./modes.js";
import { routeCommand } from "./commands.js";
import { newResumeKey, resumeKeyHash } from "./resume-key.js";
import { newSessionId, sessionInstructions, sessionMode, type SessionDeps, type SessionIdentity } from "./session-deps.js";
import { openWithin, START_TIMEOUT_MS } from "./start-deadline.js";
import { RESUME_GRACE_MS } from "./store.js";
import { ToolRunner } from "./tool-runner.js";
import { UsageMeter } from "./usage-meter.js";
import { StateProjection } from "./state-projection.js";
import { IdleTimer } from "./idle-timer.js";
import { SessionRecord, type RestoredRecord } from "./session-record.js";
import { CallEnding } from "./call-ending.js";
import { EventOutlet } from "./event-outlet.js";
import { CallTransfer } from "./call-transfer.js";
import { HandOff } from "./hand-off.js";
import { teamSegments } from "./team-segments.js";
import { CallRecorder } from "./recording/call-recorder.js";
import { VoicemailScreen } from "./voicemail-screen.js";
import type { SessionPort } from "./session-port.js";

type Phase = "starting" | "live" | "ended";

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
  /** Where events leave: metrics, the turn's trace, the link, the agent's observers. */
  readonly #events: EventOutlet;
  readonly #conversation = new Conversation();
  /** The agent's config with every default applied, resolved once. */
  readonly #settings: ResolvedConfig;
  /** The agent and the agents it delegates to. */
  readonly #team: Team;
  #phase: Phase = "starting";
  #tools: ToolRunner | undefined;
  #mode: ModeRunner | undefined;
  #mcp: McpTools | undefined;
  #handOff: HandOff | undefined;
  #sessionValue: unknown;
  readonly #state: StateProjection;
  readonly #idle: IdleTimer;
  #replies = 0;
  readonly #usage: UsageMeter;
  readonly #record: SessionRecord;
  readonly #ending: CallEnding;
  readonly #transfer: CallTransfer;
  readonly #keypad: Keypad;
  /** Every part's hooks into the session, in one object (each part reads only its own). */
  readonly #port: SessionPort;
  /** The call record, when the agent records (docs/config.md "Recording"): it taps the link. */
  readonly #recorder: CallRecorder | undefined;
  /** A call screened for an answering machine (the agent's `voicemail`): holds the greeting and the caller's turns until a verdict. */
  readonly #screen: VoicemailScreen | undefined;
  readonly #endedPromise: Promise<void>;
  #resolveEnded: () => void = () => {};

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.id = deps.resumeId ?? newSessionId();
    this.#resumeKey = deps.resumeId !== undefined && deps.resumeKey !== undefined ? deps.resumeKey : newResumeKey();
    this.resumeKeyHash = resumeKeyHash(this.#resumeKey);
    this.mode = sessionMode(deps.agent.config);
    this.#settings = resolveConfig(deps.agent.config);
    this.#log = deps.log.child({ sessionId: this.id, agent: deps.agent.config.name, mode: this.mode });
    const identity: SessionIdentity = { clock: deps.clock, log: this.#log, sessionId: this.id, agentName: deps.agent.config.name, mode: this.mode, transport: deps.transport ?? "websocket" };
    this.#recorder = CallRecorder.for(this.#settings.recording, { ...identity, history: () => this.#conversation.history });
    if (this.#recorder !== undefined) this.#deps = { ...deps, link: this.#recorder.tap(deps.link) };
    this.#team = deps.agent.team ?? resolveTeam(deps.agent.def, deps.agent.config, { warn: (message) => this.#log.warn({ detail: message }, "agent config warning") });
    const { store, resumeGraceMs: graceMs = RESUME_GRACE_MS } = deps;
    this.#record = new SessionRecord({ ...identity, store, conversation: this.#conversation, resumeKeyHash: this.resumeKeyHash, graceMs, speaking: () => this.#handOff?.speaking });
    this.#state = new StateProjection(deps.agent.def, this.#log, (state) => this.#events.emit({ type: "state.updated", state }));
    this.#usage = new UsageMeter(deps.agent.config.usageLimits?.totalTokens);
    // One port for every part (each reads only its own hooks): each hook written once, one closure per session.
    const port: SessionPort = {
      clock: deps.clock,
      log: this.#log,
      link: this.#deps.link,
      sessionId: this.id,
      dtmfSetting: this.#settings.dtmf,
      live: () => this.#phase === "live",
      say: (text) => this.#mode?.greet(text),
      close: (reason) => this.#close(CLOSE.normal, reason),
      emit: (event) => this.#events.emit(event),
      activity: () => this.#touch(),
      queuedTurns: () => this.#mode?.queuedTurns ?? 0,
      userText: (text) => this.#mode?.userText(text),
      callTool: (invocation) => void this.#tools?.call(invocation),
      busy: () => this.#mode?.busy === true || (this.#tools?.pendingClientCalls ?? 0) > 0,
      expired: () => this.#idleExpired(),
      admitTurn: () => this.#admitTurn(),
      fatal: (error) => this.#fail(error),
      count: (what) => this.#metrics.count(this.mode, what),
      audioDropped: (where, bytes) => this.#metrics.audioDropped(where, bytes),
      line: (line) => {
        if (line.kind === "start" || line.kind === "delayed") this.#mode?.toolLine(line);
      },
      userSpeaking: () => this.#mode?.userSpeaking === true,
      toolSettled: (_call, outcome) => {
        this.#metrics.toolCall(outcome.status);
        this.#touch();
        this.#state.project(this.#sessionValue, this.#conversation.dialogs);
      },
      replySettled: (info) => this.#replySettled(info),
      spent: () => this.#usage.refusal()?.message,
      meter: (usage) => this.#usage.add(usage),
      endCall: () => this.#ending.afterReply("call ended by the agent"),
      transferCall: (target) => this.#transfer.request(target),
      // The answering-machine screen's.
      transcribes: this.mode === "pipeline",
      human: () => {
        this.#mode?.holdTurns?.(undefined);
        this.#greet();
      },
      hangUp: (reason) => this.#ending.now(reason),
      leaveMessage: (text) => this.#ending.sayThenEnd(text, "voicemail message left"),
      // The link's handler.
      command: (command) => this.#command(command),
      audio: (chunk) => {
        if (this.#screen?.pass(chunk, this.#mode?.holdTurns !== undefined) !== false) this.#mode?.audio(chunk);
      },
      playback: (bufferedMs) => {
        if (this.#phase === "live") this.#mode?.playbackProgress(bufferedMs);
      },
      closed: (code, reason) => {
        this.#log.info({ code, reason }, "client closed");
        void this.end();
      },
      dtmf: (digit) => {
        if (this.#screen?.holding !== true) this.#keypad.digit(digit);
      },
    };
    this.#port = port;
    this.#idle = new IdleTimer(deps.clock, this.#settings.idleTimeoutMs, port);
    this.#ending = new CallEnding(port);
    this.#transfer = new CallTransfer(port);
    this.#keypad = new Keypad(port);
    // A call is screened from its start: not in text mode, nor a caller back from a warm transfer (a resumed session).
    this.#screen = VoicemailScreen.for(this.#settings.voicemail, this.mode === "text" || deps.resumeId !== undefined ? undefined : deps.screening, port);
    this.#metrics = deps.metrics ?? noMetrics;
    this.#events = new EventOutlet({
      ...identity,
      metrics: this.#metrics,
      link: this.#deps.link,
      observers: deps.agent.def.events,
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
    this.#events.emit({ type: "session.configured", ...format, sessionId: this.id, resumeKey: this.#resumeKey, mode: this.mode });
    if (this.#deps.resumeRefused === true) {
      this.#events.emit({ type: "error.reported", code: "auth", message: "the session asked for could not be resumed (unknown, expired, or resumeKey does not match): this is a new session", fatal: false });
    }
    this.#metrics.sessionStarted(this.mode, this.#deps.transport ?? "websocket");
    const deadline = { clock, log: this.#log, timeoutMs: this.#deps.startTimeoutMs ?? START_TIMEOUT_MS, hungUp: link.hungUp };
    let restored: RestoredRecord | undefined;
    const failure = await openWithin(deadline, async (signal) => {
      // The record before the mode: a service told the conversation as its socket opens (s2s) is told the restored one.
      restored = this.#deps.resumeId === undefined ? undefined : await this.#record.restore(this.#deps.resumeId);
      await this.#open(signal);
    });
    if (failure !== undefined) return this.#fail(failure);
    if (this.#phase === "ended") return;
    this.#phase = "live";
    // History or greeting first: input buffered during start is answered after it.
    await this.#resumeOrGreet(restored);
    if (this.#phase !== "live") return;
    link.attach(this.#port);
    this.#idle.touch();
    this.#ending.armLimit(this.#deps.maxCallDurationMs ?? 0);
  }

  /** Close the client because another connection took this session id over. */
  takeOver(): void {
    this.#close(CLOSE.normal, "session resumed by another connection");
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
    if (this.#phase === "live" && this.mode !== "text") this.#ending.farewell(text);
    else if (this.#phase !== "ended") this.goAway();
    return this.#endedPromise.then(() => this.#deps.link.hungUp);
  }

  /** Gateway drain: close with 1001 (going away). */
  goAway(): void {
    this.#close(CLOSE.goingAway, "gateway shutting down");
  }

  /** End the session: cancel work, save the record for the grace window, release providers. */
  async end(): Promise<void> {
    if (this.#phase === "ended") return;
    this.#phase = "ended";
    this.#events.close();
    this.#idle.stop();
    this.#ending.stop();
    this.#screen?.stop();
    this.#keypad.close();
    this.#deps.link.close(CLOSE.normal, "session ended");
    this.#metrics.sessionEnded(this.mode, this.#deps.transport ?? "websocket");
    try {
      await this.#mode?.close();
      const record = await this.#recorder?.finish();
      await this.#record.save();
      await this.#mcp?.close();
      await this.#handOff?.close();
      await this.#deps.agent.def.onSessionEnd?.({ sessionId: this.id, mode: this.mode, session: this.#sessionValue, ...(record === undefined ? {} : { record }) });
    } catch (error) {
      this.#log.warn({ err: error }, "session cleanup failed");
    }
    // Never thrown; written once even when cleanup failed before it.
    await this.#recorder?.finish();
    this.#events.settle();
    this.#log.info({ replies: this.#replies }, "session ended");
    this.#deps.ended?.(this);
    this.#resolveEnded();
  }

  // ── start ─────────────────────────────────────────────────────────────────────────────

  async #open(signal: AbortSignal): Promise<void> {
    const { agent, clock, random = Math.random, resolveModel, voice, s2s } = this.#deps;
    this.#sessionValue = agent.def.sessionContext?.({ sessionId: this.id, mode: this.mode });
    this.#mcp = await this.#deps.connectMcp?.(agent.def);
    this.#handOff = await this.#openHandOff();
    const { table } = this.#handOff;
    const { log, emit, line, userSpeaking, toolSettled } = this.#port;
    const tools = new ToolRunner({ table, clock, random, log, sessionId: this.id, session: this.#sessionValue, conversation: this.#conversation, emit, line, userSpeaking, toolSettled });
    this.#tools = tools;
    this.#mode = await MODES[this.mode]({
      mode: this.mode,
      ctx: this.#runnerContext(),
      config: agent.config,
      settings: this.#settings,
      table,
      tools,
      instructions: () => sessionInstructions(this.#deps.agent, this.id),
      link: this.#screen?.modeLink(this.#deps.link) ?? this.#deps.link,
      waitingAudio: this.#deps.agent.waitingAudio,
      providers: { resolveModel, voice, s2s },
      signal,
      switchesAgent: (switcher) => this.#handOff?.accept(switcher),
    });
  }

  /** Who speaks: the served agent first, its tools composed (its sub-agents opened); its roster may hand the session on. */
  #openHandOff(): Promise<HandOff> {
    const { clock, log, emit, live, say, spent, meter, endCall, transferCall } = this.#port;
    const { random = Math.random, resolveModel } = this.#deps;
    const segments = teamSegments({ clock, log, random, sessionId: this.id, session: this.#sessionValue, resolveModel, spent, meter, settings: this.#settings, mcp: this.#mcp, endCall, transferCall });
    return HandOff.open({ team: this.#team, log, emit, live, say, ...segments });
  }

  #runnerContext(): RunnerContext {
    const { clock, log, emit, activity, admitTurn, fatal, count, audioDropped, replySettled } = this.#port;
    const conversation = this.#conversation;
    const ledger = new TurnLedger({ history: conversation, emit, activity, replySettled });
    const { def } = this.#deps.agent;
    const guardrails = new Guardrails({ clock, log, sessionId: this.id, session: () => this.#sessionValue, input: def.inputGuardrails, output: def.outputGuardrails });
    return { ledger, guardrails, conversation, clock, log, emit, activity, admitTurn, fatal, count, audioDropped };
  }

  async #resumeOrGreet(restored: RestoredRecord | undefined): Promise<void> {
    if (restored !== undefined) {
      this.#events.emit({ type: "history.restored", ...this.#conversation.restoredEvent() });
      // The roster member that was speaking speaks again (no greeting: the conversation goes on).
      if (restored.speaking !== undefined) await this.#handOff?.resume(restored.speaking);
      // The restored dialogs' positions, before any turn.
      this.#state.project(this.#sessionValue, this.#conversation.dialogs);
      if (this.#deps.resumeNotice !== undefined) this.#mode?.greet(this.#deps.resumeNotice);
      return;
    }
    if (this.#deps.resumeNotice !== undefined) this.#mode?.greet(this.#deps.resumeNotice);
    else if (this.#screen !== undefined) {
      // Silent until a verdict: a person is greeted then, a machine gets the agent's voicemail action.
      this.#mode?.holdTurns?.(this.#screen);
      this.#screen.begin();
    } else this.#greet();
  }

  #greet(): void {
    this.#mode?.greet((this.#handOff?.active.config ?? this.#deps.agent.config).greeting);
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  #command(command: SessionCommand): void {
    const mode = this.#mode;
    if (this.#phase !== "live" || mode === undefined) return;
    routeCommand(command, mode, {
      activity: () => this.#touch(),
      reset: () => this.#reset(mode),
      toolResult: (id, result, error) => this.#tools?.settleClientCall(id, result, error) === true,
      report: (message) => this.#events.report("protocol", message),
    });
  }

  #reset(mode: ModeRunner): void {
    mode.strand();
    this.#handOff?.reset();
    this.#conversation.reset();
    // Usage is counted per session, not per conversation: a reset does not lift usageLimits.
    this.#events.emit({ type: "session.reset" });
    this.#greet();
    void this.#record.save();
    this.#touch();
  }

  // ── replies ───────────────────────────────────────────────────────────────────────────

  /** Before a model reply: the usage limit, once crossed, ends the session at the next turn. */
  #admitTurn(): boolean {
    const refusal = this.#usage.refusal();
    if (refusal !== undefined) this.#fail(refusal);
    return refusal === undefined;
  }

  #replySettled(info: SettledInfo): void {
    if (this.#phase !== "live") return;
    this.#replies += 1;
    countReply(this.#metrics, this.mode, this.#deps.agent.config.llm?.kind ?? "llm", info);
    if (info.usage !== undefined) {
      const totals = this.#usage.add(info.usage);
      if (this.#deps.agent.config.usageLimits !== undefined) this.#events.emit({ type: "usage.updated", ...totals });
    }
    this.#state.project(this.#sessionValue, this.#conversation.dialogs);
    this.#touch();
    void this.#record.save();
    // What waits for the reply that announced it (end_call's hang-up, a transfer, a hand-off): never a tool-only s2s step, nor an earlier reply heard while a later one is on its way.
    if (info.step !== true && info.more !== true) for (const waiting of [this.#ending, this.#transfer, this.#handOff]) waiting?.replySettled();
  }

  // ── helpers ───────────────────────────────────────────────────────────────────────────

  /** A fatal error: reported once, then the socket closes with the error's code. */
  #fail(error: GatewayError): void {
    if (this.#phase === "ended") return;
    this.#events.fatal(error);
    this.#close(error.closeCode, error.message);
  }

  /** Close the client's socket, then end the session. */
  #close(code: CloseCode, reason: string): void {
    this.#deps.link.close(code, reason);
    void this.end();
  }

  #idleExpired(): void {
    if (this.#phase !== "live") return;
    this.#log.info({ idleTimeoutMs: this.#settings.idleTimeoutMs }, "session idle");
    this.#events.emit({ type: "session.timed-out" });
    this.#close(CLOSE.normal, "idle timeout");
  }

  /** Conversational activity re-arms the idle timer; raw audio and playback reports never do. */
  #touch(): void {
    if (this.#phase === "live") this.#idle.touch();
  }
}
