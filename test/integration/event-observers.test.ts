// The agent's `events` observers through a real gateway: a browser's text session and a phone
// call to a pipeline agent. Observers receive the events the client gets (on a call, the events
// the session emits, which no client sees), with {sessionId, mode}, and a throwing or hanging
// observer changes nothing the client sees.
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, tool, withTools, type AgentEvents, type ObservedEvent, type SessionInfo } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startPipelineGateway } from "../helpers/pipeline-fakes.js";
import { connect } from "../helpers/ws-client.js";
import { closeAfterEach } from "../helpers/cleanups.js";

const closing = closeAfterEach();

const lookupOrder = tool({ description: "Look up an order", parameters: Type.Object({ orderId: Type.String() }), execute: ({ orderId }) => `Order ${orderId} shipped.` });

/** Observers that record what they see, plus one that throws and one that never settles. */
function recorders(): { seen: { event: ObservedEvent; info: SessionInfo }[]; completed: string[]; events: AgentEvents } {
  const seen: { event: ObservedEvent; info: SessionInfo }[] = [];
  const completed: string[] = [];
  const events: AgentEvents = {
    "*": (event, info) => void seen.push({ event, info }),
    "tool.completed": (event) => {
      completed.push(event.result);
      throw new Error("an observer's own bug");
    },
    "agent-transcript.updated": () => new Promise<void>(() => {}),
  };
  return { seen, completed, events };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("event observers in a live session", () => {
  it("a browser's text session: observers receive exactly the events the client got, in order, meta and all", async () => {
    const llm = await startFakeOpenAiServer();
    closing(() => llm.close());
    const { seen, completed, events } = recorders();
    const def = withTools(
      agent({ name: "shop", mode: "text", greeting: "Welcome.", llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } }, maxRetries: 0, events }),
      { lookup_order: lookupOrder },
    );
    const gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false });
    closing(() => gateway.close());
    const { url } = await gateway.listen(0);
    llm.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "It shipped, and it arrives on Tuesday." });
    const client = await connect(`${url.replace(/^http/, "ws")}/websocket`);
    await client.say("where is order A17?");
    await until(() => seen.length === client.events.length, "the observers to catch up");

    const configured = client.of("session.configured")[0]!;
    expect(seen.map((s) => s.event)).toEqual(client.events.map((event) => (event.type === "session.configured" ? { ...event, resumeKey: "[redacted]" } : event)));
    expect(new Set(seen.map((s) => JSON.stringify(s.info)))).toEqual(new Set([JSON.stringify({ sessionId: configured.sessionId, mode: "text" })]));
    expect(client.types()).toEqual(expect.arrayContaining(["tool.called", "tool.completed", "agent-transcript.updated", "reply.completed", "metrics.turn"]));
    // The throwing observer saw its event; the hanging one held nothing up; the client saw no error.
    expect(completed).toEqual(["Order A17 shipped."]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("It shipped, and it arrives on Tuesday.");
    expect(client.of("error.reported")).toEqual([]);
    client.close();
  });

  it("a phone call to a pipeline agent: the carrier gets no events, the observers get the session's, stamped", async () => {
    const { seen, events } = recorders();
    const served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "Thanks for calling the shop.", ...fakes.providers, telephony: true, events }));
    closing(() => served.close());
    const { port } = served;
    const carrier = await FakeCarrier.dial({ url: `ws://127.0.0.1:${port}/telephony/twilio` });
    closing(() => carrier.close());
    await until(() => seen.some((s) => s.event.type === "reply.completed"), "the greeting's reply.completed");

    const types = seen.map((s) => s.event.type);
    expect(types[0]).toBe("session.configured");
    expect(types).toEqual(expect.arrayContaining(["agent-transcript.committed", "audio.completed", "reply.completed"]));
    const configured = seen[0]!.event as ObservedEvent<"session.configured">;
    expect(configured).toMatchObject({ mode: "pipeline", resumeKey: "[redacted]", audioFormat: "pcm16" });
    expect(seen.every((s) => s.info.sessionId === configured.sessionId && s.info.mode === "pipeline")).toBe(true);
    expect(seen.find((s) => s.event.type === "agent-transcript.committed")?.event).toMatchObject({ text: "Thanks for calling the shop." });
    const ids = seen.map((s) => s.event.meta.id);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    carrier.hangUp();
    await carrier.closed;
  });
});
