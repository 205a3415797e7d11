// Sub-agent tools in a session: the sub-agent's reply is the call's result, its own calls stay
// its own, and every delegation is bounded — by the call's deadline (virtual time), by the
// sub-agent's token budget, by the calling reply's cancel — and counted into the session's usage.
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { agent, resolveTeam, subagent, toAgentConfig, tool, withTools, type ResolvedAgentDef, type ToolContext } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { openDelegation } from "../../../src/session/delegation.js";
import { textSession } from "../../../src/testing/text-session.js";

const almanac = tool({
  description: "Capitals by country",
  parameters: Type.Object({ country: Type.String() }),
  execute: ({ country }) => (country === "norway" ? "Oslo" : "unknown"),
});

/** A researcher on a script of its own: it looks the capital up with its own tool. */
function researcher(script: Script, extra: Record<string, unknown> = {}) {
  return withTools(agent({ name: "researcher", mode: "text", systemPrompt: "You research facts.", llm: { kind: "scripted", options: { script } }, ...extra }), { almanac });
}

const RESEARCH: Script = { rules: [{ when: "capital of (?<country>\\w+)", call: { tool: "almanac", args: { country: "{country}" } }, then: "The capital is {result}." }] };

/** The desk delegates "capital of X" questions to the researcher and says what it answered. */
const DESK: Script = {
  fallback: "I only do capitals.",
  rules: [{ when: "capital of (?<country>\\w+)", say: "Let me ask.", call: { tool: "research", args: { task: "Find the capital of {country}." } }, then: "{result}" }],
};

function desk(sub: ReturnType<typeof researcher>, options: { timeoutMs?: number } = {}, extra: Record<string, unknown> = {}) {
  return agent({ name: "desk", mode: "text", greeting: "", subagents: { research: subagent(sub, { description: "Researches a fact.", ...options }) }, ...extra });
}

describe("a sub-agent tool in a text session", () => {
  it("answers with the sub-agent's reply, from its own model and tools; its calls are not the client's", async () => {
    const { link, say } = textSession(desk(researcher(RESEARCH)), { script: DESK });
    await say("what is the capital of norway");
    expect(link.of("tool.called")).toMatchObject([{ toolName: "research", args: { task: "Find the capital of norway." } }]);
    expect(link.of("tool.completed")).toMatchObject([{ result: "The capital is Oslo." }]);
    expect(link.of("tool.completed")[0]?.isError).toBeUndefined();
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Let me ask. The capital is Oslo.");
  });

  it("times out at the tool's deadline (virtual time): the sub-agent's model is aborted", async () => {
    const clock = virtualClock();
    const slow: Script = { delayMs: 800, rules: [{ when: "capital", say: "Let me think about that for quite a while." }] };
    const { link, started } = textSession(desk(researcher(slow), { timeoutMs: 1_000 }), { script: DESK, clock });
    await started;
    link.send({ type: "user_text", text: "capital of norway" });
    await clock.advance(999);
    expect(link.of("tool.completed")).toEqual([]);
    await clock.advance(1);
    expect(link.of("tool.completed")).toMatchObject([{ result: "research did not answer within 1 second.", isError: true }]);
    await clock.advance(100);
    expect(link.of("reply.completed")).toHaveLength(1);
    // Nothing of the aborted sub-agent is still ticking: the session holds the 2 timers a turn without a delegation leaves.
    await clock.advance(60_000);
    expect(clock.pending()).toBe(2);
  });

  it("stops at the sub-agent's token budget (usageLimits.totalTokens), after the step that crossed it", async () => {
    const { link, say } = textSession(desk(researcher(RESEARCH, { usageLimits: { totalTokens: 5 } })), { script: DESK });
    await say("capital of norway");
    const result = link.of("tool.completed")[0];
    expect(result?.isError).toBe(true);
    expect(result?.result).toMatch(/^research stopped after \d+ of its 5 tokens, before it had answered\.$/);
  });

  it("counts the sub-agent's tokens into the session's usage (usage.updated)", async () => {
    const limits = { usageLimits: { totalTokens: 100_000 } };
    const withSub = textSession(desk(researcher(RESEARCH), {}, limits), { script: DESK });
    await withSub.say("capital of norway");
    // The same turn answered by a plain tool with the same text: the difference is the sub-agent's.
    const plain = withTools(agent({ name: "desk", mode: "text", greeting: "", ...limits }), {
      research: tool({ description: "Researches a fact.", parameters: Type.Object({ task: Type.String() }), execute: () => "The capital is Oslo." }),
    });
    const without = textSession(plain, { script: DESK });
    await without.say("capital of norway");
    const total = (h: typeof withSub) => h.link.of("usage.updated").at(-1)?.totalTokens ?? 0;
    // researcher: the task (6 words) + its prompt → a call; then the result → "The capital is Oslo." (4).
    expect(total(withSub) - total(without)).toBeGreaterThan(10);
  });

  it("is cancelled with the reply that called it: the sub-agent's own tool sees its signal abort", async () => {
    let aborted: Promise<void> = Promise.resolve();
    const waits = tool({
      description: "Waits",
      execute: (_args, ctx: ToolContext) => {
        aborted = new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        return aborted.then(() => "never");
      },
    });
    const sub = withTools(agent({ name: "waiter", mode: "text", llm: { kind: "scripted", options: { script: { rules: [{ when: "capital", call: { tool: "waits" } }] } } } }), { waits });
    const { link, started } = textSession(agent({ name: "desk", mode: "text", greeting: "", subagents: { research: subagent(sub, { description: "Researches." }) } }), { script: DESK });
    await started;
    link.send({ type: "user_text", text: "capital of norway" });
    await link.next("tool.called", 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    link.send({ type: "cancel" });
    await aborted;
    await link.next("tool.completed", 0);
    expect(link.of("tool.completed")[0]).toMatchObject({ result: "The call was cancelled.", isError: true });
  });
});

describe("openDelegation", () => {
  it("is gated by the session's token budget: once spent, the model reads why", async () => {
    const def = desk(researcher(RESEARCH)) as ResolvedAgentDef;
    const team = resolveTeam(def, toAgentConfig(def));
    const set = await openDelegation(team.root, {
      clock: virtualClock(),
      log: silentLogger,
      random: Math.random,
      sessionId: "s",
      session: undefined,
      resolveModel: () => scriptedModel({ rules: [] }),
      spent: () => "usage limit reached: 120 of 100 tokens used",
      meter: () => {},
    });
    expect(set?.source).toBe("subagent");
    expect(Object.keys(set?.list() ?? {})).toEqual(["research"]);
    expect(set?.gate("research", { toolCallId: "c", signal: new AbortController().signal, session: undefined })).toEqual({
      reason: "usage limit reached: 120 of 100 tokens used",
      recover: "Answer without it.",
    });
    expect(await openDelegation(resolveTeam(researcher(RESEARCH) as ResolvedAgentDef, toAgentConfig(researcher(RESEARCH))).root, {} as never)).toBeUndefined();
  });
});
