import { describe, expect, it } from "vitest";
import type { EventBody } from "../../../../src/events.js";
import { CallRecord } from "../../../../src/session/recording/call-record.js";
import { Redactor } from "../../../../src/session/recording/redaction.js";

/** A record fed events at given times (ms from the start); agent audio spans as given. */
function recordOf(spans: ({ startMs: number; endMs: number } | undefined)[] = [], history: string[] = []) {
  let now = 0;
  const record = new CallRecord({ elapsedMs: () => now, agentSpan: () => spans.shift(), lastAgentText: () => history.shift() });
  const at = (ms: number, event: EventBody): void => {
    now = ms;
    record.event(event);
  };
  return { record, at };
}

describe("the call record's lines", () => {
  it("a caller line spans speech.started → speech.stopped; without them, its first partial → the commit", () => {
    const { record, at } = recordOf();
    at(1000, { type: "speech.started" });
    at(1800, { type: "speech.stopped" });
    at(2000, { type: "user-transcript.committed", text: "hello" });
    at(5000, { type: "user-transcript.updated", text: "my" });
    at(6500, { type: "user-transcript.committed", text: "my order" });
    expect(record.lines).toEqual([
      { speaker: "caller", text: "hello", startMs: 1000, endMs: 1800 },
      { speaker: "caller", text: "my order", startMs: 5000, endMs: 6500 },
    ]);
    expect(record.speechFrom(record.lines[1]!)).toBe(5000);
  });

  it("a caller line nothing marked the start of: its speech can have begun right after the caller's previous line (the bleep covers that)", () => {
    const { record, at } = recordOf();
    at(2000, { type: "user-transcript.committed", text: "hello" });
    at(9000, { type: "user-transcript.committed", text: "four one one one one one one one one one one one one one one one" });
    const card = record.lines[1]!;
    expect(card).toMatchObject({ startMs: 9000, endMs: 9000 });
    expect(record.speechFrom(card)).toBe(2000);
    expect(record.redact(new Redactor(["card"]))).toEqual([card]);
  });

  it("an agent line spans where its audio played; a cancelled one is interrupted with the history's heard prefix", () => {
    const { record, at } = recordOf([{ startMs: 100, endMs: 900 }, { startMs: 3000, endMs: 3400 }], ["Sure, your order [interrupted]"]);
    at(1000, { type: "agent-transcript.updated", text: "Hi." });
    at(1000, { type: "agent-transcript.committed", text: "Hi." });
    at(2500, { type: "agent-transcript.updated", text: "Sure, your order shipped on Friday." });
    at(3400, { type: "reply.cancelled" });
    at(3600, { type: "metrics.turn", turnId: "turn_1", llmFirstTokenMs: 120 });
    expect(record.lines).toEqual([
      { speaker: "agent", text: "Hi.", startMs: 100, endMs: 900 },
      { speaker: "agent", text: "Sure, your order shipped on Friday.", startMs: 3000, endMs: 3400, interrupted: true, heardText: "Sure, your order" },
    ]);
    expect(record.turns).toEqual([{ atMs: 3600, turnId: "turn_1", llmFirstTokenMs: 120 }]);
  });

  it("tool calls: args, result, duration; redacted with the rules", () => {
    const { record, at } = recordOf();
    at(100, { type: "tool.called", toolCallId: "c1", toolName: "pay", args: { card: "4111111111111111" } });
    at(350, { type: "tool.completed", toolCallId: "c1", result: "paid", isError: false });
    record.redact(new Redactor(["card"]));
    expect(record.toolCalls).toEqual([{ id: "c1", name: "pay", args: { card: "[redacted card]" }, startMs: 100, endMs: 350, durationMs: 250, result: "paid", redacted: ["card"] }]);
  });
});
