import type { ModelMessage } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_HISTORY_CHARS, MAX_HISTORY_MESSAGES, historyChars, trimHistory } from "../../../src/pipeline/history.js";

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

// ── the character budget ──────────────────────────────────────────────────────────────────

const bigCall = (id: string, args: Record<string, unknown>): ModelMessage => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "t", input: args }],
});
const bigResult = (id: string, value: string): ModelMessage => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "t", output: { type: "text", value } }],
});

/** Index of the last user message, or -1. */
function lastUser(messages: readonly ModelMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return -1;
}

describe("trimHistory's character budget", () => {
  it("counts strings, text parts, tool-call arguments (as JSON) and tool results", () => {
    expect(MAX_HISTORY_CHARS).toBe(200_000);
    expect(historyChars([user("abc")])).toBe(3);
    expect(historyChars([{ role: "assistant", content: [{ type: "text", text: "hello" }] }])).toBe(5);
    expect(historyChars([bigCall("c", { q: "xy" })])).toBe(JSON.stringify({ q: "xy" }).length);
    expect(historyChars([bigResult("c", "z".repeat(42))])).toBe(42);
    expect(historyChars([user("ab"), say("cd"), bigResult("c", "ef")])).toBe(6);
  });

  it("trims whole turns once the text is over budget, even under the message cap", () => {
    const text = "x".repeat(30_000);
    const history: ModelMessage[] = [say("hi")];
    for (let i = 0; i < 10; i++) history.push(user(`${i}${text}`), bigCall(`c${i}`, { q: text }), bigResult(`c${i}`, text), say(text));
    expect(history.length).toBeLessThan(MAX_HISTORY_MESSAGES);
    const trimmed = trimHistory(history);
    expect(historyChars(trimmed)).toBeLessThanOrEqual(MAX_HISTORY_CHARS);
    expect(trimmed[0]?.role).toBe("user");
    expect(pairsIntact(trimmed)).toBe(true);
    expect(trimmed).toEqual(history.slice(history.length - trimmed.length));
    // One turn is ~120 000 characters: only the newest fits.
    expect(trimmed).toEqual(history.slice(-4));
  });

  it("keeps the newest turn whole even when it alone is over budget", () => {
    const huge = "y".repeat(MAX_HISTORY_CHARS + 1);
    const history = [user("old"), say("reply"), user(huge), bigCall("c", {}), bigResult("c", huge), say("done")];
    expect(trimHistory(history)).toEqual(history.slice(2));
  });

  it("holds for random conversations: a suffix, cut at a user message, both caps, newest turn kept, the longest such suffix", () => {
    const part = fc.oneof(
      fc.record({ kind: fc.constant("say" as const), chars: fc.integer({ min: 0, max: 400 }) }),
      fc.record({ kind: fc.constant("tool" as const), chars: fc.integer({ min: 0, max: 400 }), args: fc.integer({ min: 0, max: 200 }) }),
    );
    const turn = fc.record({ userChars: fc.integer({ min: 1, max: 400 }), parts: fc.array(part, { maxLength: 4 }) });
    const conversation = fc.record({ greeting: fc.boolean(), turns: fc.array(turn, { maxLength: 30 }) });
    let calls = 0;
    fc.assert(
      fc.property(conversation, fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 5_000 }), ({ greeting, turns }, maxMessages, maxChars) => {
        const history: ModelMessage[] = greeting ? [say("hello")] : [];
        for (const t of turns) {
          history.push(user("u".repeat(t.userChars)));
          for (const p of t.parts) {
            if (p.kind === "say") history.push(say("a".repeat(p.chars)));
            else {
              const id = `c${calls++}`;
              history.push(bigCall(id, { q: "q".repeat(p.args) }), bigResult(id, "r".repeat(p.chars)));
            }
          }
        }
        const trimmed = trimHistory(history, maxMessages, maxChars);
        const start = history.length - trimmed.length;
        expect(trimmed).toEqual(history.slice(start));
        expect(pairsIntact(trimmed)).toBe(true);
        const fits = (from: number): boolean => history.length - from <= maxMessages && historyChars(history.slice(from)) <= maxChars;
        if (fits(0)) {
          expect(start).toBe(0);
          return;
        }
        const newest = lastUser(history);
        if (newest === -1) {
          expect(start).toBe(0);
          return;
        }
        expect(history[start]?.role).toBe("user");
        expect(start).toBeLessThanOrEqual(newest);
        if (start < newest) expect(fits(start)).toBe(true);
        // No earlier user message would also have fitted.
        for (let i = 0; i < start; i++) if (history[i]?.role === "user") expect(fits(i)).toBe(false);
      }),
      { seed: 20261130, numRuns: 300 },
    );
  });
});
