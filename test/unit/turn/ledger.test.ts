import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import type { EventBody } from "../../../src/events.js";
import { REFUSED_TURN_PROMPT } from "../../../src/turn/guardrails.js";
import { TurnLedger, type LedgerHistory, type SettledInfo } from "../../../src/turn/ledger.js";

/** A conversation that refuses writes of a stale epoch, like session/conversation.ts. */
function history(): LedgerHistory & { lines: { role: string; text: string }[]; reset(): void } {
  const state = { epoch: 0, history: [] as ModelMessage[], lines: [] as { role: string; text: string }[] };
  return {
    get epoch() {
      return state.epoch;
    },
    get history() {
      return state.history;
    },
    lines: state.lines,
    reset() {
      state.epoch += 1;
      state.history = [];
      state.lines.length = 0;
    },
    append(epoch, messages) {
      if (epoch !== state.epoch) return false;
      state.history.push(...messages);
      return true;
    },
    commit(epoch, line) {
      if (epoch !== state.epoch) return false;
      state.lines.push(line);
      return true;
    },
    replace(epoch, old, next) {
      const at = state.history.indexOf(old[0] as ModelMessage);
      if (epoch !== state.epoch || at === -1) return false;
      state.history.splice(at, old.length, ...next);
      return true;
    },
  };
}

function ledger() {
  const conversation = history();
  const events: EventBody[] = [];
  const settled: SettledInfo[] = [];
  let activity = 0;
  const turns = new TurnLedger(conversation, { emit: (e) => events.push(e), activity: () => (activity += 1), replySettled: (i) => settled.push(i) });
  return { turns, conversation, events, settled, activity: () => activity };
}

describe("the turn ledger", () => {
  it("commits the caller's line (appending the prompt only when asked) and counts it as activity", () => {
    const { turns, conversation, events, activity } = ledger();
    turns.user("hello");
    turns.user("typed", { prompt: true });
    expect(events).toEqual([
      { type: "user-transcript.committed", text: "hello" },
      { type: "user-transcript.committed", text: "typed" },
    ]);
    expect(conversation.lines).toEqual([
      { role: "user", text: "hello" },
      { role: "user", text: "typed" },
    ]);
    expect(conversation.history).toEqual([{ role: "user", content: "typed" }]);
    expect(activity()).toBe(2);
  });

  it("a refused caller line says so in its event and transcript line; the model history gets the refusal marker, not the words", () => {
    const { turns, conversation, events } = ledger();
    turns.user("my card is 4111 1111 1111 1111", { prompt: true, refused: true });
    expect(events).toEqual([{ type: "user-transcript.committed", text: "my card is 4111 1111 1111 1111", refused: true }]);
    expect(conversation.lines).toEqual([{ role: "user", text: "my card is 4111 1111 1111 1111", refused: true }]);
    expect(conversation.history).toEqual([{ role: "user", content: REFUSED_TURN_PROMPT }]);
  });

  it("settles a heard reply in one order: committed, reply.completed, metrics.turn, then the session's accounting", () => {
    const { turns, conversation, events, settled } = ledger();
    const turnId = turns.nextTurnId();
    const usage = { inputTokens: 3, outputTokens: 4, totalTokens: 7, steps: 1 };
    expect(turns.settle(turns.epoch, { status: "completed", text: "Hi.", messages: [{ role: "assistant", content: "Hi." }], metrics: { turnId, llmFirstTokenMs: 5 }, usage, llmFirstTokenMs: 5 })).toBe(true);
    expect(events.map((e) => e.type)).toEqual(["agent-transcript.committed", "reply.completed", "metrics.turn"]);
    expect(events[2]).toEqual({ type: "metrics.turn", turnId: "turn_1", llmFirstTokenMs: 5 });
    expect(settled).toEqual([{ status: "completed", usage, llmFirstTokenMs: 5 }]);
    expect(conversation.lines).toEqual([{ role: "assistant", text: "Hi." }]);
    expect(conversation.history).toEqual([{ role: "assistant", content: "Hi." }]);
  });

  it("a cancelled reply records its messages and metrics but shows no completion; a failure's phrase is shown, not recorded", () => {
    const { turns, conversation, events, settled } = ledger();
    turns.settle(turns.epoch, { status: "cancelled", text: "ignored", messages: [{ role: "assistant", content: "Half [interrupted]" }], metrics: { turnId: turns.nextTurnId() } });
    turns.settle(turns.epoch, { status: "failed", text: "Sorry.", record: false });
    expect(events.map((e) => e.type)).toEqual(["metrics.turn", "agent-transcript.committed", "reply.completed"]);
    expect(conversation.lines).toEqual([]);
    expect(conversation.history).toEqual([{ role: "assistant", content: "Half [interrupted]" }]);
    expect(settled.map((s) => s.status)).toEqual(["cancelled", "failed"]);
  });

  it("writes nothing and emits nothing for a reply of a conversation that was reset", () => {
    const { turns, conversation, events, settled } = ledger();
    const epoch = turns.epoch;
    conversation.reset();
    expect(turns.settle(epoch, { status: "completed", text: "Late." })).toBe(false);
    expect(turns.append(epoch, [{ role: "assistant", content: "Late." }])).toBe(false);
    expect(events).toEqual([]);
    expect(settled).toEqual([]);
    expect(conversation.history).toEqual([]);
  });

  it("a greeting without accounting, a tool step with accounting only, and cancel and failure events", () => {
    const { turns, events, settled } = ledger();
    turns.settle(turns.epoch, { status: "spoken", text: "Hello.", report: false });
    turns.step({ status: "completed" });
    turns.cancelled();
    turns.modelFailed(new Error("boom"));
    expect(events).toEqual([
      { type: "agent-transcript.committed", text: "Hello." },
      { type: "reply.completed" },
      { type: "reply.cancelled" },
      { type: "error.reported", code: "llm", message: "the model failed: boom", fatal: false },
    ]);
    expect(settled).toEqual([{ status: "completed", step: true }]);
  });
  it("carries a reply's usage on reply.completed, its earlier steps' summed in; the session accounts each step as it comes", () => {
    const { turns, events, settled } = ledger();
    const u = (n: number) => ({ inputTokens: n, outputTokens: 1, totalTokens: n + 1, steps: 1 });
    turns.step({ status: "completed", usage: u(10) });
    turns.settle(turns.epoch, { status: "completed", text: "Shipped.", usage: u(20) });
    turns.settle(turns.epoch, { status: "completed", text: "No usage." });
    turns.step({ status: "completed", usage: u(5) });
    turns.settle(turns.epoch, { status: "cancelled", usage: u(7) });
    turns.settle(turns.epoch, { status: "completed", text: "Fresh.", usage: u(1) });
    expect(events.filter((e) => e.type === "reply.completed")).toEqual([
      { type: "reply.completed", usage: { inputTokens: 30, outputTokens: 2, totalTokens: 32 } },
      { type: "reply.completed" },
      { type: "reply.completed", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
    ]);
    expect(settled.map((info) => info.usage?.totalTokens)).toEqual([11, 21, undefined, 6, 8, 2]);
  });
});
