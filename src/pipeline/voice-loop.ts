import type { ModelMessage } from "ai";
import { durationMs } from "../audio/pcm.js";
import type { Clock, Timer } from "../clock.js";
import { messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import type { EventBody } from "../events.js";
import { countWords, isBargeIn, type BargeInPolicy } from "./barge-in.js";
import { EAR_LAG_MS, heardOf } from "./heard-cursor.js";
import { PlaybackClock } from "./playback-clock.js";
import { recordHeard } from "./record-heard.js";
import { joinSpoken } from "./join-spoken.js";
import type { ReplyLoop, ReplyObserver, ReplyResult, ReplyUsage } from "./reply-loop.js";
import { SentenceBatcher } from "./sentence-batcher.js";
import { UtteranceText, type SttSession } from "./stt-port.js";
import type { TtsSession, TtsStream, WordTiming } from "./tts-port.js";

/** An utterance with no STT activity for this long is closed (ms; above maxSilenceMs; docs/protocol.md "Limits"). */
export const SPEECH_IDLE_WATCHDOG_MS = 4000;
/** At most this many false-interruption resumes, and nudges, in a row. */
export const MAX_RESUMES_IN_A_ROW = 3;
export const MAX_NUDGES_IN_A_ROW = 3;
/** The dead-air backoff doubles up to this (ms). */
export const MAX_DEAD_AIR_BACKOFF_MS = 8000;
/** How much of the heard reply a resume quotes (characters). */
export const RESUME_QUOTE_CHARS = 80;
/** Preemptive generation starts on an interim at least this confident of end-of-turn, at most twice per utterance. */
export const PREEMPT_MIN_EOT_CONFIDENCE = 0.9;
export const MAX_PREEMPTS_PER_UTTERANCE = 2;
/** A push-to-talk commit waits this long for the STT's final (ms). */
export const MANUAL_FINAL_WAIT_MS = 1500;

/** Declarative dead-air lines, in order (docs/protocol.md "Behaviour in detail", "Dead air"). */
export const DEAD_AIR_LINES = ["I'm checking on this.", "I'm still checking on this.", "This is taking a little longer than usual.", "I'm still on it."];

export const DEFAULT_NUDGE_PROMPT = "The caller has been silent for a while. Check in with them briefly, in one short sentence.";

/** The turn-taking, interruption and silence settings of a pipeline agent, defaulted. */
export interface VoiceSettings {
  readonly detection: "auto" | "manual";
  readonly minSilenceMs: number;
  readonly maxSilenceMs: number;
  readonly startSpeakingFloorMs: number;
  readonly userTurnLimit?: { readonly maxWords?: number | undefined; readonly maxDurationMs?: number | undefined } | undefined;
  readonly interruption: BargeInPolicy & { readonly backoffMs: number; readonly resumeFalseInterruption: boolean };
  readonly deadAirCoverMs: number;
  /** Start the LLM on a confident interim (config.md `turnTaking.preemptiveGeneration`). */
  readonly preemptiveGeneration: boolean;
  /** Merge an utterance that starts this soon after the previous commit, before the agent is audible (ms; 0 = off). */
  readonly continuationWindowMs: number;
  readonly nudge?: { readonly afterMs: number; readonly prompt?: string | undefined } | undefined;
  readonly errorPhrase: string;
}

/** The conversation as the loop writes it; `epoch` strands work of a conversation that was reset. */
export interface VoiceHistory {
  readonly epoch: number;
  readonly history: readonly ModelMessage[];
  append(epoch: number, messages: readonly ModelMessage[]): boolean;
  commit(epoch: number, line: { readonly role: "user" | "assistant"; readonly text: string }): boolean;
}

export interface VoiceLoopDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly settings: VoiceSettings;
  readonly reply: ReplyLoop;
  readonly stt: SttSession;
  readonly tts: TtsSession;
  readonly history: VoiceHistory;
  readonly emit: (event: EventBody) => void;
  /** Agent audio to the client, PCM16 at `tts.sampleRate`. */
  readonly audio: (pcm: Uint8Array, durationMs: number) => void;
  /** Conversational activity (re-arms the idle timer). */
  readonly activity: () => void;
  /** Before a model reply: false when the session's usage limit ends it instead. */
  readonly admitTurn: () => boolean;
  /** A tool with start/delayed lines is running (dead-air cover stands down). */
  readonly toolCovering: () => boolean;
  /** Tool calls still running in the reply (a barge-in lets them finish). */
  readonly toolsRunning: () => boolean;
  /** After every reply: usage, latency, record. */
  readonly replySettled: (info: { readonly status: ReplyResult["status"] | "spoken"; readonly usage?: ReplyUsage; readonly llmFirstTokenMs?: number }) => void;
  /** Counts for metrics: a barge-in, a falsely interrupted reply resumed. */
  readonly count?: (what: "barge_in" | "false_interruption_resume") => void;
}

