import type { ModelMessage } from "ai";
import type { TranscriptSnapshot } from "../events.js";
import { GuardedOutput } from "../turn/guarded-output.js";
import { ReplyHeard, type HeardOutcome } from "../turn/heard-correction.js";
import type { Guardrails } from "../turn/guardrails.js";
import type { TurnLatencies, TurnLedger } from "../turn/ledger.js";
import type { GuardrailVerdict } from "../manifest/index.js";
import { countWords } from "./barge-in.js";
import { fixedReply } from "./fixed-reply.js";
import { EAR_LAG_MS } from "./heard-cursor.js";
import { joinSpoken } from "./join-spoken.js";
import { recordHeard, recordReplaced } from "./record-heard.js";
import type { ReplyLoop, ReplyObserver, ReplyResult } from "./reply-loop.js";
import { ReplyGate, type ReplyGateDeps, type SpeechKind } from "./reply-gate.js";
import { SentenceBatcher } from "./sentence-batcher.js";
import { DeadAirCover } from "./silence.js";
import type { TtsStream } from "./tts-port.js";
import { promptFor, type TurnInput } from "./turn-input.js";
import type { VoiceSettings } from "./voice-settings.js";

/**
 * What a reply needs from the loop that runs it, one object for all its replies: its gate's ports
 * (reply-gate.ts; `current` and `sent` are about the reply they are handed), and the turn's.
 */
export interface VoiceReplyDeps extends Omit<ReplyGateDeps, "current" | "sent"> {
  /** False once another reply took the floor: late audio of `reply` is dropped. */
  readonly current: (reply: VoiceReply) => boolean;
  /** A chunk of `reply` left (its first model chunk makes the reply audible). */
  readonly sent: (reply: VoiceReply, kind: SpeechKind) => void;
  readonly settings: VoiceSettings;
  readonly model: ReplyLoop;
  readonly ledger: TurnLedger;
  /** The agent's output guardrails check the model's words before they go to TTS. */
  readonly guardrails: Guardrails;
  /** Before a model reply: false when the session's usage limit ends it instead. */
  readonly admitTurn: () => boolean;
  /** A tool with start/delayed lines is running (dead-air cover stands down). */
  readonly toolCovering: () => boolean;
  /** Tool calls still running (a barge-in, or an output guardrail's verdict, lets them finish). */
  readonly toolsRunning: () => boolean;
  readonly userSpeaking: () => boolean;
  /** The reply settled as heard: the silence between turns starts. */
  readonly settled: () => void;
  /** Someone takes this transcript snapshot (the client's link shows it, or an observer): otherwise it is not built. */
  readonly wants: (type: TranscriptSnapshot) => boolean;
}

/**
 * One reply of the pipeline, from the model's first token to its record: text streams to TTS in
 * sentence batches through its `ReplyGate`, `agent-transcript.updated` snapshots show model text
 * and tool lines, dead air is covered, and once its audio has played (or it was cut) the ledger
 * records what the caller heard. The coordinator interrupts it (`interrupt`) or supersedes it.
 * With output guardrails each batch waits for its check (`GuardedOutput`) before TTS and the
 * snapshots see it; a verdict ends the model's part and its replacement is spoken in its place.
 */
export class VoiceReply {
  readonly id: string;
  readonly epoch: number;
  /**
   * Stopped: its wait for playback ends (`stop` rechecks the playback clock's waits). A flag, not
   * an AbortController: its signal and listener were made and removed every reply
   * (docs/benchmarks.md, bench:pipeline-turn-counts).
   */
  #stopped = false;
  /**
   * The model call's signal: aborted with the reply (`stop`), or alone by an output guardrail's
   * verdict, the reply then going on to speak its replacement. One controller both abort, not
   * `AbortSignal.any` of two: that costs about 20 µs a reply on Node 20, on the path from the
   * caller's last word to the model request (docs/benchmarks.md, "Pipeline"). Made by the loop
   * before the reply starts (`constructor`).
   */
  readonly #model: AbortController;
  readonly gate: ReplyGate;
  readonly #deadAir: DeadAirCover;
  readonly #deps: VoiceReplyDeps;
  #interrupted = false;
  /** Replaced by a merged turn (continuation window): records nothing. */
  superseded = false;
  /** The user turn it answers, if any. */
  input: TurnInput | undefined;
  /** Shown lines before the live text (tool lines, earlier model text): the transcript snapshot. */
  #shown: string[] = [];
  /** Model text since the last shown line. */
  #live = "";
  #firstTextAt: number | undefined;
  /** Heard ms of the model stream, latched at the interruption. */
  #heardLatch: number | undefined;
  /** The model's words on their way to TTS, through the output guardrails. */
  #output: GuardedOutput | undefined;
  /** What the listener says it heard (`truncateHeard`): a cap before the record, a correction after. */
  readonly #heard = new ReplyHeard((audioMs) => countWords(this.gate.heard(this.#deps.playback.timeline()(audioMs))));

