import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { sayExactly } from "../../../src/session/s2s-lines.js";
import { S2sReplies } from "../../../src/session/s2s-replies.js";
import { S2sToolCalls } from "../../../src/session/s2s-tool-calls.js";
import type { ToolOutcome } from "../../../src/session/tool-runner.js";

type Sent = { kind: "results"; results: readonly { callId: string; output: string }[]; respond: boolean } | { kind: "response"; instructions?: string | undefined };

function rig(maxSteps: number, outcome: (name: string) => ToolOutcome) {
  const sent: Sent[] = [];
  const ran: string[] = [];
  let settled = 0;
  const calls = new S2sToolCalls(
    {
      tools: {
        call: (call) => {
          ran.push(call.toolName);
          return Promise.resolve(outcome(call.toolName));
        },
      },
      signal: new AbortController().signal,
      session: () => ({
        sendToolResults: (results, respond) => void sent.push({ kind: "results", results, respond }),
        createResponse: (options) => void sent.push({ kind: "response", instructions: options?.instructions }),
      }),
      ended: () => false,
      settled: () => void (settled += 1),
    },
    maxSteps,
  );
  return { calls, sent, ran, settled: () => settled, replies: new S2sReplies(virtualClock()) };
}

const ok = (text: string): ToolOutcome => ({ status: "ok", result: { text, isError: false }, modelText: text, isError: false });
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("S2sToolCalls", () => {
  it("answers a response's calls as one batch and asks for the next response", async () => {
    const { calls, sent, ran, settled, replies } = rig(3, (name) => ok(`${name} done`));
    const reply = replies.start("r1");
    calls.call({ callId: "c1", name: "a", args: {}, responseId: "r1" }, reply);
    calls.call({ callId: "c2", name: "b", args: {}, responseId: "r1" }, reply);
    await calls.answer(reply, true);
    expect(ran).toEqual(["a", "b"]);
    expect(settled()).toBe(2);
    expect(sent).toEqual([{ kind: "results", results: [{ callId: "c1", output: "a done" }, { callId: "c2", output: "b done" }], respond: true }]);
  });

  it("refuses calls past the turn's maxSteps until the caller speaks again", async () => {
    const { calls, sent, ran, replies } = rig(1, (name) => ok(name));
    const first = replies.start("r1");
    calls.call({ callId: "c1", name: "a", args: {}, responseId: "r1" }, first);
    await calls.answer(first, true);
    const second = replies.start("r2");
    calls.call({ callId: "c2", name: "b", args: {}, responseId: "r2" }, second);
    await calls.answer(second, true);
    expect(ran).toEqual(["a"]);
    expect(sent.at(-1)).toMatchObject({ kind: "results", results: [{ callId: "c2", output: expect.stringContaining("step limit") as string }] });
    calls.userTurn();
    const third = replies.start("r3");
    calls.call({ callId: "c3", name: "c", args: {}, responseId: "r3" }, third);
    await calls.answer(third, true);
    expect(ran).toEqual(["a", "c"]);
  });

  it("never runs a call of a reply that answers a refused turn", async () => {
    const { calls, sent, ran, replies } = rig(3, (name) => ok(name));
    const reply = replies.start("r1");
    reply.forget = true;
    calls.call({ callId: "c1", name: "a", args: {}, responseId: "r1" }, reply);
    await calls.answer(reply, false);
    expect(ran).toEqual([]);
    expect(sent).toEqual([{ kind: "results", results: [{ callId: "c1", output: expect.stringContaining("refused") as string }], respond: false }]);
  });

  it("speaks verbatim completion lines instead of a model turn, and answers a call outside any reply at once", async () => {
    const { calls, sent } = rig(3, () => ({ ...ok("booked"), verbatim: "Your table is booked." }));
    calls.call({ callId: "c1", name: "book", args: {}, responseId: "gone" }, undefined);
    await flush();
    expect(sent).toEqual([
      { kind: "results", results: [{ callId: "c1", output: "booked" }], respond: false },
      { kind: "response", instructions: sayExactly("Your table is booked.") },
    ]);
  });

  it("has nothing to answer for a response without calls", () => {
    const { calls, replies } = rig(3, (name) => ok(name));
    expect(calls.answer(replies.start("r1"), true)).toBeUndefined();
  });
});
