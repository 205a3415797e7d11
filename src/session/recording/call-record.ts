import type { EventBody } from "../../events.js";
import type { PlayedSpan } from "./agent-track.js";
import type { Redactor } from "./redaction.js";

/** Lines a record keeps at most; past it lines are counted, not kept (a record is bounded as the conversation is). */
export const MAX_RECORD_LINES = 5000;
/** Tool calls a record keeps at most. */
export const MAX_RECORD_TOOL_CALLS = 2000;
/** Turn metrics a record keeps at most. */
export const MAX_RECORD_TURNS = 5000;
/** Errors a record keeps at most. */
const MAX_RECORD_ERRORS = 200;

/** The marker an interrupted reply's heard text ends with in the history (pipeline/record-heard.ts `INTERRUPTED`). */
const INTERRUPTED_MARKER = "[interrupted]";

/** One line of the transcript: ms from the session's start. */
export interface RecordLine {
  readonly speaker: "caller" | "agent";
  text: string;
  readonly startMs: number;
  readonly endMs: number;
  /** The agent was cut off by a barge-in (or a cancel): `heardText` is what the caller heard of `text`. */
  readonly interrupted?: true;
  heardText?: string;
  /** An input guardrail refused the caller's line. */
  readonly refused?: true;
  /** Redaction rules that matched this line (its audio span is bleeped). */
  redacted?: string[];
}

export interface RecordToolCall {
  readonly id: string;
  readonly name: string;
  args: unknown;
  readonly startMs: number;
  endMs?: number;
  durationMs?: number;
  result?: string;
  isError?: true;
  redacted?: string[];
}

export type RecordTurn = { readonly atMs: number } & Omit<Extract<EventBody, { type: "metrics.turn" }>, "type">;

/** What the recorder needs from around it while it builds the record. */
export interface CallRecordDeps {
  /** Ms from the session's start, now. */
  readonly elapsedMs: () => number;
  /** The agent's played span since the last line (undefined in text mode or when nothing played). */
  readonly agentSpan: () => PlayedSpan | undefined;
  /** The agent text the history recorded for the reply just settled (its heard prefix when cut off). */
  readonly lastAgentText: () => string | undefined;
}

/**
 * The JSON call record, built from the events the session emits as they pass the link: the
 * transcript with timings (a caller line spans speech.started → speech.stopped; an agent line
 * spans where its audio played), tool calls with args, results and durations, the per-turn
 * metrics, the errors. Redaction is applied once, when the record is finished.
 */
export class CallRecord {
  readonly #deps: CallRecordDeps;
  readonly lines: RecordLine[] = [];
  readonly toolCalls: RecordToolCall[] = [];
  readonly turns: RecordTurn[] = [];
  readonly errors: { atMs: number; code: string; message: string; fatal: boolean }[] = [];
  readonly handOffs: { atMs: number; agent: string; previous: string }[] = [];
  /** A machine answered: when, who said so, what the agent did (the `voicemail.detected` event). */
  voicemail: ({ atMs: number } & Omit<Extract<EventBody, { type: "voicemail.detected" }>, "type">) | undefined;
  /** Entries past the caps, counted. */
  dropped = 0;
  #speechStart: number | undefined;
  #speechEnd: number | undefined;
  #agentText = "";
  /** A cancelled reply's line, whose heard text the history gives when the reply settles (`metrics.turn`). */
  #awaitingHeard: RecordLine | undefined;
  readonly #openTools = new Map<string, RecordToolCall>();
  /** Where the caller's previous line ended (ms). */
  #callerEnd = 0;
  /** Caller lines whose start nothing marked, with the earliest their speech can have begun. */
  readonly #unbounded = new WeakMap<RecordLine, number>();

  constructor(deps: CallRecordDeps) {
    this.#deps = deps;
  }