type TurnInput =
  | { readonly kind: "user"; text: string; readonly endedAt: number; readonly committedAt: number; readonly startedAt: number; speculation?: Speculation }
  | { readonly kind: "resume"; readonly quote: string }
  | { readonly kind: "nudge" }
  | { readonly kind: "say"; readonly text: string; readonly record: boolean };

/** A reply started on a confident interim, adopted only if the final text matches. */
interface Speculation {
  readonly forText: string;
  readonly controller: AbortController;
  readonly result: Promise<{ readonly text: string; readonly usable: boolean; readonly usage: ReplyUsage }>;
}

interface Utterance {
  /** The finals and the current partial (stt-port.ts's transcript contract): the only place they are joined. */
  readonly transcript: UtteranceText;
  startedAt: number;
  lastActivityAt: number;
  /** speech.started went out (or was held). */
  announced: boolean;
  /** speech.started is being held while the agent is audible. */
  held: boolean;
  /** Preemptive generations started for this utterance. */
  speculations: number;
}

interface ActiveReply {
  readonly id: string;
  readonly epoch: number;
  readonly controller: AbortController;
  readonly startedAt: number;
  gateOpen: boolean;
  interrupted: boolean;
  /** Everything the model said so far, as pushed to TTS (what the heard cursor measures). */
  modelText: string;
  modelAudioMs: number;
  modelWords: WordTiming[];
  /** Shown lines before the live text (tool lines, earlier model text): the transcript snapshot. */
  shown: string[];
  /** Model text since the last shown line. */
  live: string;
  streams: Set<TtsStream>;
  /** Audio held until `releaseAt` (start-speaking floor, post-interruption backoff). */
  held: { pcm: Uint8Array; ms: number; kind: "model" | "filler" }[];
  releaseAt: number;
  releaseTimer?: Timer;
  firstAudioAt?: number;
  firstTextAt?: number;
  deadAirBackoffMs: number;
  deadAirLine: number;
  deadAirTimer?: Timer;
  /** Heard ms of the model stream, latched at the interruption. */
  heardLatch?: number;
  /** Waiting for every stream of the reply to finish. */
  idleWaiters: (() => void)[];
  /** Replaced by a merged turn (continuation window): records nothing. */
  superseded: boolean;
  /** The user turn it answers, if any. */
  input?: TurnInput;
}

/** The longest turn continuations may merge into (characters): a typed turn's bound (protocol.md, `MAX_USER_TEXT_CHARS`). */
const MAX_MERGED_TURN_CHARS = 20_000;
const normalize = (text: string): string => text.trim().replace(/\s+/g, " ");

/** Transcripts compared as words: case, punctuation and spacing do not count (smart formatting differs between interims and finals). */
function sameWords(a: string, b: string): boolean {
  const words = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, "").replace(/\s+/g, " ").trim();
  return words(a) === words(b);
}

/** The model-history messages a turn input adds before the reply. */
function promptFor(input: TurnInput, nudgePrompt: string | undefined): ModelMessage[] {
  switch (input.kind) {
    case "user":
      return [{ role: "user", content: input.text }];
    case "resume":
      return [{ role: "user", content: `[The caller interrupted you but said nothing. Continue your previous reply from where they stopped hearing it: "…${input.quote}"]` }];
    case "nudge":
      return [{ role: "user", content: `[${nudgePrompt ?? DEFAULT_NUDGE_PROMPT}]` }];
    case "say":
      return [];
  }
}

/**
 * The pipeline's turn loop: turns end by the STT's endpointing (or local VAD + silence timers,
 * or push-to-talk), one turn at a time under epochs; replies stream text to TTS in sentence
 * batches through an audio gate; barge-in is gated on audibility, words and duration; history
 * records what the caller heard; silence is covered (dead air) or nudged.
 */
export class VoiceLoop {
  readonly #deps: VoiceLoopDeps;
  readonly #playback: PlaybackClock;
  #utterance: Utterance | undefined;
  #queue: TurnInput[] = [];
  #pumping = false;
  #reply: ActiveReply | undefined;
  #replyCount = 0;
  #holdUntil = 0;
  #resumes = 0;
  #nudges = 0;
  #armedResume: string | undefined;
  #endpointTimer: Timer | undefined;
  #watchdog: Timer | undefined;
  #nudgeTimer: Timer | undefined;
  #manual: "idle" | "capturing" | "committing" = "idle";
  #speculation: Speculation | undefined;
  #manualTimer: Timer | undefined;
  #closed = false;

  constructor(deps: VoiceLoopDeps) {
    this.#deps = deps;
    this.#playback = new PlaybackClock(deps.clock);
  }

  /** The user is speaking (fillers are skipped meanwhile). */
  get userSpeaking(): boolean {
    return this.#utterance !== undefined;
  }

  /** A reply is in flight. */
  get busy(): boolean {
    return this.#reply !== undefined || this.#queue.length > 0;
  }

