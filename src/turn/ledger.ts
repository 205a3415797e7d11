import type { ModelMessage } from "ai";
import { messageOf } from "../errors.js";
import type { EventBody } from "../events.js";
import { REFUSED_TURN_PROMPT } from "./guardrails.js";
import { spread } from "../spread.js";

/**
 * The conversation as a turn writes it. `epoch` counts resets: a write carrying an older epoch is
 * refused (returns false), so async work of a conversation that was reset never lands in the new one.
 */
export interface LedgerHistory {
  readonly epoch: number;
  readonly history: readonly ModelMessage[];
  /** Model messages (what the model sees next turn). */
  append(epoch: number, messages: readonly ModelMessage[]): boolean;
  /** Replace the run `old` (objects appended before) with `next`: false when the epoch is stale or the run is gone. */
  replace(epoch: number, old: readonly ModelMessage[], next: readonly ModelMessage[]): boolean;
  /** A transcript line (what `history.restored` shows); `refused`: a caller turn an input guardrail refused. */
  commit(epoch: number, line: { readonly role: "user" | "assistant"; readonly text: string; readonly refused?: true }): boolean;
}

/** Token usage of one reply (summed over its steps). */
export interface TurnUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly steps: number;
}

/** `a` + `b`, field by field (`a` absent: `b`). */
export function addUsage(a: TurnUsage | undefined, b: TurnUsage): TurnUsage {
  if (a === undefined) return b;
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, totalTokens: a.totalTokens + b.totalTokens, steps: a.steps + b.steps };
}

/** What the session learns when a reply settles: its outcome, usage and first-token latency. */
export interface SettledInfo {
  readonly status: "completed" | "cancelled" | "failed" | "spoken";
  /** A step of a reply (an s2s response that only called tools), not its end. */
  readonly step?: boolean;
  /**
   * Another reply is in flight or still being heard (s2s: the service may start a response while
   * the caller hears the last one). What waits for "the reply" (end_call's hang-up, a transfer, a
   * hand-off) waits for a settle without it: the reply announcing it may not even have spoken yet.
   */
  readonly more?: boolean;
  readonly usage?: TurnUsage | undefined;
  readonly llmFirstTokenMs?: number | undefined;
}

/** A turn's latency stages (docs/protocol.md `metrics.turn`), in ms. */
export interface TurnLatencies {
  readonly endpointMs?: number;
  readonly llmFirstTokenMs?: number;
  readonly ttsFirstAudioMs?: number;
  readonly voiceToVoiceMs?: number;
}

/** How a reply ended, as the ledger records it. */
export interface Settlement extends SettledInfo {
  /** The agent's line as the listener got it (heard or shown): `agent-transcript.committed` when not cancelled. */
  readonly text?: string;
  /** Also commit `text` as the conversation's agent line (a failure's apology is shown, not recorded). */
  readonly record?: boolean;
  /** Model messages the reply adds (prompt, steps, the heard prefix of an interrupted one), appended first. */
  readonly messages?: readonly ModelMessage[];
  /** The turn's id and latencies: `metrics.turn` (greetings have none). */
  readonly metrics?: { readonly turnId: string } & TurnLatencies;
  /** Tell the session (usage, limits, the saved record). Default true; a text greeting does not. */
  readonly report?: boolean;
}

/** What the ledger tells its session (the session's hooks object: methods, called on it). */
export interface LedgerHooks {
  emit(event: EventBody): void;
  /** Conversational activity (re-arms the idle timer). */
  activity(): void;
  /** After every reply the session accounts for. */
  replySettled(info: SettledInfo): void;
}

/**
 * The one owner of a turn's record in every mode (text, pipeline, s2s): the order of the events
 * a client sees when a user line is committed and a reply settles, and the epoch-checked writes
 * to the conversation. Runners decide *when* (a spoken reply settles once it has played); the
 * ledger decides *what* is written and emitted, so the three modes cannot drift apart.
 *
 * Event order on settle: `agent-transcript.committed` (when there is text, not on cancel) →
 * `reply.completed` (not on cancel) → `metrics.turn` → the session's accounting (`usage.updated`).
 */
export class TurnLedger {
  readonly #history: LedgerHistory;
  readonly #hooks: LedgerHooks;
  #turns = 0;
  /** Usage of the steps settled since the last reply (s2s tool-only responses): part of the next reply's `reply.completed`. */
  #stepUsage: TurnUsage | undefined;