  /**
   * `releaseAt`: epoch ms before which its audio is held (the floor, or the backoff after a
   * barge-in). `model`: the controller of its model call, no other reply's.
   */
  constructor(deps: VoiceReplyDeps, releaseAt: number, model: AbortController) {
    this.#deps = deps;
    this.#model = model;
    this.id = deps.ledger.nextTurnId();
    this.epoch = deps.ledger.epoch;
    this.gate = new ReplyGate(
      {
        clock: deps.clock,
        log: deps.log,
        tts: deps.tts,
        playback: deps.playback,
        emit: deps.emit,
        audio: deps.audio,
        current: () => deps.current(this),
        closed: deps.closed,
        sent: (kind: SpeechKind) => {
          deps.sent(this, kind);
          this.#deadAir.arm();
        },
      },
      releaseAt,
    );
    this.#deadAir = new DeadAirCover(
      {
        clock: deps.clock,
        log: deps.log,
        active: () => deps.current(this) && this.gate.open,
        pendingMs: () => deps.playback.pendingMs,
        quiet: () => deps.playback.pendingMs === 0 && this.gate.empty,
        covered: () => deps.userSpeaking() || deps.toolCovering(),
        speak: (line) => void this.gate.speak(line, "filler"),
      },
      deps.settings.deadAirCoverMs,
    );
  }

  /** It holds the floor now: the dead-air wait starts. */
  started(): void {
    this.#deadAir.arm();
  }

  /** Barged in on or cancelled: what it records is what was heard. */
  get interrupted(): boolean {
    return this.#interrupted;
  }

  /** Latch what was heard, close the gate (aborting the model unless `abort` is false); returns the heard prefix. */
  interrupt(abort: boolean): string {
    this.#heardLatch = this.#deps.playback.heardModelMs(EAR_LAG_MS);
    this.#interrupted = true;
    this.stop(abort);
    return this.gate.heard(this.#heardLatch);
  }

  /** A reset: cut without a latch (nothing is recorded). */
  strand(): void {
    this.#interrupted = true;
    this.stop();
  }

  /** Close the gate and cancel every stream; abort the model unless tools must finish first. */
  stop(abort = true): void {
    this.#output?.stop();
    this.gate.close();
    this.#deadAir.cancel();
    if (abort) {
      this.#stopped = true;
      this.#model.abort(new Error("interrupted"));
      this.#deps.playback.recheck();
    }
  }

  /** The reply left the floor. */
  end(): void {
    this.#deadAir.cancel();
    this.gate.end();
  }

  /** A tool's start/delayed line, shown and spoken as filler. */
  filler(text: string): void {
    const speak = (): void => {
      if (!this.gate.open) return;
      if (this.#live.trim() !== "") this.#shown.push(this.#live);
      this.#live = "";
      this.#shown.push(text);
      this.#snapshot();
      void this.gate.speak(text, "filler");
    };
    // After the model text before the tool call, which may still be waiting for its check.
    if (this.#output === undefined) speak();
    else this.#output.after(speak);
  }

  async run(input: TurnInput): Promise<void> {
    if (input.kind === "say") return this.#say(input.text, input.record);
    if (!this.#deps.admitTurn()) return;
    this.input = input;
    // Opened once the model request is out, or at the first text if that comes sooner (an adopted speculation, a refusal's line).
    const stream = this.gate.deferredStream("model");
    const output = new GuardedOutput(this.#deps.guardrails, {
      release: (text) => {
        // Checked text is shown as it is released; unchecked, as it streams (below).
        if (output.checked) this.#showLive(text);
        this.gate.addModelText(text);
        stream.push(text);
      },
      tripped: (verdict) => this.#replace(verdict, stream),
    });
    this.#output = output;
    const batcher = new SentenceBatcher((text) => output.push(text));
    let firstTokenMs: number | undefined;
    const observer: ReplyObserver = {
      text: (delta: string) => {
        this.#firstTextAt ??= this.#deps.clock.now();
        if (!output.checked) this.#showLive(delta);
        if (this.gate.open) batcher.push(delta);
      },
      toolCall: () => batcher.flush(),
      firstToken: (ms: number) => {
        firstTokenMs = ms;
      },
      requested: () => stream.open(),
    };
    const result = await this.#generate(input, observer);
    batcher.flush();
    await output.settled();
    stream.end();
    if (this.superseded) return;
    // The prompt (user turn, resume or nudge) and the reply are recorded together when the reply settles.
    const prompt = promptFor(input, this.#deps.settings.nudge?.prompt);
    const settled = { usage: result.usage, ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }) };
    const { ledger } = this.#deps;
    const verdict = output.verdict;
    if (result.status === "failed" && verdict === undefined) {
      this.#deps.log.warn({ err: result.error }, "llm failed");
      ledger.modelFailed(result.error);
      ledger.append(this.epoch, [...prompt, ...result.messages]);
      await this.gate.drain();
      const phrase = this.#deps.settings.errorPhrase;
      const spoken = this.gate.speak(phrase, "filler");
      this.#shown = [phrase];
      this.#live = "";
      this.#snapshot();
      await spoken;
      await this.#played();
      if (this.#interrupted) return;
      if (ledger.settle(this.epoch, { status: "failed", text: phrase, record: false, ...settled, metrics: this.#metrics(input, firstTokenMs) })) this.#deps.settled();
      return;
    }
    // A reply an output guardrail cut said the words released before the verdict, then the replacement.
    const said =
      verdict === undefined
        ? { text: result.text, messages: result.messages, partialText: result.partialText }
        : { text: joinSpoken([output.released, verdict.replacement]), messages: recordReplaced(result.messages, result.partialText, countWords(output.released), verdict.replacement), partialText: undefined };
    const spoken = result.status === "completed" || verdict !== undefined;
    await this.gate.drain();
    // A reply is recorded once it has been heard: until its audio has played it can still be interrupted.
    if (spoken) await this.#played();
    if (this.epoch !== ledger.epoch || this.superseded) return;
    // What was heard: the estimate (the latch at a barge-in), never more than where the listener said it stopped.
    const rebuild = (words: number): ModelMessage[] => [...prompt, ...recordHeard(said.messages, said.partialText, words)];
    if (this.#interrupted || !spoken) {
      const words = this.#heard.limit(countWords(this.gate.heard(this.#heardLatch ?? this.#deps.playback.heardModelMs(EAR_LAG_MS))));
      const messages = rebuild(words);
      ledger.settle(this.epoch, { status: "cancelled", messages, ...settled, metrics: this.#metrics(input, firstTokenMs) });
      this.#recorded(messages, words, rebuild);
      return;
    }
    const whole = countWords(this.gate.heard(Number.MAX_SAFE_INTEGER));
    const words = this.#heard.limit(whole);
    const messages = words < whole ? rebuild(words) : [...prompt, ...said.messages];
    const recorded = ledger.settle(this.epoch, { status: "completed", text: said.text, messages, ...settled, metrics: this.#metrics(input, firstTokenMs) });
    this.#recorded(messages, words, rebuild);
    if (recorded) this.#deps.settled();
  }

  /**
   * The listener stopped playing this reply at `audioMs` of its audio (`conversation.item.truncate`
   * on `/v1/realtime`): its record holds no more than was heard by then (turn/heard-correction.ts).
   */
  truncateHeard(audioMs: number): HeardOutcome {
    return this.#heard.truncate(audioMs, (epoch, old, next) => this.#deps.ledger.correct(epoch, old, next));
  }

  /** The record is written: a later truncate corrects it, through the reply's timeline as it stands now. */
  #recorded(messages: readonly ModelMessage[], words: number, rebuild: (words: number) => ModelMessage[]): void {
    const timeline = this.#deps.playback.timeline();
    this.#heard.recorded({ epoch: this.epoch, messages, words, rebuild }, (audioMs) => countWords(this.gate.heard(timeline(audioMs))));
  }

  /** Show model text as part of the live snapshot. */
  #showLive(text: string): void {
    this.#live += text;
    this.#snapshot();
  }

  /**
   * An output guardrail refused the next batch: the model's part ends (aborted, unless tool calls
   * are running: those finish, as after a barge-in, and the reply stops after their step), and
   * the replacement is spoken on the model's stream, after what was released.
   */
  #replace(verdict: GuardrailVerdict, stream: TtsStream): void {
    if (!this.gate.open) return;
    if (!this.#deps.toolsRunning()) this.#model.abort(new Error("output guardrail"));
    this.#showLive(` ${verdict.replacement}`);
    this.gate.addModelText(verdict.replacement);
    stream.push(` ${verdict.replacement}`);
  }

  /** A fixed line (the greeting) spoken as the agent's reply; recorded once heard, unless `record` is off. */
  async #say(text: string, record: boolean): Promise<void> {
    const done = this.gate.speak(text, "model");
    this.#shown.push(text);
    this.#snapshot();
    await done;
    await this.#played();
    if (this.#interrupted) return;
    const line: ModelMessage[] = [{ role: "assistant", content: text }];
    const whole = countWords(text);
    const words = this.#heard.limit(whole);
    const messages = words < whole ? recordHeard(line, undefined, words) : line;
    const recorded = record ? { text, messages } : {};
    const settled = this.#deps.ledger.settle(this.epoch, { status: "spoken", ...recorded });
    if (record) this.#recorded(messages, words, (cut) => recordHeard(line, undefined, cut));
    if (settled) this.#deps.settled();
  }

  /** The model's reply: an adopted speculation (its text, spoken now), or one streamed now. */
  async #generate(input: TurnInput, observer: ReplyObserver): Promise<ReplyResult> {
    // A turn an input guardrail refused: its replacement answers it, and the model is not called.
    if (input.kind === "user" && input.refusal !== undefined) return fixedReply(input.refusal, observer);
    const prompt = promptFor(input, this.#deps.settings.nudge?.prompt);
    const messages = [...this.#deps.ledger.history, ...prompt];
    if (input.kind === "user" && input.speculation !== undefined) {
      const speculation = await input.speculation.result;
      if (speculation.usable && !this.#interrupted && !this.superseded) {
        this.#deps.log.debug({ reply: this.id }, "preemptive reply adopted");
        observer.firstToken?.(0);
        observer.text?.(speculation.text);
        return { status: "completed", messages: [{ role: "assistant", content: speculation.text }], text: speculation.text.trim(), usage: speculation.usage };
      }
      this.#deps.log.debug({ reply: this.id }, "preemptive reply discarded");
    }
    return this.#deps.model.run(messages, this.#model.signal, observer, () => this.#interrupted || this.superseded || this.#output?.verdict !== undefined);
  }

  /** All text is out: send what the floor still holds, `audio.completed`, then wait until the caller has heard it. */
  async #played(): Promise<void> {
    if (this.#interrupted) return;
    this.gate.flush();
    this.#deps.emit({ type: "audio.completed" });
    await this.#deps.playback.playedOut(() => this.#interrupted || this.#stopped || this.#deps.closed());
  }

  /** The turn's latency stages (docs/protocol.md `metrics.turn`), read when it settles. */
  #metrics(input: TurnInput, firstTokenMs: number | undefined): { readonly turnId: string } & TurnLatencies {
    const firstAudioAt = this.gate.firstAudioAt;
    // Voice-to-voice at the listener: when the reply's first audio played there (client reports, carrier marks), not when it left.
    const heardAt = this.#deps.playback.startedAt ?? firstAudioAt;
    return {
      turnId: this.id,
      ...(input.kind === "user" ? { endpointMs: Math.max(0, input.committedAt - input.endedAt) } : {}),
      ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }),
      ...(firstAudioAt !== undefined && this.#firstTextAt !== undefined ? { ttsFirstAudioMs: Math.max(0, firstAudioAt - this.#firstTextAt) } : {}),
      ...(firstAudioAt !== undefined && heardAt !== undefined && input.kind === "user" ? { voiceToVoiceMs: Math.max(0, heardAt - input.endedAt) } : {}),
    };
  }

  #snapshot(): void {
    if (!this.gate.open || !this.#deps.wants("agent-transcript.updated")) return;
    this.#deps.emit({ type: "agent-transcript.updated", text: joinSpoken([...this.#shown, this.#live]) });
  }
}