  /** User turns (spoken or typed) waiting behind the reply in flight; greetings, resumes and nudges do not count. */
  get queuedTurns(): number {
    let count = 0;
    for (const input of this.#queue) if (input.kind === "user") count += 1;
    return count;
  }

  /** Speak a fixed line as a reply (the greeting), recorded as the agent's. */
  say(text: string, record = true): void {
    if (text.trim() === "") return;
    this.#enqueue({ kind: "say", text, record });
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────

  sttSpeechStarted(): void {
    this.#touchUtterance();
  }

  /** The STT's unfinalized tail (stt-port.ts): it replaces the previous one; an empty one withdraws it. */
  sttPartial(text: string, eotConfidence?: number): void {
    if (normalize(text) === "") {
      // A withdrawn hypothesis opens nothing; it clears the tail of an utterance in progress.
      const utterance = this.#utterance;
      if (utterance === undefined || !utterance.transcript.pending) return;
      utterance.transcript.partial("");
      this.#interim(utterance, false);
      return;
    }
    const utterance = this.#touchUtterance();
    utterance.transcript.partial(text);
    this.#interim(utterance, false);
    this.#checkTurnLimit(utterance);
    if (eotConfidence !== undefined && eotConfidence >= PREEMPT_MIN_EOT_CONFIDENCE) this.#speculate(utterance);
  }

  /** The STT's next finalized segment (stt-port.ts): appended once; it covers the pending tail. */
  sttFinal(text: string, info: { readonly endOfTurn: boolean }): void {
    const words = normalize(text) !== "";
    const utterance = words ? this.#touchUtterance() : this.#utterance;
    if (utterance !== undefined && (words || utterance.transcript.pending)) {
      // An empty final still covers the tail: the provider heard no words where the partial had some.
      utterance.transcript.final(text);
      this.#interim(utterance, true);
      this.#checkTurnLimit(utterance);
    }
    if (this.#manual === "committing") {
      this.#commitManual();
      return;
    }
    if (this.#deps.settings.detection === "manual") return;
    if (info.endOfTurn && this.#utterance !== undefined) this.#endTurn();
  }

  /** Local VAD edges, for an STT without endpointing. */
  vadSpeech(edge: "start" | "end"): void {
    if (this.#deps.settings.detection === "manual") return;
    if (edge === "start") {
      this.#endpointTimer?.cancel();
      this.#touchUtterance();
      return;
    }
    this.#deps.stt.finalize();
    const { minSilenceMs, maxSilenceMs } = this.#deps.settings;
    this.#endpointTimer?.cancel();
    this.#endpointTimer = this.#deps.clock.setTimeout(() => {
      const utterance = this.#utterance;
      if (utterance === undefined) return;
      if (utterance.transcript.finalized && !utterance.transcript.pending) {
        this.#endTurn();
        return;
      }
      this.#endpointTimer = this.#deps.clock.setTimeout(() => {
        if (this.#utterance !== undefined) this.#endTurn();
      }, Math.max(0, maxSilenceMs - minSilenceMs));
    }, minSilenceMs);
  }

  /** A typed turn (`user_text`): committed at once. */
  userText(text: string): void {
    const now = this.#deps.clock.now();
    this.#commitUser(text, now);
  }

  playbackProgress(bufferedMs: number): void {
    this.#playback.report(bufferedMs);
  }

  /** Push-to-talk (`turnTaking.detection: "manual"`). */
  manual(command: "start" | "commit" | "clear"): void {
    if (this.#deps.settings.detection !== "manual") return;
    if (command === "start") {
      this.#manual = "capturing";
      this.#touchUtterance();
      return;
    }
    if (command === "clear") {
      this.#manual = "idle";
      this.#dropUtterance();
      return;
    }
    if (this.#manual !== "capturing") return;
    this.#manual = "committing";
    this.#deps.stt.finalize();
    this.#manualTimer = this.#deps.clock.setTimeout(() => this.#commitManual(), MANUAL_FINAL_WAIT_MS);
  }

  /** The client's `cancel`: stop the reply in flight (no resume is armed). */
  cancel(): void {
    this.#queue = [];
    const reply = this.#reply;
    if (reply !== undefined && !reply.interrupted) this.#interrupt(reply, false);
    else this.#clearOutput();
  }

  /** A `reset`: strand everything in flight; the session then clears history and greets. */
  reset(): void {
    this.#queue = [];
    this.#armedResume = undefined;
    this.#resumes = 0;
    this.#nudges = 0;
    this.#endpointTimer?.cancel();
    this.#watchdog?.cancel();
    this.#nudgeTimer?.cancel();
    this.#utterance = undefined;
    const reply = this.#reply;
    if (reply !== undefined) {
      reply.interrupted = true;
      this.#stopReply(reply);
    }
    this.#deps.emit({ type: "reply.cancelled" });
    this.#playback.cleared();
  }

  /** A tool's start/delayed line, spoken in the reply's voice as filler. */
  speakFiller(text: string): void {
    const reply = this.#reply;
    if (reply === undefined || !reply.gateOpen || this.userSpeaking) return;
    if (reply.live.trim() !== "") reply.shown.push(reply.live);
    reply.live = "";
    reply.shown.push(text);
    this.#snapshot(reply);
    void this.#speak(reply, text, "filler");
  }

  close(): void {
    this.#closed = true;
    this.#queue = [];
    for (const timer of [this.#endpointTimer, this.#watchdog, this.#nudgeTimer, this.#manualTimer]) timer?.cancel();
    if (this.#reply !== undefined) this.#stopReply(this.#reply);
  }

  // ── utterances ────────────────────────────────────────────────────────────────────────

  #touchUtterance(): Utterance {
    const now = this.#deps.clock.now();
    let utterance = this.#utterance;
    if (utterance === undefined) {
      utterance = { transcript: new UtteranceText(), startedAt: now, lastActivityAt: now, announced: false, held: false, speculations: 0 };
      this.#utterance = utterance;
      this.#nudgeTimer?.cancel();
      this.#deps.activity();
    }
    utterance.lastActivityAt = now;
    if (!utterance.announced) {
      utterance.announced = true;
      // Held only while a reply is being heard; a reply that finished playing has nothing to interrupt.
      utterance.held = this.#reply !== undefined && this.#agentAudible();
      if (!utterance.held) this.#deps.emit({ type: "speech.started" });
    }
    this.#armWatchdog();
    return utterance;
  }

  /** The utterance so far: captions, barge-in and turn-limit word counts, and the committed turn all read this. */
  #text(utterance: Utterance): string {
    return utterance.transcript.text;
  }

  /** An interim or final arrived: maybe a barge-in; the caption goes out unless held. */
  #interim(utterance: Utterance, final: boolean): void {
    const reply = this.#reply;
    const text = this.#text(utterance);
    if (utterance.held && reply !== undefined && !reply.interrupted) {
      const evidence = {
        words: countWords(text),
        speechMs: this.#deps.clock.now() - utterance.startedAt,
        final,
        agentAudible: this.#agentAudible(),
      };
      if (isBargeIn(this.#deps.settings.interruption, evidence)) {
        this.#interrupt(reply, true);
        return;
      }
    }
    if (utterance.held && !this.#agentAudible()) this.#release(utterance);
    if (!utterance.held) this.#deps.emit({ type: "user-transcript.updated", text });
  }

  /** Release a held `speech.started` (real barge-in, or the agent fell quiet). */
  #release(utterance: Utterance): void {
    if (!utterance.held) return;
    utterance.held = false;
    this.#deps.emit({ type: "speech.started" });
  }

  #checkTurnLimit(utterance: Utterance): void {
    const limit = this.#deps.settings.userTurnLimit;
    if (limit === undefined) return;
    const words = countWords(this.#text(utterance));
    const duration = this.#deps.clock.now() - utterance.startedAt;
    const over =
      limit.maxWords !== undefined && words > limit.maxWords ? "words" : limit.maxDurationMs !== undefined && duration > limit.maxDurationMs ? "duration" : undefined;
    if (over === undefined) return;
    this.#deps.emit({ type: "user-turn.exceeded", limit: over, words, durationMs: duration });
    this.#manualTimer?.cancel();
    this.#manual = "idle";
    this.#endTurn();
  }

  #armWatchdog(): void {
    this.#watchdog?.cancel();
    this.#watchdog = this.#deps.clock.setTimeout(() => this.#watchdogFired(), SPEECH_IDLE_WATCHDOG_MS);
  }

  /** No STT activity for the watchdog period: close the utterance, or resume a falsely interrupted reply. */
  #watchdogFired(): void {
    // Push-to-talk: only user_turn_commit (or clear) ends a turn; silence while holding is fine.
    if (this.#deps.settings.detection === "manual") {
      if (this.#manual === "idle") this.#dropUtterance();
      return;
    }
    const utterance = this.#utterance;
    // After a barge-in, an utterance that never produced a final was noise (a cough, a "hmm").
    const noise = this.#armedResume !== undefined && (utterance === undefined || !utterance.transcript.finalized);
    if (!noise && utterance !== undefined && this.#text(utterance) !== "") {
      this.#endTurn();
      return;
    }
    this.#dropUtterance();
    const quote = this.#armedResume;
    this.#armedResume = undefined;
    if (quote === undefined || this.busy) return;
    if (this.#resumes >= MAX_RESUMES_IN_A_ROW) {
      this.#deps.log.info({ resumes: this.#resumes }, "false interruption not resumed: limit reached");
      return;
    }
    this.#resumes += 1;
    this.#deps.log.info({ resumes: this.#resumes }, "false interruption resumed");
    this.#deps.count?.("false_interruption_resume");
    this.#enqueue({ kind: "resume", quote });
  }

  #dropUtterance(): void {
    const utterance = this.#utterance;
    this.#utterance = undefined;
    this.#endpointTimer?.cancel();
    this.#watchdog?.cancel();
    if (utterance?.announced === true && !utterance.held) this.#deps.emit({ type: "speech.stopped" });
  }

  #commitManual(): void {
    this.#manualTimer?.cancel();
    this.#manual = "idle";
    this.#endTurn();
  }

  /** The user's turn ended: commit its text (if any) and queue the reply. */
  #endTurn(): void {
    const utterance = this.#utterance;
    if (utterance === undefined) return;
    const text = this.#text(utterance);
    const endedAt = utterance.lastActivityAt;
    this.#release(utterance);
    this.#dropUtterance();
    if (text === "") return;
    this.#commitUser(text, endedAt, utterance.startedAt);
  }

  #commitUser(text: string, endedAt: number, startedAt = endedAt): void {
    const history = this.#deps.history;
    this.#armedResume = undefined;
    this.#resumes = 0;
    this.#nudges = 0;
    this.#nudgeTimer?.cancel();
    this.#deps.emit({ type: "user-transcript.committed", text });
    history.commit(history.epoch, { role: "user", text });
    this.#deps.activity();
    if (this.#continue(text, startedAt)) return;
    const input: TurnInput = { kind: "user", text, endedAt, committedAt: this.#deps.clock.now(), startedAt };
    const speculation = this.#speculation;
    this.#speculation = undefined;
    if (speculation !== undefined && sameWords(speculation.forText, text)) input.speculation = speculation;
    else speculation?.controller.abort(new Error("discarded"));
    this.#enqueue(input);
  }

  /**
   * The continuation window: an utterance that started soon after the previous turn was
   * committed, before the agent became audible, joins that turn; its reply (if started) is
   * cancelled and regenerated for the merged text.
   */
  #continue(text: string, startedAt: number): boolean {
    const window = this.#deps.settings.continuationWindowMs;
    if (window === 0) return false;
    const queued = this.#queue.findLast((i) => i.kind === "user");
    const reply = this.#reply;
    const previous = queued ?? (reply?.input?.kind === "user" && reply.firstAudioAt === undefined && !reply.interrupted ? reply.input : undefined);
    if (previous?.kind !== "user" || startedAt > previous.committedAt + window) return false;
    // Merged turns stay within one typed turn's bound; past it, this one queues as a turn of its own.
    if (previous.text.length + 1 + text.length > MAX_MERGED_TURN_CHARS) return false;
    previous.text = `${previous.text} ${text}`;
    previous.speculation?.controller.abort(new Error("merged"));
    delete previous.speculation;
    if (queued === undefined && reply !== undefined) {
      this.#deps.log.info({ reply: reply.id }, "continuation merged into the turn in flight");
      reply.superseded = true;
      this.#stopReply(reply);
      this.#deps.emit({ type: "reply.cancelled" });
      this.#queue.unshift(previous);
    }
    return true;
  }

  /** Start the LLM early on a confident interim; it speaks, runs tools or writes nothing until adopted. */
  #speculate(utterance: Utterance): void {
    if (!this.#deps.settings.preemptiveGeneration || this.busy || utterance.speculations >= MAX_PREEMPTS_PER_UTTERANCE) return;
    const text = this.#text(utterance);
    if (this.#speculation !== undefined && sameWords(this.#speculation.forText, text)) return;
    this.#speculation?.controller.abort(new Error("superseded"));
    utterance.speculations += 1;
    const controller = new AbortController();
    const prompt: ModelMessage[] = [...this.#deps.history.history, { role: "user", content: text }];
    this.#speculation = { forText: text, controller, result: this.#deps.reply.speculate(prompt, controller.signal) };
  }

  // ── replies ───────────────────────────────────────────────────────────────────────────

  #enqueue(input: TurnInput): void {
    if (this.#closed) return;
    this.#queue.push(input);
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (let input = this.#queue.shift(); input !== undefined && !this.#closed; input = this.#queue.shift()) {
        await this.#run(input);
      }
    } catch (error) {
      this.#deps.log.error({ err: error }, "voice loop failed");
    } finally {
      this.#pumping = false;
    }
  }

  #startReply(): ActiveReply {
    const now = this.#deps.clock.now();
    this.#playback.resetTimeline();
    const reply: ActiveReply = {
      id: `turn_${++this.#replyCount}`,
      epoch: this.#deps.history.epoch,
      controller: new AbortController(),
      startedAt: now,
      gateOpen: true,
      interrupted: false,
      modelText: "",
      modelAudioMs: 0,
      modelWords: [],
      shown: [],
      live: "",
      streams: new Set(),
      held: [],
      releaseAt: Math.max(now + this.#deps.settings.startSpeakingFloorMs, this.#holdUntil),
      deadAirBackoffMs: this.#deps.settings.deadAirCoverMs,
      deadAirLine: 0,
      idleWaiters: [],
      superseded: false,
    };
    this.#reply = reply;
    this.#armDeadAir(reply);
    return reply;
  }

  async #run(input: TurnInput): Promise<void> {
    const reply = this.#startReply();
    const { history } = this.#deps;
    if (input.kind === "say") {
      const done = this.#speak(reply, input.text, "model");
      reply.shown.push(input.text);
      this.#snapshot(reply);
      await done;
      if (!reply.interrupted) {
        this.#releaseHeld(reply, true);
        this.#deps.emit({ type: "audio.completed" });
        await this.#playedOut(reply);
      }
      if (!reply.interrupted && input.record) {
        history.commit(reply.epoch, { role: "assistant", text: input.text });
        history.append(reply.epoch, [{ role: "assistant", content: input.text }]);
      }
      this.#finish(reply, input.record ? input.text : "", { status: "spoken" });
      return;
    }
    if (!this.#deps.admitTurn()) {
      this.#endReply(reply);
      return;
    }
    reply.input = input;
    const stream = this.#openStream(reply, "model");
    const batcher = new SentenceBatcher((text) => {
      reply.modelText = joinSpoken([reply.modelText, text]);
      stream.push(text);
    });
    let firstTokenMs: number | undefined;
    const observer = {
      text: (delta: string) => {
        if (reply.firstTextAt === undefined) reply.firstTextAt = this.#deps.clock.now();
        reply.live += delta;
        this.#snapshot(reply);
        if (reply.gateOpen) batcher.push(delta);
      },
      toolCall: () => batcher.flush(),
      firstToken: (ms: number) => {
        firstTokenMs = ms;
      },
    };
    const result = await this.#reply_(reply, input, observer);
    batcher.flush();
    stream.end();
    // The prompt (user turn, resume or nudge) and the reply are recorded together when the reply settles.
    const prompt = promptFor(input, this.#deps.settings.nudge?.prompt);
    const timing = firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs };
    if (reply.superseded) {
      this.#endReply(reply);
      return;
    }
    if (result.status === "failed") {
      this.#deps.log.warn({ err: result.error }, "llm failed");
      this.#deps.emit({ type: "error.reported", code: "llm", message: `the model failed: ${messageOf(result.error)}`, fatal: false });
      if (reply.epoch === history.epoch) history.append(reply.epoch, [...prompt, ...result.messages]);
      await this.#drain(reply);
      const phrase = this.#deps.settings.errorPhrase;
      const spoken = this.#speak(reply, phrase, "filler");
      reply.shown = [phrase];
      reply.live = "";
      this.#snapshot(reply);
      await spoken;
      if (!reply.interrupted) {
        this.#releaseHeld(reply, true);
        this.#deps.emit({ type: "audio.completed" });
        await this.#playedOut(reply);
      }
      this.#finish(reply, phrase, { status: "failed", usage: result.usage, ...timing }, input, firstTokenMs);
      return;
    }
    await this.#drain(reply);
    if (!reply.interrupted && result.status === "completed") {
      this.#releaseHeld(reply, true);
      this.#deps.emit({ type: "audio.completed" });
      // A reply is recorded once it has been heard: until its audio has played it can still be interrupted.
      await this.#playedOut(reply);
    }
    if (reply.epoch !== history.epoch || reply.superseded) {
      this.#endReply(reply);
      return;
    }
    if (reply.interrupted || result.status === "cancelled") {
      const heard = heardOf({ text: reply.modelText, kind: "model", audioMs: reply.modelAudioMs, startMs: 0, words: reply.modelWords }, this.#heardMs(reply));
      history.append(reply.epoch, [...prompt, ...recordHeard(result.messages, result.partialText, countWords(heard))]);
      this.#deps.replySettled({ status: "cancelled", usage: result.usage, ...timing });
      this.#emitMetrics(reply, input, firstTokenMs);
      this.#endReply(reply);
      return;
    }
    history.append(reply.epoch, [...prompt, ...result.messages]);
    if (result.text !== "") history.commit(reply.epoch, { role: "assistant", text: result.text });
    this.#finish(reply, result.text, { status: "completed", usage: result.usage, ...timing }, input, firstTokenMs);
  }

  /** The model's reply: an adopted speculation (its text, spoken now), or one streamed now. */
  async #reply_(reply: ActiveReply, input: TurnInput, observer: ReplyObserver): Promise<ReplyResult> {
    const prompt = promptFor(input, this.#deps.settings.nudge?.prompt);
    const messages = [...this.#deps.history.history, ...prompt];
    if (input.kind === "user" && input.speculation !== undefined) {
      const speculation = await input.speculation.result;
      if (speculation.usable && !reply.interrupted && !reply.superseded) {
        this.#deps.log.debug({ reply: reply.id }, "preemptive reply adopted");
        observer.firstToken?.(0);
        observer.text?.(speculation.text);
        return { status: "completed", messages: [{ role: "assistant", content: speculation.text }], text: speculation.text.trim(), usage: speculation.usage };
      }
      this.#deps.log.debug({ reply: reply.id }, "preemptive reply discarded");
    }
    return this.#deps.reply.run(messages, reply.controller.signal, observer, () => reply.interrupted || reply.superseded);
  }

  /** Heard ms of the reply's model stream (the latch at barge-in, or now). */
  #heardMs(reply: ActiveReply): number {
    return reply.heardLatch ?? this.#playback.heardModelMs(EAR_LAG_MS);
  }

  /** Wait until the reply's audio has played at the client (or the reply was interrupted). */
  async #playedOut(reply: ActiveReply): Promise<void> {
    while (!reply.interrupted && !this.#closed && this.#playback.pendingMs > 0) {
      await this.#deps.clock.sleep(Math.min(this.#playback.pendingMs, 250), reply.controller.signal).catch(() => {});
    }
  }

  /** Wait until every stream of the reply is done (or cancelled). */
  async #drain(reply: ActiveReply): Promise<void> {
    while (reply.streams.size > 0 && !this.#closed) {
      await new Promise<void>((resolve) => reply.idleWaiters.push(resolve));
    }
  }