  constructor(history: LedgerHistory, hooks: LedgerHooks) {
    this.#history = history;
    this.#hooks = hooks;
  }

  /** The conversation's current epoch: capture it when a turn starts, write with it when it settles. */
  get epoch(): number {
    return this.#history.epoch;
  }

  get history(): readonly ModelMessage[] {
    return this.#history.history;
  }

  /** The next turn's id (`turn_1`, `turn_2`, …), as `metrics.turn` reports it. */
  nextTurnId(): string {
    return `turn_${++this.#turns}`;
  }

  /**
   * The caller's line is final: `user-transcript.committed` and the transcript line. `prompt`
   * also appends it to the model history now (text mode; a spoken turn's prompt is appended
   * with its reply, so an interrupted reply records both together). `refused`: an input
   * guardrail refused it — the event and the line say so, and the model history gets
   * `REFUSED_TURN_PROMPT` instead of the caller's words.
   */
  user(text: string, options: { readonly prompt?: boolean; readonly refused?: boolean } = {}): void {
    const history = this.#history;
    const epoch = history.epoch;
    const refused = options.refused === true ? { refused: true as const } : {};
    this.#hooks.emit({ type: "user-transcript.committed", text, ...refused });
    history.commit(epoch, { role: "user", text, ...refused });
    if (options.prompt === true) history.append(epoch, [{ role: "user", content: options.refused === true ? REFUSED_TURN_PROMPT : text }]);
    this.#hooks.activity();
  }

  /** Model messages written before the reply settles (a failed reply's steps). False when the epoch is stale. */
  append(epoch: number, messages: readonly ModelMessage[]): boolean {
    return this.#history.append(epoch, messages);
  }

  /** A recorded reply corrected to what was heard (turn/heard-correction.ts). False when the epoch is stale or the messages were trimmed. */
  correct(epoch: number, recorded: readonly ModelMessage[], next: readonly ModelMessage[]): boolean {
    return this.#history.replace(epoch, recorded, next);
  }

  /** The model failed mid-reply: a warning the client sees (the session goes on). */
  modelFailed(error: unknown): void {
    this.#hooks.emit({ type: "error.reported", code: "llm", message: `the model failed: ${messageOf(error)}`, fatal: false });
  }

  /** Output was flushed (barge-in, cancel, reset): `reply.cancelled`. */
  cancelled(): void {
    this.#hooks.emit({ type: "reply.cancelled" });
  }

  /** A step of a reply settled (an s2s response that only called tools): accounted, nothing shown or recorded. */
  step(info: SettledInfo): void {
    if (info.usage !== undefined) this.#stepUsage = addUsage(this.#stepUsage, info.usage);
    this.#hooks.replySettled(spread(info, { step: true }));
  }

  /** A reply settled. False (nothing written or emitted) when the conversation was reset since `epoch`. */
  settle(epoch: number, settlement: Settlement): boolean {
    const history = this.#history;
    const hooks = this.#hooks;
    if (epoch !== history.epoch) return false;
    const { text = "", status, metrics } = settlement;
    // The reply's usage for the client, its earlier steps' included (the session's accounting got those at each step).
    const steps = this.#stepUsage;
    this.#stepUsage = undefined;
    const usage = settlement.usage === undefined ? steps : addUsage(steps, settlement.usage);
    if (settlement.messages !== undefined && settlement.messages.length > 0) history.append(epoch, settlement.messages);
    if (status !== "cancelled") {
      if (text !== "" && settlement.record !== false) history.commit(epoch, { role: "assistant", text });
      if (text !== "") hooks.emit({ type: "agent-transcript.committed", text });
      hooks.emit(usage === undefined ? { type: "reply.completed" } : { type: "reply.completed", usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens } });
    }
    if (metrics !== undefined) hooks.emit({ type: "metrics.turn", ...metrics });
    if (settlement.report !== false) {
      this.#hooks.replySettled({
        status,
        ...(settlement.usage === undefined ? {} : { usage: settlement.usage }),
        ...(settlement.llmFirstTokenMs === undefined ? {} : { llmFirstTokenMs: settlement.llmFirstTokenMs }),
        ...(settlement.more === true ? { more: true } : {}),
      });
    }
    return true;
  }
}
