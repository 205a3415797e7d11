import type { AgentNote } from "../turn/agent-note.js";
import { InputChecks } from "../turn/input-checks.js";
import type { HeardOutcome } from "../turn/heard-correction.js";
import { PlaybackClock } from "../turn/playback-clock.js";
import { TurnState, type TurnPhase } from "../turn/turn-state.js";
import { countWords } from "./barge-in.js";
import type { ReplyLoop } from "./reply-loop.js";
import { FalseInterruption } from "./false-interruption.js";
import { Overlap } from "./overlap.js";
import { Preemption } from "./preemption.js";
import { Nudger } from "./silence.js";
import type { SttSession } from "./stt-port.js";
import { mergeContinuation, normalize, type TurnInput } from "./turn-input.js";
import { TurnQueue } from "./turn-queue.js";
import { Utterances, type Utterance } from "./utterance.js";
import { VoiceReply, type VoiceReplyDeps } from "./voice-reply.js";

/** The session's ports for the loop; most pass through to each reply (voice-reply.ts, reply-gate.ts). */
export interface VoiceLoopDeps extends Pick<VoiceReplyDeps, "clock" | "log" | "settings" | "tts" | "ledger" | "guardrails" | "emit" | "wants" | "audio" | "admitTurn" | "toolCovering" | "toolsRunning"> {
  readonly reply: ReplyLoop;
  readonly stt: SttSession;
  /** Conversational activity (re-arms the idle timer). */
  readonly activity: () => void;
  /** Counts for metrics: a barge-in, a falsely interrupted reply resumed, an acknowledgement not taken as a turn. */
  readonly count?: (what: "barge_in" | "false_interruption_resume" | "acknowledgement") => void;
  /** Each move of the turn state (the link's waiting audio plays its thinking sound while it is `thinking`). */
  readonly phaseChanged?: (to: TurnPhase) => void;
}

/**
 * The pipeline's turn coordinator (docs/architecture.md "The turn engine"): the caller's side is
 * `Utterances` (endpointing, watchdog, push-to-talk), each reply's way out is a `ReplyGate`
 * (floor, backoff, held audio), silence is `DeadAirCover` and `Nudger`, and `TurnState` says
 * where the conversation is. This class decides between them: one turn at a time under epochs,
 * barge-in gated on audibility, words and duration, continuations, preemptive replies
 * (`Preemption`) and false-interruption resumes; the `TurnLedger` records what the caller heard.
 */
export class VoiceLoop {
  readonly #deps: VoiceLoopDeps;
  readonly #playback: PlaybackClock;
  readonly #state: TurnState;
  readonly #utterances: Utterances;
  readonly #nudger: Nudger;
  readonly #queue: TurnQueue;
  /** Caller turns through the input guardrails, in the order they ended; a cancel or reset drops those still being checked. */
  readonly #checks: InputChecks;
  #reply: VoiceReply | undefined;
  /** The latest reply, in flight or recorded: the one a listener's truncate is about. */
  #latest: VoiceReply | undefined;
  #holdUntil = 0;
  /**
   * The next reply's model controller, made off the path from the caller's last word to the model
   * request: at the start and after each reply. Node 20 builds an AbortSignal (made at the first
   * read of `signal`, read here) through `Object.setPrototypeOf` on an EventTarget: a tenth of that
   * path's synchronous work at 50 sessions (docs/benchmarks.md, "Pipeline").
   */
  #nextModel: AbortController | undefined = readyController();
  /**
   * What every reply needs from the loop, made once: its fields and callbacks are the loop's, and
   * a callback about one reply is handed that reply. Made per reply it was an object of 19 fields,
   * five closures and a reference cell on the path from the caller's last word to the model request.
   */
  readonly #replyDeps: VoiceReplyDeps;
  readonly #resume: FalseInterruption;
  readonly #preemption: Preemption;
  /** Speech over the agent: barge-in or only acknowledgements. */
  readonly #overlap: Overlap;
  #closed = false;

