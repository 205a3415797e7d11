/**
 * Realtime's input audio buffer over the gateway's turn-taking (docs/realtime.md "Turns"): the
 * appended-audio clock (`audio_start_ms`, `audio_end_ms`, counted in each append's own format),
 * the user's spoken item from the session's `speech.started` to its committed transcript, and —
 * for an agent that takes push-to-talk turns (`turn_detection: null`) — `input_audio_buffer.commit`
 * and `clear` as the session's `user_turn_*` commands (manual-turns.ts). Pure: events go out
 * through the hooks; what the session must do comes back.
 */
import { audioFormatOf, realtimeAudioMs, type RealtimeAudioFormat } from "./audio-format.js";
import type { SessionInput } from "./binding.js";
import { commitEmptyMessage, ManualTurns } from "./manual-turns.js";
import type { SessionCommand } from "../transport/protocol.js";
import * as server from "./server-events.js";
import { appendedText } from "./text-deltas.js";
import type { RealtimeServerEvent } from "./server-events.js";

export interface InputBufferHooks {
  readonly send: (event: RealtimeServerEvent) => void;
  readonly eventId: () => string;
  readonly itemId: () => string;
  /** Put item `id` next in the conversation: the item before it. */
  readonly place: (id: string) => string | null;
  /** The agent takes push-to-talk turns (and the client makes them). */
  readonly pushToTalk: () => boolean;
}

/** A refusal of the client event (nothing applied). */
export interface InputRefusal {
  readonly code: string;
  readonly message: string;
  readonly param?: string;
}

/** The user's spoken item; `previous`: its place, once the client committed it (push-to-talk); `sent`: its interim transcript sent as deltas. */
interface Speech {
  readonly id: string;
  readonly startMs: number;
  endMs?: number;
  previous?: string | null;
  sent: string;
}

/** A spoken turn the session committed: its item, its place, and the seconds of audio it spans. */
export interface CommittedSpeech {
  readonly id: string;
  readonly previous: string | null;
  readonly seconds: number;
}

const inputs = (commands: readonly SessionCommand[]): SessionInput[] => commands.map((command) => ({ kind: "command", command }));

export class InputAudioBuffer {
  readonly #hooks: InputBufferHooks;
  readonly #manual = new ManualTurns();
  /** Ms of audio the client has appended. */
  #ms = 0;
  /** The user's item now being spoken: since the session's `speech.started`, or (push-to-talk) since the append that opened the turn. */
  #speech: Speech | undefined;
  /**
   * Push-to-talk: the turn the client committed, until the session commits its transcript (the
   * STT's final, at most 1.5 s on; docs/protocol.md). One at a time: a turn the session committed
   * nothing for (nothing heard) is dropped at the next commit.
   */
  #committed: Speech | undefined;

  constructor(hooks: InputBufferHooks) {
    this.#hooks = hooks;
  }

  /** `input_audio_buffer.append` in `format`: what the session gets (a push-to-talk turn's start, then the audio). */
  append(audio: Uint8Array, format: RealtimeAudioFormat): SessionInput[] | InputRefusal {
    if (audioFormatOf(format).encoding === "pcm16" && audio.byteLength % 2 !== 0) {
      return { code: "invalid_value", message: "input_audio_buffer.append: audio: PCM16 audio has an even number of bytes", param: "audio" };
    }
    const ms = realtimeAudioMs(audio.byteLength, format);
    const start = this.#hooks.pushToTalk() ? this.#manual.append(ms) : [];
    if (start.length > 0) this.#speech = { id: this.#hooks.itemId(), startMs: this.#ms, sent: "" };
    this.#ms += ms;
    return [...inputs(start), { kind: "audio", chunk: audio }];
  }

  /** `input_audio_buffer.commit` (push-to-talk): `committed` now, the item placed; its transcript when the session commits the turn. */
  commit(): SessionInput[] | InputRefusal {
    const turn = this.#manual.commit();
    if ("tooLittle" in turn) return { code: "input_audio_buffer_commit_empty", message: commitEmptyMessage(turn.tooLittle) };
    const speech: Speech = this.#speech ?? { id: this.#hooks.itemId(), startMs: this.#ms - turn.ms, sent: "" };
    this.#speech = undefined;
    speech.endMs = this.#ms;
    speech.previous = this.#hooks.place(speech.id);
    this.#committed = speech;
    this.#hooks.send(server.audioCommitted(this.#hooks.eventId(), speech.id, speech.previous));
    return inputs([turn.command]);
  }

  /** `input_audio_buffer.clear` (push-to-talk): the open turn discarded. */
  clear(): SessionInput[] {
    const commands = this.#manual.clear();
    this.#speech = undefined;
    this.#hooks.send(server.audioCleared(this.#hooks.eventId()));
    return inputs(commands);
  }

  /** The session heard the user start. Push-to-talk: nothing (the append opened the item; no VAD events: a Realtime client stops its playback at `speech_started`). */
  speechStarted(): void {
    if (this.#hooks.pushToTalk()) return;
    const id = this.#hooks.itemId();
    this.#speech = { id, startMs: this.#ms, sent: "" };
    this.#hooks.send(server.speechStarted(this.#hooks.eventId(), id, this.#ms));
  }

  speechStopped(): void {
    const speech = this.#speech;
    if (speech === undefined || this.#hooks.pushToTalk()) return;
    speech.endMs = this.#ms;
    this.#hooks.send(server.speechStopped(this.#hooks.eventId(), speech.id, this.#ms));
  }

  /**
   * The STT's caption of the utterance (`user-transcript.updated`): what it adds, as a delta of the
   * item being spoken — with push-to-talk, the committed turn's until its final, else the open one's.
   */
  caption(text: string): void {
    const speech = this.#committed ?? this.#speech;
    const delta = speech === undefined ? undefined : appendedText(speech.sent, text);
    if (speech === undefined || delta === undefined || delta === "") return;
    speech.sent += delta;
    this.#hooks.send(server.transcriptionDelta(this.#hooks.eventId(), speech.id, delta));
  }

  /** The session committed the user's spoken turn: `committed` unless the client's commit sent it. */
  committed(): CommittedSpeech {
    const placed = this.#committed;
    this.#committed = undefined;
    if (placed?.previous !== undefined) return { id: placed.id, previous: placed.previous, seconds: seconds(placed, this.#ms) };
    // Not the client's commit: the agent's turn-taking, or (push-to-talk) the session's own speech-idle watchdog or userTurnLimit; the next append opens another turn.
    const speech = this.#speech;
    this.#speech = undefined;
    this.#manual.committedBySession();
    const id = speech?.id ?? this.#hooks.itemId();
    const previous = this.#hooks.place(id);
    this.#hooks.send(server.audioCommitted(this.#hooks.eventId(), id, previous));
    return { id, previous, seconds: speech === undefined ? 0 : seconds(speech, this.#ms) };
  }
}

/** The seconds of audio an item spans (to its end, or to now while it lasts). */
function seconds(speech: Speech, nowMs: number): number {
  return ((speech.endMs ?? nowMs) - speech.startMs) / 1000;
}
