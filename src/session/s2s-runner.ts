import type { AudioPayload } from "../audio/audio-payload.js";
import { bytesPerSample } from "../audio/rates.js";
import { GatewayError, messageOf } from "../errors.js";
import type { ResolvedConfig } from "../manifest/index.js";
import type { AgentNote } from "../turn/agent-note.js";
import { PlaybackClock } from "../turn/playback-clock.js";
import { sessionAudioOf, type S2sAudioFormat, type S2sEvents, type S2sProvider, type S2sSegment, type S2sSession, type S2sSetup, type S2sToolCall } from "../s2s/s2s-port.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import { replayedHistory, S2sRefusals, type S2sRefusalsPort } from "./s2s-refusals.js";
import { S2sReplies, turnLatencies, type Reply } from "./s2s-replies.js";
import { OutOfBandLines, sayExactly, type OutOfBandLine } from "./s2s-lines.js";
import { S2sToolCalls, type S2sToolCallsPort } from "./s2s-tool-calls.js";
import type { ToolLine, ToolRunner } from "./tool-runner.js";
import { spread } from "../spread.js";

export interface S2sRunnerOptions {
  /** The config with every default applied (manifest `resolveConfig`). */
  readonly settings: ResolvedConfig;
  readonly provider: S2sProvider;
  readonly tools: ToolRunner;
  /** The frozen tool list and the instructions, sent once per socket. */
  readonly setup: S2sSetup;
  /** The link: the service's audio goes out as the service sent it, and its formats are declared once it has opened (the link does the only conversion each way). */
  readonly link: Pick<ClientLink, "audio" | "useAudio">;
  /**
   * `pcmu`/`pcma`: the link carries that G.711 end to end (a phone call) and the provider accepts
   * it, so audio crosses untouched both ways. Default `pcm16` at the service's own rates.
   */
  readonly audioFormat?: S2sAudioFormat;
  /** Aborts the service's handshake (the client hung up during start, or the start timed out). */
  readonly signal?: AbortSignal;
  /** The agent is thinking (a response begun, or its tool calls running, and none of its audio out yet), or no longer is. */
  readonly thinking?: (on: boolean) => void;
}

/**
 * Speech-to-speech mode: the service hears and speaks; the gateway bridges audio (converted once,
 * at the link, to and from the service's own formats), maps the service's events to the client
 * protocol, runs tool calls through the shared runner (`S2sToolCalls`: answered once per call,
 * results batched per response), speaks tool lines in the model's own voice out of band, and on
 * barge-in clears playback and truncates the model's memory at what the caller actually heard.
 * What guardrails refuse is undone after the fact (`S2sRefusals`, docs/config.md "Guardrails").
 */
export class S2sRunner implements ModeRunner {
  readonly #ctx: RunnerContext;
  readonly #options: S2sRunnerOptions;
  readonly #playback: PlaybackClock;
  readonly #replies: S2sReplies;
  #session: S2sSession | undefined;
  /**
   * The link and the service's output rate in bytes a second (0 until it opened), in fields of
   * the runner itself: every delta reads them, and on a process running hundreds of calls each
   * object a delta reads is a cache line cold by the call's next delta (docs/benchmarks.md,
   * `bench:carrier-counts`).
   */
  readonly #link: S2sRunnerOptions["link"];
  #outputBytesPerSecond = 0;
  readonly #lines = new OutOfBandLines();
  /** What the guardrails refuse, undone after the fact. */
  readonly #refusals: S2sRefusals;
  #userSpeaking = false;
  #closed = false;
  readonly #signal = new AbortController();
  /** The service's tool calls: run or refused, answered per response. */
  readonly #calls: S2sToolCalls;
  /** The reply whose audio alone the playback timeline holds (a recorded out-of-band line's audio joins no reply: then none). */
  #timelineOf: Reply | undefined;
  /** The service's events and the ports lent to the refusals and tool calls: one object for all (heap per call, docs/benchmarks.md). */
  readonly #hooks: S2sEvents & S2sRefusalsPort & S2sToolCallsPort;

