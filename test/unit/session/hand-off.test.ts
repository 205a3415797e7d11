// Roster hand-off in a session: after the reply that called transfer_to_agent, the member's
// prompt, tools, model and (pipeline) voice take over on the same connection, the conversation
// goes with it, the client hears `agent.changed`, and the member's greeting follows at once.
import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { agent, tool, withTools, type AgentDef, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import type { S2sSession } from "../../../src/s2s/s2s-port.js";
import { sayExactly } from "../../../src/session/s2s-lines.js";
import { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { FakeTts } from "../../../src/testing/fake-speech.js";
import { s2sSession as s2sHarness } from "../../../src/testing/s2s-session.js";
import { textSession } from "../../../src/testing/text-session.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

/** What one model call was given: its system prompt, the tools it offered, its messages' roles and texts. */
interface Seen {
  readonly system: string;
  readonly tools: readonly string[];
  readonly users: readonly string[];
  readonly toolCalls: readonly string[];
}

/** `model`, recording what every call was given. */
function recording(model: LanguageModelV4): { model: LanguageModelV4; seen: Seen[] } {
  const seen: Seen[] = [];
  const record = (call: LanguageModelV4CallOptions): void => {
    const system = call.prompt.find((m) => m.role === "system");
    seen.push({
      system: system?.role === "system" ? system.content : "",
      tools: (call.tools ?? []).map((t) => t.name),
      users: call.prompt.filter((m) => m.role === "user").flatMap((m) => m.content.map((p) => (p.type === "text" ? p.text : ""))),
      toolCalls: call.prompt.flatMap((m) => (m.role === "assistant" ? m.content.flatMap((p) => (p.type === "tool-call" ? [p.toolName] : [])) : [])),
    });
  };
  return {
    seen,
    model: {
      ...model,
      doGenerate: (call) => (record(call), model.doGenerate(call)),
      doStream: (call) => (record(call), model.doStream(call)),
    },
  };
}

/** What a fake TTS said, its pieces joined. */
function said(tts: FakeTts): string {
  return tts.spoken.join(" ").replace(/\s+/g, " ").trim();
}

const refund = tool({ description: "Refund the last order", execute: () => "Refund issued." });
const lookup = tool({ description: "Look up an order", execute: () => "Order A17 ships Friday." });

/** One script for both agents: each rule calls a tool only the agent that has it offers. */
const SCRIPT: Script = {
  fallback: "Sorry?",
  rules: [
    { when: "billing", call: { tool: "transfer_to_agent", args: { agent: "billing" } }, then: "Putting you through." },
    { when: "front ?desk", call: { tool: "transfer_to_agent", args: { agent: "frontdesk" } }, then: "Back to the front desk." },
    { when: "refund", say: "Refunding.", call: { tool: "refund" }, then: "{result}" },
    { when: "order", call: { tool: "lookup" }, then: "{result}" },
  ],
};

function team(billingExtra: Record<string, unknown> = {}, frontExtra: Record<string, unknown> = {}): AgentDef {
  const billing: AgentDef = withTools(
    agent({
      name: "billing",
      greeting: "Billing here.",
      systemPrompt: "You handle billing.",
      listing: "Billing and refunds",
      roster: { frontdesk: () => frontdesk },
      ...billingExtra,
    }),
    { refund },
  );
  // As the loader does: the served agent runs with its tool files attached (a new object); billing names it back by its def.
  const frontdesk: AgentDef = agent({ name: "frontdesk", greeting: "Front desk.", systemPrompt: "You are the front desk.", roster: { billing }, ...frontExtra });
  return withTools(frontdesk, { lookup });
}

describe("hand-off in a text session", () => {
  it("after the reply: the member's prompt and tools take over, the conversation goes with it, agent.changed, its greeting", async () => {
    const { model, seen } = recording(scriptedModel(SCRIPT));
    const { link, say } = textSession(team(), { model });
    await say("I want a refund");
    // The front desk cannot refund: the rule's call is not offered, so it only says its line.
    expect(link.of("tool.called")).toEqual([]);
    expect(seen[0]).toMatchObject({ system: "You are the front desk.", tools: ["lookup", "transfer_to_agent"] });

    await say("billing please");
    expect(link.of("tool.called").map((e) => [e.toolName, e.args])).toEqual([["transfer_to_agent", { agent: "billing" }]]);
    expect(link.of("tool.completed")[0]?.result).toBe("billing takes over once you finish this reply, with the conversation so far. Tell the caller you are putting them through.");
    const types = link.types();
    const changed = types.indexOf("agent.changed");
    expect(link.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "frontdesk" }]);
    // The front desk's reply settles first; then the change; then billing's greeting.
    expect(types.slice(changed - 2, changed + 3)).toEqual(["reply.completed", "metrics.turn", "agent.changed", "agent-transcript.updated", "agent-transcript.committed"]);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Front desk.", "Refunding.", "Putting you through.", "Billing here."]);

    await say("I want a refund");
    expect(link.of("tool.called").at(-1)?.toolName).toBe("refund");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Refunding. Refund issued.");
    const billing = seen.at(-2);
    expect(billing?.system).toBe("You handle billing.");
    expect(billing?.tools).toEqual(["refund", "transfer_to_agent"]);
    // The conversation so far, the front desk's hand-off call included, is billing's to read.
    expect(billing?.users).toEqual(["I want a refund", "billing please", "I want a refund"]);
    expect(billing?.toolCalls).toEqual(["transfer_to_agent"]);
  });

  it("hands back: the served agent's own tools (its files) and prompt return, its roster tool again", async () => {
    const { model, seen } = recording(scriptedModel(SCRIPT));
    const { link, say } = textSession(team(), { model });
    await say("billing please");
    await say("the front desk please");
    expect(link.of("agent.changed").map((e) => [e.previous, e.agent])).toEqual([
      ["frontdesk", "billing"],
      ["billing", "frontdesk"],
    ]);
    await say("where is my order");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Order A17 ships Friday.");
    expect(seen.at(-2)).toMatchObject({ system: "You are the front desk.", tools: ["lookup", "transfer_to_agent"] });
  });

  it("a member that cannot be opened leaves the agent speaking: the model reads why", async () => {
    const { link, say } = textSession(team({ llm: { kind: "scripted", options: { script: { rules: [{ when: "(", say: "x" }] } } } }), { script: SCRIPT });
    await say("billing please");
    expect(link.of("tool.completed")[0]).toMatchObject({ isError: true });
    expect(link.of("tool.completed")[0]?.result).toMatch(/^transfer_to_agent failed: /);
    expect(link.of("agent.changed")).toEqual([]);
    await say("where is my order");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Order A17 ships Friday.");
  });

  it("a reset keeps the agent speaking, and greets with its greeting", async () => {
    const { link, say } = textSession(team(), { script: SCRIPT });
    await say("billing please");
    link.send({ type: "reset" });
    await link.next("session.reset", 0);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Billing here.");
    await say("I want a refund");
    expect(link.of("tool.called").at(-1)?.toolName).toBe("refund");
  });
});

