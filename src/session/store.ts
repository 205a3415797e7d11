import type { ModelMessage } from "ai";
import { Deadline, type Clock } from "../clock.js";

/** One committed line of the conversation, as `history.restored` replays it. */
export interface TranscriptLine {
  readonly role: "user" | "assistant";
  readonly text: string;
  /** A caller turn an input guardrail refused (docs/config.md "Guardrails"); absent otherwise. */
  readonly refused?: true;
}

/** A tool call as `history.restored` reports it. */
export interface ToolCallRecord {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
  readonly result?: string;
  readonly isError?: boolean;
}

/**
 * What outlives a socket for the grace window: the server's own record of the conversation
 * (committed transcript lines and tool calls since the last reset) and the model history.
 */
export interface SessionRecord {
  readonly sessionId: string;
  readonly agent: string;
  readonly transcript: readonly TranscriptLine[];
  readonly toolCalls: readonly ToolCallRecord[];
  readonly history: readonly ModelMessage[];
  /** Each dialog's state, by dialog id, for the dialogs that moved (docs/config.md, "Dialogs"); absent when none did. */
  readonly dialogs?: Readonly<Record<string, string>>;
  /** The roster member speaking when the record was saved, by its path (`roster.billing`); absent when the served agent was (docs/config.md "12. Roster and hand-off"). */
  readonly speaking?: string;
  /** The hash of the session's resume key (resume-key.ts): resuming needs the key. Absent on records that cannot be resumed. */
  readonly resumeKeyHash?: string;
  readonly updatedAt: number;
}

/**
 * Where resume records live. The in-memory store is the embedded default; a shared store
 * (Redis) lets a client resume on another gateway instance.
 */
export interface SessionStore {
  /**
   * The store keeps records in this process and only reads their fields (never spreads or clones
   * them): it may be given the conversation's snapshot as it is, its lists made into arrays at
   * their first read, instead of a copy made at every save. Any other store gets plain objects.
   */
  readonly takesSnapshots?: boolean;
  load(sessionId: string): Promise<SessionRecord | undefined>;
  save(record: SessionRecord, ttlMs: number): Promise<void>;
  delete(sessionId: string): Promise<void>;
}

/** How long a record outlives its socket by default (ms). */
export const RESUME_GRACE_MS = 120_000;

/**
 * Most records the in-memory store holds (records). Each is bounded by the conversation's caps
 * (conversation.ts: well under 1 MB), so the store stays within a few GB even when clients open
 * and drop sessions faster than the resume grace expires them.
 */
export const MAX_STORED_RECORDS = 10_000;

export interface MemorySessionStoreOptions {
  /** Most records held; default MAX_STORED_RECORDS. */
  readonly maxRecords?: number;
}

/**
 * Records in this process, each expiring `ttlMs` after its last save. Past `maxRecords`, the
 * least recently saved record is evicted: the map is kept in save order (a save moves its record
 * to the end), so that is its first entry. With the one TTL a gateway uses (`resumeGraceMs`), it
 * is also the record closest to expiry.
 */
export class MemorySessionStore implements SessionStore {
  readonly takesSnapshots = true;
  readonly #records = new Map<string, { record: SessionRecord; expiry: Deadline }>();
  readonly #clock: Clock;
  readonly #maxRecords: number;

  constructor(clock: Clock, options: MemorySessionStoreOptions = {}) {
    this.#clock = clock;
    this.#maxRecords = Math.max(1, options.maxRecords ?? MAX_STORED_RECORDS);
  }

  load(sessionId: string): Promise<SessionRecord | undefined> {
    return Promise.resolve(this.#records.get(sessionId)?.record);
  }

  save(record: SessionRecord, ttlMs: number): Promise<void> {
    const id = record.sessionId;
    const previous = this.#records.get(id);
    // Deleted and set again: the map stays in save order.
    this.#records.delete(id);
    while (this.#records.size >= this.#maxRecords) {
      const [oldest, entry] = this.#records.entries().next().value ?? [];
      if (oldest === undefined) break;
      entry?.expiry.cancel();
      this.#records.delete(oldest);
    }
    // One expiry per record, moved by each save (a turn's): not a timer per save.
    const expiry = previous?.expiry ?? new Deadline(this.#clock, () => this.#records.delete(id));
    expiry.set(this.#clock.now() + ttlMs);
    this.#records.set(id, { record, expiry });
    return Promise.resolve();
  }

  delete(sessionId: string): Promise<void> {
    this.#records.get(sessionId)?.expiry.cancel();
    this.#records.delete(sessionId);
    return Promise.resolve();
  }

  get size(): number {
    return this.#records.size;
  }
}