  private constructor(ctx: RunnerContext, options: S2sRunnerOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#link = options.link;
    this.#playback = new PlaybackClock(ctx.clock);
    this.#replies = new S2sReplies(ctx.clock);
    this.#hooks = new S2sRunner.#Hooks(this);
    this.#refusals = new S2sRefusals(this.#hooks);
    this.#calls = new S2sToolCalls(this.#hooks, options.settings.maxSteps);
  }

  /** Open the service's socket: one setup message with the frozen tools and instructions. */
  static async open(ctx: RunnerContext, options: S2sRunnerOptions): Promise<S2sRunner> {
    const runner = new S2sRunner(ctx, options);
    runner.#session = await options.provider.open(
      {
        setup: options.setup,
        history: () => replayedHistory(ctx.conversation.restoredEvent().messages),
        signal: options.signal,
        ...(options.audioFormat === undefined ? {} : { audioFormat: options.audioFormat }),
      },
      runner.#hooks,
    );
    // The service's formats, told to the link before any audio crosses.
    const audio = sessionAudioOf(runner.#session);
    options.link.useAudio(audio);
    runner.#outputBytesPerSecond = bytesPerSample(audio.output) * audio.output.sampleRate;
    return runner;
  }

  get userSpeaking(): boolean {
    return this.#userSpeaking;
  }

  /** A reply is in flight, or audio is still playing to the caller (the idle timer waits for both). */
  get busy(): boolean {
    return this.#replies.inFlight || this.#playback.pendingMs > 0;
  }

  /** Typed turns go to the service as they come (`sendText`): none wait here. */
  get queuedTurns(): number {
    return 0;
  }

  /** The service can take another agent mid-session (`S2sSession.update`): a hand-off is possible. */
  get canHandOff(): boolean {
    return this.#session?.update !== undefined;
  }

  /** A hand-off: the service is told the new agent's instructions and tools (one update), and its `maxSteps` caps tool steps from now on. */
  handOff(segment: S2sSegment, maxSteps: number): void {
    this.#calls.limitSteps(maxSteps);
    this.#session?.update?.(segment);
  }

  /** The audio both ways: PCM16, or G.711 passed through untouched. */
  get audioFormat(): S2sAudioFormat {
    return this.#session?.audioFormat ?? "pcm16";
  }

  /** The greeting: an out-of-band response ("Say exactly: …"), recorded as the agent's. */
  greet(text: string): void {
    if (text === "") return;
    this.#say(text, text);
  }

  userText(text: string): void {
    const session = this.#session;
    if (session?.sendText === undefined) {
      this.#ctx.emit({ type: "error.reported", code: "s2s", message: "this speech-to-speech service does not take typed turns", fatal: false });
      return;
    }
    this.#refusals.typed(text, (passed) => session.sendText?.(passed));
  }

  cancel(): void {
    this.#interrupt();
    this.#ctx.emit({ type: "reply.cancelled" });
  }

  strand(): void {
    this.cancel();
  }