describe("hand-off in a pipeline session", () => {
  it("reopens only the voice: the member's tts speaks its greeting right after the announcing reply played, the STT stays", async () => {
    const clock = virtualClock();
    const billingVoice = new FakeTts(clock);
    const { link, stt, tts, started } = voiceSession(team({ tts: { kind: "cartesia", options: { voice: "billing" } } }), {
      clock,
      script: SCRIPT,
      ttsFor: (descriptor) => (descriptor.options.voice === "billing" ? billingVoice : undefined),
    });
    await started;
    await clock.advance(2_000);
    stt.current.final("billing please", true);
    await clock.advance(5_000);
    expect(link.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "frontdesk" }]);
    expect(said(tts)).toContain("Putting you through.");
    expect(said(tts)).not.toContain("Billing here.");
    expect(billingVoice.spoken.map((t) => t.trim())).toEqual(["Billing here."]);
    // No gap beyond the announcing reply: the greeting's first audio leaves as that reply settles.
    const changed = link.events.findIndex((e) => e.type === "agent.changed");
    const announced = link.events.slice(0, changed).findLast((e) => e.type === "reply.completed");
    const greeting = link.audioOut.find((chunk) => chunk.afterEvents > changed);
    expect((greeting?.at ?? Infinity) - (announced?.meta.at ?? 0)).toBeLessThanOrEqual(100);
    expect(stt.sessions).toHaveLength(1);
    stt.current.final("I want a refund", true);
    await clock.advance(5_000);
    expect(link.of("tool.called").at(-1)?.toolName).toBe("refund");
    expect(said(billingVoice)).toContain("Refund issued.");
  });

  it("keeps the voice speaking when the member sets no tts of its own", async () => {
    const clock = virtualClock();
    const other = new FakeTts(clock);
    const { link, stt, tts, started } = voiceSession(team(), { clock, script: SCRIPT, ttsFor: () => other });
    await started;
    await clock.advance(2_000);
    stt.current.final("billing please", true);
    await clock.advance(5_000);
    expect(link.of("agent.changed")).toHaveLength(1);
    expect(said(tts)).toContain("Billing here.");
    expect(other.spoken).toEqual([]);
  });
});

