import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { trimHistory } from "../../../src/pipeline/history.js";

const user = (text: string): ModelMessage => ({ role: "user", content: text });
const say = (text: string): ModelMessage => ({ role: "assistant", content: text });
const call = (id: string): ModelMessage => ({ role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "t", input: {} }] });
const result = (id: string): ModelMessage => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "t", output: { type: "text", value: "ok" } }],
});

/** Every tool result follows its call, and every call has its result. */
function pairsIntact(messages: readonly ModelMessage[]): boolean {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant" && Array.isArray(m.content)) for (const p of m.content) if (p.type === "tool-call") open.add(p.toolCallId);
    if (m.role === "tool") for (const p of m.content) if (p.type === "tool-result" && !open.delete(p.toolCallId)) return false;
  }
  return open.size === 0;
}

describe("trimHistory", () => {
  it("keeps a short history as it is", () => {
    const history = [say("hi"), user("a"), say("b")];
    expect(trimHistory(history, 10)).toEqual(history);
  });

  it("cuts only at a user message, so tool calls keep their results", () => {
    const history = [say("hi"), user("1"), call("c1"), result("c1"), say("r1"), user("2"), call("c2"), result("c2"), say("r2"), user("3"), say("r3")];
    for (let max = 2; max <= history.length; max++) {
      const trimmed = trimHistory(history, max);
      expect(trimmed[0]?.role, `max ${max}`).toBe(max >= history.length ? "assistant" : "user");
      expect(pairsIntact(trimmed), `max ${max}`).toBe(true);
      expect(trimmed.at(-1)).toEqual(say("r3"));
    }
    expect(trimHistory(history, 6)).toEqual(history.slice(5));
  });

  it("keeps one over-long turn whole rather than splitting it", () => {
    const history = [user("1"), call("a"), result("a"), call("b"), result("b"), say("done")];
    expect(trimHistory(history, 3)).toEqual(history);
  });
});
