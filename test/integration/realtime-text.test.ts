// WS /v1/realtime in front of a text agent, driven by the `openai` package's Realtime client.
import { Type } from "@sinclair/typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, clientTool, tool, withTools } from "../../src/manifest/index.js";
import { clientToolRefusal } from "../../src/realtime/client-tools.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway, GatewayOptions } from "../../src/server/gateway-types.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

const lookupOrder = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check." },
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

const pickColour = clientTool({ description: "Ask the page for a colour", parameters: Type.Object({ palette: Type.String() }) });

let fake: FakeOpenAiServer;
let gateway: Gateway;
let port: number;
let client: RealtimeTestClient | undefined;

async function start(overrides: Partial<GatewayOptions> = {}): Promise<void> {
  const def = withTools(
    agent({ name: "shop", mode: "text", greeting: "Welcome to the shop.", llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } }, maxRetries: 0, maxSteps: 3 }),
    { lookup_order: lookupOrder, pick_colour: pickColour },
  );
  gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false, ...overrides });
  ({ port } = await gateway.listen(0, "127.0.0.1"));
}

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await gateway.close();
  await fake.close();
});

/** Send a typed user message and ask for the response, as a Realtime client does. */
function type(rt: RealtimeTestClient, text: string): void {
  rt.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text }] } });
  rt.rt.send({ type: "response.create" });
}

describe("/v1/realtime with a text agent, from the openai package's Realtime client", () => {
  it("creates the session, greets, and answers a typed turn with a text response", async () => {
    await start();
    client = new RealtimeTestClient(port, "unused-with-auth-off");
    const created = await client.next("session.created");
    expect(created.session).toMatchObject({ type: "realtime", output_modalities: ["text"] });
    // The greeting is a response of its own.
    const greeting = await client.next("response.done");
    expect(greeting.response.status).toBe("completed");
    expect(greeting.response.output?.[0]).toMatchObject({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Welcome to the shop." }] });

    client.rt.send({ type: "session.update", session: { type: "realtime", instructions: "be brief", output_modalities: ["text"] } });
    await client.next("session.updated");

    fake.enqueue({ text: "Hello! How can I help you today?" });
    const after = client.events.length;
    type(client, "hi");
    const done = await client.next("response.done", after);
    expect(done.response.status).toBe("completed");
    const turn = client.types().slice(after);
    expect(turn.slice(0, 2)).toEqual(["conversation.item.added", "conversation.item.done"]);
    expect(turn.slice(2, 6)).toEqual(["response.created", "response.output_item.added", "conversation.item.added", "response.content_part.added"]);
    expect(turn.slice(-5)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "conversation.item.done", "response.done"]);
    const deltas = client.events.slice(after).flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello! How can I help you today?");
    expect(client.of("response.output_text.done").at(-1)?.text).toBe("Hello! How can I help you today?");
    expect(fake.requests[0]?.messages.at(-1)).toMatchObject({ role: "user", content: "hi" });
    // The agent's own prompt, not the client's instructions.
    expect(JSON.stringify(fake.requests[0]?.messages[0])).not.toContain("be brief");
    expect(client.errors).toEqual([]);
  });

  it("runs a server tool in the gateway: the client sees its start line in the text, and no function-call events", async () => {
    await start();
    client = new RealtimeTestClient(port, "k");
    await client.next("response.done");
    fake.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "It shipped on Friday." });
    const after = client.events.length;
    type(client, "where is A17?");
    const done = await client.next("response.done", after);
    const text = client.of("response.output_text.done").at(-1)?.text ?? "";
    expect(text).toContain("Let me check.");
    expect(text).toContain("It shipped on Friday.");
    expect(done.response.status).toBe("completed");
    expect(client.types().filter((t) => t.includes("function_call"))).toEqual([]);
    expect(fake.requests[1]?.messages.some((m) => m.role === "tool")).toBe(true);
  });

  it("answers the agent's clientTool call at once with a failure the model reads: this client did not declare it", async () => {
    await start();
    client = new RealtimeTestClient(port, "k");
    await client.next("response.done");
    fake.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_c" }] }, { text: "I cannot ask your page for a colour here." });
    const after = client.events.length;
    type(client, "pick a colour");
    expect((await client.next("response.done", after)).response.status).toBe("completed");
    const toolMessage = fake.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(toolMessage?.content)).toContain(clientToolRefusal("pick_colour"));
    expect(client.types().filter((t) => t.includes("function_call"))).toEqual([]);
  });

  it("refuses what this slice does not serve with a Realtime error naming it, and keeps the session", async () => {
    await start();
    client = new RealtimeTestClient(port, "k");
    await client.next("response.done");
    client.rt.send({ type: "output_audio_buffer.clear" });
    const refused = await client.next("error");
    expect(refused.error).toMatchObject({ type: "invalid_request_error", code: "unsupported_event" });
    expect(refused.error.message).toContain("output_audio_buffer.clear is not supported yet");
    client.rt.send({ type: "session.update", session: { type: "realtime", output_modalities: ["audio"] } });
    expect((await client.next("error")).error.param).toBe("session.output_modalities");
    client.rt.socket.send("{not json");
    expect((await client.next("error")).error.code).toBe("invalid_json");
    client.rt.send({ type: "response.create" });
    expect((await client.next("error")).error.code).toBe("no_new_input");
    client.rt.send({ type: "response.cancel" });
    expect((await client.next("error")).error.code).toBe("response_cancel_not_active");
    // Still served.
    fake.enqueue({ text: "Yes?" });
    const after = client.events.length;
    type(client, "hello");
    expect((await client.next("response.done", after)).response.status).toBe("completed");
  });
});

