// Client tools on WS /v1/realtime (docs/realtime.md "Client tools"): the agent's clientTool, declared
// by the client in session.update and run by it, round trip with the `openai` package's Realtime
// client and with the Agents SDK's RealtimeSession (its RealtimeAgent holds a tool() of the same
// name; the SDK runs it and answers), against a text agent and a pipeline agent on the vendor fakes.
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { RealtimeAgent, RealtimeSession, tool as sdkTool } from "@openai/agents-realtime";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../src/log.js";
import { agent, clientTool, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { startPipelineGateway } from "../helpers/pipeline-fakes.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";
import { FUNCTION_CALL_EVENTS } from "../helpers/realtime-orders.js";

const pickColour = clientTool({ description: "Ask the client for a colour", parameters: Type.Object({ palette: Type.String() }) });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A text agent with the clientTool `pick_colour`, on the fake LLM. */
async function textGateway(): Promise<{ port: number; llm: FakeOpenAiServer }> {
  const llm = await startFakeOpenAiServer();
  const def = withTools(agent({ name: "shop", mode: "text", greeting: "", llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } }, maxRetries: 0, maxSteps: 3 }), { pick_colour: pickColour });
  const gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false });
  cleanups.push(() => llm.close(), () => gateway.close());
  const { port } = await gateway.listen(0, "127.0.0.1");
  return { port, llm };
}

/** A pipeline agent with the clientTool `pick_colour`, on the vendor fakes. */
async function pipelineGateway() {
  const served = await startPipelineGateway((fakes) => withTools(agent({ name: "phone", greeting: "", ...fakes.providers }), { pick_colour: pickColour }));
  cleanups.push(() => served.close());
  return served;
}

function openaiClient(port: number): RealtimeTestClient {
  const client = new RealtimeTestClient(port, "k");
  cleanups.push(() => client.close());
  return client;
}

/** What the model read as the tool's result, in its next request. */
function toolResultRead(llm: FakeOpenAiServer): string {
  const content = llm.requests.at(-1)?.messages.find((m) => m.role === "tool")?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** 20 ms of a 24 kHz PCM16 tone. */
const tone = (): Int16Array => Int16Array.from({ length: 480 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)));

