import type { ModelMessage } from "ai";
import { DialogStore } from "../manifest/index.js";
import { historyChars, MAX_HISTORY_CHARS, MAX_HISTORY_MESSAGES, messageChars, trimHistory } from "../pipeline/history.js";
import { SnapshotList, type ListSnapshot } from "../snapshot-list.js";
import type { SessionRecord, ToolCallRecord, TranscriptLine } from "./store.js";
import { spread } from "../spread.js";

// ── Per-session bounds (docs/protocol.md, "Per-session bounds") ──────────────────────────────
// What one session may hold is bounded, so a client cannot exhaust the gateway's memory: the
// record below outlives the socket by the resume grace window, and a busy process holds
// thousands of them. Lengths are JavaScript string lengths (UTF-16 code units).

/** The longest `user_text` (characters, after trimming); owned by the command schema, which refuses longer ones at parse. */
export { MAX_USER_TEXT_CHARS } from "../transport/protocol.js";
/** The model history's caps (messages, characters of text); older turns are trimmed whole. */
export { MAX_HISTORY_CHARS, MAX_HISTORY_MESSAGES } from "../pipeline/history.js";

/**
 * Typed turns (`user_text`, keypad input as text) that may wait behind the reply in flight (turns).
 * A client that types faster than the agent answers gets a non-fatal error for each one past it,
 * instead of an unbounded queue of turns that would each cost a model call.
 */
export const MAX_QUEUED_TURNS = 8;

/** Keypad digits in one DTMF entry (digits): the entry is flushed when it reaches this many. */
export const MAX_DTMF_DIGITS = 64;

/**
 * The longest tool result the model history takes (characters, the marker included). Longer
 * results are cut with a visible `…[truncated N characters]` so the model knows; a result
 * larger than this would crowd the history's character budget out in one call.
 */
export const MAX_TOOL_RESULT_CHARS = 32_000;

/** Transcript lines kept for `history.restored` and the resume record (lines; the oldest whole lines go first). */
export const MAX_TRANSCRIPT_LINES = 200;

/** Characters of transcript text kept (sum of the lines' text; the oldest whole lines go first, a single longer line is clipped). */
export const MAX_TRANSCRIPT_CHARS = 200_000;

/** Tool-call records kept for `history.restored` and the resume record (records; the oldest go first). */
export const MAX_TOOL_RECORDS = 100;

/**
 * The longest `result` of a tool-call record, and of its `args` as JSON (characters). The
 * record is for display; the model reads the result from the history.
 */
export const MAX_RECORD_TEXT_CHARS = 2_000;

/** `text` cut to at most `max` characters, ending in `…` when cut. */
function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A tool result as the model history takes it: at most MAX_TOOL_RESULT_CHARS, with a marker saying how much was cut. */
export function truncateToolResult(text: string, max = MAX_TOOL_RESULT_CHARS): string {
  if (text.length <= max) return text;
  // The marker's number has at most as many digits as the text's length: the whole stays within `max`.
  const markerChars = `…[truncated ${text.length} characters]`.length;
  const kept = Math.max(0, max - markerChars);
  return `${text.slice(0, kept)}…[truncated ${text.length - kept} characters]`;
}

/** A tool-call record clipped for display: `result` and (as a JSON string) `args` at most MAX_RECORD_TEXT_CHARS. */
function clipRecord(record: ToolCallRecord): ToolCallRecord {
  let args = record.args;
  if (typeof args === "string") {
    args = clipText(args, MAX_RECORD_TEXT_CHARS);
  } else {
    let json: string | undefined;
    try {
      json = JSON.stringify(args);
    } catch {
      json = undefined;
    }
    if (json === undefined) args = null;
    else if (json.length > MAX_RECORD_TEXT_CHARS) args = clipText(json, MAX_RECORD_TEXT_CHARS);
  }
  const result = record.result === undefined ? undefined : clipText(record.result, MAX_RECORD_TEXT_CHARS);
  if (args === record.args && result === record.result) return record;
  return spread(record, { args, ...(result === undefined ? {} : { result }) });
}

/**
 * One session's conversation: the model history, the server's own record of what was committed
 * (for `history.restored`) and where its dialogs are. `epoch` counts resets: async work that
 * captured an older epoch must not write into a newer conversation. Every part is bounded (see
 * above; the dialogs' positions hold one state name per registered dialog).
 */
