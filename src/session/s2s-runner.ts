import { formatDurationMs, g711, pcm16, type SessionAudio } from "../audio/rates.js";
import { GatewayError, messageOf } from "../errors.js";
import type { GuardrailVerdict, ResolvedConfig } from "../manifest/index.js";
import { snapToWord } from "../pipeline/heard-cursor.js";
import { joinSpoken } from "../pipeline/join-spoken.js";
import { GuardedOutput } from "../turn/guarded-output.js";
import { REFUSED_TURN_PROMPT } from "../turn/guardrails.js";
import { PlaybackClock } from "../turn/playback-clock.js";
import type { S2sAudioFormat, S2sHistoryItem, S2sProvider, S2sSegment, S2sSession, S2sSetup, S2sToolCall } from "../s2s/s2s-port.js";
import { CallerChecks, type CallerWords } from "./caller-checks.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import { S2sReplies, turnLatencies, type Reply } from "./s2s-replies.js";
import { OutOfBandLines } from "./s2s-lines.js";
import type { ToolLine, ToolOutcome, ToolRunner } from "./tool-runner.js";

export interface S2sRunnerOptions {
  /** The config with every default applied (manifest `resolveConfig`). */
  readonly settings: ResolvedConfig;
  readonly provider: S2sProvider;
  readonly tools: ToolRunner;
  /** The frozen tool list and the instructions, sent once per socket. */
  readonly setup: S2sSetup;
  /** The service's audio, as it sent it, for the link (which converts it for the listener). */
  readonly audio: (pcm: Uint8Array, durationMs: number) => void;
  /** Declares the service's formats to the link once it has opened: the link does the only conversion each way. */
  readonly useAudio: (audio: SessionAudio) => void;
  /**
   * `pcmu`/`pcma`: the link carries that G.711 end to end (a phone call) and the provider accepts
   * it, so audio crosses untouched both ways. Default `pcm16` at the service's own rates.
   */
  readonly audioFormat?: S2sAudioFormat;
  /** Aborts the service's handshake (the client hung up during start, or the start timed out). */
  readonly signal?: AbortSignal;
}

/** "Say exactly" instructions for a line spoken in the model's own voice. */
export function sayExactly(text: string): string {
  return `Say exactly the following, word for word, and nothing else: "${text}"`;
}

/** A tool call of a reply that answers a refused caller turn: answered, never run. */
const REFUSED_CALL = "Not run: the caller's turn was refused by an input guardrail.";

/** The conversation as a new socket replays it: a refused caller turn as the model history records it (docs/config.md "Guardrails"). */
function replayed(lines: readonly { readonly role: "user" | "assistant"; readonly text: string; readonly refused?: true }[]): S2sHistoryItem[] {
  return lines.map((line) => (line.refused === true ? { role: "user", text: REFUSED_TURN_PROMPT } : { role: line.role, text: line.text }));
}

/**
 * Speech-to-speech mode: the service hears and speaks; the gateway bridges audio (converted once,
 * at the link, to and from the service's own formats), maps the service's events to the client protocol, runs tool calls through the
 * shared runner (answered once per call, results batched per response), speaks tool lines in
 * the model's own voice out of band, and on barge-in clears playback and truncates the model's
 * memory at what the caller actually heard. Guardrails (docs/config.md "Guardrails"): the
 * caller's transcript is checked as it arrives and a refused turn's answer is cut and removed
 * from the model's memory; the agent's transcript is checked as it streams and a verdict cuts the
 * reply where the caller stopped hearing it; either replacement is spoken out of band.
 */
export class S2sRunner implements ModeRunner {
  readonly #ctx: RunnerContext;
  readonly #options: S2sRunnerOptions;
  readonly #playback: PlaybackClock;
  readonly #replies: S2sReplies;
  #session: S2sSession | undefined;
  /** What the service hears and speaks (its formats, declared to the link). */
  #audio: SessionAudio | undefined;
  readonly #lines = new OutOfBandLines();
  /** The caller's transcripts through the input guardrails (when the agent has some). */
  readonly #checks: CallerChecks | undefined;
  /** Typed turns wait for their check in the order they came. */
  #typed: Promise<void> = Promise.resolve();
  /** A refused caller turn whose answer has not started yet: the next in-band response is that answer, cut as it starts. */
  #refusedAwaitingAnswer = false;
  #userSpeaking = false;
  #stepsSinceUser = 0;
  /** Tool steps a turn may take: the agent segment's `maxSteps` (a hand-off brings its own). */
  #maxSteps: number;
  #closed = false;
  readonly #signal = new AbortController();

