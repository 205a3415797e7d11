// WS /v1/realtime driven by the OpenAI Agents SDK's RealtimeSession over its WebSocket transport
// (a client nobody here wrote): a typed turn with a text agent, a spoken turn with a pipeline agent.
// The SDK parses every server event with its own schemas and drops those that do not match: each
// event the gateway sent must come out of the transport parsed, as its type.
import { setTimeout as sleep } from "node:timers/promises";
import { RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";

const KEY = "sk-agents-sdk";
let session: RealtimeSession | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  session?.close();
  session = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The server events of this slice (docs/realtime.md). */
const SERVED = [
  "session.created",
  "session.updated",
  "conversation.item.added",
  "conversation.item.done",
  "conversation.item.retrieved",
  "conversation.item.input_audio_transcription.delta",
  "conversation.item.input_audio_transcription.completed",
  "input_audio_buffer.speech_started",
  "input_audio_buffer.speech_stopped",
  "input_audio_buffer.committed",
  "response.created",
  "response.output_item.added",
  "response.output_item.done",
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.delta",
  "response.output_text.done",
  "response.output_audio.delta",
  "response.output_audio.done",
  "response.output_audio_transcript.delta",
  "response.output_audio_transcript.done",
  "response.done",
  "rate_limits.updated",
] as const;

/** What the gateway sent (`*` sees every event, parsed or not) and what the SDK's schemas parsed, by type. */
function watch(rt: RealtimeSession): { raw: string[]; parsed: string[]; errors: unknown[] } {
  const seen = { raw: [] as string[], parsed: [] as string[], errors: [] as unknown[] };
  rt.on("error", (e) => seen.errors.push(e));
  rt.transport.on("*", (e: { type: string }) => seen.raw.push(e.type));
  for (const type of SERVED) rt.transport.on(type as never, () => seen.parsed.push(type));
  return seen;
}

describe("/v1/realtime from the Agents SDK's RealtimeSession", () => {
  it("holds a typed turn with a text agent", async () => {
    const fake: FakeOpenAiServer = await startFakeOpenAiServer();
    const gateway: Gateway = createGateway({
      agent: agent({ name: "shop", mode: "text", greeting: "", llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } }, maxRetries: 0 }),
      apiKey: KEY,
      logger: silentLogger,
      env: {},
      processMetrics: false,
    });
    cleanups.push(() => fake.close(), () => gateway.close());
    const { port } = await gateway.listen(0, "127.0.0.1");

    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "ignored: the gateway's agent has its own" }), { transport: "websocket", config: { outputModalities: ["text"] } });
    const seen = watch(session);
    await session.connect({ apiKey: KEY, url: `ws://127.0.0.1:${port}/v1/realtime` });
    fake.enqueue({ text: "Hello from the gateway." });
    const answered = new Promise<void>((resolve) => session?.on("agent_end", () => resolve()));
    session.sendMessage("hi");
    await answered;

    expect(session.history.map((item) => (item.type === "message" ? [item.role, item.content] : [item.type]))).toEqual([
      ["user", [{ type: "input_text", text: "hi" }]],
      ["assistant", [{ type: "output_text", text: "Hello from the gateway." }]],
    ]);
    expect(seen.errors).toEqual([]);
    expect(seen.parsed).toEqual(seen.raw);
  });

  it("holds a spoken turn with a pipeline agent: audio in, the transcript and 24 kHz audio out", async () => {
    const served: PipelineGateway = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "", ...fakes.providers }));
    cleanups.push(() => served.close());
    const { stt, llm } = served.fakes;

    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "" }), { transport: "websocket" });
    const seen = watch(session);
    let audioBytes = 0;
    session.on("audio", (event) => {
      audioBytes += event.data.byteLength;
    });
    await session.connect({ apiKey: "unused-with-auth-off", url: `ws://127.0.0.1:${served.port}/v1/realtime` });
    llm.enqueue({ text: "Your order shipped on Friday." });
    const answered = new Promise<void>((resolve) => session?.on("agent_end", () => resolve()));
    const frame = new Int16Array(480).fill(2000);
    for (let i = 0; i < 10; i++) {
      session.sendAudio(frame.buffer.slice(0));
      await sleep(20);
    }
    stt.final("where is my order", { speechFinal: true });
    await answered;

    const messages = session.history.flatMap((item) => (item.type === "message" ? [item] : []));
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[0]?.content).toMatchObject([{ type: "input_audio", transcript: "where is my order" }]);
    expect(messages[1]?.content).toMatchObject([{ type: "output_audio", transcript: "Your order shipped on Friday." }]);
    expect(audioBytes).toBeGreaterThan(0);
    expect(stt.audioBytes).toBeGreaterThan(0);
    expect(seen.errors).toEqual([]);
    expect(seen.raw).toContain("response.output_audio.delta");
    expect(seen.parsed).toEqual(seen.raw);
  }, 20_000);
});