  audio(chunk: AudioPayload): void {
    if (this.#closed) return;
    this.#session?.sendAudio(chunk);
  }

  playbackProgress(bufferedMs: number): void {
    this.#playback.report(bufferedMs);
  }

  /**
   * The listener stopped playing the latest reply at `audioMs` of its audio (tool lines included):
   * the service's own truncate, at the model audio heard by then, when that is shorter than what
   * it was told already (turn/heard-correction.ts; the service's memory is the model's context).
   */
  truncateHeard(audioMs: number): void {
    const reply = this.#replies.latest;
    if (reply === undefined || reply !== this.#timelineOf || reply.itemId === undefined || reply.forget) return;
    const heardMs = Math.max(0, Math.round(this.#playback.timeline()(audioMs)));
    if (heardMs >= (reply.truncatedMs ?? reply.audioMs)) return;
    this.#truncate(reply, heardMs);
    this.#ctx.log.debug({ response: reply.responseId, heardMs }, "reply truncated by the listener");
  }

  manual(command: string): void {
    this.#ctx.log.debug({ command }, "manual turn command ignored: the service detects turns");
  }

  /** A tool's start or delayed line, in the model's own voice, never entering the conversation. */
  toolLine(line: ToolLine): void {
    if (this.#userSpeaking || this.#session === undefined) return;
    this.#lines.ask({ kind: "tool" });
    this.#session.createResponse({ instructions: sayExactly(line.text), outOfBand: true });
  }

  /** The service can be told a note mid-call (`S2sSession.note`). */
  get takesNotes(): boolean {
    return this.#session?.note !== undefined;
  }

  /** A note into the service's conversation, then an in-band response: said in the model's voice, recorded as a reply. */
  note(note: AgentNote): boolean {
    if (this.#closed || this.#session?.note === undefined) return false;
    return this.#session.note(note.text);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#ctx.audioDropped("s2s", this.#session?.droppedAudioBytes ?? 0);
    // The replies and lines waiting to be heard stop waiting: their `stopped()` reads `#closed`.
    this.#playback.recheck();
    this.#signal.abort(new Error("session ended"));
    await this.#session?.close();
  }

  /** What the service and the runner's parts call back into, as methods of one object rather than a closure each. */
  static readonly #Hooks = class S2sRunnerHooks implements S2sEvents, S2sRefusalsPort, S2sToolCallsPort {
    readonly #r: S2sRunner;
    readonly ctx: RunnerContext;
    readonly replies: S2sReplies;
    readonly tools: Pick<ToolRunner, "call">;
    readonly signal: AbortSignal;

    constructor(r: S2sRunner) {
      this.#r = r;
      this.ctx = r.#ctx;
      this.replies = r.#replies;
      this.tools = r.#options.tools;
      this.signal = r.#signal.signal;
    }

    // The service's events.
    audio(pcm: Uint8Array, info: { readonly responseId: string; readonly itemId: string }): void {
      this.#r.#onAudio(pcm, info.responseId, info.itemId);
    }
    agentTranscript(delta: string, info: { readonly responseId: string; readonly itemId: string }): void {
      this.#r.#onTranscript(delta, info.responseId, info.itemId);
    }
    speechStarted(): void {
      this.#r.#onSpeechStarted();
    }
    speechStopped(info?: { readonly inferred?: boolean }): void {
      this.#r.#onSpeechStopped(info?.inferred === true);
    }
    userTranscript(text: string, info: { readonly final: boolean; readonly itemId?: string }): void {
      this.#r.#onUserTranscript(text, info.final, info.itemId);
    }
    responseStarted(info: { readonly responseId: string; readonly outOfBand: boolean }): void {
      this.#r.#onResponseStarted(info.responseId, info.outOfBand);
    }
    responseDone(info: Parameters<S2sEvents["responseDone"]>[0]): void {
      void this.#r.#onResponseDone(info.responseId, info.status, info.usage);
    }
    toolCall(call: S2sToolCall): void {
      this.#r.#calls.call(call, this.replies.get(call.responseId));
    }
    error(error: Error, info: { readonly fatal: boolean }): void {
      this.#r.#onError(error, info.fatal);
    }
    reconnected(): void {
      this.ctx.count("provider_reconnect");
    }
    closed(info: { readonly expected: boolean }): void {
      if (!info.expected) this.#r.#onError(new Error("the speech-to-speech service closed the connection"), true);
    }

    // The refusals' and tool calls' port.
    session(): S2sSession | undefined {
      return this.#r.#session;
    }
    ended(): boolean {
      return this.#r.#closed;
    }
    userSpeaking(): boolean {
      return this.#r.#userSpeaking;
    }
    interrupt(): number {
      return this.#r.#interrupt();
    }
    say(text: string, record: string): void {
      this.#r.#say(text, record);
    }
    commitUser(text: string, refused?: true): void {
      this.#r.#commitUser(text, refused);
    }
    settled(): void {
      this.#r.#cancelToolLines();
    }
  };

  // ── service events ────────────────────────────────────────────────────────────────────

  #onResponseStarted(responseId: string, outOfBand: boolean): void {
    if (outOfBand) {
      this.#lines.started(responseId);
      return;
    }
    const reply = this.#replies.start(responseId);
    this.#options.thinking?.(true);
    this.#playback.resetTimeline();
    this.#timelineOf = reply;
    // Its transcript goes out through the output guardrails: at once without any, else once checked.
    this.#refusals.started(reply);
  }

  #onAudio(pcm: Uint8Array, responseId: string, itemId: string): void {
    // Almost every delta is the reply in flight's: found without the replies' and lines' maps (a
    // reply is never a line), whose tables would be two more cold lines a delta on a loaded process.
    const current = this.#replies.current;
    const reply = current !== undefined && current.responseId === responseId ? current : this.#replies.get(responseId);
    const line = reply === undefined ? this.#lines.get(responseId) : undefined;
    const filler = line?.kind === "tool";
    if (line?.kind === "recorded") this.#timelineOf = undefined;
    if (reply !== undefined) reply.itemId ??= itemId;
    if (reply !== undefined && reply !== this.#replies.current) return;
    const bytesPerSecond = this.#outputBytesPerSecond;
    if (bytesPerSecond === 0) return;
    // formatDurationMs (audio/rates.ts) to the last bit: a sample is 1 or 2 bytes, so dividing by
    // it first is exact and both divide the same whole number of bytes a second.
    const ms = (pcm.byteLength / bytesPerSecond) * 1000;
    if (reply !== undefined) {
      if (reply.firstAudioAt === undefined) this.#options.thinking?.(false);
      reply.firstAudioAt ??= this.#ctx.clock.now();
      reply.audioMs += ms;
    }
    this.#playback.queued(ms, filler ? "filler" : "model");
    this.#link.audio(pcm, ms);
  }

  #onTranscript(delta: string, responseId: string, itemId: string): void {
    const reply = this.#replies.get(responseId);
    if (reply === undefined || reply !== this.#replies.current) return;
    reply.itemId ??= itemId;
    reply.text += delta;
    reply.output?.push(delta);
  }

  /** The service heard the caller: a barge-in when the agent is audible; tool lines stop. */
  #onSpeechStarted(): void {
    this.#userSpeaking = true;
    this.#options.thinking?.(false);
    this.#ctx.activity();
    this.#cancelToolLines();
    // A barge-in only when something is there to cut: a reply in flight, or audio still playing.
    if (this.#playback.modelAudible && this.busy) {
      // With interrupt_response the service cancels its response itself; a second cancel only earns an error.
      this.#interrupt({ serviceCancels: this.#options.setup.interruptResponse });
      this.#ctx.count("barge_in");
      this.#ctx.emit({ type: "reply.cancelled" });
    }
    this.#ctx.emit({ type: "speech.started" });
  }

  /** `inferred`: an end the service inferred from its own answer (Gemini without `voiceActivity`). */
  #onSpeechStopped(inferred: boolean): void {
    this.#userSpeaking = false;
    this.#replies.speechStopped(inferred);
    this.#ctx.emit({ type: "speech.stopped" });
  }

  #onUserTranscript(text: string, final: boolean, itemId: string | undefined): void {
    if (!final && this.#ctx.wants("user-transcript.updated")) this.#ctx.emit({ type: "user-transcript.updated", text });
    this.#refusals.heard(text, final, itemId);
  }

  #commitUser(text: string, refused?: true): void {
    this.#calls.userTurn();
    this.#ctx.ledger.user(text, refused === true ? { refused } : undefined);
  }

  /** A line in the model's own voice, out of band; `record` is committed as the agent's line once the service has spoken it. */
  #say(text: string, record: string): void {
    if (this.#session === undefined) return;
    this.#lines.ask({
      kind: "recorded",
      settle: (heard) => {
        const { ledger } = this.#ctx;
        ledger.settle(ledger.epoch, { status: heard ? "spoken" : "cancelled", text: record, more: this.#replies.pending });
      },
    });
    this.#session.createResponse({ instructions: sayExactly(text), outOfBand: true });
  }

  /** Stop the out-of-band tool lines still being spoken (never a recorded line). */
  #cancelToolLines(): void {
    for (const id of this.#lines.toolLines()) this.#session?.cancelResponse(id);
  }

  /** Barge-in or cancel: playback cleared, the response stopped, the model's memory cut at what was heard; returns the heard ms. */
  #interrupt(options: { readonly serviceCancels?: boolean } = {}): number {
    // Model audio only: a tool line spoken out of band in between is not part of the item.
    const heardMs = Math.max(0, Math.round(this.#playback.heardModelMs(0)));
    this.#playback.cleared();
    this.#lines.cut();
    const { playing, current } = this.#replies.interrupt();
    // Finished at the service but still playing: the caller heard only part of it. A forgotten reply is removed instead.
    for (const reply of playing) {
      if (!reply.forget) this.#truncate(reply, heardMs);
      this.#ctx.log.debug({ response: reply.responseId, heardMs }, "barge-in during playback");
    }
    if (current === undefined) return heardMs;
    if (!current.done && options.serviceCancels !== true) this.#session?.cancelResponse(current.responseId);
    if (!current.forget) this.#truncate(current, heardMs);
    this.#ctx.log.debug({ response: current.responseId, heardMs }, "barge-in");
    return heardMs;
  }

  /** The service's memory of `reply` cut at `heardMs` of its model audio (nothing before its item is known). */
  #truncate(reply: Reply, heardMs: number): void {
    if (reply.itemId === undefined) return;
    reply.truncatedMs = heardMs;
    this.#session?.truncate(reply.itemId, heardMs);
  }

  /** A recorded line is the agent's once the caller has heard it whole (like a reply); a barge-in or cancel before then cuts it. */
  async #lineHeard(line: Extract<OutOfBandLine, { kind: "recorded" }>, cut: () => boolean): Promise<void> {
    if (!cut()) this.#ctx.emit({ type: "audio.completed" });
    await this.#playback.playedOut(() => cut() || this.#closed);
    if (!this.#closed) line.settle(!cut());
  }

  /** Wait until the reply's audio has played to the caller (marks or client reports), or it was interrupted. */
  #playedOut(reply: Reply): Promise<void> {
    return this.#replies.hear(reply, () => this.#playback.playedOut(() => reply.interrupted || this.#closed));
  }

