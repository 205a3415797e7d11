import type { ModelMessage } from "ai";
import { spread } from "../spread.js";

/**
 * A listener's own word on where it stopped playing a reply: `conversation.item.truncate`'s
 * `audio_end_ms` on `/v1/realtime` (docs/realtime.md "Semantics", "Truncating a reply"). The
 * gateway records what it estimates was heard (the playback clock, the heard cursor); a client
 * that stopped playback earlier than that estimate makes the reply's record shorter still, so the
 * model's context holds only what the listener heard. Only ever shorter: a client never makes the
 * record claim more than the gateway's own estimate.
 *
 * The order at a barge-in: the session cancels the reply and records the estimate's heard prefix
 * as soon as the model stream has stopped, which is before the client (told by `speech_started`)
 * stops playback and sends its truncate. So a truncate usually corrects a record already written
 * (`recorded`), and one that comes while the reply still plays caps the record it will write.
 */

/** A reply's record as written to the history, and how to write it again cut after fewer words of model text. */
export interface HeardRecord {
  /** The conversation's epoch it was written in (a reset since makes a correction moot). */
  readonly epoch: number;
  /** The messages appended for it: the very objects, found again by identity (`Conversation.replace`). */
  readonly messages: readonly ModelMessage[];
  /** Words of model text the record holds. */
  readonly words: number;
  /** The record cut after `words` words (the prompt kept, `[interrupted]` after the last word heard). */
  readonly rebuild: (words: number) => ModelMessage[];
}

/** What a truncate did: cut the record (or the cap of one to come), or nothing (the record holds no more than that already). */
export type HeardOutcome = "corrected" | "capped" | "unchanged";

/** Writes a corrected record over the old one; false when the epoch is stale or the old one was trimmed away (`TurnLedger.correct`). */
export type CorrectRecord = (epoch: number, recorded: readonly ModelMessage[], next: readonly ModelMessage[]) => boolean;

/**
 * One spoken reply's heard record under a listener's truncates. `wordsAt(audioMs)`: words of the
 * reply's model text heard within the first `audioMs` of its audio as the listener received it
 * (tool lines and filler included: the playback clock's timeline, then the heard cursor).
 */
export class ReplyHeard {
  readonly #wordsAt: (audioMs: number) => number;
  /** The listener stopped here (ms of the reply's audio) before the reply was recorded. */
  #capMs: number | undefined;
  #record: HeardRecord | undefined;
  /** `wordsAt` as it stood when the record was written. */
  #frozen: ((audioMs: number) => number) | undefined;

  constructor(wordsAt: (audioMs: number) => number) {
    this.#wordsAt = wordsAt;
  }

  /** Words to record, given the gateway's estimate: never more than the listener's cap allows. */
  limit(words: number): number {
    return this.#capMs === undefined ? words : Math.min(words, this.#wordsAt(this.#capMs));
  }

  /** The record was written. `wordsAt`: the reply's map frozen now (the next reply resets the live one). */
  recorded(record: HeardRecord, wordsAt?: (audioMs: number) => number): void {
    this.#record = record;
    if (wordsAt !== undefined) this.#frozen = wordsAt;
  }

  /** The listener stopped playing at `audioMs` of the reply's audio. */
  truncate(audioMs: number, correct: CorrectRecord): HeardOutcome {
    const record = this.#record;
    if (record === undefined) {
      this.#capMs = Math.min(this.#capMs ?? audioMs, audioMs);
      return "capped";
    }
    const words = (this.#frozen ?? this.#wordsAt)(audioMs);
    if (words >= record.words) return "unchanged";
    const next = record.rebuild(words);
    if (!correct(record.epoch, record.messages, next)) return "unchanged";
    this.#record = spread(record, { messages: next, words });
    return "corrected";
  }
}