  private constructor(ctx: RunnerContext, options: S2sRunnerOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#playback = new PlaybackClock(ctx.clock);
    this.#replies = new S2sReplies(ctx.clock);
    this.#checks = ctx.guardrails.checksInput
      ? new CallerChecks({ guardrails: ctx.guardrails, passed: (words) => this.#passed(words), refused: (words, verdict) => this.#refuseSpoken(words, verdict) })
      : undefined;
    this.#maxSteps = options.settings.maxSteps;
  }

  /** Open the service's socket: one setup message with the frozen tools and instructions. */
  static async open(ctx: RunnerContext, options: S2sRunnerOptions): Promise<S2sRunner> {
    const runner = new S2sRunner(ctx, options);
    runner.#session = await options.provider.open(
      {
        setup: options.setup,
        history: () => replayed(ctx.conversation.restoredEvent().messages),
        signal: options.signal,
        ...(options.audioFormat === undefined ? {} : { audioFormat: options.audioFormat }),
      },
      {
        audio: (pcm, info) => runner.#onAudio(pcm, info.responseId, info.itemId),
        agentTranscript: (delta, info) => runner.#onTranscript(delta, info.responseId, info.itemId),
        speechStarted: () => runner.#onSpeechStarted(),
        speechStopped: (info) => runner.#onSpeechStopped(info?.inferred === true),
        userTranscript: (text, info) => runner.#onUserTranscript(text, info.final, info.itemId),
        responseStarted: (info) => runner.#onResponseStarted(info.responseId, info.outOfBand),
        responseDone: (info) => void runner.#onResponseDone(info.responseId, info.status, info.usage),
        toolCall: (call) => runner.#onToolCall(call),
        error: (error, info) => runner.#onError(error, info.fatal),
        reconnected: () => ctx.count("provider_reconnect"),
        closed: (info) => {
          if (!info.expected) runner.#onError(new Error("the speech-to-speech service closed the connection"), true);
        },
      },
    );
    runner.#declareAudio(options.useAudio);
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
    this.#maxSteps = maxSteps;
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
    const { guardrails } = this.#ctx;
    if (!guardrails.checksInput) {
      this.#commitUser(text);
      session.sendText(text);
      return;
    }
    // Checked before the service hears it: a refused one never reaches it.
    this.#typed = this.#typed
      .then(async () => {
        const verdict = await guardrails.check("input", text);
        if (this.#closed) return;
        if (verdict === undefined) {
          this.#commitUser(text);
          session.sendText?.(text);
          return;
        }
        this.#stepsSinceUser = 0;
        this.#ctx.ledger.user(text, { refused: true });
        this.#answerRefused(verdict);
      })
      .catch((error: unknown) => this.#ctx.log.error({ err: error }, "typed turn failed"));
  }

  cancel(): void {
    this.#interrupt();
    this.#ctx.emit({ type: "reply.cancelled" });
  }

  strand(): void {
    this.cancel();
  }

  audio(chunk: Uint8Array): void {
    if (this.#closed) return;
    this.#session?.sendAudio(chunk);
  }

  playbackProgress(bufferedMs: number): void {
    this.#playback.report(bufferedMs);
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

  async close(): Promise<void> {
    this.#closed = true;
    this.#ctx.audioDropped("s2s", this.#session?.droppedAudioBytes ?? 0);
    this.#signal.abort(new Error("session ended"));
    await this.#session?.close();
  }

  // ── service events ────────────────────────────────────────────────────────────────────

  /** The service's formats, told to the link before any audio crosses: its G.711, or PCM16 at its input and output rates. */
  #declareAudio(useAudio: (audio: SessionAudio) => void): void {
    const session = this.#session;
    if (session === undefined) return;
    const format = session.audioFormat;
    this.#audio = format === "pcm16" ? { input: pcm16(session.inputSampleRate), output: pcm16(session.outputSampleRate) } : { input: g711(format), output: g711(format) };
    useAudio(this.#audio);
  }

  #onResponseStarted(responseId: string, outOfBand: boolean): void {
    if (outOfBand) {
      this.#lines.started(responseId);
      return;
    }
    const reply = this.#replies.start(responseId);
    this.#playback.resetTimeline();
    // Its transcript goes out through the output guardrails: at once without any, else once checked.
    const output = new GuardedOutput(this.#ctx.guardrails, {
      release: () => this.#ctx.emit({ type: "agent-transcript.updated", text: output.released.trim() }),
      tripped: (verdict) => this.#refuseOutput(reply, verdict),
    });
    reply.output = output;
    if (this.#refusedAwaitingAnswer) {
      this.#refusedAwaitingAnswer = false;
      this.#forget(reply);
    }
  }

  #onAudio(pcm: Uint8Array, responseId: string, itemId: string): void {
    const reply = this.#replies.get(responseId);
    const filler = this.#lines.get(responseId)?.kind === "tool";
    if (reply !== undefined) reply.itemId ??= itemId;
    if (reply !== undefined && reply !== this.#replies.current) return;
    const output = this.#audio?.output;
    if (output === undefined) return;
    const ms = formatDurationMs(pcm.byteLength, output);
    if (reply !== undefined) {
      reply.firstAudioAt ??= this.#ctx.clock.now();
      reply.audioMs += ms;
    }
    this.#playback.queued(ms, filler ? "filler" : "model");
    this.#options.audio(pcm, ms);
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
    if (!final) this.#ctx.emit({ type: "user-transcript.updated", text });
    // With input guardrails every transcript is checked as it arrives; the final is committed once it passed.
    if (this.#checks !== undefined) this.#checks.heard(text, final, itemId);
    else if (final && text.trim() !== "") this.#commitUser(text.trim());
  }

  #commitUser(text: string): void {
    this.#stepsSinceUser = 0;
    this.#ctx.ledger.user(text);
  }

  /**
   * An input guardrail refused what the caller said (docs/config.md "Guardrails"). The service
   * heard it: the caller's item leaves the model's memory, and so does the answer — cut where the
   * caller is hearing it, or as it starts when it has not yet; then the replacement is spoken.
   */
  #refuseSpoken(words: CallerWords, verdict: GuardrailVerdict): void {
    this.#stepsSinceUser = 0;
    this.#ctx.ledger.user(words.text, { refused: true });
    if (words.itemId !== undefined) this.#session?.deleteItem?.(words.itemId);
    // Still speaking (Gemini transcribes as the caller talks), or spoken and not answered yet: the answer is the next response.
    const answer = this.#replies.latest;
    if (this.#userSpeaking || this.#replies.awaitingAnswer || answer === undefined) this.#refusedAwaitingAnswer = true;
    else this.#forget(answer);
    this.#answerRefused(verdict);
  }

  /** A later caller turn passed: the next response answers it, not a refused one whose answer never came. */
  #passed(words: CallerWords): void {
    this.#refusedAwaitingAnswer = false;
    this.#commitUser(words.text);
  }

  /** A refused turn's answer: the model remembers that a turn was refused and what was said instead, and the caller hears it. */
  #answerRefused(verdict: GuardrailVerdict): void {
    this.#session?.remember?.({ role: "user", text: REFUSED_TURN_PROMPT });
    this.#session?.remember?.({ role: "assistant", text: verdict.replacement });
    this.#say(verdict.replacement, verdict.replacement);
  }

  /** `reply` answers a refused caller turn: what the caller hears of it stops, its calls are not run, and its item leaves the model's memory. */
  #forget(reply: Reply): void {
    reply.forget = true;
    if (this.#replies.heard(reply) && reply.audioMs > 0) {
      this.#interrupt();
      this.#ctx.emit({ type: "reply.cancelled" });
    } else if (!reply.done) {
      // Nothing of it reached the caller: it alone is stopped, and no playback is flushed.
      this.#replies.cut(reply);
      this.#session?.cancelResponse(reply.responseId);
    }
    // One still running is removed when it is done (`#onResponseDone`): its items are complete then.
    if (reply.done && reply.itemId !== undefined) this.#session?.deleteItem?.(reply.itemId);
  }