describe("/v1/realtime auth", () => {
  const KEY = "sk-test-realtime-key";

  it("takes the API key as a bearer header, and refuses a wrong one with a Realtime error and 1008", async () => {
    await start({ apiKey: KEY });
    client = new RealtimeTestClient(port, KEY);
    await client.next("session.created");
    client.close();

    const wrong = new RealtimeTestClient(port, "sk-wrong");
    const error = await wrong.next("error");
    expect(error.error).toMatchObject({ code: "invalid_api_key", message: "the API key or session token is not valid" });
    expect((await wrong.closed).code).toBe(1008);
    expect(wrong.types()).not.toContain("session.created");
  });

  it("takes a session token from POST /v1/sessions, and the browser subprotocol form", async () => {
    await start({ apiKey: KEY });
    const minted = (await (await fetch(`http://127.0.0.1:${port}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${KEY}` } })).json()) as { token: string };
    client = new RealtimeTestClient(port, minted.token);
    await client.next("session.created");
    client.close();

    const { WebSocket } = await import("ws");
    const browser = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?model=x`, ["realtime", `openai-insecure-api-key.${minted.token}`]);
    const first = await new Promise<{ type: string }>((resolve) => browser.once("message", (data: Buffer) => resolve(JSON.parse(data.toString()) as { type: string })));
    expect(browser.protocol).toBe("realtime");
    expect(first.type).toBe("session.created");
    browser.close();

    const bad = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime`, ["realtime", "openai-insecure-api-key.nope.nope"]);
    const refusal = await new Promise<{ type: string; error: { message: string } }>((resolve) => bad.once("message", (data: Buffer) => resolve(JSON.parse(data.toString()) as never)));
    expect(refusal).toMatchObject({ type: "error", error: { message: "the session token is not valid" } });
  });

  it("refuses an origin off the allow-list", async () => {
    await start({ apiKey: KEY, allowedOrigins: ["https://shop.example"] });
    const other = new RealtimeTestClient(port, KEY, { origin: "https://evil.example" });
    expect((await other.next("error")).error.code).toBe("origin_not_allowed");
    expect((await other.closed).code).toBe(1008);
  });
});