  #wakeIdle(reply: ActiveReply): void {
    if (reply.streams.size > 0) return;
    for (const wake of reply.idleWaiters.splice(0)) wake();
  }

  #finish(
    reply: ActiveReply,
    text: string,
    info: Parameters<VoiceLoopDeps["replySettled"]>[0],
    input?: TurnInput,
    firstTokenMs?: number,
  ): void {
    if (reply.interrupted || reply.epoch !== this.#deps.history.epoch) {
      this.#endReply(reply);
      return;
    }
    if (text !== "") this.#deps.emit({ type: "agent-transcript.committed", text });
    this.#deps.emit({ type: "reply.completed" });
    this.#deps.replySettled(info);
    if (input !== undefined) this.#emitMetrics(reply, input, firstTokenMs);
    this.#endReply(reply);
    this.#armNudge();
  }

  #emitMetrics(reply: ActiveReply, input: TurnInput, firstTokenMs: number | undefined): void {
    const metrics: { endpointMs?: number; llmFirstTokenMs?: number; ttsFirstAudioMs?: number; voiceToVoiceMs?: number } = {};
    if (input.kind === "user") metrics.endpointMs = Math.max(0, input.committedAt - input.endedAt);
    if (firstTokenMs !== undefined) metrics.llmFirstTokenMs = firstTokenMs;
    if (reply.firstAudioAt !== undefined && reply.firstTextAt !== undefined) metrics.ttsFirstAudioMs = Math.max(0, reply.firstAudioAt - reply.firstTextAt);
    // Voice-to-voice at the listener: when the reply's first audio played there (client reports, carrier marks), not when it left.
    const heardAt = this.#playback.startedAt ?? reply.firstAudioAt;
    if (reply.firstAudioAt !== undefined && heardAt !== undefined && input.kind === "user") metrics.voiceToVoiceMs = Math.max(0, heardAt - input.endedAt);
    this.#deps.emit({ type: "metrics.turn", turnId: reply.id, ...metrics });
  }

  #endReply(reply: ActiveReply): void {
    reply.deadAirTimer?.cancel();
    reply.releaseTimer?.cancel();
    if (this.#reply === reply) this.#reply = undefined;
    const utterance = this.#utterance;
    if (utterance !== undefined && utterance.held && !this.#agentAudible()) this.#release(utterance);
  }

  #snapshot(reply: ActiveReply): void {
    if (!reply.gateOpen) return;
    this.#deps.emit({ type: "agent-transcript.updated", text: joinSpoken([...reply.shown, reply.live]) });
  }

  // ── speech out ────────────────────────────────────────────────────────────────────────

  #openStream(reply: ActiveReply, kind: "model" | "filler"): TtsStream {
    const ref: { stream?: TtsStream } = {};
    const settle = (): void => {
      if (ref.stream !== undefined) reply.streams.delete(ref.stream);
      this.#wakeIdle(reply);
    };
    const stream = this.#deps.tts.stream({
      audio: (pcm) => this.#out(reply, pcm, durationMs(pcm.byteLength, this.#deps.tts.sampleRate), kind),
      words: (timings) => {
        if (kind === "model") reply.modelWords.push(...timings);
      },
      done: settle,
      error: (error) => {
        this.#deps.log.warn({ err: error }, "tts stream failed");
        this.#deps.emit({ type: "error.reported", code: "tts", message: `speech synthesis failed: ${error.message}`, fatal: false });
        settle();
      },
    });
    ref.stream = stream;
    reply.streams.add(stream);
    return stream;
  }

  /** Speak a whole line on its own stream; resolves when its audio is all out (or cancelled). */
  #speak(reply: ActiveReply, text: string, kind: "model" | "filler"): Promise<void> {
    const stream = this.#openStream(reply, kind);
    if (kind === "model") reply.modelText = joinSpoken([reply.modelText, text]);
    stream.push(text);
    stream.end();
    return this.#drain(reply);
  }

  /** TTS audio → the gate → (held for the floor/backoff) → the client. */
  #out(reply: ActiveReply, pcm: Uint8Array, ms: number, kind: "model" | "filler"): void {
    if (!reply.gateOpen || this.#reply !== reply) return;
    const now = this.#deps.clock.now();
    if (now < reply.releaseAt || reply.held.length > 0) {
      reply.held.push({ pcm, ms, kind });
      reply.releaseTimer ??= this.#deps.clock.setTimeout(() => this.#releaseHeld(reply, false), reply.releaseAt - now);
      return;
    }
    this.#send(reply, pcm, ms, kind);
  }

  #releaseHeld(reply: ActiveReply, force: boolean): void {
    if (!force && this.#deps.clock.now() < reply.releaseAt) return;
    const held = reply.held.splice(0);
    for (const chunk of held) this.#send(reply, chunk.pcm, chunk.ms, chunk.kind);
  }

  #send(reply: ActiveReply, pcm: Uint8Array, ms: number, kind: "model" | "filler"): void {
    if (!reply.gateOpen) return;
    if (kind === "model") reply.firstAudioAt ??= this.#deps.clock.now();
    if (kind === "model") reply.modelAudioMs += ms;
    this.#playback.queued(ms, kind);
    this.#deps.audio(pcm, ms);
    this.#armDeadAir(reply);
  }

  #agentAudible(): boolean {
    return this.#playback.modelAudible;
  }

  /** Barge-in (or cancel), in order: latch heard, close the gate, cancel TTS, clear the pacer, `reply.cancelled`. */
  #interrupt(reply: ActiveReply, bargeIn: boolean): void {
    reply.heardLatch = this.#playback.heardModelMs(EAR_LAG_MS);
    const heard = heardOf({ text: reply.modelText, kind: "model", audioMs: reply.modelAudioMs, startMs: 0, words: reply.modelWords }, reply.heardLatch);
    reply.interrupted = true;
    this.#stopReply(reply, !this.#deps.toolsRunning());
    this.#deps.emit({ type: "reply.cancelled" });
    this.#playback.cleared();
    if (bargeIn) {
      this.#deps.log.info({ reply: reply.id, heard: heard.length }, "barge-in");
      this.#deps.count?.("barge_in");
      this.#holdUntil = this.#deps.clock.now() + this.#deps.settings.interruption.backoffMs;
      if (this.#deps.settings.interruption.resumeFalseInterruption && heard !== "") this.#armedResume = heard.slice(-RESUME_QUOTE_CHARS);
      const utterance = this.#utterance;
      if (utterance !== undefined) {
        this.#release(utterance);
        this.#deps.emit({ type: "user-transcript.updated", text: this.#text(utterance) });
      }
    }
  }

  /** Close the gate and cancel every stream; abort the LLM unless tools must finish first. */
  #stopReply(reply: ActiveReply, abort = true): void {
    reply.gateOpen = false;
    reply.held = [];
    reply.deadAirTimer?.cancel();
    reply.releaseTimer?.cancel();
    for (const stream of reply.streams) stream.cancel();
    reply.streams.clear();
    this.#wakeIdle(reply);
    if (abort) reply.controller.abort(new Error("interrupted"));
  }

  #clearOutput(): void {
    this.#deps.emit({ type: "reply.cancelled" });
    this.#playback.cleared();
  }

  // ── silence ───────────────────────────────────────────────────────────────────────────

  /** Dead air inside a turn: after `deadAirCoverMs` of measured silence, a declarative filler. */
  #armDeadAir(reply: ActiveReply): void {
    const cover = this.#deps.settings.deadAirCoverMs;
    reply.deadAirTimer?.cancel();
    if (cover === 0 || !reply.gateOpen) return;
    reply.deadAirTimer = this.#deps.clock.setTimeout(() => {
      if (this.#reply !== reply || !reply.gateOpen) return;
      const quiet = this.#playback.pendingMs === 0 && reply.held.length === 0;
      if (!quiet || this.userSpeaking || this.#deps.toolCovering()) {
        this.#armDeadAir(reply);
        return;
      }
      const line = DEAD_AIR_LINES[Math.min(reply.deadAirLine, DEAD_AIR_LINES.length - 1)] ?? "I'm still on it.";
      reply.deadAirLine += 1;
      reply.deadAirBackoffMs = Math.min(reply.deadAirBackoffMs * 2, MAX_DEAD_AIR_BACKOFF_MS);
      this.#deps.log.debug({ line }, "dead air covered");
      void this.#speak(reply, line, "filler");
    }, this.#playback.pendingMs + reply.deadAirBackoffMs);
  }

  /** Between turns: after `nudge.afterMs` of silence with nothing in flight, ask the model to check in. */
  #armNudge(): void {
    const nudge = this.#deps.settings.nudge;
    this.#nudgeTimer?.cancel();
    if (nudge === undefined || this.#closed) return;
    this.#nudgeTimer = this.#deps.clock.setTimeout(() => {
      if (this.busy || this.userSpeaking || this.#playback.pendingMs > 0) {
        this.#armNudge();
        return;
      }
      if (this.#nudges >= MAX_NUDGES_IN_A_ROW) return;
      this.#nudges += 1;
      this.#enqueue({ kind: "nudge" });
    }, this.#playback.pendingMs + nudge.afterMs);
  }
}
