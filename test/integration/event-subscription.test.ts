import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agent, withTools } from "../../src/manifest/index.js";
import { ALWAYS_SENT } from "../../src/transport/event-subscription.js";
import type { EventType } from "../../src/transport/protocol.js";
import type { FakeDeepgram } from "../../fakes/deepgram.js";
import type { FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { connect, TestClient } from "../helpers/ws-client.js";

const { lookupOrder } = countedLookupOrder();

let served: PipelineGateway;
let llm: FakeOpenAiServer;
let stt: FakeDeepgram;
const clients: TestClient[] = [];

beforeEach(async () => {
  served = await startPipelineGateway((fakes) => withTools(agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }), { lookup_order: lookupOrder }));
  ({ llm, stt } = served.fakes);
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await served.close();
});

/** A voice turn with a tool call, heard whole: the greeting's reply, then the tool's start line and the answer. */
async function turnWithTool(client: TestClient): Promise<void> {
  await client.next("reply.completed", 0);
  llm.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "Your order A17 shipped on Friday." });
  const after = client.events.length;
  for (let i = 0; i < 10; i++) {
    client.ws.send(Buffer.alloc(640));
    await sleep(20);
  }
  stt.final("where is my order A17", { speechFinal: true });
  await client.next("tool.called", after);
  // The answer's reply.completed: the one after the tool call.
  await client.next("reply.completed", client.events.findIndex((e, i) => i >= after && e.type === "tool.called"));
}

describe("?events=: a client is sent only the events it chose", () => {
  it("sends the chosen events and the ones no client can do without, and every audio frame; a client that chose none is sent all", async () => {
    const chosen = await connect(`${served.url}?events=reply.completed,tool.message`);
    clients.push(chosen);
    let audioFrames = 0;
    chosen.ws.on("message", (_data, isBinary) => {
      if (isBinary) audioFrames += 1;
    });
    await turnWithTool(chosen);
    const allowed = new Set<EventType>([...ALWAYS_SENT, "reply.completed", "tool.message"]);
    expect(chosen.types().filter((type) => !allowed.has(type))).toEqual([]);
    expect(chosen.of("reply.completed")).toHaveLength(2);
    expect(chosen.of("tool.message")).toMatchObject([{ kind: "start", text: "Let me check that order." }]);
    expect(audioFrames).toBeGreaterThan(0);

    const everything = await connect(served.url);
    clients.push(everything);
    await turnWithTool(everything);
    for (const type of ["agent-transcript.committed", "user-transcript.committed", "tool.completed", "audio.completed", "metrics.turn"] as const) expect(everything.types(), type).toContain(type);
  }, 20_000);

  it("refuses a name that is no event type, naming it, with a fatal protocol error and 1008", async () => {
    const refused = new TestClient(`${served.url}?events=reply.completed,transcript`);
    clients.push(refused);
    expect(await refused.next("error.reported", 0)).toMatchObject({
      code: "protocol",
      fatal: true,
      message: 'events: "transcript" is not an event type; name event types from docs/protocol.md "Events", comma-separated',
    });
    expect((await refused.closed).code).toBe(1008);
  });
});
