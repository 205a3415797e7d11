import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import WebSocket from "ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, clientTool, tool, withTools, type ToolContext } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway, GatewayOptions } from "../../src/server/gateway-types.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { closedPortUrl, startMcpServer } from "../helpers/mcp-server.js";
import { connect, refusalOf, TestClient } from "../helpers/ws-client.js";

interface Caller {
  verified: boolean;
}

const lookupOrder = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: {
    start: "Let me check.",
    delayed: [{ afterMs: 60, content: "Still checking." }],
    complete: "Your order is on its way.",
  },
  execute: async ({ orderId }) => {
    await sleep(200);
    return { text: `Order ${orderId} shipped.`, details: { orderId } };
  },
});

const refund = tool({
  description: "Refund an order",
  parameters: Type.Object({ orderId: Type.String() }),
  effect: "write",
  gate: (ctx: ToolContext<Caller>) => (ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Ask for their PIN." }),
  execute: () => "Refunded.",
});

const pickColour = clientTool({ description: "Ask the page for a colour", parameters: Type.Object({ palette: Type.String() }) });
const ping = tool({ description: "Ping", execute: () => "pong" });

let fake: FakeOpenAiServer;
let gateway: Gateway;
let base: string;

async function start(overrides: Partial<GatewayOptions<Caller>> = {}, agentOverrides: Record<string, unknown> = {}): Promise<void> {
  const def = withTools(
    agent<Caller>({
      name: "shop",
      mode: "text",
      greeting: "Welcome to the shop.",
      llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } },
      maxRetries: 0,
      maxSteps: 3,
      sessionContext: () => ({ verified: false }),
      ...agentOverrides,
    }),
    { lookup_order: lookupOrder, refund, pick_colour: pickColour, ping },
  );
  gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false, ...overrides });
  const { url } = await gateway.listen(0);
  base = url;
}

const wsUrl = (query = ""): string => `${base.replace(/^http/, "ws")}/websocket${query}`;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});

afterEach(async () => {
  await gateway.close();
  await fake.close();
});

