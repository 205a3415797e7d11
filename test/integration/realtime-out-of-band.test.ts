// WS /v1/realtime: out-of-band responses (response.create with conversation "none") from the openai
// package's Realtime client — a text agent on the fake OpenAI-compatible LLM, and a pipeline agent on
// the vendor fakes: the agent's model answers in text, with no tools, outside the conversation.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startPipelineGateway } from "../helpers/pipeline-fakes.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

let fake: FakeOpenAiServer;
let gateway: Gateway | undefined;
let closePipeline: (() => Promise<void>) | undefined;
let client: RealtimeTestClient | undefined;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await gateway?.close();
  gateway = undefined;
  await closePipeline?.();
  closePipeline = undefined;
  await fake.close();
});

async function textAgent(): Promise<number> {
  const def = agent({ name: "shop", mode: "text", systemPrompt: "You run the shop.", greeting: "Welcome to the shop.", llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } }, maxRetries: 0 });
  gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false });
  return (await gateway.listen(0, "127.0.0.1")).port;
}

function type(rt: RealtimeTestClient, text: string): void {
  rt.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text }] } });
  rt.rt.send({ type: "response.create" });
}

describe("/v1/realtime out-of-band responses", () => {
  it("a text agent classifies the conversation so far in text: conversation_id null, metadata echoed, the conversation untouched", async () => {
    client = new RealtimeTestClient(await textAgent(), "k");
    await client.next("response.done");
    fake.enqueue({ text: "It shipped on Friday." });
    let after = client.events.length;
    type(client, "where is my order?");
    await client.next("response.done", after);

    fake.enqueue({ text: "order_status" });
    after = client.events.length;
    client.rt.send({ type: "response.create", response: { conversation: "none", instructions: "Classify the caller's intent in one word.", output_modalities: ["text"], metadata: { topic: "intent" } } });
    const done = await client.next("response.done", after);
    expect(done.response).toMatchObject({ status: "completed", conversation_id: null, metadata: { topic: "intent" }, output: [{ role: "assistant", content: [{ type: "output_text", text: "order_status" }] }] });
    const created = await client.next("response.created", after);
    expect(created.response).toMatchObject({ id: done.response.id, conversation_id: null, metadata: { topic: "intent" } });
    const deltas = client.events.slice(after).flatMap((e) => (e.type === "response.output_text.delta" && e.response_id === done.response.id ? [e.delta] : []));
    expect(deltas.join("")).toBe("order_status");
    // Its item joins no conversation.
    expect(client.types().slice(after).filter((t) => t.startsWith("conversation.item"))).toEqual([]);
    // The model saw the client's instructions as the system prompt, the conversation so far, and no tools.
    const request = fake.requests.at(-1);
    expect(request?.messages[0]).toMatchObject({ role: "system", content: "Classify the caller's intent in one word." });
    expect(request?.messages.map((m) => m.role)).toEqual(["system", "assistant", "user", "assistant"]);
    expect(request?.tools).toBeUndefined();

    // The next turn's history holds nothing of it.
    fake.enqueue({ text: "Anything else?" });
    after = client.events.length;
    type(client, "thanks");
    await client.next("response.done", after);
    const next = fake.requests.at(-1);
    expect(JSON.stringify(next?.messages)).not.toContain("order_status");
    expect(next?.messages[0]).toMatchObject({ role: "system", content: expect.stringContaining("You run the shop.") });
    expect(client.errors).toEqual([]);
  });

  it("answers over the client's own input, one at a time, and is cancelled by its response_id", async () => {
    client = new RealtimeTestClient(await textAgent(), "k");
    await client.next("response.done");
    fake.enqueue({ text: "A short summary.", delayMs: 300 });
    const after = client.events.length;
    const input = (): [{ type: "message"; role: "user"; content: [{ type: "input_text"; text: string }] }] => [{ type: "message", role: "user", content: [{ type: "input_text", text: "Summarise: the parcel left on Friday." }] }];
    client.rt.send({ type: "response.create", response: { conversation: "none", input: input() } });
    client.rt.send({ type: "response.create", response: { conversation: "none", input: input() } });
    const busy = await client.next("error", after);
    expect(busy.error.code).toBe("conversation_already_has_active_response");
    const done = await client.next("response.done", after);
    expect(done.response.status).toBe("completed");
    expect(fake.requests.at(-1)?.messages.slice(1)).toEqual([{ role: "user", content: "Summarise: the parcel left on Friday." }]);

    fake.enqueue({ text: "never", delayMs: 5000 });
    const again = client.events.length;
    client.rt.send({ type: "response.create", response: { conversation: "none", input: input() } });
    const created = await client.next("response.created", again);
    client.rt.send({ type: "response.cancel", response_id: created.response.id ?? "" });
    const cancelled = await client.next("response.done", again);
    expect(cancelled.response).toMatchObject({ id: created.response.id, status: "cancelled", status_details: { type: "cancelled", reason: "client_cancelled" } });
  });

  it("refuses what it does not serve: tools, audio output, and parameters on the default response", async () => {
    client = new RealtimeTestClient(await textAgent(), "k");
    await client.next("response.done");
    const after = client.events.length;
    client.rt.send({ type: "response.create", response: { conversation: "none", tools: [] } });
    client.rt.send({ type: "response.create", response: { conversation: "none", output_modalities: ["audio"] } });
    client.rt.send({ type: "response.create", response: { instructions: "hi" } });
    client.rt.send({ type: "response.create", response: { conversation: "none", instructions: "x".repeat(20_001) } });
    await client.next("error", after + 3);
    expect(client.of("error").map((e) => [e.error.code, e.error.param])).toEqual([
      ["unsupported_value", "response.tools"],
      ["unsupported_value", "response.output_modalities"],
      ["unsupported_value", "response.instructions"],
      ["invalid_value", "response.instructions"],
    ]);
  });

  it("a pipeline agent answers one in text with its own model, no audio", async () => {
    const served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }));
    closePipeline = () => served.close();
    client = new RealtimeTestClient(served.port, "k");
    await client.next("response.done");
    served.fakes.llm.enqueue({ text: "greeting" });
    const after = client.events.length;
    client.rt.send({ type: "response.create", response: { conversation: "none", instructions: "Name the last thing said.", metadata: { kind: "label" } } });
    const done = await client.next("response.done", after);
    expect(done.response).toMatchObject({ status: "completed", conversation_id: null, output_modalities: ["text"], metadata: { kind: "label" }, output: [{ content: [{ type: "output_text", text: "greeting" }] }] });
    expect(served.fakes.llm.requests.at(-1)?.messages).toEqual([
      { role: "system", content: "Name the last thing said." },
      { role: "assistant", content: "Welcome to the shop." },
    ]);
    expect(client.of("response.output_audio.delta").filter((e) => e.response_id === done.response.id)).toEqual([]);
  }, 30_000);
});
