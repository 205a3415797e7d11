import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { Conversation } from "./conversation.js";
import type { SessionStore } from "./store.js";

export interface SessionRecordDeps {
  readonly store: SessionStore;
  readonly conversation: Conversation;
  readonly clock: Clock;
  readonly log: Logger;
  readonly sessionId: string;
  readonly agentName: string;
  readonly resumeKeyHash: string;
  /** How long the record outlives the socket (ms). */
  readonly graceMs: number;
  /** The roster member speaking now, by its path; undefined while the served agent speaks. */
  readonly speaking: () => string | undefined;
}

/** What a restored record says beyond the conversation: who was speaking. */
export interface RestoredRecord {
  readonly speaking?: string;
}

/** The record that outlives the socket for the grace window: saved after every turn, restored on resume. */
export class SessionRecord {
  readonly #deps: SessionRecordDeps;

  constructor(deps: SessionRecordDeps) {
    this.#deps = deps;
  }

  /** Restore the conversation saved under `resumeId` for this agent; undefined when there is none worth resuming. */
  async restore(resumeId: string): Promise<RestoredRecord | undefined> {
    const { store, conversation, agentName } = this.#deps;
    const record = await store.load(resumeId);
    if (record === undefined || record.agent !== agentName || (record.transcript.length === 0 && record.history.length === 0)) return undefined;
    conversation.restore(record);
    this.#deps.log.info({ lines: record.transcript.length, speaking: record.speaking }, "session resumed");
    return typeof record.speaking === "string" ? { speaking: record.speaking } : {};
  }

  /** Save (or, after a reset with nothing since, delete) the record; a store failure is logged, never thrown. */
  async save(): Promise<void> {
    const { store, conversation, sessionId, agentName, clock, resumeKeyHash, graceMs } = this.#deps;
    try {
      // A record cut at a reset with nothing after it: nothing to resume.
      if (conversation.empty) return await store.delete(sessionId);
      const speaking = this.#deps.speaking();
      const record = conversation.record(sessionId, agentName, clock.now(), { resumeKeyHash, speaking });
      await store.save(store.takesSnapshots === true ? record : record.plain(), graceMs);
    } catch (error) {
      this.#deps.log.warn({ err: error }, "session record not saved");
    }
  }
}
