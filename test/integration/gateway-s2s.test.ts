import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

let counted = countedLookupOrder();

let service: FakeOpenAiRealtime;
let gateway: Gateway;
let client: TestClient | undefined;

beforeEach(async () => {
  counted = countedLookupOrder();
  service = await startFakeOpenAiRealtime({ paceMs: 10 });
  const def = withTools(agent({ name: "realtime", greeting: "Welcome to the shop.", s2s: { kind: "openai-realtime", options: { url: service.url } } }), { lookup_order: counted.lookupOrder });
  gateway = createGateway({ agent: def, logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
  await gateway.listen(0);
});

afterEach(async () => {
  client?.close();
  await gateway.close();
  await service.close();
});

describe("an s2s session over the OpenAI Realtime wire protocol", () => {
  it("sets up once, greets in the model's voice, answers a tool call once with its spoken start line, and truncates after a barge-in", async () => {
    const address = gateway.server.address() as { port: number };
    service.enqueue({ say: "Welcome to the shop.", audioMs: 300 });
    client = await connect(`ws://127.0.0.1:${address.port}/websocket`);
    await client.next("reply.completed", 0);

    service.enqueue(
      { toolCall: { name: "lookup_order", args: { orderId: "A17" } } },
      { say: "Let me check that order.", audioMs: 200 },
      { say: "Your order A17 shipped on Friday and will reach you by Tuesday afternoon at the latest.", audioMs: 4000 },
    );
    await service.userSays("where is my order A17");
    await client.next("tool.completed");
    await client.next("agent-transcript.updated");
    await sleep(1500);
    service.speechStarted();
    await client.next("reply.cancelled");
    await sleep(300);

    const sent = service.messages.map((m) => m.message.type as string);
    const log = client.events.map((e) => `${e.type}${"kind" in e ? ` ${e.kind}` : ""}${"text" in e ? ` ${JSON.stringify(e.text)}` : ""}`);
    console.log(["— client events —", ...log.filter((l) => !l.startsWith("agent-transcript.updated")), "— sent to the service —", ...sent.filter((t) => t !== "input_audio_buffer.append")].join("\n"));

    expect(service.sessionUpdates).toEqual([1]);
    expect(sent.filter((t) => t === "session.update")).toHaveLength(1);
    expect(counted.runs()).toBe(1);
    expect(client.of("tool.message")).toMatchObject([{ kind: "start", text: "Let me check that order." }]);
    const outOfBand = service.messages.filter((m) => m.message.type === "response.create" && (m.message.response as { conversation?: string } | undefined)?.conversation === "none");
    expect(outOfBand.length).toBeGreaterThanOrEqual(2);
    expect(service.messages.filter((m) => (m.message.item as { type?: string } | undefined)?.type === "function_call_output")).toHaveLength(1);
    const truncate = service.messages.find((m) => m.message.type === "conversation.item.truncate")?.message;
    expect(truncate).toMatchObject({ content_index: 0 });
    expect(Number(truncate?.audio_end_ms)).toBeGreaterThan(500);
    expect(Number(truncate?.audio_end_ms)).toBeLessThan(4000);
    expect(service.violations).toEqual([]);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
  }, 30_000);
});

describe("an s2s session's provider errors", () => {
  it("reports a non-fatal service error to the client and counts it in the metrics", async () => {
    const address = gateway.server.address() as { port: number };
    service.enqueue({ say: "Welcome to the shop.", audioMs: 100 });
    client = await connect(`ws://127.0.0.1:${address.port}/websocket`);
    await client.next("reply.completed", 0);
    service.send({ type: "error", error: { type: "invalid_request_error", code: "invalid_value", message: "Something was off." } });
    expect(await client.next("error.reported")).toMatchObject({ code: "s2s", fatal: false });
    const metrics = await (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text();
    expect(metrics).toMatch(/^switchboard_provider_errors_total\{mode="s2s"\} 1$/m);
  }, 20_000);
});

describe("a resumed s2s session", () => {
  it("tells the new socket the restored conversation before any turn, and does not greet again", async () => {
    const address = gateway.server.address() as { port: number };
    service.enqueue({ say: "Welcome to the shop.", audioMs: 100 });
    const first = await connect(`ws://127.0.0.1:${address.port}/websocket`);
    client = first;
    const configured = first.events[0];
    await first.next("reply.completed", 0);
    service.enqueue({ say: "We open at nine.", audioMs: 100 });
    const answered = first.next("reply.completed");
    await service.userSays("when do you open");
    await answered;
    first.close();
    await first.closed;
    const { sessionId, resumeKey } = configured?.type === "session.configured" ? configured : { sessionId: "", resumeKey: "" };
    const before = service.messages.length;
    const second = await connect(`ws://127.0.0.1:${address.port}/websocket?sessionId=${sessionId}&resumeKey=${resumeKey}&resume`);
    client = second;
    await second.next("history.restored");
    await sleep(300);
    const replayed = service.messages
      .slice(before)
      .filter((m) => m.message.type === "conversation.item.create")
      .map((m) => (m.message.item as { role?: string; content?: { text?: string }[] }).content?.[0]?.text);
    expect(replayed).toEqual(["Welcome to the shop.", "when do you open", "We open at nine."]);
    expect(service.messages.slice(before).filter((m) => m.message.type === "response.create")).toEqual([]);
    expect(service.violations).toEqual([]);
  }, 30_000);
});
