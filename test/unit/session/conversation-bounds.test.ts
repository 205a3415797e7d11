import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/manifest/index.js";
import { MAX_HISTORY_CHARS, historyChars, trimHistory } from "../../../src/pipeline/history.js";
import {
  Conversation,
  MAX_RECORD_TEXT_CHARS,
  MAX_TOOL_RECORDS,
  MAX_TRANSCRIPT_CHARS,
  MAX_TRANSCRIPT_LINES,
} from "../../../src/session/conversation.js";

const chars = (lines: readonly { readonly text: string }[]): number => lines.reduce((sum, l) => sum + l.text.length, 0);

describe("a conversation's bounds", () => {
  it("has the documented values", () => {
    expect([MAX_TRANSCRIPT_LINES, MAX_TRANSCRIPT_CHARS, MAX_TOOL_RECORDS, MAX_RECORD_TEXT_CHARS]).toEqual([200, 200_000, 100, 2_000]);
  });

  it("keeps the most recent transcript lines, at most MAX_TRANSCRIPT_LINES", () => {
    const c = new Conversation();
    for (let i = 0; i < 250; i++) c.commit(c.epoch, { role: i % 2 === 0 ? "user" : "assistant", text: `line ${i}` });
    const { messages } = c.restoredEvent();
    expect(messages).toHaveLength(MAX_TRANSCRIPT_LINES);
    expect(messages[0]?.text).toBe("line 50");
    expect(messages.at(-1)?.text).toBe("line 249");
  });

  it("drops the oldest whole lines to stay within MAX_TRANSCRIPT_CHARS", () => {
    const c = new Conversation();
    for (let i = 0; i < 30; i++) c.commit(c.epoch, { role: "user", text: `${String(i).padStart(2, "0")}${"x".repeat(19_997)}` });
    const { messages } = c.restoredEvent();
    expect(chars(messages)).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS);
    // 10 lines of 19 999 characters fit in 200 000; 11 do not.
    expect(messages).toHaveLength(10);
    expect(messages[0]?.text.startsWith("20")).toBe(true);
    expect(messages.every((m) => m.text.length === 19_999)).toBe(true);
  });

  it("clips a single line longer than the budget instead of dropping it", () => {
    const c = new Conversation();
    c.commit(c.epoch, { role: "user", text: "short" });
    c.commit(c.epoch, { role: "assistant", text: "z".repeat(MAX_TRANSCRIPT_CHARS + 5_000) });
    const { messages } = c.restoredEvent();
    expect(messages).toHaveLength(1);
    expect(messages[0]?.role).toBe("assistant");
    expect(messages[0]?.text.length).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS);
    expect(messages[0]?.text.length).toBeGreaterThan(MAX_TRANSCRIPT_CHARS - 100);
    expect(messages[0]?.text.startsWith("zzz")).toBe(true);
  });

  it("keeps the most recent MAX_TOOL_RECORDS tool records, each clipped", () => {
    const c = new Conversation();
    for (let i = 0; i < 150; i++) c.recordTool(c.epoch, { toolCallId: `call_${i}`, toolName: "t", args: { i }, result: `r${i}` });
    const { toolCalls } = c.restoredEvent();
    expect(toolCalls).toHaveLength(MAX_TOOL_RECORDS);
    expect(toolCalls[0]?.toolCallId).toBe("call_50");
    expect(toolCalls.at(-1)?.toolCallId).toBe("call_149");

    c.recordTool(c.epoch, { toolCallId: "big", toolName: "t", args: { q: "a".repeat(5_000) }, result: "b".repeat(50_000), isError: true });
    const big = c.restoredEvent().toolCalls.at(-1);
    expect(typeof big?.args).toBe("string");
    expect((big?.args as string).length).toBeLessThanOrEqual(MAX_RECORD_TEXT_CHARS);
    expect((big?.args as string).startsWith('{"q":"aaa')).toBe(true);
    expect(big?.result?.length).toBeLessThanOrEqual(MAX_RECORD_TEXT_CHARS);
    expect(big?.result?.startsWith("bbb")).toBe(true);
    expect(big?.isError).toBe(true);
    // Small arguments stay as they are.
    expect(c.restoredEvent().toolCalls.at(-2)?.args).toEqual({ i: 149 });
  });

  it("applies the history caps (messages and characters) on append", () => {
    const c = new Conversation();
    const text = "h".repeat(19_999);
    for (let i = 0; i < 40; i++) c.append(c.epoch, [{ role: "user", content: text }, { role: "assistant", content: text }]);
    expect(historyChars(c.history)).toBeLessThanOrEqual(MAX_HISTORY_CHARS);
    expect(c.history[0]?.role).toBe("user");
    expect(c.history).toHaveLength(10);
  });

  it("trims the history on append as trimHistory does, and each saved record keeps the conversation it saw", () => {
    // Appends of whole turns and of single messages (some tool calls, some texts long enough for
    // the character cap), heard corrections, lines and tool records; a record saved every few
    // steps is read only at the end, after all the changes that followed it.
    const next = seededRandom(23);
    const c = new Conversation();
    let model: ModelMessage[] = [];
    const lines: { role: "user" | "assistant"; text: string }[] = [];
    const saved: { record: ReturnType<Conversation["record"]>; history: ModelMessage[]; transcript: typeof lines }[] = [];
    const text = (step: number): string => `${step}`.padEnd(next() < 0.1 ? 30_000 : 1 + Math.floor(next() * 200), "t");
    for (let step = 0; step < 3_000; step++) {
      const roll = next();
      if (roll < 0.5) {
        const messages: ModelMessage[] = [{ role: "user", content: text(step) }];
        if (next() < 0.3) {
          const id = `call_${step}`;
          messages.push(
            { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "lookup", input: { q: text(step) } }] },
            { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "lookup", output: { type: "text", value: text(step) } }] },
          );
        }
        messages.push({ role: "assistant", content: text(step) });
        expect(c.append(c.epoch, messages)).toBe(true);
        model = trimHistory([...model, ...messages]);
      } else if (roll < 0.6) {
        const message: ModelMessage = { role: "assistant", content: text(step) };
        c.append(c.epoch, [message]);
        model = trimHistory([...model, message]);
      } else if (roll < 0.7 && model.length > 0) {
        // A heard correction of the newest message.
        const old = model.slice(-1);
        const corrected: ModelMessage[] = [{ role: "assistant", content: `heard ${step}` }];
        expect(c.replace(c.epoch, old, corrected)).toBe(true);
        model = [...model.slice(0, -1), ...corrected];
      } else if (roll < 0.85) {
        const line = { role: next() < 0.5 ? ("user" as const) : ("assistant" as const), text: text(step) };
        c.commit(c.epoch, line);
        lines.push(line);
      } else {
        saved.push({ record: c.record("s", "a", step), history: model, transcript: [...lines] });
      }
      expect(c.history).toEqual(model);
    }
    expect(saved.length).toBeGreaterThan(300);
    for (const { record, history, transcript } of saved) {
      expect(record.history).toEqual(history);
      // Within the caps, the transcript is the newest lines.
      expect(record.transcript).toEqual(transcript.slice(-record.transcript.length));
      expect(chars(record.transcript)).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS);
    }
  });

  it("keeps the newest turn whole when it alone is over the character cap, and counts on from there", () => {
    const c = new Conversation();
    const huge = (tag: string): ModelMessage[] => [
      { role: "user", content: `${tag} question` },
      { role: "assistant", content: tag.padEnd(MAX_HISTORY_CHARS, "x") },
    ];
    const small: ModelMessage[] = [{ role: "user", content: "short" }, { role: "assistant", content: "answer" }];
    c.append(c.epoch, small);
    c.append(c.epoch, huge("first"));
    expect(c.history).toEqual(huge("first"));
    c.append(c.epoch, huge("second"));
    expect(c.history).toEqual(huge("second"));
    c.append(c.epoch, small);
    expect(c.history).toEqual(small);
    c.append(c.epoch, small);
    expect(c.history).toEqual([...small, ...small]);
  });

  it("saves a record that JSON writes whole, as a shared store keeps it", () => {
    const c = new Conversation();
    c.commit(c.epoch, { role: "user", text: "hello" });
    c.append(c.epoch, [{ role: "user", content: "hello" }]);
    c.recordTool(c.epoch, { toolCallId: "c1", toolName: "t", args: {} });
    const record = c.record("s", "a", 5, { resumeKeyHash: "h", speaking: "roster.billing" });
    const plain = { sessionId: "s", agent: "a", transcript: [{ role: "user", text: "hello" }], toolCalls: [{ toolCallId: "c1", toolName: "t", args: {} }], history: [{ role: "user", content: "hello" }], speaking: "roster.billing", resumeKeyHash: "h", updatedAt: 5 };
    expect(JSON.parse(JSON.stringify(record))).toEqual(plain);
    expect(record).toMatchObject({ transcript: plain.transcript, toolCalls: plain.toolCalls, history: plain.history, speaking: "roster.billing" });
  });

  it("bounds a restored record the same way", () => {
    const c = new Conversation();
    const history: ModelMessage[] = [];
    for (let i = 0; i < 40; i++) history.push({ role: "user", content: "u".repeat(19_999) }, { role: "assistant", content: "a" });
    c.restore({
      sessionId: "s",
      agent: "a",
      transcript: Array.from({ length: 500 }, (_, i) => ({ role: "user" as const, text: `t${i}` })),
      toolCalls: Array.from({ length: 300 }, (_, i) => ({ toolCallId: `c${i}`, toolName: "t", args: {}, result: "r".repeat(10_000) })),
      history,
      updatedAt: 0,
    });
    const record = c.record("s", "a", 1);
    expect(record.transcript).toHaveLength(MAX_TRANSCRIPT_LINES);
    expect(record.toolCalls).toHaveLength(MAX_TOOL_RECORDS);
    expect(record.toolCalls.every((r) => (r.result?.length ?? 0) <= MAX_RECORD_TEXT_CHARS)).toBe(true);
    expect(historyChars(record.history)).toBeLessThanOrEqual(MAX_HISTORY_CHARS);
  });

  it("keeps the resume record under 1 MB after 1 000 turns of 19 999-character texts", () => {
    // Per turn: a user line, a tool call whose args and result are each ~20 000 characters, and
    // an agent line, all 19 999 characters of plain letters (no JSON escapes). The bound:
    //   transcript ≤ MAX_TRANSCRIPT_CHARS (200 000) + 200 lines × ~40 chars of JSON framing ≈ 208 000
    //   toolCalls  ≤ 100 records × (args ≤ 2 000 chars + a few escaped quotes, result ≤ 2 000, ids and framing ~150) ≈ 416 000
    //   history    ≤ MAX_HISTORY_CHARS (200 000; the newest turn of ~80 000 fits) + 120 messages × ~200 chars of framing ≈ 224 000
    //   total      ≈ 850 000 characters < 1 000 000.
    const c = new Conversation();
    const text = (i: number): string => `${i}`.padEnd(19_999, "x");
    for (let i = 0; i < 1_000; i++) {
      const epoch = c.epoch;
      c.commit(epoch, { role: "user", text: text(i) });
      c.append(epoch, [{ role: "user", content: text(i) }]);
      const id = `call_${i}`;
      c.recordTool(epoch, { toolCallId: id, toolName: "lookup", args: { q: text(i) }, result: text(i) });
      c.append(epoch, [
        { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "lookup", input: { q: text(i) } }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "lookup", output: { type: "text", value: text(i) } }] },
        { role: "assistant", content: text(i) },
      ]);
      c.commit(epoch, { role: "assistant", text: text(i) });
    }
    const size = JSON.stringify(c.record("s", "agent", 0)).length;
    expect(size).toBeLessThan(1_000_000);
    // The newest turn is always there.
    expect(c.history.at(-1)?.content).toBe(text(999));
  });
});
