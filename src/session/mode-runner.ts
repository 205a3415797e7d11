import type { AudioPayload } from "../audio/audio-payload.js";
import type { Clock } from "../clock.js";
import type { GatewayError } from "../errors.js";
import type { Logger } from "../log.js";
import type { EventBody, TranscriptSnapshot } from "../events.js";
import type { OutOfBandAsk, OutOfBandSink } from "../transport/protocol.js";
import type { AgentNote } from "../turn/agent-note.js";
import type { Guardrails } from "../turn/guardrails.js";
import type { TurnLedger } from "../turn/ledger.js";
import type { Conversation } from "./conversation.js";
import type { MetricCount } from "./metrics-port.js";
import type { ToolLine } from "./tool-runner.js";

/** How one mode runs turns: text (typed turns, shown replies) or voice (pipeline). */
export interface ModeRunner {
  /** Speak or show the greeting, recorded as the agent's. */
  greet(text: string): void;
  /** A typed turn (`user_text`), allowed in every mode. */
  userText(text: string): void;
  /** The client's `cancel`: answers `reply.cancelled`. */
  cancel(): void;
  /** Strand everything in flight before a reset (answers `reply.cancelled`). */
  strand(): void;
  /** The listener's audio: bytes, or a carrier's base64 text not yet decoded (`ConnectionHandler.audio`). */
  audio(chunk: AudioPayload): void;
  playbackProgress(bufferedMs: number): void;
  /**
   * The listener stopped playing the latest reply at `audioMs` of its audio (a Realtime client's
   * `conversation.item.truncate`): what is recorded of it as heard is cut to that, never lengthened
   * (turn/heard-correction.ts). Voice modes only.
   */
  truncateHeard?(audioMs: number): void;
  /**
   * A response that does not touch the conversation (a Realtime client's `response.create` with
   * `conversation: "none"`): the agent's model, no tools, text to `sink` (session/out-of-band.ts).
   * Modes whose model the gateway calls (text, pipeline); not s2s, whose service holds the conversation.
   */
  outOfBand?(ask: OutOfBandAsk, sink: OutOfBandSink): void;
  manual(command: "start" | "commit" | "clear"): void;
  /** A tool's start or delayed line. */
  toolLine(line: ToolLine): void;
  /** The user is speaking (filler is skipped meanwhile). */
  readonly userSpeaking: boolean;
  /** A reply or a queued turn is in flight. */
  readonly busy: boolean;
  /** User turns waiting behind the reply in flight (not counting it): the session refuses typed turns past MAX_QUEUED_TURNS. */
  readonly queuedTurns: number;
  close(): Promise<void>;
  /** `note` can reach the model (false: an s2s service without `S2sSession.note`). */
  readonly takesNotes: boolean;
  /**
   * A note from the gateway (a workflow run ended): into the model's context, then one reply of
   * the agent's own, recorded like any. The caller asks for the moment (session/workflow-notes.ts:
   * nobody speaking, nothing in flight). False when it could not be given now (try again later).
   */
  note(note: AgentNote): boolean;
  /**
   * Pipeline only: while a listener is set, the caller's speech is transcribed for it and for
   * nothing else — no turn, no barge-in, no reply (a call screened for an answering machine,
   * session/voicemail-screen.ts). Undefined releases it. Modes without it (s2s, text) are screened
   * by the session withholding the caller's audio instead.
   */
  holdTurns?(listener: TranscriptListener | undefined): void;
}

/** What the STT heard while turns are held (`ModeRunner.holdTurns`). */
export interface TranscriptListener {
  speech(): void;
  partial(text: string): void;
  final(text: string, endOfTurn: boolean): void;
}

/** What a runner gets from its session. */
export interface RunnerContext {
  readonly conversation: Conversation;
  readonly clock: Clock;
  readonly log: Logger;
  emit(event: EventBody): void;
  /** Someone takes this snapshot: build it only then (a phone line without recording or observers takes none). */
  wants(type: TranscriptSnapshot): boolean;
  /** Conversational activity (re-arms the idle timer). */
  activity(): void;
  /** Before a model reply: false when the session's usage limit ends it instead. */
  admitTurn(): boolean;
  /** A failure that ends the session (reported once, then the socket closes). */
  fatal(error: GatewayError): void;
  /** The session's turn record: every runner commits lines and settles replies through it. */
  readonly ledger: TurnLedger;
  /** The agent's input and output guardrails: every runner checks caller turns and agent words through them. */
  readonly guardrails: Guardrails;
  /** Counts for metrics: a barge-in, a falsely interrupted reply resumed, a provider socket replaced. */
  count(what: MetricCount): void;
  /** Caller audio a provider link dropped by its backlog policy (bytes), reported at close. */
  audioDropped(where: "stt" | "s2s", bytes: number): void;
}
