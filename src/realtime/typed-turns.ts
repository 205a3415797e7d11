/**
 * Typed user messages on their way to the session (docs/realtime.md "Typed turns"): the messages
 * `conversation.item.create` added and `response.create` has not sent yet, and the turns sent whose
 * `user-transcript.committed` is still to come (their items were shown at creation).
 */
import { MAX_USER_TEXT_CHARS } from "../transport/protocol.js";

/** Typed user messages waiting for `response.create`: at most this many, and `MAX_USER_TEXT_CHARS` in all. */
export const MAX_PENDING_ITEMS = 8;

export class TypedTurns {
  /** Messages created and not yet answered (`response.create` sends them as one turn). */
  readonly #pending: string[] = [];
  /** Turns handed to the session, in order, whose commit is still to come. */
  readonly #sent: string[] = [];

  /** Room for one more message of `text`, or the refusal's message. */
  refusal(text: string): string | undefined {
    const chars = this.#pending.reduce((sum, pending) => sum + pending.length, text.length);
    if (this.#pending.length < MAX_PENDING_ITEMS && chars <= MAX_USER_TEXT_CHARS) return undefined;
    return `conversation.item.create: at most ${MAX_PENDING_ITEMS} messages and ${MAX_USER_TEXT_CHARS} characters wait for response.create: send response.create first`;
  }

  add(text: string): void {
    this.#pending.push(text);
  }

  /** The messages waiting, as one turn (joined with newlines), now sent; undefined when none wait. */
  take(): string | undefined {
    if (this.#pending.length === 0) return undefined;
    const text = this.#pending.join("\n");
    this.#pending.length = 0;
    this.#sent.push(text);
    return text;
  }

  /** Sent turns are still to be answered. */
  get queued(): boolean {
    return this.#sent.length > 0;
  }

  /** The session dropped the turns it had queued (`cancel`, `reset`). */
  dropQueued(): void {
    this.#sent.length = 0;
  }

  /** A committed user turn: true when it is the next typed one (its item was shown already). */
  committed(text: string): boolean {
    if (this.#sent[0] !== text) return false;
    this.#sent.shift();
    return true;
  }
}