  /**
   * An output guardrail refused the reply's next words (docs/config.md "Guardrails"): it is cut
   * where the caller stopped hearing it (the model's memory truncated there, as for a barge-in),
   * and the replacement is spoken; the agent's line records the heard part of what was shown,
   * then the replacement.
   */
  #refuseOutput(reply: Reply, verdict: GuardrailVerdict): void {
    if (reply.interrupted) return;
    const heardMs = this.#interrupt();
    this.#ctx.emit({ type: "reply.cancelled" });
    const shown = reply.output?.released ?? "";
    // Words heard, by the share of its audio played; never past what the guardrails had passed.
    const heard = reply.audioMs > 0 ? snapToWord(reply.text, Math.floor((reply.text.length * Math.min(heardMs, reply.audioMs)) / reply.audioMs)) : "";
    const said = heard.length <= shown.length ? heard : shown;
    this.#session?.remember?.({ role: "assistant", text: verdict.replacement });
    this.#say(verdict.replacement, joinSpoken([said, verdict.replacement]));
  }

  /** A line in the model's own voice, out of band; `record` is committed as the agent's line once the service has spoken it. */
  #say(text: string, record: string): void {
    if (this.#session === undefined) return;
    this.#lines.ask({
      kind: "recorded",
      settle: () => {
        const { ledger } = this.#ctx;
        this.#ctx.emit({ type: "audio.completed" });
        ledger.settle(ledger.epoch, { status: "spoken", text: record });
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
    const { playing, current } = this.#replies.interrupt();
    // Finished at the service but still playing: the caller heard only part of it. A forgotten reply is removed instead.
    for (const reply of playing) {
      if (reply.itemId !== undefined && !reply.forget) this.#session?.truncate(reply.itemId, heardMs);
      this.#ctx.log.info({ response: reply.responseId, heardMs }, "barge-in during playback");
    }
    if (current === undefined) return heardMs;
    if (!current.done && options.serviceCancels !== true) this.#session?.cancelResponse(current.responseId);
    if (current.itemId !== undefined && !current.forget) this.#session?.truncate(current.itemId, heardMs);
    this.#ctx.log.info({ response: current.responseId, heardMs }, "barge-in");
    return heardMs;
  }

  /** Wait until the reply's audio has played to the caller (marks or client reports), or it was interrupted. */
  #playedOut(reply: Reply): Promise<void> {
    return this.#replies.hear(reply, () => this.#playback.playedOut(this.#signal.signal, () => reply.interrupted || this.#closed));
  }

  #onToolCall(call: S2sToolCall): void {
    const reply = this.#replies.get(call.responseId);
    const maxSteps = this.#maxSteps;
    const refusal =
      reply?.forget === true ? REFUSED_CALL : this.#stepsSinceUser >= maxSteps ? "Tool step limit reached for this turn. Answer the caller now without tools." : undefined;
    const outcome =
      refusal !== undefined
        ? Promise.resolve<ToolOutcome>({ status: "refused", result: { text: refusal, isError: true }, modelText: refusal, isError: true })
        : this.#options.tools.call({ toolCallId: call.callId, toolName: call.name, args: call.args, signal: this.#signal.signal });
    // Tool lines cover the call's silence only: once it settles, any line still being spoken stops.
    void outcome.then(() => this.#cancelToolLines());
    reply?.calls.set(call.callId, outcome);
    if (reply === undefined) void this.#answer([call.callId], [outcome], true);
  }

  async #onResponseDone(responseId: string, status: string, usage?: { inputTokens: number; outputTokens: number; totalTokens: number }): Promise<void> {
    const line = this.#lines.done(responseId);
    if (line !== undefined) {
      if (line.kind === "recorded") line.settle();
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
    const step = reply.calls.size > 0 && reply.text.trim() === "";
    // Each call answered exactly once; after a barge-in the caller's turn asks for the next response.
    // A response lost with the service link (failed) was not the caller's doing: its results still ask for one.
    const continues = completed || (status === "failed" && inFlight && !reply.interrupted);
    const answered = reply.calls.size > 0 ? this.#answer([...reply.calls.keys()], [...reply.calls.values()], continues) : undefined;
    if (reply.calls.size > 0) this.#stepsSinceUser += 1;
    if (completed && !step) {
      this.#ctx.emit({ type: "audio.completed" });
      // Recorded once heard: the service is done, but a phone line may still be playing seconds of it.
      await this.#playedOut(reply);
    }
    const heard = completed && !reply.interrupted;
    this.#replies.ended(reply, step);
    const { ledger } = this.#ctx;
    const settledUsage = usage === undefined ? undefined : { ...usage, steps: 1 };
    reply.output?.stop();
    if (step) ledger.step({ status: heard ? "completed" : "cancelled", usage: settledUsage });
    else ledger.settle(ledger.epoch, { status: heard ? "completed" : "cancelled", text: reply.text.trim(), usage: settledUsage, metrics: { turnId: ledger.nextTurnId(), ...turnLatencies(reply, this.#playback.startedAt) } });
    await answered;
  }

  /** Send a response's results as one batch; verbatim completion lines are spoken instead of a model turn. */
  async #answer(callIds: readonly string[], outcomes: readonly Promise<ToolOutcome>[], respond: boolean): Promise<void> {
    const settled = await Promise.all(outcomes);
    const session = this.#session;
    if (this.#closed || session === undefined) return;
    const verbatim = settled.map((o) => o.verbatim).filter((v): v is string => v !== undefined);
    const allVerbatim = verbatim.length === settled.length && settled.length > 0;
    session.sendToolResults(
      settled.map((outcome, i) => ({ callId: callIds[i] ?? "", output: outcome.modelText })),
      respond && !allVerbatim,
    );
    if (respond && allVerbatim) session.createResponse({ instructions: sayExactly(verbatim.join(" ")), outOfBand: true });
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