describe("hand-off in a speech-to-speech session", () => {
  const s2s = { kind: "openai-realtime", options: { voice: "marin" } };

  /** The served agent (with maxSteps 3) and billing (maxSteps 1), on the same service. */
  function realtimeTeam(): AgentDef {
    const billing: AgentDef = withTools(agent({ name: "billing", greeting: "Billing here.", systemPrompt: "You handle billing.", maxSteps: 1, s2s, roster: { frontdesk: () => frontdesk } }), { refund });
    const frontdesk: AgentDef = agent({ name: "frontdesk", greeting: "", systemPrompt: "You are the front desk.", maxSteps: 3, s2s, roster: { billing } });
    return withTools(frontdesk, { lookup });
  }

  it("is one update of the service's session — the member's instructions, tools and tool choice — then its greeting, in the same voice", async () => {
    const { link, fake, clock } = await s2sHarness(realtimeTeam() as ResolvedAgentDef);
    expect(fake.opens[0]?.setup.tools.map((t) => t.name)).toEqual(["lookup", "transfer_to_agent"]);
    const reply = fake.start();
    fake.events.toolCall({ callId: "call_t", name: "transfer_to_agent", args: { agent: "billing" }, responseId: reply });
    // The hand-off is ready before the response that made the call ends: that end is a step, not the reply's.
    await clock.advance(10);
    fake.done(reply);
    await clock.advance(10);
    expect(fake.calls.filter((c) => c.kind === "results")).toMatchObject([{ results: [{ callId: "call_t" }], respond: true }]);
    expect(fake.calls.filter((c) => c.kind === "update")).toEqual([]);
    expect(link.of("agent.changed")).toEqual([]);
    const announcing = fake.start();
    fake.speak(announcing, "Putting you through.", 400);
    fake.done(announcing);
    await clock.advance(1_000);

    expect(link.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "frontdesk" }]);
    const updates = fake.calls.filter((c) => c.kind === "update");
    expect(updates).toHaveLength(1);
    const [update] = updates;
    expect(update?.kind === "update" ? update.segment.instructions : "").toBe("You handle billing.");
    expect(update?.kind === "update" ? update.segment.tools.map((t) => t.name) : []).toEqual(["refund", "transfer_to_agent"]);
    expect(update).toMatchObject({ segment: { toolChoice: "auto" } });
    // The greeting comes after the update, out of band: spoken in the service's one voice.
    const after = fake.calls.slice(fake.calls.indexOf(update as never) + 1);
    expect(after).toEqual([{ kind: "response", instructions: sayExactly("Billing here."), outOfBand: true }]);
    expect(fake.opens).toHaveLength(1);

    // billing's maxSteps (1) caps tool steps from now on (the front desk's 3 would run the second).
    fake.events.userTranscript("refund it, twice", { final: true });
    const first = fake.start();
    fake.events.toolCall({ callId: "c1", name: "refund", args: {}, responseId: first });
    fake.done(first);
    await clock.advance(10);
    const second = fake.start();
    fake.events.toolCall({ callId: "c2", name: "refund", args: {}, responseId: second });
    fake.done(second);
    await clock.advance(10);
    const outputs = fake.calls.flatMap((c) => (c.kind === "results" ? c.results.map((r) => [r.callId, r.output]) : []));
    expect(outputs.slice(-2)).toEqual([
      ["c1", "Refund issued."],
      ["c2", "Tool step limit reached for this turn. Answer the caller now without tools."],
    ]);
  });

  it("a service that cannot change its session mid-way: the hand-off fails as a tool error, the agent stays", async () => {
    const provider = new FakeS2s();
    const open = provider.open.bind(provider);
    // A service like Gemini Live: its session has no `update`.
    provider.open = async (options, events) => {
      const fixed: Partial<S2sSession> = { ...(await open(options, events)) };
      delete fixed.update;
      return fixed as S2sSession;
    };
    const { link, clock } = await s2sHarness(realtimeTeam() as ResolvedAgentDef, { provider });
    const reply = provider.start();
    provider.events.toolCall({ callId: "call_t", name: "transfer_to_agent", args: { agent: "billing" }, responseId: reply });
    provider.done(reply);
    await clock.advance(10);
    expect(link.of("tool.completed")[0]).toMatchObject({ isError: true, result: expect.stringMatching(/cannot change its instructions and tools mid-session, so it cannot hand off/) as string });
    expect(link.of("agent.changed")).toEqual([]);
  });
});