describe("text mode over a real socket and a real provider", () => {
  it("greets, then answers a typed turn with streamed text; every event matches the protocol schema", async () => {
    await start();
    fake.enqueue({ text: "Hello! How can I help you today?" });
    const client = await connect(wsUrl());
    await client.say("hi");
    expect(client.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome to the shop.", "Hello! How can I help you today?"]);
    expect(client.of("agent-transcript.updated").length).toBeGreaterThan(2);
    expect(client.of("user-transcript.committed").map((e) => e.text)).toEqual(["hi"]);
    expect(client.of("metrics.turn")[0]?.llmFirstTokenMs).toBeGreaterThanOrEqual(0);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    const ids = client.events.map((e) => e.meta.id);
    expect([...ids].sort()).toEqual(ids);
    expect(fake.requests[0]?.messages.at(-1)).toMatchObject({ role: "user", content: "hi" });
    expect(fake.violations).toEqual([]);
    client.close();
  });

  it("speaks a tool's start and delayed lines, and ends the step on its verbatim completion without calling the model again", async () => {
    await start();
    fake.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] });
    const client = await connect(wsUrl());
    await client.say("where is my order A17?");
    const messages = client.of("tool.message").map((m) => [m.kind, m.text]);
    expect(messages).toEqual([
      ["start", "Let me check."],
      ["delayed", "Still checking."],
      ["complete", "Your order is on its way."],
    ]);
    expect(client.of("tool.called")).toMatchObject([{ toolCallId: "call_1", toolName: "lookup_order", args: { orderId: "A17" } }]);
    expect(client.of("tool.completed")).toMatchObject([{ toolCallId: "call_1", result: "Order A17 shipped." }]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Your order is on its way.");
    expect(fake.requests).toHaveLength(1);

    fake.enqueue({ text: "Anything else?" });
    await client.say("thanks");
    const history = fake.requests[1]?.messages.map((m) => m.role);
    expect(history).toEqual(["system", "assistant", "user", "assistant", "tool", "assistant", "user"]);
    expect(fake.violations).toEqual([]);
    client.close();
  });

  it("refuses a gated tool with a result the model reads, and keeps the tool advertised", async () => {
    await start();
    fake.enqueue({ toolCalls: [{ name: "refund", args: { orderId: "A17" } }] }, { text: "I need to verify you first." });
    const client = await connect(wsUrl());
    await client.say("refund A17");
    expect(client.of("tool.completed")[0]).toMatchObject({ isError: true, result: "refund cannot run now: the caller is not verified. Ask for their PIN." });
    const toolMessage = fake.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(toolMessage?.content)).toContain("cannot run now");
    expect(fake.requests[1]?.tools?.map((t) => t.function.name)).toEqual(["lookup_order", "refund", "pick_colour", "ping"]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("I need to verify you first.");
    client.close();
  });

  it("relays a client tool over tool.called and tool_result", async () => {
    await start();
    fake.enqueue({ toolCalls: [{ name: "pick_colour", args: { palette: "warm" }, id: "call_c" }] }, { text: "Amber it is." });
    const client = await connect(wsUrl());
    client.send({ type: "user_text", text: "pick a colour" });
    const called = await client.next("tool.called");
    expect(called).toMatchObject({ toolCallId: "call_c", toolName: "pick_colour", args: { palette: "warm" } });
    client.send({ type: "tool_result", toolCallId: "call_c", result: "amber" });
    await client.next("metrics.turn");
    expect(client.of("tool.completed")).toMatchObject([{ toolCallId: "call_c", result: "amber" }]);
    const toolMessage = fake.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(toolMessage?.content)).toBe("amber");
    client.close();
  });

  it("forces the step after maxSteps to toolChoice none so the reply ends in speech", async () => {
    await start();
    fake.enqueue(
      { toolCalls: [{ name: "ping", args: {} }] },
      { toolCalls: [{ name: "ping", args: {} }] },
      { toolCalls: [{ name: "ping", args: {} }] },
      { text: "All pinged." },
    );
    const client = await connect(wsUrl());
    await client.say("ping a lot");
    expect(fake.requests.map((r) => r.tool_choice ?? "auto")).toEqual(["auto", "auto", "auto", "none"]);
    expect(client.of("tool.called")).toHaveLength(3);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("All pinged.");
    expect(fake.violations).toEqual([]);
    client.close();
  });

  it("answers an LLM 500 with a non-fatal error and the error phrase, and keeps going", async () => {
    await start();
    fake.enqueue({ status: 500 });
    const client = await connect(wsUrl());
    await client.say("hello?");
    expect(client.of("error.reported")).toMatchObject([{ code: "llm", fatal: false }]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Sorry, I had a problem just then. Could you say that again?");
    fake.enqueue({ text: "I'm back." });
    await client.say("hello again");
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("I'm back.");
    expect(fake.requests[1]?.messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["Welcome to the shop."]);
    client.close();
  });

  it("resumes a session on reconnect: history.restored, no second greeting; a live id is taken over", async () => {
    await start();
    fake.enqueue({ text: "Noted." });
    const first = await connect(wsUrl());
    const sessionId = first.events[0]?.type === "session.configured" ? first.events[0].sessionId : "";
    await first.say("my name is Ada");

    const resumeKey = first.events[0]?.type === "session.configured" ? first.events[0].resumeKey : "";
    expect(resumeKey).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const second = await connect(wsUrl(`?sessionId=${sessionId}&resumeKey=${resumeKey}&resume`));
    expect(await first.closed).toEqual({ code: 1000, reason: "session resumed by another connection" });
    expect(second.events[0]).toMatchObject({ type: "session.configured", sessionId, resumeKey });
    const restored = await second.next("history.restored", 0);
    expect(restored.messages).toEqual([
      { role: "assistant", text: "Welcome to the shop." },
      { role: "user", text: "my name is Ada" },
      { role: "assistant", text: "Noted." },
    ]);
    expect(second.of("agent-transcript.committed")).toEqual([]);
    fake.enqueue({ text: "Yes, Ada." });
    await second.say("do you remember me?");
    expect(fake.requests[1]?.messages.map((m) => m.content)).toContain("my name is Ada");
    second.close();

    const unknown = await connect(wsUrl("?sessionId=never-seen&resume"));
    await unknown.next("agent-transcript.committed", 0);
    expect(unknown.of("history.restored")).toEqual([]);
    expect(unknown.events[0]).toMatchObject({ type: "session.configured" });
    expect(unknown.events[0]?.type === "session.configured" && unknown.events[0].sessionId).not.toBe("never-seen");
    expect(unknown.events[1]).toMatchObject({ type: "error.reported", code: "auth", fatal: false });
    unknown.close();
  });

  it("a valid token and a session id are not enough to take a session over or read its transcript: resuming needs the owner's resume key", async () => {
    await start({ apiKey: "gateway-key" });
    const token = async (): Promise<string> => ((await (await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer gateway-key" } })).json()) as { token: string }).token;
    fake.enqueue({ text: "Your card ends in 4242." });
    const owner = await connect(wsUrl(`?token=${await token()}`));
    const configured = owner.events[0]?.type === "session.configured" ? owner.events[0] : undefined;
    await owner.say("which card is on file?");

    // While the owner is connected: no takeover without the key.
    const thief = await connect(wsUrl(`?token=${await token()}&sessionId=${configured?.sessionId ?? ""}&resumeKey=guessed`));
    await thief.next("agent-transcript.committed", 0);
    expect(thief.events[0]).toMatchObject({ type: "session.configured" });
    expect(thief.events[0]?.type === "session.configured" && thief.events[0].sessionId).not.toBe(configured?.sessionId);
    expect(thief.of("history.restored")).toEqual([]);
    expect(thief.events[1]).toMatchObject({ type: "error.reported", code: "auth", fatal: false });
    expect(owner.ws.readyState).toBe(owner.ws.OPEN);
    thief.close();

    // While the owner is disconnected (the record waits out the resume grace): still nothing without the key.
    owner.close();
    await owner.closed;
    const later = await connect(wsUrl(`?token=${await token()}&sessionId=${configured?.sessionId ?? ""}`));
    await later.next("agent-transcript.committed", 0);
    expect(later.of("history.restored")).toEqual([]);
    expect(JSON.stringify(later.events)).not.toContain("4242");
    later.close();

    // The owner, with its key, gets its conversation back.
    const back = await connect(wsUrl(`?token=${await token()}&sessionId=${configured?.sessionId ?? ""}&resumeKey=${configured?.resumeKey ?? ""}`));
    expect((await back.next("history.restored", 0)).messages.map((m) => m.text)).toContain("Your card ends in 4242.");
    back.close();
  });

  it("survives malformed, unknown and oversized frames with clear errors", async () => {
    await start({ limits: { maxTextFrameBytes: 1024, maxBinaryFrameBytes: 2048 } });
    const client = await connect(wsUrl());
    await client.next("reply.completed", 0);
    client.send("{not json");
    client.send({ type: "future_command", x: 1 });
    client.send({ type: "user_text" });
    client.send({ type: "user_text", text: "x".repeat(2000) });
    client.ws.send(Buffer.alloc(4096));
    fake.enqueue({ text: "Still here." });
    await client.say("are you there?");
    const errors = client.of("error.reported");
    expect(errors.map((e) => [e.code, e.fatal])).toEqual([
      ["protocol", false],
      ["protocol", false],
      ["protocol", false],
    ]);
    expect(errors[0]?.message).toMatch(/^user_text: text: /);
    expect(errors[1]?.message).toMatch(/text frame of \d+ bytes exceeds 1024/);
    expect(errors[2]?.message).toMatch(/binary frame of 4096 bytes exceeds 2048/);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Still here.");
    client.close();
  });

  it("serves health, readiness, client config and Prometheus metrics; refuses unknown paths", async () => {
    await start();
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok" });
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const config = (await (await fetch(`${base}/client-config`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({ name: "shop", greeting: "Welcome to the shop.", mode: "text", sampleRate: 16000, ttsSampleRate: 24000 });
    expect(config.codecs).toEqual(expect.arrayContaining(["pcm16"]));
    expect(String(config.sessionUrl)).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/websocket$/);
    fake.enqueue({ toolCalls: [{ name: "ping", args: {} }] }, { text: "ok" });
    const client = await connect(wsUrl());
    await client.say("ping");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_sessions_total\{mode="text",transport="websocket"\} 1/);
    expect(metrics).toMatch(/switchboard_tool_calls_total\{outcome="ok"\} 1/);
    expect(metrics).toMatch(/switchboard_turns_total\{mode="text"\} 1/);
    expect(metrics).toMatch(/switchboard_provider_latency_seconds_count\{provider="openai-compatible",stage="llm_first_token"\} 1/);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const stray = new WebSocket(`${base.replace(/^http/, "ws")}/elsewhere`);
    const failure = await new Promise<string>((resolve) => stray.once("unexpected-response", (_req, res) => resolve(String(res.statusCode))));
    expect(failure).toBe("404");
    client.close();
  });
});

describe("the session's tool table", () => {
  it("composes file tools, builtins and MCP tools once; a down MCP server costs only its own tools", async () => {
    const mcp = await startMcpServer();
    try {
      await start({}, { builtinTools: ["calculate"], mcpServers: { demo: { url: mcp.url, allowedTools: ["echo"] }, gone: { url: await closedPortUrl() } } });
      fake.enqueue({ toolCalls: [{ name: "mcp_demo_echo", args: { text: "hi" } }] }, { text: "It said hi." });
      const client = await connect(wsUrl());
      await client.say("echo hi");
      expect(fake.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["lookup_order", "refund", "pick_colour", "ping", "calculate", "mcp_demo_echo"]);
      expect(client.of("tool.completed")[0]).toMatchObject({ result: "echo: hi" });
      expect(fake.requests[1]?.tools).toEqual(fake.requests[0]?.tools);
      client.close();
    } finally {
      await mcp.close();
    }
  });
});

describe("auth", () => {
  it("refuses a socket without a valid token with error.reported then 1008; a minted token connects", async () => {
    await start({ apiKey: "sk-test-key" });
    const anonymous = new TestClient(wsUrl());
    const refused = await anonymous.next("error.reported", 0);
    expect(refused).toMatchObject({ code: "auth", fatal: true });
    expect((await anonymous.closed).code).toBe(1008);

    const wrong = await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const minted = (await (await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer sk-test-key" } })).json()) as {
      token: string;
      expiresAt: number;
    };
    expect(minted.token).toMatch(/^[\w-]+\.[\w-]+$/);
    const client = await connect(wsUrl(`?token=${minted.token}`));
    await client.next("reply.completed", 0);
    client.close();

    const forged = new TestClient(wsUrl(`?token=${minted.token.slice(0, -2)}xx`));
    expect((await forged.next("error.reported", 0)).message).toMatch(/not valid/);
    expect((await forged.closed).code).toBe(1008);
  });

  it("refuses an expired token and a disallowed origin", async () => {
    await start({ apiKey: "sk-test-key", tokenTtlMs: 1, allowedOrigins: ["https://app.example.com"] });
    const minted = (await (await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer sk-test-key" } })).json()) as { token: string };
    await sleep(5);
    const expired = new TestClient(wsUrl(`?token=${minted.token}`), { origin: "https://app.example.com" });
    expect((await expired.next("error.reported", 0)).message).toMatch(/expired/);
    const foreign = new TestClient(wsUrl(`?token=${minted.token}`), { origin: "https://evil.example.com" });
    expect((await foreign.next("error.reported", 0)).message).toMatch(/origin https:\/\/evil\.example\.com is not allowed/);
    expect((await foreign.closed).code).toBe(1008);
  });
});

describe("security settings", () => {
  it("puts /metrics behind its token when one is set", async () => {
    await start({ metricsToken: "scrape-me" });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const ok = await fetch(`${base}/metrics`, { headers: { authorization: "Bearer scrape-me" } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("switchboard_sessions_total");
  });

  it("refuses a client address that opens sessions faster than the limit, with 429 and the reason", async () => {
    await start({ connectionsPerMinute: 2 });
    const first = await connect(wsUrl());
    const second = await connect(wsUrl());
    expect(await refusalOf(wsUrl())).toEqual({ status: 429, body: "more than 2 connections a minute from this address; retry later\n" });
    first.close();
    second.close();
  });
});

describe("drain", () => {
  it("goes unready, refuses new sessions, lets live ones run to the deadline, then closes them 1001", async () => {
    await start();
    const client = await connect(wsUrl());
    await client.next("reply.completed", 0);
    const draining = gateway.drain(400);
    await sleep(50);
    expect((await fetch(`${base}/ready`)).status).toBe(503);
    expect(await refusalOf(wsUrl())).toEqual({ status: 503, body: "gateway draining: connect again (to another instance)\n" });
    fake.enqueue({ text: "Still serving you." });
    await client.say("are you closing?");
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Still serving you.");
    await draining;
    expect((await client.closed).code).toBe(1001);
  });

  it("ends as soon as the last live session does, well before the deadline", async () => {
    await start();
    const client = await connect(wsUrl());
    await client.next("reply.completed", 0);
    const started = Date.now();
    const draining = gateway.drain(20_000);
    await sleep(100);
    client.close();
    await draining;
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
