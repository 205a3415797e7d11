/**
 * Push-to-talk over `/v1/realtime` (docs/realtime.md "Turns"): Realtime's `turn_detection: null`
 * with `input_audio_buffer.commit` / `clear`, mapped onto the session's own push-to-talk
 * (`user_turn_start` / `user_turn_commit` / `user_turn_clear`, docs/protocol.md), which a pipeline
 * agent with `turnTaking.detection: "manual"` honours. The input buffer opens with the first
 * append after a commit or clear (or the first of the session) — that append starts the turn —
 * and a commit needs at least `MIN_COMMIT_MS` of audio in it, as the Realtime API's does. Pure.
 */
import type { SessionCommand } from "../transport/protocol.js";

/** The least audio a commit takes (ms): the Realtime API refuses less with `input_audio_buffer_commit_empty`. */
export const MIN_COMMIT_MS = 100;

/** The Realtime API's refusal of a commit with too little audio (its code and message). */
export function commitEmptyMessage(ms: number): string {
  return `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${ms.toFixed(2)}ms of audio.`;
}

export class ManualTurns {
  /** Ms of audio appended since the buffer opened; undefined while it is closed (no turn open). */
  #ms: number | undefined;

  /** Audio appended (`ms` of it): the commands that go before it (the turn's start when the buffer was closed). */
  append(ms: number): SessionCommand[] {
    const opened = this.#ms === undefined;
    this.#ms = (this.#ms ?? 0) + ms;
    return opened ? [{ type: "user_turn_start" }] : [];
  }

  /** `input_audio_buffer.commit`: the command and the turn's ms, or the ms in the buffer when that is too little (the buffer stays open). */
  commit(): { readonly command: SessionCommand; readonly ms: number } | { readonly tooLittle: number } {
    const ms = this.#ms ?? 0;
    if (ms < MIN_COMMIT_MS) return { tooLittle: ms };
    this.#ms = undefined;
    return { command: { type: "user_turn_commit" }, ms };
  }

  /** `input_audio_buffer.clear`: the command when a turn was open (nothing to discard otherwise). */
  clear(): SessionCommand[] {
    const open = this.#ms !== undefined;
    this.#ms = undefined;
    return open ? [{ type: "user_turn_clear" }] : [];
  }

  /** The session committed the turn itself (its speech-idle watchdog or `userTurnLimit`): the next append opens a new one. */
  committedBySession(): void {
    this.#ms = undefined;
  }
}
