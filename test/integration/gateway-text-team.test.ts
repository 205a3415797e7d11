// A team over a real socket and a real provider (the fake OpenAI-compatible server, which records
// every request): a sub-agent tool runs another agent on its own prompt, model and tools, with
// nothing of the conversation but its task, and its answer is the call's result; a hand-off puts
// a roster member's prompt, model and tools in charge of the same connection, history and all.
import { Type } from "@sinclair/typebox";
import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, ConfigError, subagent, tool, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { closeAfterEach } from "../helpers/cleanups.js";
import { connect } from "../helpers/ws-client.js";

const closing = closeAfterEach();
let fake: FakeOpenAiServer;

beforeEach(async () => {
  fake = closing(await startFakeOpenAiServer());
});

const almanac = tool({ description: "Capitals by country", parameters: Type.Object({ country: Type.String() }), execute: () => "Oslo" });

function llm(model: string) {
  return { kind: "openai-compatible", options: { baseURL: fake.url, model } };
}

async function serve(def: Parameters<typeof createGateway>[0]["agent"]): Promise<string> {
  const gateway = closing(createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false }));
  const { url } = await gateway.listen(0);
  return `${url.replace(/^http/, "ws")}/websocket`;
}

describe("a sub-agent tool over the gateway", () => {
  it("runs the sub-agent on its own prompt, model and tools, with the task alone; its answer is the result", async () => {
    const researcher = withTools(agent({ name: "researcher", mode: "text", systemPrompt: "You research facts.", llm: llm("research-model"), maxRetries: 0 }), { almanac });
    const desk = agent({
      name: "desk",
      mode: "text",
      greeting: "Front desk.",
      systemPrompt: "You run the front desk.",
      llm: llm("desk-model"),
      maxRetries: 0,
      subagents: { research: subagent(researcher, { description: "Researches a fact and answers in one sentence." }) },
    });
    fake.enqueue(
      { toolCalls: [{ name: "research", args: { task: "Find the capital of Norway." }, id: "call_desk" }] },
      { toolCalls: [{ name: "almanac", args: { country: "norway" }, id: "call_research" }] },
      { text: "The capital of Norway is Oslo." },
      { text: "It is Oslo." },
    );
    const client = await connect(await serve(desk));
    await client.say("What is the capital of Norway? My name is Ada.");

    const [deskAsks, researchAsks, researchAnswers, deskAnswers] = fake.requests;
    expect(deskAsks?.model).toBe("desk-model");
    expect(deskAsks?.tools?.map((t) => t.function.name)).toEqual(["research"]);
    expect(deskAsks?.tools?.[0]?.function.description).toBe("Researches a fact and answers in one sentence.");
    // The sub-agent: its model, its prompt, its tools, and nothing of the caller's conversation.
    expect(researchAsks?.model).toBe("research-model");
    expect(researchAsks?.messages).toEqual([
      { role: "system", content: "You research facts." },
      { role: "user", content: "Find the capital of Norway." },
    ]);
    expect(researchAsks?.tools?.map((t) => t.function.name)).toEqual(["almanac"]);
    expect(researchAnswers?.messages.at(-1)).toMatchObject({ role: "tool", content: "Oslo" });
    // Its answer is what the desk's model reads as the call's result.
    expect(deskAnswers?.model).toBe("desk-model");
    expect(deskAnswers?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_desk", content: "The capital of Norway is Oslo." });
    expect(fake.violations).toEqual([]);

    // The client sees the desk's call, not the researcher's own.
    expect(client.of("tool.called")).toMatchObject([{ toolCallId: "call_desk", toolName: "research" }]);
    expect(client.of("tool.completed")).toMatchObject([{ toolCallId: "call_desk", result: "The capital of Norway is Oslo." }]);
    expect(client.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Front desk.", "It is Oslo."]);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    client.close();
  });

  it("is refused when the gateway is created, naming the sub-agent's field", () => {
    const voice = agent({ name: "voice", s2s: { kind: "openai-realtime", options: {} } });
    const desk = agent({ name: "desk", mode: "text", llm: llm("m"), subagents: { ask: subagent(voice, { description: "Asks." }) } });
    expect(() => createGateway({ agent: desk, logger: silentLogger, env: {}, processMetrics: false })).toThrow(ConfigError);
    expect(() => createGateway({ agent: desk, logger: silentLogger, env: {}, processMetrics: false })).toThrow(/subagents\.ask: voice is a speech-to-speech agent/);
  });
});

describe("a roster hand-off over the gateway", () => {
  const refund = tool({ description: "Refund the last order", effect: "write", execute: () => "Refund issued." });

  it("after the announcing reply, the member's prompt, model and tools take over with the conversation so far; agent.changed, then its greeting", async () => {
    const billing = withTools(
      agent({ name: "billing", mode: "text", greeting: "Billing here.", systemPrompt: "You handle billing.", listing: "Billing and refunds", llm: llm("billing-model"), maxRetries: 0 }),
      { refund },
    );
    const desk = agent({ name: "desk", mode: "text", greeting: "Front desk.", systemPrompt: "You run the front desk.", llm: llm("desk-model"), maxRetries: 0, roster: { billing } });
    fake.enqueue(
      { toolCalls: [{ name: "transfer_to_agent", args: { agent: "billing" }, id: "call_t" }] },
      { text: "Putting you through to billing." },
      { toolCalls: [{ name: "refund", args: {}, id: "call_r" }] },
      { text: "Your refund is on its way." },
    );
    const client = await connect(await serve(desk));
    const after = client.events.length;
    await client.say("I need a refund for order A17.");
    const change = await client.next("agent.changed", after);
    await client.next("agent-transcript.committed", client.events.indexOf(change));

    const [deskAsks, deskAnswers] = fake.requests;
    expect(deskAsks?.model).toBe("desk-model");
    expect(deskAsks?.messages[0]).toEqual({ role: "system", content: "You run the front desk." });
    expect(deskAsks?.tools?.map((t) => t.function.name)).toEqual(["transfer_to_agent"]);
    expect(deskAsks?.tools?.[0]?.function.parameters).toMatchObject({ properties: { agent: { enum: ["billing"] } }, required: ["agent"] });
    expect(deskAsks?.tools?.[0]?.function.description).toContain("billing (Billing and refunds)");
    expect(deskAnswers?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_t" });

    const types = client.types();
    const changed = types.indexOf("agent.changed");
    expect(types.slice(changed - 2, changed + 3)).toEqual(["reply.completed", "metrics.turn", "agent.changed", "agent-transcript.updated", "agent-transcript.committed"]);
    expect(client.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "desk" }]);
    expect(client.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Front desk.", "Putting you through to billing.", "Billing here."]);

    await client.say("Yes please.");
    const [billingAsks] = fake.requests.slice(2);
    expect(billingAsks?.model).toBe("billing-model");
    expect(billingAsks?.messages[0]).toEqual({ role: "system", content: "You handle billing." });
    expect(billingAsks?.tools?.map((t) => t.function.name)).toEqual(["refund"]);
    // The conversation so far: the desk's turn (its hand-off call and result included), billing's greeting, the new turn.
    expect(billingAsks?.messages.map((m) => m.role)).toEqual(["system", "assistant", "user", "assistant", "tool", "assistant", "assistant", "user"]);
    expect(billingAsks?.messages.find((m) => m.role === "user")?.content).toBe("I need a refund for order A17.");
    expect(client.of("tool.called").map((e) => e.toolName)).toEqual(["transfer_to_agent", "refund"]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Your refund is on its way.");
    expect(fake.violations).toEqual([]);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    client.close();
  });

  it("a session resumed after a hand-off goes on with the member that was speaking: its prompt, model and tools, no second greeting", async () => {
    const billing = withTools(agent({ name: "billing", mode: "text", greeting: "Billing here.", systemPrompt: "You handle billing.", llm: llm("billing-model"), maxRetries: 0 }), { refund });
    const desk = agent({ name: "desk", mode: "text", greeting: "Front desk.", systemPrompt: "You run the front desk.", llm: llm("desk-model"), maxRetries: 0, roster: { billing } });
    fake.enqueue({ toolCalls: [{ name: "transfer_to_agent", args: { agent: "billing" }, id: "call_t" }] }, { text: "Putting you through to billing." });
    const url = await serve(desk);
    const first = await connect(url);
    const configured = first.of("session.configured")[0];
    await first.say("I need a refund.");
    await first.next("agent.changed", 0);
    await first.next("agent-transcript.committed", first.events.indexOf(first.of("agent.changed")[0]!));
    first.close();
    await first.closed;

    fake.enqueue({ text: "Your refund is on its way." });
    const second = await connect(`${url}?sessionId=${configured?.sessionId ?? ""}&resumeKey=${configured?.resumeKey ?? ""}`);
    await second.next("history.restored", 0);
    expect(second.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "desk" }]);
    await second.say("Yes please.");
    const resumed = fake.requests.at(-1);
    expect(resumed?.model).toBe("billing-model");
    expect(resumed?.messages[0]).toEqual({ role: "system", content: "You handle billing." });
    expect(resumed?.tools?.map((t) => t.function.name)).toEqual(["refund"]);
    // The conversation goes on: no greeting from either agent on the resumed socket.
    expect(second.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Your refund is on its way."]);
    expect(fake.violations).toEqual([]);
    second.close();
  });

  it("is refused when the gateway is created, for a member that cannot share the connection", () => {
    const voice = agent({ name: "voice", tts: { kind: "cartesia", options: {} } });
    const desk = agent({ name: "desk", mode: "text", llm: llm("m"), roster: { voice } });
    expect(() => createGateway({ agent: desk, logger: silentLogger, env: {}, processMetrics: false })).toThrow(/roster\.voice: voice is a pipeline agent and desk a text one/);
  });
});
