import type { ModelMessage } from "ai";
import { MAX_HISTORY_MESSAGES, trimHistory } from "../pipeline/history.js";
import type { SessionRecord, ToolCallRecord, TranscriptLine } from "./store.js";

/**
 * One session's conversation: the model history, and the server's own record of what was
 * committed (for `history.restored`). `epoch` counts resets: async work that captured an older
 * epoch must not write into a newer conversation.
 */
export class Conversation {
  #history: ModelMessage[] = [];
  #transcript: TranscriptLine[] = [];
  #toolCalls: ToolCallRecord[] = [];
  #epoch = 0;

  get epoch(): number {
    return this.#epoch;
  }

  get history(): readonly ModelMessage[] {
    return this.#history;
  }

  get empty(): boolean {
    return this.#transcript.length === 0 && this.#history.length === 0;
  }

  /** Append to the model history, if `epoch` is still current; old turns are trimmed whole. */
  append(epoch: number, messages: readonly ModelMessage[]): boolean {
    if (epoch !== this.#epoch) return false;
    this.#history.push(...messages);
    if (this.#history.length > MAX_HISTORY_MESSAGES) this.#history = trimHistory(this.#history);
    return true;
  }

  /** Record a committed transcript line, if `epoch` is still current. */
  commit(epoch: number, line: TranscriptLine): boolean {
    if (epoch !== this.#epoch) return false;
    this.#transcript.push(line);
    return true;
  }

  recordTool(epoch: number, record: ToolCallRecord): void {
    if (epoch !== this.#epoch) return;
    const index = this.#toolCalls.findIndex((r) => r.toolCallId === record.toolCallId);
    if (index === -1) this.#toolCalls.push(record);
    else this.#toolCalls[index] = { ...this.#toolCalls[index], ...record };
  }

  /** Discard everything; work of the old epoch can no longer write here. */
  reset(): void {
    this.#epoch += 1;
    this.#history = [];
    this.#transcript = [];
    this.#toolCalls = [];
  }

  restore(record: SessionRecord): void {
    this.#history = [...record.history];
    this.#transcript = [...record.transcript];
    this.#toolCalls = [...record.toolCalls];
  }

  record(sessionId: string, agent: string, now: number): SessionRecord {
    return {
      sessionId,
      agent,
      transcript: [...this.#transcript],
      toolCalls: [...this.#toolCalls],
      history: [...this.#history],
      updatedAt: now,
    };
  }

  /** What `history.restored` carries. */
  restoredEvent(): { messages: TranscriptLine[]; toolCalls: ToolCallRecord[] } {
    return { messages: [...this.#transcript], toolCalls: [...this.#toolCalls] };
  }
}
