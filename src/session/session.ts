import { CLOSE, GatewayError, messageOf, type CloseCode } from "../errors.js";
import { bytesOf, type AudioPayload } from "../audio/audio-payload.js";
import type { Clock } from "../clock.js";
import type { EventBody, TranscriptSnapshot } from "../events.js";
import type { Logger } from "../log.js";
import type { ToolInvocation } from "../pipeline/tool-port.js";
import type { ClientLink } from "../transport/client-connection.js";
import { resolveConfig, resolveTeam, type ResolvedConfig, type SessionMode, type Team } from "../manifest/index.js";
import type { SessionCommand } from "../transport/protocol.js";
import { Guardrails } from "../turn/guardrails.js";
import { TurnLedger, type SettledInfo } from "../turn/ledger.js";
import { Conversation } from "./conversation.js";
import { Keypad } from "./keypad.js";
import { countReply, noMetrics, type MetricCount, type SessionMetrics } from "./metrics-port.js";
import type { ModeRunner } from "./mode-runner.js";
import { routeCommand } from "./commands.js";
import { newResumeKey, resumeKeyHash } from "./resume-key.js";
import { callInfo, newSessionId, sessionMode, type SessionDeps, type SessionIdentity } from "./session-deps.js";
import { openWithin, START_TIMEOUT_MS } from "./start-deadline.js";
import { RESUME_GRACE_MS } from "./store.js";
import type { ToolLine, ToolOutcome } from "./tool-runner.js";
import { openSessionParts, type SessionParts } from "./session-parts.js";
import { UsageMeter } from "./usage-meter.js";
import { StateProjection } from "./state-projection.js";
import { IdleTimer } from "./idle-timer.js";
import { SessionRecord, type RestoredRecord } from "./session-record.js";
import { CallEnding } from "./call-ending.js";
import { EventOutlet } from "./event-outlet.js";
import { CallTransfer } from "./call-transfer.js";
import { CallRecorder } from "./recording/call-recorder.js";
import { VoicemailScreen } from "./voicemail-screen.js";
import type { SessionPort } from "./session-port.js";
import { WorkflowNotes } from "./workflow-notes.js";
import type { AgentNote } from "../turn/agent-note.js";
import { spread } from "../spread.js";

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
  /** The transport the session counts under in the metrics, from its `session.configured` on: its end is counted only then. */
  #countedAs: string | undefined;
  /** Its context, MCP servers, hand-off, tool runner and mode, once opened (session-parts.ts). */
  #parts: SessionParts | undefined;
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
  /** The agent's workflows, started and found by its tools; runs started with `notify` told when they end. */
  readonly #workflows: WorkflowNotes | undefined;
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
    this.#recorder = CallRecorder.for(this.#settings.recording, spread(identity, { history: () => this.#conversation.history }));
    if (this.#recorder !== undefined) this.#deps = spread(deps, { link: this.#recorder.tap(deps.link) });
    this.#team = deps.agent.team ?? resolveTeam(deps.agent.def, deps.agent.config, { warn: (message) => this.#log.warn({ detail: message }, "agent config warning") });
    const { store, resumeGraceMs: graceMs = RESUME_GRACE_MS } = deps;
    this.#record = new SessionRecord(spread(identity, { store, conversation: this.#conversation, resumeKeyHash: this.resumeKeyHash, graceMs, speaking: () => this.#parts?.handOff.speaking }));
    this.#state = new StateProjection(deps.agent.def, this.#log, (state) => this.#events.emit({ type: "state.updated", state }));
    this.#usage = new UsageMeter(deps.agent.config.usageLimits?.totalTokens);
    // One port for every part (each reads only its own hooks): one object, its hooks methods.
    const port = new Session.#Hooks(this);
    this.#port = port;
    this.#idle = new IdleTimer(deps.clock, this.#settings.idleTimeoutMs, port);
    this.#ending = new CallEnding(port);
    this.#transfer = new CallTransfer(port);
    this.#keypad = new Keypad(port);
    // A call is screened from its start: not in text mode, nor a caller back from a warm transfer (a resumed session).
    this.#screen = VoicemailScreen.for(this.#settings.voicemail, this.mode === "text" || deps.resumeId !== undefined ? undefined : deps.screening, port);
    this.#workflows = WorkflowNotes.for(deps.workflows, Object.keys(deps.agent.def.workflows ?? {}), identity, port);
    this.#metrics = deps.metrics ?? noMetrics;
    this.#events = new EventOutlet(spread(identity, { metrics: this.#metrics, link: this.#deps.link, observers: deps.agent.def.events }));
    this.#endedPromise = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
  }

  get ended(): boolean {
    return this.#phase === "ended";
  }

  /** Who answered this call, as the voicemail screen found: `unknown` when nothing screened it, or before a verdict. */
  get answeredBy(): "human" | "machine" | "unknown" {
    return this.#screen?.verdict ?? "unknown";
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
    this.#countedAs = this.#deps.transport ?? "websocket";
    this.#metrics.sessionStarted(this.mode, this.#countedAs);
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
    // Nothing screens the caller: the session would only pass the audio and playback reports on, so the link hands them to the mode.
    if (this.#screen === undefined && this.#parts !== undefined) link.hearDirectly?.(this.#parts.mode);
    this.#idle.touch();
    this.#ending.armLimit(this.#deps.maxCallDurationMs ?? 0);
  }

  /** Close the client because another connection took this session id over. */
  takeOver(): void {
    this.#close(CLOSE.normal, "session resumed by another connection");
  }

  /** A phone call (a carrier transport, not the browser socket nor a Realtime client). */
  get telephony(): boolean {
    const transport = this.#deps.transport;
    return transport !== undefined && transport !== "websocket" && transport !== "realtime";
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
    this.#workflows?.close();
    // From here what the caller sends reaches the session's handler, which drops it.
    this.#deps.link.hearDirectly?.(undefined);
    this.#deps.link.close(CLOSE.normal, "session ended");
    if (this.#countedAs !== undefined) this.#metrics.sessionEnded(this.mode, this.#countedAs);
    try {
      await this.#parts?.mode.close();
      const record = await this.#recorder?.finish();
      await this.#record.save();
      await this.#parts?.mcp?.close();
      await this.#parts?.handOff.close();
      await this.#deps.agent.def.onSessionEnd?.({ sessionId: this.id, mode: this.mode, ...callInfo(this.#deps), session: this.#parts?.sessionValue, ...(record === undefined ? {} : { record }) });
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
    this.#parts = await openSessionParts(
      { deps: this.#deps, sessionId: this.id, mode: this.mode, port: this.#port, settings: this.#settings, team: this.#team, conversation: this.#conversation, usage: this.#usage, ending: this.#ending, transfer: this.#transfer, screen: this.#screen, workflows: this.#workflows?.tools },
      signal,
    );
  }

  async #resumeOrGreet(restored: RestoredRecord | undefined): Promise<void> {
    if (restored !== undefined) {
      this.#events.emit({ type: "history.restored", ...this.#conversation.restoredEvent() });
      // The roster member that was speaking speaks again (no greeting: the conversation goes on).
      if (restored.speaking !== undefined) await this.#parts?.handOff.resume(restored.speaking);
      // The restored dialogs' positions, before any turn.
      this.#state.project(this.#parts?.sessionValue, this.#conversation.dialogs);
      if (this.#deps.resumeNotice !== undefined) this.#parts?.mode.greet(this.#deps.resumeNotice);
      return;
    }
    if (this.#deps.resumeNotice !== undefined) this.#parts?.mode.greet(this.#deps.resumeNotice);
    else if (this.#screen !== undefined) {
      // Silent until a verdict: a person is greeted then, a machine gets the agent's voicemail action.
      this.#parts?.mode.holdTurns?.(this.#screen);
      this.#screen.begin();
    } else this.#greet();
  }

  #greet(): void {
    this.#parts?.mode.greet((this.#parts?.handOff.active.config ?? this.#deps.agent.config).greeting);
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  #reset(mode: ModeRunner): void {
    mode.strand();
    this.#parts?.handOff.reset();
    this.#conversation.reset();
    // Usage is counted per session, not per conversation: a reset does not lift usageLimits.
    this.#events.emit({ type: "session.reset" });
    this.#greet();
    void this.#record.save();
    this.#touch();
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

  /** Conversational activity re-arms the idle timer; raw audio and playback reports never do. */
  #touch(): void {
    if (this.#phase === "live") this.#idle.touch();
  }

  // ── the parts' hooks ──────────────────────────────────────────────────────────────────

  /** The port every part of a session takes (session-port.ts): the runner context, and each hook a method. */
  static readonly #Hooks = class SessionHooks implements SessionPort {
    readonly #s: Session;
    readonly clock: Clock;
    readonly log: Logger;
    readonly link: ClientLink;
    readonly sessionId: string;
    readonly dtmfSetting: ResolvedConfig["dtmf"];
    /** The answering-machine screen's: transcript heuristics need a transcript. */
    readonly transcribes: boolean;
    readonly conversation: Conversation;
    readonly ledger: TurnLedger;
    readonly guardrails: Guardrails;

    constructor(s: Session) {
      this.#s = s;
      this.clock = s.#deps.clock;
      this.log = s.#log;
      this.link = s.#deps.link;
      this.sessionId = s.id;
      this.dtmfSetting = s.#settings.dtmf;
      this.transcribes = s.mode === "pipeline";
      this.conversation = s.#conversation;
      this.ledger = new TurnLedger(s.#conversation, this);
      const { def } = s.#deps.agent;
      this.guardrails = new Guardrails({ clock: this.clock, log: this.log, sessionId: s.id, session: () => s.#parts?.sessionValue, input: def.inputGuardrails, output: def.outputGuardrails });
    }

    live(): boolean {
      return this.#s.#phase === "live";
    }
    say(text: string): void {
      this.#s.#parts?.mode.greet(text);
    }
    close(reason: string): void {
      this.#s.#close(CLOSE.normal, reason);
    }
    emit(event: EventBody): void {
      this.#s.#events.emit(event);
    }
    wants(type: TranscriptSnapshot): boolean {
      return this.#s.#events.wants(type);
    }
    activity(): void {
      this.#s.#touch();
    }
    queuedTurns(): number {
      return this.#s.#parts?.mode.queuedTurns ?? 0;
    }
    userText(text: string): void {
      this.#s.#parts?.mode.userText(text);
    }
    callTool(invocation: ToolInvocation): void {
      void this.#s.#parts?.tools.call(invocation);
    }
    busy(): boolean {
      return this.#s.#parts?.mode.busy === true || (this.#s.#parts?.tools.pendingClientCalls ?? 0) > 0;
    }
    expired(): void {
      const s = this.#s;
      if (s.#phase !== "live") return;
      this.log.info({ idleTimeoutMs: s.#settings.idleTimeoutMs }, "session idle");
      s.#events.emit({ type: "session.timed-out" });
      s.#close(CLOSE.normal, "idle timeout");
    }
    /** Before a model reply: the usage limit, once crossed, ends the session at the next turn. */
    admitTurn(): boolean {
      const refusal = this.#s.#usage.refusal();
      if (refusal !== undefined) this.#s.#fail(refusal);
      return refusal === undefined;
    }
    fatal(error: GatewayError): void {
      this.#s.#fail(error);
    }
    count(what: MetricCount): void {
      this.#s.#metrics.count(this.#s.mode, what);
    }
    audioDropped(where: "stt" | "s2s", bytes: number): void {
      this.#s.#metrics.audioDropped(where, bytes);
    }
    line(line: ToolLine): void {
      if (line.kind === "start" || line.kind === "delayed") this.#s.#parts?.mode.toolLine(line);
    }
    userSpeaking(): boolean {
      return this.#s.#parts?.mode.userSpeaking === true;
    }
    toolSettled(_call: ToolInvocation, outcome: ToolOutcome): void {
      const s = this.#s;
      s.#metrics.toolCall(outcome.status);
      s.#touch();
      s.#state.project(s.#parts?.sessionValue, s.#conversation.dialogs);
    }
    replySettled(info: SettledInfo): void {
      const s = this.#s;
      if (s.#phase !== "live") return;
      s.#replies += 1;
      countReply(s.#metrics, s.mode, s.#deps.agent.config.llm?.kind ?? "llm", info);
      if (info.usage !== undefined) {
        const totals = s.#usage.add(info.usage);
        if (s.#deps.agent.config.usageLimits !== undefined) s.#events.emit({ type: "usage.updated", ...totals });
      }
      s.#state.project(s.#parts?.sessionValue, s.#conversation.dialogs);
      s.#touch();
      void s.#record.save();
      // What waits for the reply that announced it (end_call's hang-up, a transfer, a hand-off): never a tool-only s2s step, nor an earlier reply heard while a later one is on its way.
      if (info.step !== true && info.more !== true) for (const waiting of [s.#ending, s.#transfer, s.#parts?.handOff]) waiting?.replySettled();
    }
    // The answering-machine screen's.
    human(): void {
      this.#s.#parts?.mode.holdTurns?.(undefined);
      this.#s.#greet();
    }
    hangUp(reason: string): void {
      this.#s.#ending.now(reason);
    }
    leaveMessage(text: string): void {
      this.#s.#ending.sayThenEnd(text, "voicemail message left");
    }
    // The link's handler.
    command(command: SessionCommand): void {
      const s = this.#s;
      const mode = s.#parts?.mode;
      if (s.#phase !== "live" || mode === undefined) return;
      routeCommand(command, mode, {
        activity: () => s.#touch(),
        reset: () => s.#reset(mode),
        toolResult: (id, result, error) => s.#parts?.tools.settleClientCall(id, result, error) === true,
        report: (message) => s.#events.report("protocol", message),
      });
    }
    audio(chunk: AudioPayload): void {
      const s = this.#s;
      if (s.#screen?.pass(bytesOf(chunk), s.#parts?.mode.holdTurns !== undefined) !== false) s.#parts?.mode.audio(chunk);
    }
    playback(bufferedMs: number): void {
      if (this.#s.#phase === "live") this.#s.#parts?.mode.playbackProgress(bufferedMs);
    }
    closed(code: number, reason: string): void {
      this.#s.#log.info({ code, reason }, "client closed");
      void this.#s.end();
    }
    dtmf(digit: string): void {
      if (this.#s.#screen?.holding !== true) this.#s.#keypad.digit(digit);
    }
    // The workflow notes'.
    politeMoment(): boolean {
      const s = this.#s;
      const parts = s.#parts;
      if (s.#phase !== "live" || parts === undefined) return false;
      const { mode, tools } = parts;
      // Nobody speaking, nothing in flight, playing or queued; no call ending or transfer on its way; no screen holding the turns.
      return !mode.userSpeaking && !mode.busy && mode.queuedTurns === 0 && tools.runningCalls === 0 && tools.pendingClientCalls === 0 && s.#screen?.holding !== true && !s.#ending.ending && !s.#transfer.underway;
    }
    takesNotes(): boolean {
      return this.#s.#parts?.mode.takesNotes ?? true;
    }
    note(note: AgentNote): boolean {
      return this.#s.#phase === "live" && this.#s.#parts?.mode.note(note) === true;
    }
  };
}