  async #onResponseDone(responseId: string, status: string, usage?: { inputTokens: number; outputTokens: number; totalTokens: number }): Promise<void> {
    const done = this.#lines.done(responseId);
    if (done !== undefined) {
      if (done.line.kind === "recorded") await this.#lineHeard(done.line, done.cut);
      return;
    }
    const reply = this.#replies.done(responseId);
    if (reply === undefined) return;
    if (reply.forget && reply.itemId !== undefined) this.#session?.deleteItem?.(reply.itemId);
    // Its transcript still waiting for a check: the reply is what it is once that has answered (a verdict cuts it).
    if (reply.output?.checked === true) await reply.output.settled();
    const inFlight = reply === this.#replies.current;
    const completed = status === "completed" && inFlight && !reply.interrupted;
    // A response that only called tools is a step of the reply, not its end: the response after the results completes it.
    const step = reply.calls !== undefined && reply.text.trim() === "";
    // Each call answered exactly once; after a barge-in the caller's turn asks for the next response.
    // A response lost with the service link (failed) was not the caller's doing: its results still ask for one.
    const continues = completed || (status === "failed" && inFlight && !reply.interrupted);
    // Its tools still run after a step: the agent is still thinking until the next response speaks.
    this.#options.thinking?.(step && continues);
    const answered = this.#calls.answer(reply, continues);
    if (completed && !step) {
      this.#ctx.emit({ type: "audio.completed" });
      // Recorded once heard: the service is done, but a phone line may still be playing seconds of it.
      await this.#playedOut(reply);
    }
    const heard = completed && !reply.interrupted;
    this.#replies.ended(reply, step, continues);
    const { ledger } = this.#ctx;
    const settledUsage = usage === undefined ? undefined : spread(usage, { steps: 1 });
    reply.output?.stop();
    if (step) ledger.step({ status: heard ? "completed" : "cancelled", usage: settledUsage });
    else ledger.settle(ledger.epoch, { status: heard ? "completed" : "cancelled", text: reply.text.trim(), usage: settledUsage, more: this.#replies.pending, metrics: { turnId: ledger.nextTurnId(), ...turnLatencies(reply, this.#playback.startedAt) } });
    await answered;
  }

  #onError(error: Error, fatal: boolean): void {
    if (fatal) {
      this.#ctx.fatal(error instanceof GatewayError ? error : new GatewayError("connection", messageOf(error), { fatal: true }));
      return;
    }
    this.#ctx.log.warn({ err: error }, "s2s provider error");
    this.#ctx.count("provider_error");
    this.#ctx.emit({ type: "error.reported", code: "s2s", message: messageOf(error), fatal: false });
  }
}