  event(event: EventBody): void {
    const at = this.#deps.elapsedMs();
    switch (event.type) {
      case "speech.started":
        this.#speechStart ??= at;
        this.#speechEnd = undefined;
        return;
      case "speech.stopped":
        this.#speechEnd = at;
        return;
      case "user-transcript.committed": {
        const start = this.#speechStart ?? at;
        const line: RecordLine = { speaker: "caller", text: event.text, startMs: start, endMs: Math.max(start, this.#speechEnd ?? at), ...(event.refused === true ? { refused: true as const } : {}) };
        // No speech edge and no partial said when the caller began: the words lie somewhere after the caller's previous line.
        if (this.#speechStart === undefined) this.#unbounded.set(line, this.#callerEnd);
        this.#callerEnd = line.endMs;
        this.#line(line);
        this.#speechStart = undefined;
        this.#speechEnd = undefined;
        return;
      }
      case "user-transcript.updated":
        // A recognizer's first partial: the caller is speaking (where no speech.started came first).
        this.#speechStart ??= at;
        return;
      case "agent-transcript.updated":
        this.#agentText = event.text;
        return;
      case "agent-transcript.committed":
        this.#agentLine(event.text, at, false);
        return;
      case "reply.cancelled":
        if (this.#agentText !== "") this.#awaitingHeard = this.#agentLine(this.#agentText, at, true);
        else this.#deps.agentSpan();
        return;
      case "session.reset":
        this.#agentText = "";
        this.#awaitingHeard = undefined;
        return;
      case "metrics.turn": {
        const waiting = this.#awaitingHeard;
        this.#awaitingHeard = undefined;
        const heard = waiting === undefined ? undefined : this.#deps.lastAgentText();
        if (waiting !== undefined && heard?.endsWith(INTERRUPTED_MARKER) === true) waiting.heardText = heard.slice(0, -INTERRUPTED_MARKER.length).trimEnd();
        const { type: _type, ...metrics } = event;
        if (this.turns.length < MAX_RECORD_TURNS) this.turns.push({ atMs: at, ...metrics });
        else this.dropped += 1;
        return;
      }
      case "tool.called": {
        if (this.toolCalls.length >= MAX_RECORD_TOOL_CALLS) {
          this.dropped += 1;
          return;
        }
        const call: RecordToolCall = { id: event.toolCallId, name: event.toolName, args: event.args, startMs: at };
        this.toolCalls.push(call);
        this.#openTools.set(event.toolCallId, call);
        return;
      }
      case "tool.completed": {
        const call = this.#openTools.get(event.toolCallId);
        if (call === undefined) return;
        this.#openTools.delete(event.toolCallId);
        call.endMs = at;
        call.durationMs = at - call.startMs;
        call.result = event.result;
        if (event.isError === true) call.isError = true;
        return;
      }
      case "error.reported":
        if (this.errors.length < MAX_RECORD_ERRORS) this.errors.push({ atMs: at, code: event.code, message: event.message, fatal: event.fatal });
        return;
      case "voicemail.detected": {
        const { type: _type, ...detected } = event;
        this.voicemail ??= { atMs: at, ...detected };
        return;
      }
      case "agent.changed":
        if (this.handOffs.length < MAX_RECORD_ERRORS) this.handOffs.push({ atMs: at, agent: event.agent, previous: event.previous });
        return;
      default:
        return;
    }
  }

  /** The earliest a caller line's speech can have begun: its start, or (when nothing marked it) the caller's previous line's end. */
  speechFrom(line: RecordLine): number {
    return this.#unbounded.get(line) ?? line.startMs;
  }

  /** Applies the rules to every line and tool call; returns the lines whose audio spans carry a match. */
  redact(redactor: Redactor): RecordLine[] {
    const matched: RecordLine[] = [];
    for (const line of this.lines) {
      const hits = new Set<string>();
      const text = redactor.text(line.text);
      line.text = text.text;
      for (const rule of text.rules) hits.add(rule);
      if (line.heardText !== undefined) {
        const heard = redactor.text(line.heardText);
        line.heardText = heard.text;
        for (const rule of heard.rules) hits.add(rule);
      }
      if (hits.size > 0) {
        line.redacted = [...hits];
        matched.push(line);
      }
    }
    for (const error of this.errors) error.message = redactor.text(error.message).text;
    for (const call of this.toolCalls) {
      const hits = new Set<string>();
      call.args = redactor.value(call.args, hits);
      if (call.result !== undefined) call.result = redactor.value(call.result, hits) as string;
      if (hits.size > 0) call.redacted = [...hits];
    }
    return matched;
  }

  #agentLine(text: string, at: number, interrupted: boolean): RecordLine {
    const span = this.#deps.agentSpan();
    this.#agentText = "";
    const line: RecordLine = {
      speaker: "agent",
      text,
      startMs: span?.startMs ?? at,
      endMs: span?.endMs ?? at,
      ...(interrupted || text.endsWith(INTERRUPTED_MARKER) ? { interrupted: true as const } : {}),
      // Cut before any of it played: nothing was heard. Otherwise the history says what was (metrics.turn).
      ...(interrupted && span !== undefined && span.endMs <= span.startMs ? { heardText: "" } : {}),
    };
    this.#line(line);
    return line;
  }

  #line(line: RecordLine): void {
    if (this.lines.length < MAX_RECORD_LINES) this.lines.push(line);
    else this.dropped += 1;
  }
}
