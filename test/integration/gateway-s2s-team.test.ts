// A roster hand-off on an OpenAI Realtime session, over the wire (the loopback fake): one more
// `session.update` with the member's instructions, tools and tool choice — nothing of the call,
// so the voice the model has spoken with stays — then its greeting, out of band, in that voice.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { silentLogger } from "../../src/log.js";
import { agent, tool, withTools, type AgentDef } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { sayExactly } from "../../src/session/s2s-lines.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

let service: FakeOpenAiRealtime;
let gateway: Gateway | undefined;
let client: TestClient | undefined;

beforeEach(async () => {
  // A hand-off is a second session.update on the socket: the fake's one-update rule is the setup's.
  service = await startFakeOpenAiRealtime({ paceMs: 5, oneSessionUpdate: false });
});

afterEach(async () => {
  client?.close();
  await gateway?.close();
  await service.close();
});

const refund = tool({ description: "Refund the last order", execute: () => "Refund issued." });
const lookup = tool({ description: "Look up an order", execute: () => "Order A17 ships Friday." });

function team(): AgentDef {
  const s2s = { kind: "openai-realtime", options: { url: service.url, voice: "marin" } };
  const billing: AgentDef = withTools(agent({ name: "billing", greeting: "Billing here.", systemPrompt: "You handle billing.", s2s, roster: { frontdesk: () => frontdesk } }), { refund });
  const frontdesk: AgentDef = agent({ name: "frontdesk", greeting: "Front desk.", systemPrompt: "You are the front desk.", s2s, roster: { billing } });
  return withTools(frontdesk, { lookup });
}

type Session = { instructions?: string; tools?: { name: string }[]; audio?: { output?: { voice?: unknown } } };

describe("a roster hand-off on OpenAI Realtime", () => {
  it("is one session.update with the member's instructions and tools (the voice untouched), then its greeting", async () => {
    gateway = createGateway({ agent: team(), logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
    const { port } = await gateway.listen(0);
    service.enqueue({ say: "Front desk.", audioMs: 200 });
    client = await connect(`ws://127.0.0.1:${port}/websocket`);
    await client.next("reply.completed", 0);

    service.enqueue({ toolCall: { name: "transfer_to_agent", args: { agent: "billing" } } }, { say: "Putting you through.", audioMs: 200 }, { say: "Billing here.", audioMs: 200 });
    await service.userSays("billing please");
    const changed = await client.next("agent.changed");
    await client.next("reply.completed", client.events.indexOf(changed));

    expect(changed).toMatchObject({ agent: "billing", previous: "frontdesk" });
    expect(client.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Front desk.", "Putting you through.", "Billing here."]);
    expect(client.of("tool.called").map((e) => e.toolName)).toEqual(["transfer_to_agent"]);

    const updates = service.messages.filter((m) => m.message.type === "session.update").map((m) => m.message.session as Session);
    expect(service.sessionUpdates).toEqual([2]);
    expect(updates[0]?.instructions).toBe("You are the front desk.");
    expect(updates[0]?.tools?.map((t) => t.name)).toEqual(["lookup", "transfer_to_agent"]);
    expect(updates[1]).toMatchObject({ type: "realtime", instructions: "You handle billing.", tool_choice: "auto" });
    expect(updates[1]?.tools?.map((t) => t.name)).toEqual(["refund", "transfer_to_agent"]);
    // Nothing of the call is sent again: formats, turn detection, transcription, the voice.
    expect(Object.keys(updates[1] ?? {}).sort()).toEqual(["instructions", "tool_choice", "tools", "type"]);
    expect(service.connections[0]?.session.audio).toMatchObject({ output: { voice: "marin" } });

    // The greeting is asked for after the update, out of band.
    const sent = service.messages.map((m) => m.message);
    const update = sent.findIndex((m, i) => m.type === "session.update" && i > 0);
    const greeting = sent.findIndex((m) => m.type === "response.create" && (m.response as { instructions?: string } | undefined)?.instructions === sayExactly("Billing here."));
    expect(greeting).toBeGreaterThan(update);
    expect(service.violations).toEqual([]);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);

    // billing's tools answer from now on.
    service.enqueue({ toolCall: { name: "refund", args: {} } }, { say: "Refund issued.", audioMs: 200 });
    await service.userSays("refund please");
    await client.next("tool.completed", client.events.length - 1);
    expect(client.of("tool.called").map((e) => e.toolName)).toEqual(["transfer_to_agent", "refund"]);
  }, 20_000);

  it("is refused when the gateway is created for a member with another voice", () => {
    const s2s = { kind: "openai-realtime", options: { url: service.url, voice: "marin" } };
    const member = agent({ name: "billing", s2s: { ...s2s, options: { ...s2s.options, voice: "cedar" } } });
    expect(() => createGateway({ agent: agent({ name: "frontdesk", s2s, roster: { billing: member } }), logger: silentLogger, env: {}, processMetrics: false })).toThrow(
      /roster\.billing\.s2s: a hand-off keeps the speech-to-speech session — its service, model and voice/,
    );
  });

  it("the fake holds a client to the service's rule: no voice change once the model has spoken", async () => {
    const ws = new WebSocket(service.url, { headers: { authorization: "Bearer test-key" } });
    const received: { type: string }[] = [];
    ws.on("message", (data) => received.push(JSON.parse((data as Buffer).toString("utf8")) as { type: string }));
    await new Promise((resolve) => ws.once("open", resolve));
    const until = async (test: () => boolean): Promise<void> => {
      while (!test()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    const update = (voice: string): void => ws.send(JSON.stringify({ type: "session.update", session: { type: "realtime", audio: { output: { voice } } } }));
    update("marin");
    update("cedar"); // before any audio: allowed
    service.enqueue({ say: "Hello.", audioMs: 40 });
    ws.send(JSON.stringify({ type: "response.create" }));
    await until(() => received.some((e) => e.type === "response.done"));
    update("cedar"); // the same voice: allowed
    update("marin");
    await until(() => received.some((e) => e.type === "error"));
    expect(service.violations).toEqual(["connection 0: the voice cannot be changed once the model has responded with audio"]);
    ws.close();
  });
});