describe("client tools on /v1/realtime, from the openai package's Realtime client", () => {
  it("a text agent: the call ends its response, the output is the tool's result, and the continuation is a new response that uses it", async () => {
    const { port, llm } = await textGateway();
    const client = openaiClient(port);
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "pick_colour", description: "mine", parameters: { type: "object" } }] } });
    const updated = await client.next("session.updated");
    // The agent's declaration stands, not the client's.
    expect((updated.session as { tools?: unknown }).tools).toEqual([{ type: "function", name: "pick_colour", description: "Ask the client for a colour", parameters: expect.objectContaining({ required: ["palette"] }) }]);

    llm.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_c" }] }, { text: "Your colour is amber." });
    const after = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "pick a colour" }] } });
    client.rt.send({ type: "response.create" });
    const called = await client.next("response.function_call_arguments.done", after);
    expect(called).toMatchObject({ call_id: "call_c", name: "pick_colour", arguments: JSON.stringify({ palette: "warm" }) });
    const ended = await client.next("response.done", after);
    expect(ended.response).toMatchObject({ status: "completed", output: [{ type: "function_call", call_id: "call_c", name: "pick_colour", status: "completed" }] });
    expect(client.types().slice(client.types().indexOf("response.created", after))).toEqual([
      "response.created",
      ...FUNCTION_CALL_EVENTS,
      "response.done",
    ]);

    const answered = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_c", output: "amber" } });
    client.rt.send({ type: "response.create" });
    const next = await client.next("response.done", answered);
    expect(next.response.output?.[0]).toMatchObject({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Your colour is amber." }] });
    expect(toolResultRead(llm)).toBe("amber");
    expect((await client.next("conversation.item.added", answered)).item).toMatchObject({ type: "function_call_output", call_id: "call_c", output: "amber" });
    // The absorbed response.create is no error; the answered call cannot be answered again.
    expect(client.of("error")).toEqual([]);
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_c", output: "red" } });
    expect((await client.next("error")).error).toMatchObject({ type: "invalid_request_error", param: "item.call_id" });
    // The call and its output are remembered.
    client.rt.send({ type: "conversation.item.retrieve", item_id: called.item_id });
    expect((await client.next("conversation.item.retrieved")).item).toMatchObject({ type: "function_call", call_id: "call_c", arguments: JSON.stringify({ palette: "warm" }) });
    expect(llm.violations).toEqual([]);
  });

  it("a text agent's words before the call end with the call's response; the continuation shows only what follows", async () => {
    const { port, llm } = await textGateway();
    const client = openaiClient(port);
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "pick_colour" }] } });
    await client.next("session.updated");
    llm.enqueue({ text: "One moment.", toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_w" }] }, { text: "Your colour is amber." });
    const after = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "pick a colour" }] } });
    client.rt.send({ type: "response.create" });
    const first = await client.next("response.done", after);
    expect(first.response.output).toMatchObject([
      { type: "message", content: [{ type: "output_text", text: "One moment." }] },
      { type: "function_call", call_id: "call_w" },
    ]);
    const answered = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_w", output: "amber" } });
    client.rt.send({ type: "response.create" });
    const next = await client.next("response.done", answered);
    const deltas = client.events.slice(answered).flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(next.response.output?.[0]).toMatchObject({ content: [{ type: "output_text", text: "Your colour is amber." }] });
    expect(deltas.join("")).toBe("Your colour is amber.");
    expect(client.of("error")).toEqual([]);
  });

  it("refuses a declared tool the agent does not have (nothing applied), and an undeclared clientTool keeps failing at once", async () => {
    const { port, llm } = await textGateway();
    const client = openaiClient(port);
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "pick_colour" }, { type: "function", name: "weather" }] } });
    const refused = await client.next("error");
    expect(refused.error).toMatchObject({ code: "unsupported_value", param: "session.tools.1.name" });
    expect(refused.error.message).toContain("clientTool(");
    expect(client.types()).not.toContain("session.updated");

    llm.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_c" }] }, { text: "I cannot ask for a colour here." });
    const after = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "pick a colour" }] } });
    client.rt.send({ type: "response.create" });
    await client.next("response.done", after);
    expect(client.types().filter((t) => t.includes("function_call"))).toEqual([]);
    expect(toolResultRead(llm)).toContain("did not declare it");
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_c", output: "amber" } });
    expect((await client.next("error")).error.param).toBe("item.call_id");
  });

  it("a pipeline agent: a spoken turn's call, answered, and the spoken continuation uses the result", async () => {
    const { fakes, port } = await pipelineGateway();
    const client = openaiClient(port);
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "pick_colour" }] } });
    await client.next("session.updated");
    fakes.llm.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_v" }] }, { text: "Your colour is amber." });
    const after = client.events.length;
    fakes.stt.speechStarted();
    for (let i = 0; i < 10; i++) {
      client.rt.send({ type: "input_audio_buffer.append", audio: Buffer.from(tone().buffer).toString("base64") });
      await sleep(20);
    }
    fakes.stt.final("pick a colour for me", { speechFinal: true });
    const call = await client.next("response.output_item.done", after);
    expect(call.item).toMatchObject({ type: "function_call", call_id: "call_v", status: "completed" });
    const answered = client.events.length;
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: call.item.type === "function_call" ? (call.item.call_id ?? "") : "", output: "amber" } });
    client.rt.send({ type: "response.create" });
    const spoken = await client.next("response.output_audio_transcript.done", answered);
    expect(spoken.transcript).toBe("Your colour is amber.");
    expect(client.of("response.output_audio.delta").filter((e) => e.response_id === spoken.response_id).length).toBeGreaterThan(0);
    expect(toolResultRead(fakes.llm)).toBe("amber");
    expect(client.of("error")).toEqual([]);
  }, 30_000);
});

describe("client tools on /v1/realtime in front of an s2s agent", () => {
  it("the service's call of a declared clientTool reaches the client, and the spoken reply uses its answer", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 10 });
    const def = withTools(agent({ name: "realtime", greeting: "", s2s: { kind: "openai-realtime", options: { url: service.url } } }), { pick_colour: pickColour });
    const gateway = createGateway({ agent: def, logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
    cleanups.push(() => service.close(), () => gateway.close());
    const { port } = await gateway.listen(0, "127.0.0.1");
    const client = openaiClient(port);
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "pick_colour" }] } });
    await client.next("session.updated");
    service.enqueue({ toolCall: { name: "pick_colour", args: { palette: "warm" } } }, { say: "Your colour is amber.", audioMs: 300 });
    const after = client.events.length;
    await service.userSays("pick a colour for me");
    const call = await client.next("response.function_call_arguments.done", after);
    expect(call).toMatchObject({ name: "pick_colour", arguments: JSON.stringify({ palette: "warm" }) });
    client.rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: call.call_id, output: "amber" } });
    client.rt.send({ type: "response.create" });
    while (!client.of("response.output_audio_transcript.done").some((e) => e.transcript.includes("amber"))) await client.next("response.done");
    // The client's answer reached the service as the call's output.
    const output = service.messages.map((m) => m.message).find((m) => m.type === "conversation.item.create" && (m.item as { type?: string } | undefined)?.type === "function_call_output");
    expect(output?.item).toMatchObject({ output: "amber" });
    expect(client.of("error")).toEqual([]);
    expect(service.violations).toEqual([]);
  }, 30_000);
});