export class Conversation {
  // Lists whose snapshots cost O(1): the resume record is saved after every reply.
  #history = new SnapshotList<ModelMessage>();
  /** The history's text, as `messageChars` counts it: kept as messages come and go, so a turn does not re-measure the conversation. */
  #historyChars = 0;
  #transcript = new SnapshotList<TranscriptLine>();
  #transcriptChars = 0;
  #toolCalls = new SnapshotList<ToolCallRecord>();
  #dialogs = new DialogStore();
  #epoch = 0;

  get epoch(): number {
    return this.#epoch;
  }

  /** The model history (an array built once per change). */
  get history(): readonly ModelMessage[] {
    return this.#history.toArray();
  }

  /**
   * Where this conversation's dialogs are. A reset replaces the store, so a tool call that began
   * before it (and holds the old one) cannot move the new conversation's dialogs.
   */
  get dialogs(): DialogStore {
    return this.#dialogs;
  }

  get empty(): boolean {
    return this.#transcript.length === 0 && this.#history.length === 0;
  }

  /** Append to the model history, if `epoch` is still current; old turns are trimmed whole (both caps). */
  append(epoch: number, messages: readonly ModelMessage[]): boolean {
    if (epoch !== this.#epoch) return false;
    this.#history.push(...messages);
    for (const message of messages) this.#historyChars += messageChars(message);
    this.#trimHistory();
    return true;
  }

  /**
   * Replace the run of messages `old` (the very objects appended, in order) with `next`, if
   * `epoch` is still current and the run is still there whole (trimming may have dropped it):
   * how a reply's record is corrected to what the listener heard (turn/heard-correction.ts).
   */
  replace(epoch: number, old: readonly ModelMessage[], next: readonly ModelMessage[]): boolean {
    if (epoch !== this.#epoch || old.length === 0) return false;
    const at = this.#history.indexOf(old[0] as ModelMessage);
    if (at === -1 || old.some((message, i) => this.#history.at(at + i) !== message)) return false;
    this.#history.splice(at, old.length, ...next);
    this.#historyChars += historyChars(next) - historyChars(old);
    return true;
  }

  /** Record a committed transcript line, if `epoch` is still current. */
  commit(epoch: number, line: TranscriptLine): boolean {
    if (epoch !== this.#epoch) return false;
    this.#pushLine(line);
    return true;
  }

  recordTool(epoch: number, record: ToolCallRecord): void {
    if (epoch !== this.#epoch) return;
    const index = this.#toolCalls.findIndex((r) => r.toolCallId === record.toolCallId);
    if (index === -1) this.#toolCalls.push(clipRecord(record));
    else this.#toolCalls.set(index, clipRecord(spread(this.#toolCalls.at(index), record)));
    this.#toolCalls.dropFront(this.#toolCalls.length - MAX_TOOL_RECORDS);
  }

  /** Discard everything; work of the old epoch can no longer write here. */
  reset(): void {
    this.#epoch += 1;
    this.#history.clear();
    this.#historyChars = 0;
    this.#transcript.clear();
    this.#transcriptChars = 0;
    this.#toolCalls.clear();
    this.#dialogs = new DialogStore();
  }

  /** Take a stored record over, bounded as if it had been built here (a store may hold an older, larger one). */
  restore(record: SessionRecord): void {
    const history = trimHistory(record.history);
    this.#history = new SnapshotList(history);
    this.#historyChars = historyChars(history);
    this.#transcript = new SnapshotList();
    this.#transcriptChars = 0;
    for (const line of record.transcript.slice(-MAX_TRANSCRIPT_LINES)) this.#pushLine(line);
    this.#toolCalls = new SnapshotList(record.toolCalls.slice(-MAX_TOOL_RECORDS).map(clipRecord));
    this.#dialogs = DialogStore.from(record.dialogs);
  }

  /** The record to save, in O(1) however long the conversation: its lists are snapshots (SavedRecord). */
  record(sessionId: string, agent: string, now: number, extras: { readonly resumeKeyHash?: string | undefined; readonly speaking?: string | undefined } = {}): SavedRecord {
    const lists = { transcript: this.#transcript.snapshot(), toolCalls: this.#toolCalls.snapshot(), history: this.#history.snapshot() };
    const dialogs = this.#dialogs.empty ? undefined : this.#dialogs.toJSON();
    return new SavedRecord(sessionId, agent, now, lists, extras.resumeKeyHash, extras.speaking, dialogs);
  }

  /** What `history.restored` carries. */
  restoredEvent(): { messages: TranscriptLine[]; toolCalls: ToolCallRecord[] } {
    return { messages: [...this.#transcript], toolCalls: [...this.#toolCalls] };
  }

  /**
   * Drop the oldest turns whole until both history caps hold: trimHistory's cut (the earliest
   * user message from which the rest fits, else the last user message), found from the front
   * with the running character count, so only the dropped messages are measured.
   */
  #trimHistory(): void {
    const history = this.#history;
    if (history.length <= MAX_HISTORY_MESSAGES && this.#historyChars <= MAX_HISTORY_CHARS) return;
    let chars = this.#historyChars;
    let lastUser = 0;
    let charsFromLastUser = chars;
    for (let i = 0; i < history.length; i++) {
      const message = history.at(i) as ModelMessage;
      if (i > 0 && message.role === "user") {
        if (history.length - i <= MAX_HISTORY_MESSAGES && chars <= MAX_HISTORY_CHARS) {
          history.dropFront(i);
          this.#historyChars = chars;
          return;
        }
        lastUser = i;
        charsFromLastUser = chars;
      }
      chars -= messageChars(message);
    }
    history.dropFront(lastUser);
    this.#historyChars = charsFromLastUser;
  }

  /** Keep the newest lines within both transcript caps: the oldest whole lines go; one line over the char budget is clipped. */
  #pushLine(line: TranscriptLine): void {
    const kept = line.text.length <= MAX_TRANSCRIPT_CHARS ? line : spread(line, { text: clipText(line.text, MAX_TRANSCRIPT_CHARS) });
    this.#transcript.push(kept);
    this.#transcriptChars += kept.text.length;
    let drop = 0;
    let chars = this.#transcriptChars;
    while (this.#transcript.length - drop > MAX_TRANSCRIPT_LINES || chars > MAX_TRANSCRIPT_CHARS) {
      chars -= this.#transcript.at(drop)?.text.length ?? 0;
      drop += 1;
    }
    if (drop > 0) {
      this.#transcript.dropFront(drop);
      this.#transcriptChars = chars;
    }
  }
}

interface RecordLists {
  readonly transcript: ListSnapshot<TranscriptLine>;
  readonly toolCalls: ListSnapshot<ToolCallRecord>;
  readonly history: ListSnapshot<ModelMessage>;
}


/**
 * A saved record whose lists are snapshots, made into arrays at their first read (a resume) or
 * by `JSON.stringify`, not at every save. The lists are getters on the prototype, so spreading
 * or `structuredClone` would lose them: only a store that says it takes snapshots
 * (`SessionStore.takesSnapshots`) gets one; any other gets `plain()`.
 */
export class SavedRecord implements SessionRecord {
  readonly sessionId: string;
  readonly agent: string;
  readonly updatedAt: number;
  declare readonly dialogs?: Readonly<Record<string, string>>;
  declare readonly speaking?: string;
  declare readonly resumeKeyHash?: string;
  readonly #lists: RecordLists;

  constructor(sessionId: string, agent: string, updatedAt: number, lists: RecordLists, resumeKeyHash?: string, speaking?: string, dialogs?: Readonly<Record<string, string>>) {
    this.sessionId = sessionId;
    this.agent = agent;
    this.updatedAt = updatedAt;
    this.#lists = lists;
    // Absent, not undefined, when not given: as a plain record reads.
    if (resumeKeyHash !== undefined) this.resumeKeyHash = resumeKeyHash;
    if (speaking !== undefined) this.speaking = speaking;
    if (dialogs !== undefined) this.dialogs = dialogs;
  }

  get transcript(): readonly TranscriptLine[] {
    return this.#lists.transcript.toArray();
  }

  get toolCalls(): readonly ToolCallRecord[] {
    return this.#lists.toolCalls.toArray();
  }

  get history(): readonly ModelMessage[] {
    return this.#lists.history.toArray();
  }

  /** The record as a plain object, its lists arrays. */
  plain(): SessionRecord {
    return spread(this, { transcript: this.transcript, toolCalls: this.toolCalls, history: this.history });
  }

  toJSON(): SessionRecord {
    return this.plain();
  }
}
