// WS /v1/realtime in front of an s2s agent (OpenAI Realtime on its loopback fake), driven by the
// `openai` package's Realtime client: the service's turn-taking and voice pass through, the agent's
// server tool runs in the gateway once, its spoken start line reaches the client, no function call does.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

let counted = countedLookupOrder();
let service: FakeOpenAiRealtime;
let gateway: Gateway;
let client: RealtimeTestClient | undefined;

beforeEach(async () => {
  counted = countedLookupOrder();
  service = await startFakeOpenAiRealtime({ paceMs: 10 });
  const def = withTools(agent({ name: "realtime", greeting: "Welcome to the shop.", s2s: { kind: "openai-realtime", options: { url: service.url } } }), { lookup_order: counted.lookupOrder });
  gateway = createGateway({ agent: def, logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
  await gateway.listen(0, "127.0.0.1");
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await gateway.close();
  await service.close();
});

describe("/v1/realtime with an s2s agent, from the openai package's Realtime client", () => {
  it("greets in the service's voice, and answers a spoken turn with a server tool's spoken start line", async () => {
    service.enqueue({ say: "Welcome to the shop.", audioMs: 300 });
    const { port } = gateway.server.address() as { port: number };
    client = new RealtimeTestClient(port, "k");
    const greeting = await client.next("response.done");
    expect(greeting.response.output?.[0]).toMatchObject({ content: [{ type: "output_audio", transcript: "Welcome to the shop." }] });

    service.enqueue({ toolCall: { name: "lookup_order", args: { orderId: "A17" } } }, { say: "Let me check that order.", audioMs: 200 }, { say: "Your order A17 shipped on Friday.", audioMs: 400 });
    const after = client.events.length;
    await service.userSays("where is my order A17");
    const transcription = await client.next("conversation.item.input_audio_transcription.completed", after);
    expect(transcription.transcript).toBe("where is my order A17");
    // What the service gives: its own transcription deltas, for the item speech_started named.
    const deltas = client.of("conversation.item.input_audio_transcription.delta").filter((e) => e.item_id === transcription.item_id);
    expect(deltas.map((e) => e.delta).join("")).toBe("where is my order A17");
    await client.next("response.done", after);
    while (!client.of("response.output_audio_transcript.done").some((e) => e.transcript.includes("shipped on Friday"))) await client.next("response.done");
    const spoken = client.of("response.output_audio_transcript.done").map((e) => e.transcript).join(" ");
    // Per response, the transcript deltas add up to its done transcript.
    for (const done of client.of("response.output_audio_transcript.done")) {
      const deltas = client.of("response.output_audio_transcript.delta").filter((e) => e.response_id === done.response_id);
      expect(deltas.map((e) => e.delta).join("")).toBe(done.transcript);
    }
    expect(spoken).toContain("Let me check that order.");
    expect(spoken).toContain("Your order A17 shipped on Friday.");
    // The service's usage (30 tokens a response on the fake): the answer's, its tool-only step's summed in.
    const answered = client.of("response.done").find((e) => e.response.output?.some((item) => JSON.stringify(item).includes("shipped on Friday")));
    expect(answered?.response.usage?.total_tokens).toBeGreaterThanOrEqual(30);
    expect(answered?.response.usage?.total_tokens).toBe((answered?.response.usage?.input_tokens ?? 0) + (answered?.response.usage?.output_tokens ?? 0));
    expect(counted.runs()).toBe(1);
    expect(client.types().filter((t) => t.includes("function_call"))).toEqual([]);
    expect(client.of("response.output_audio.delta").length).toBeGreaterThan(0);
    expect(service.violations).toEqual([]);
    expect(client.errors).toEqual([]);
  }, 30_000);
});