  constructor(deps: VoiceLoopDeps) {
    this.#deps = deps;
    const { clock, settings } = deps;
    this.#playback = new PlaybackClock(clock);
    this.#replyDeps = {
      clock,
      log: deps.log,
      settings,
      tts: deps.tts,
      ledger: deps.ledger,
      guardrails: deps.guardrails,
      emit: deps.emit,
      wants: deps.wants,
      audio: deps.audio,
      admitTurn: deps.admitTurn,
      toolCovering: deps.toolCovering,
      toolsRunning: deps.toolsRunning,
      model: deps.reply,
      playback: this.#playback,
      userSpeaking: () => this.userSpeaking,
      current: (reply) => this.#reply === reply,
      closed: () => this.#closed,
      sent: (reply) => {
        // The latest reply the listener can truncate is the latest whose audio went out (truncateHeard).
        this.#latest = reply;
        if (this.#state.phase === "thinking") this.#state.to("speaking");
      },
      // Between turns: the nudge timer starts once a reply has settled.
      settled: () => {
        if (!this.#closed) this.#nudger.arm();
      },
    };
    this.#checks = new InputChecks({ guardrails: deps.guardrails, log: deps.log, live: () => !this.#closed });
    this.#resume = new FalseInterruption(deps.log);
    this.#overlap = new Overlap(settings, clock);
    this.#queue = new TurnQueue((input) => this.#answer(input), deps.log);
    this.#preemption = new Preemption({
      // A speculation shows the model the caller's words before the input guardrails could check them.
      enabled: settings.preemptiveGeneration && !deps.guardrails.checksInput,
      history: () => deps.ledger.history,
      speculate: (history, signal) => deps.reply.speculate(history, signal),
      busy: () => this.busy,
    });
    this.#state = new TurnState((from, to) => {
      deps.log.debug({ from, to }, "turn state");
      deps.phaseChanged?.(to);
    });
    this.#utterances = new Utterances({
      clock,
      settings,
      emit: deps.emit,
      finalize: () => deps.stt.finalize(),
      opened: () => {
        this.#nudger.cancel();
        deps.activity();
        if (!this.#state.replying) this.#state.to("listening");
      },
      // Held only while a reply is being heard; a reply that finished playing has nothing to interrupt.
      holdStart: () => this.#reply !== undefined && this.#playback.modelAudible,
      dropped: () => {
        if (!this.#state.replying) this.#state.to("idle");
      },
      ended: (turn) => this.#commitUser(turn.text, turn.endedAt, turn.startedAt),
      acknowledgement: (text) => this.#acknowledgement(text),
      quiet: () => this.#quiet(),
    });
    this.#nudger = new Nudger({
      clock,
      afterMs: settings.nudge?.afterMs,
      pendingMs: () => this.#playback.pendingMs,
      engaged: () => this.busy || this.userSpeaking || this.#playback.pendingMs > 0,
      nudge: () => this.#enqueue({ kind: "nudge" }),
    });
  }

  /** Where the conversation is (idle, listening, thinking, speaking, interrupted). */
  get phase(): TurnPhase {
    return this.#state.phase;
  }

  /** The user is speaking (fillers are skipped meanwhile). */
  get userSpeaking(): boolean {
    return this.#utterances.current !== undefined;
  }

  /** A reply is in flight, or a turn waits for one (or for its guardrail check). */
  get busy(): boolean {
    return this.#state.replying || this.#queue.length > 0 || this.#checks.pending > 0;
  }

  /** User turns (spoken or typed) waiting behind the reply in flight, or for their check; greetings, resumes and nudges do not count. */
  get queuedTurns(): number {
    return this.#checks.pending + this.#queue.userTurns;
  }

  /** Speak a fixed line as a reply (the greeting), recorded as the agent's. */
  say(text: string, record = true): void {
    if (text.trim() === "") return;
    this.#enqueue({ kind: "say", text, record });
  }

  /** A gateway's note (a workflow run ended): one reply of the model's own, queued like a nudge. */
  note(note: AgentNote): void {
    this.#enqueue({ kind: "note", note });
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  sttSpeechStarted(): void {
    this.#utterances.touch();
  }

  /** The STT's unfinalized tail (stt-port.ts): it replaces the previous one; an empty one withdraws it. */
  sttPartial(text: string, eotConfidence?: number): void {
    if (normalize(text) === "") {
      // A withdrawn hypothesis opens nothing; it clears the tail of an utterance in progress.
      const utterance = this.#utterances.current;
      if (utterance === undefined || !utterance.transcript.pending) return;
      utterance.transcript.partial("");
      this.#interim(utterance, false);
      return;
    }
    const utterance = this.#utterances.touch();
    utterance.transcript.partial(text);
    this.#interim(utterance, false);
    this.#utterances.checkLimit(utterance);
    this.#preemption.interim(utterance, eotConfidence);
  }

  /** The STT's next finalized segment (stt-port.ts): appended once; it covers the pending tail. */
  sttFinal(text: string, info: { readonly endOfTurn: boolean }): void {
    const words = normalize(text) !== "";
    const utterance = words ? this.#utterances.touch() : this.#utterances.current;
    if (utterance !== undefined && (words || utterance.transcript.pending)) {
      // An empty final still covers the tail: the provider heard no words where the partial had some.
      utterance.transcript.final(text);
      this.#interim(utterance, true);
      this.#utterances.checkLimit(utterance);
    }
    if (this.#utterances.finalArrived()) return;
    if (this.#deps.settings.detection === "manual") return;
    if (info.endOfTurn && this.#utterances.current !== undefined) this.#utterances.end();
  }

  /** Local VAD edges, for an STT without endpointing. */
  vadSpeech(edge: "start" | "end"): void {
    this.#utterances.vad(edge);
  }

  /** A typed turn (`user_text`): committed at once. */
  userText(text: string): void {
    this.#commitUser(text, this.#deps.clock.now());
  }

  playbackProgress(bufferedMs: number): void {
    this.#playback.report(bufferedMs);
  }

  /**
   * The listener stopped playing the latest reply at `audioMs` of its audio: its record holds no
   * more than that (turn/heard-correction.ts). The latest whose audio has gone out, as the link
   * counts it (realtime/reply-truncation.ts): a reply started after a barge-in but not yet heard
   * leaves the one it interrupted the latest.
   */
  truncateHeard(audioMs: number): HeardOutcome {
    return this.#latest?.truncateHeard(audioMs) ?? "unchanged";
  }

  /** Push-to-talk (`turnTaking.detection: "manual"`). */
  manual(command: "start" | "commit" | "clear"): void {
    this.#utterances.manual(command);
  }

  /** The client's `cancel`: stop the reply in flight (no resume is armed). */
  cancel(): void {
    this.#queue.clear();
    this.#checks.drop();
    const reply = this.#reply;
    if (reply !== undefined && !reply.interrupted) this.#interrupt(reply, false);
    else this.#flushOutput();
  }

  /** A `reset`: strand everything in flight; the session then clears history and greets. */
  reset(): void {
    this.#queue.clear();
    this.#checks.drop();
    this.#resume.reset();
    this.#nudger.resetCount();
    this.#nudger.cancel();
    this.#utterances.reset();
    const reply = this.#reply;
    if (reply !== undefined) {
      reply.strand();
      this.#state.to("interrupted");
    } else {
      this.#state.to("idle");
    }
    this.#flushOutput();
  }

  /** A tool's start/delayed line, spoken in the reply's voice as filler. */
  speakFiller(text: string): void {
    const reply = this.#reply;
    if (reply === undefined || !reply.gate.open || this.userSpeaking) return;
    reply.filler(text);
  }

  close(): void {
    this.#closed = true;
    this.#queue.clear();
    this.#utterances.close();
    this.#nudger.cancel();
    this.#reply?.stop();
  }

  // ── the caller's turn ─────────────────────────────────────────────────────────────────

  /** An interim or final arrived: maybe a barge-in; the caption goes out unless held. */
  #interim(utterance: Utterance, final: boolean): void {
    const reply = this.#reply;
    const audible = this.#playback.modelAudible;
    if (utterance.held && reply !== undefined && !reply.interrupted && this.#overlap.interrupts(utterance, final, audible)) {
      this.#interrupt(reply, true);
      return;
    }
    if (utterance.held && !audible) this.#utterances.release(utterance);
    if (!utterance.held && this.#deps.wants("user-transcript.updated")) this.#deps.emit({ type: "user-transcript.updated", text: utterance.transcript.text });
  }

  /** A held utterance ends as `text`: only acknowledgements, said while the reply is still heard, are not a turn (overlap.ts). */
  #acknowledgement(text: string): boolean {
    const reply = this.#reply;
    if (reply === undefined || reply.interrupted || !this.#overlap.acknowledgement(text, this.#playback.modelAudible)) return false;
    this.#deps.log.debug({ reply: reply.id, words: countWords(text) }, "acknowledgement: not a turn");
    this.#deps.count?.("acknowledgement");
    return true;
  }

  /** No STT activity for the watchdog period: close the utterance, or resume a falsely interrupted reply. */
  #quiet(): void {
    const utterance = this.#utterances.current;
    // After a barge-in, an utterance that never produced a final was noise (a cough, a "hmm").
    const noise = this.#resume.armed && (utterance === undefined || !utterance.transcript.finalized);
    if (!noise && utterance !== undefined && utterance.transcript.text !== "") {
      this.#utterances.end();
      return;
    }
    this.#utterances.drop();
    const quote = this.#resume.take(this.busy);
    if (quote === undefined) return;
    this.#deps.count?.("false_interruption_resume");
    this.#enqueue({ kind: "resume", quote });
  }

  #commitUser(text: string, endedAt: number, startedAt = endedAt): void {
    this.#resume.reset();
    this.#nudger.resetCount();
    this.#nudger.cancel();
    const turn = { text, endedAt, startedAt, committedAt: this.#deps.clock.now() };
    // Checked before it is committed (so its event can say it was refused), in the order turns ended.
    this.#checks.check(text, (verdict) => this.#admitUser(turn, verdict?.replacement));
  }

  /** The caller's turn is committed: answered by the model, or by the replacement an input guardrail gave (`refusal`). */
  #admitUser(turn: { readonly text: string; readonly endedAt: number; readonly startedAt: number; readonly committedAt: number }, refusal: string | undefined): void {
    const { text, startedAt } = turn;
    this.#deps.ledger.user(text, { refused: refusal !== undefined });
    if (refusal === undefined && this.#continue(text, startedAt)) return;
    const input: TurnInput = { kind: "user", ...turn, ...(refusal === undefined ? {} : { refusal }) };
    const speculation = refusal === undefined ? this.#preemption.adopt(text) : undefined;
    if (speculation !== undefined) input.speculation = speculation;
    this.#enqueue(input);
  }

  /**
   * The continuation window: an utterance that started soon after the previous turn was
   * committed, before the agent became audible, joins that turn; its reply (if started) is
   * cancelled and regenerated for the merged text.
   */
  #continue(text: string, startedAt: number): boolean {
    const queued = this.#queue.lastUser();
    const reply = this.#reply;
    const previous = queued ?? (reply?.input?.kind === "user" && reply.gate.firstAudioAt === undefined && !reply.interrupted ? reply.input : undefined);
    if (previous?.kind !== "user" || !mergeContinuation(previous, text, startedAt, this.#deps.settings.continuationWindowMs)) return false;
    if (queued === undefined && reply !== undefined) {
      this.#deps.log.info({ reply: reply.id }, "continuation merged into the turn in flight");
      reply.superseded = true;
      reply.stop();
      this.#deps.ledger.cancelled();
      this.#queue.putBack(previous);
    }
    return true;
  }

  // ── replies ───────────────────────────────────────────────────────────────────────────

  #enqueue(input: TurnInput): void {
    if (!this.#closed) this.#queue.push(input);
  }

  /** One input's reply, start to end (the queue runs them one at a time). */
  async #answer(input: TurnInput): Promise<void> {
    if (this.#closed) return;
    const reply = this.#startReply();
    try {
      await reply.run(input);
    } finally {
      this.#endReply(reply);
    }
  }

  #startReply(): VoiceReply {
    const { clock, settings } = this.#deps;
    this.#playback.resetTimeline();
    const reply = new VoiceReply(this.#replyDeps, Math.max(clock.now() + settings.startSpeakingFloorMs, this.#holdUntil), this.#nextModel ?? readyController());
    this.#nextModel = undefined;
    this.#reply = reply;
    this.#state.to("thinking");
    reply.started();
    return reply;
  }

  #endReply(reply: VoiceReply): void {
    reply.end();
    this.#nextModel ??= readyController();
    if (this.#reply !== reply) return;
    this.#reply = undefined;
    const utterance = this.#utterances.current;
    this.#state.to(utterance === undefined ? "idle" : "listening");
    if (utterance !== undefined && utterance.held && !this.#playback.modelAudible) this.#utterances.release(utterance);
  }

  // ── interruption ──────────────────────────────────────────────────────────────────────

  /** Barge-in (or cancel), in order: latch heard, close the gate, cancel TTS, clear the pacer, `reply.cancelled`. */
  #interrupt(reply: VoiceReply, bargeIn: boolean): void {
    const heard = reply.interrupt(!this.#deps.toolsRunning());
    this.#state.to("interrupted");
    this.#flushOutput();
    if (!bargeIn) return;
    const { log, settings, clock } = this.#deps;
    log.debug({ reply: reply.id, heard: heard.length }, "barge-in");
    this.#deps.count?.("barge_in");
    this.#holdUntil = clock.now() + settings.interruption.backoffMs;
    if (settings.interruption.resumeFalseInterruption) this.#resume.arm(heard);
    const utterance = this.#utterances.current;
    if (utterance !== undefined) {
      this.#utterances.release(utterance);
      if (this.#deps.wants("user-transcript.updated")) this.#deps.emit({ type: "user-transcript.updated", text: utterance.transcript.text });
    }
  }

  /** `reply.cancelled`, and the listener's playback is gone. */
  #flushOutput(): void {
    this.#deps.ledger.cancelled();
    this.#playback.cleared();
  }
}

/** An AbortController whose signal is made. */
function readyController(): AbortController {
  const controller = new AbortController();
  void controller.signal;
  return controller;
}