/** A RealtimeAgent holding the SDK tool `pick_colour` (the SDK runs it and answers). */
function sdkAgent(runs: string[]): RealtimeAgent {
  const pick = sdkTool({
    name: "pick_colour",
    description: "Pick a colour",
    parameters: z.object({ palette: z.string() }),
    execute: ({ palette }) => {
      runs.push(palette);
      return "amber";
    },
  });
  return new RealtimeAgent({ name: "front", instructions: "", tools: [pick] });
}

/** Resolves with the first assistant text of a response that ends with `text`. */
function agentSays(session: RealtimeSession, text: string): Promise<void> {
  return new Promise((resolve) => session.on("agent_end", (_ctx, _agent, output) => output === text && resolve()));
}

describe("client tools on /v1/realtime, from the Agents SDK's RealtimeSession", () => {
  it("a text agent: the SDK runs its tool of the same name and the reply uses the result", async () => {
    const { port, llm } = await textGateway();
    const runs: string[] = [];
    const session = new RealtimeSession(sdkAgent(runs), { transport: "websocket", config: { outputModalities: ["text"] } });
    cleanups.push(() => session.close());
    const errors: unknown[] = [];
    session.on("error", (e) => errors.push(e));
    // The SDK's own schemas parse the function-call events (it drops what does not match).
    const raw: string[] = [];
    const parsed: string[] = [];
    session.transport.on("*", (e: { type: string }) => raw.push(e.type));
    for (const type of ["response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done"] as const) session.transport.on(type, () => parsed.push(type));
    await session.connect({ apiKey: "k", url: `ws://127.0.0.1:${port}/v1/realtime` });
    llm.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_s" }] }, { text: "Your colour is amber." });
    const said = agentSays(session, "Your colour is amber.");
    session.sendMessage("pick a colour");
    await said;
    expect(runs).toEqual(["warm"]);
    expect(toolResultRead(llm)).toBe("amber");
    expect(session.history.map((item) => item.type)).toEqual(["message", "function_call", "message"]);
    expect(session.history[1]).toMatchObject({ type: "function_call", name: "pick_colour", output: "amber" });
    expect(parsed).toEqual(raw.filter((type) => parsed.includes(type)));
    expect(parsed).toContain("response.function_call_arguments.done");
    expect(errors).toEqual([]);
    // The session goes on: the SDK's response.create after the output was answered by the continuation.
    llm.enqueue({ text: "Anything else?" });
    const again = agentSays(session, "Anything else?");
    session.sendMessage("thanks");
    await again;
    expect(errors).toEqual([]);
  });

  it("a pipeline agent: a spoken turn, the SDK's tool, the spoken reply uses the result", async () => {
    const { fakes, port } = await pipelineGateway();
    const runs: string[] = [];
    const session = new RealtimeSession(sdkAgent(runs), { transport: "websocket" });
    cleanups.push(() => session.close());
    const errors: unknown[] = [];
    session.on("error", (e) => errors.push(e));
    await session.connect({ apiKey: "k", url: `ws://127.0.0.1:${port}/v1/realtime` });
    fakes.llm.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_p" }] }, { text: "Your colour is amber." });
    const said = agentSays(session, "Your colour is amber.");
    for (let i = 0; i < 10; i++) {
      session.sendAudio(new Uint8Array(tone().buffer).slice().buffer);
      await sleep(20);
    }
    fakes.stt.final("pick a colour for me", { speechFinal: true });
    await said;
    expect(runs).toEqual(["warm"]);
    expect(toolResultRead(fakes.llm)).toBe("amber");
    const items = session.history.map((item) => (item.type === "message" ? item.role : item.type));
    expect(items).toEqual(["user", "function_call", "assistant"]);
    expect(errors).toEqual([]);
  }, 30_000);
});
