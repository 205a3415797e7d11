import type { Clock } from "../clock.js";
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import type { TurnLatencies, TurnLedger } from "../turn/ledger.js";
import type { PlaybackClock } from "../turn/playback-clock.js";
import { countWords } from "./barge-in.js";
import { EAR_LAG_MS } from "./heard-cursor.js";
import { joinSpoken } from "./join-spoken.js";
import { recordHeard } from "./record-heard.js";
import type { ReplyLoop, ReplyObserver, ReplyResult } from "./reply-loop.js";
import { ReplyGate, type SpeechKind } from "./reply-gate.js";
import { SentenceBatcher } from "./sentence-batcher.js";
import { DeadAirCover } from "./silence.js";
import type { TtsSession } from "./tts-port.js";
import { promptFor, type TurnInput } from "./turn-input.js";
import type { VoiceSettings } from "./voice-settings.js";

/** What a reply needs from the loop that runs it. */
export interface VoiceReplyDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly settings: VoiceSettings;
  readonly model: ReplyLoop;
  readonly tts: TtsSession;
  readonly ledger: TurnLedger;
  readonly playback: PlaybackClock;
  readonly emit: (event: EventBody) => void;
  readonly audio: (pcm: Uint8Array, durationMs: number) => void;
  readonly admitTurn: () => boolean;
  readonly toolCovering: () => boolean;
  readonly userSpeaking: () => boolean;
  /** This reply still holds the floor (a newer one did not replace it). */
  readonly current: () => boolean;
  readonly closed: () => boolean;
  /** Audio of this reply left (the coordinator's state moves to speaking). */
  readonly sent: (kind: SpeechKind) => void;
  /** The reply settled as heard: the silence between turns starts. */
  readonly settled: () => void;
}

/**
 * One reply of the pipeline, from the model's first token to its record: text streams to TTS in
 * sentence batches through its `ReplyGate`, `agent-transcript.updated` snapshots show model text
 * and tool lines, dead air is covered, and once its audio has played (or it was cut) the ledger
 * records what the caller heard. The coordinator interrupts it (`interrupt`) or supersedes it.
 */
export class VoiceReply {
  readonly id: string;
  readonly epoch: number;
  readonly controller = new AbortController();
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

  /** `releaseAt`: epoch ms before which its audio is held (the floor, or the backoff after a barge-in). */
  constructor(deps: VoiceReplyDeps, releaseAt: number) {
    this.#deps = deps;
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
        current: deps.current,
        closed: deps.closed,
        sent: (kind) => {
          deps.sent(kind);
          this.#deadAir.arm();
        },
      },
      releaseAt,
    );
    this.#deadAir = new DeadAirCover(
      {
        clock: deps.clock,
        log: deps.log,
        active: () => deps.current() && this.gate.open,
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
    this.gate.close();
    this.#deadAir.cancel();
    if (abort) this.controller.abort(new Error("interrupted"));
  }

  /** The reply left the floor. */
  end(): void {
    this.#deadAir.cancel();
    this.gate.end();
  }

  /** A tool's start/delayed line, shown and spoken as filler. */
  filler(text: string): void {
    if (this.#live.trim() !== "") this.#shown.push(this.#live);
    this.#live = "";
    this.#shown.push(text);
    this.#snapshot();
    void this.gate.speak(text, "filler");
  }

  async run(input: TurnInput): Promise<void> {
    if (input.kind === "say") return this.#say(input.text, input.record);
    if (!this.#deps.admitTurn()) return;
    this.input = input;
    const stream = this.gate.stream("model");
    const batcher = new SentenceBatcher((text) => {
      this.gate.addModelText(text);
      stream.push(text);
    });
    let firstTokenMs: number | undefined;
    const observer: ReplyObserver = {
      text: (delta: string) => {
        this.#firstTextAt ??= this.#deps.clock.now();
        this.#live += delta;
        this.#snapshot();
        if (this.gate.open) batcher.push(delta);
      },
      toolCall: () => batcher.flush(),
      firstToken: (ms: number) => {
        firstTokenMs = ms;
      },
    };
    const result = await this.#generate(input, observer);
    batcher.flush();
    stream.end();
    if (this.superseded) return;
    // The prompt (user turn, resume or nudge) and the reply are recorded together when the reply settles.
    const prompt = promptFor(input, this.#deps.settings.nudge?.prompt);
    const settled = { usage: result.usage, ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }) };
    const { ledger } = this.#deps;
    if (result.status === "failed") {
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
    await this.gate.drain();
    // A reply is recorded once it has been heard: until its audio has played it can still be interrupted.
    if (result.status === "completed") await this.#played();
    if (this.epoch !== ledger.epoch || this.superseded) return;
    if (this.#interrupted || result.status === "cancelled") {
      const heard = this.gate.heard(this.#heardLatch ?? this.#deps.playback.heardModelMs(EAR_LAG_MS));
      const messages = [...prompt, ...recordHeard(result.messages, result.partialText, countWords(heard))];
      ledger.settle(this.epoch, { status: "cancelled", messages, ...settled, metrics: this.#metrics(input, firstTokenMs) });
      return;
    }
    if (ledger.settle(this.epoch, { status: "completed", text: result.text, messages: [...prompt, ...result.messages], ...settled, metrics: this.#metrics(input, firstTokenMs) })) {
      this.#deps.settled();
    }
  }

  /** A fixed line (the greeting) spoken as the agent's reply; recorded once heard, unless `record` is off. */
  async #say(text: string, record: boolean): Promise<void> {
    const done = this.gate.speak(text, "model");
    this.#shown.push(text);
    this.#snapshot();
    await done;
    await this.#played();
    if (this.#interrupted) return;
    const recorded = record ? { text, messages: [{ role: "assistant" as const, content: text }] } : {};
    if (this.#deps.ledger.settle(this.epoch, { status: "spoken", ...recorded })) this.#deps.settled();
  }

  /** The model's reply: an adopted speculation (its text, spoken now), or one streamed now. */
  async #generate(input: TurnInput, observer: ReplyObserver): Promise<ReplyResult> {
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
    return this.#deps.model.run(messages, this.controller.signal, observer, () => this.#interrupted || this.superseded);
  }

  /** All text is out: send what the floor still holds, `audio.completed`, then wait until the caller has heard it. */
  async #played(): Promise<void> {
    if (this.#interrupted) return;
    this.gate.flush();
    this.#deps.emit({ type: "audio.completed" });
    await this.#deps.playback.playedOut(this.controller.signal, () => this.#interrupted || this.#deps.closed());
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
    if (!this.gate.open) return;
    this.#deps.emit({ type: "agent-transcript.updated", text: joinSpoken([...this.#shown, this.#live]) });
  }
}
