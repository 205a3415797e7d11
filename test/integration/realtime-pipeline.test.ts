// WS /v1/realtime in front of a pipeline agent on the vendor fakes (OpenAI-compatible LLM, Deepgram
// STT, Cartesia TTS), driven by the `openai` package's Realtime client: a spoken turn, a server tool
// with its spoken start line, and a barge-in.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agent, withTools } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { bargeInOnAnswer, speakFor } from "../helpers/realtime-audio.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

let served: PipelineGateway;
let tool: ReturnType<typeof countedLookupOrder>;
let client: RealtimeTestClient | undefined;

beforeEach(async () => {
  tool = countedLookupOrder();
  served = await startPipelineGateway((fakes) => withTools(agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }), { lookup_order: tool.lookupOrder }));
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await served.close();
});

/** The bytes of every `response.output_audio.delta` of the response `responseId`. */
function audioOf(rt: RealtimeTestClient, responseId: string): number {
  return rt.of("response.output_audio.delta").filter((e) => e.response_id === responseId).reduce((sum, e) => sum + Buffer.from(e.delta, "base64").byteLength, 0);
}

describe("/v1/realtime with a pipeline agent, from the openai package's Realtime client", () => {
  it("hears a spoken turn, answers in 24 kHz audio with its transcript, and speaks a server tool's start line", async () => {
    const { stt, llm } = served.fakes;
    client = new RealtimeTestClient(served.port, "k");
    const created = await client.next("session.created");
    expect(created.session).toMatchObject({ output_modalities: ["audio"], audio: { output: { format: { type: "audio/pcm", rate: 24000 } } } });
    client.rt.send({ type: "session.update", session: { type: "realtime", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, turn_detection: { type: "server_vad" } }, output: { voice: "alloy" } } } });
    await client.next("session.updated");
    const greeting = await client.next("response.done");
    expect(greeting.response.output?.[0]).toMatchObject({ content: [{ type: "output_audio", transcript: "Welcome to the shop." }] });
    expect(audioOf(client, greeting.response.id ?? "")).toBeGreaterThan(0);

    llm.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "Your order A17 shipped on Friday." });
    const after = client.events.length;
    stt.speechStarted();
    await speakFor(client, 300);
    stt.final("where is my order A17", { speechFinal: true });
    const done = await client.next("response.done", after);

    const started = await client.next("input_audio_buffer.speech_started", after);
    const stopped = await client.next("input_audio_buffer.speech_stopped", after);
    expect(stopped.item_id).toBe(started.item_id);
    expect(stopped.audio_end_ms).toBeGreaterThan(started.audio_start_ms);
    const committed = await client.next("input_audio_buffer.committed", after);
    expect(committed.item_id).toBe(started.item_id);
    const transcription = await client.next("conversation.item.input_audio_transcription.completed", after);
    expect(transcription).toMatchObject({ item_id: started.item_id, transcript: "where is my order A17" });

    expect(done.response.status).toBe("completed");
    const transcript = client.of("response.output_audio_transcript.done").at(-1)?.transcript ?? "";
    expect(transcript).toContain("Let me check that order.");
    expect(transcript).toContain("Your order A17 shipped on Friday.");
    const deltas = client.events.slice(after).flatMap((e) => (e.type === "response.output_audio_transcript.delta" ? [e.delta] : []));
    expect(deltas.join("")).toBe(transcript);
    // 24 kHz PCM16: whole samples, and about as long as the fake TTS spoke (20 ms a character).
    const bytes = audioOf(client, done.response.id ?? "");
    expect(bytes % 2).toBe(0);
    expect(bytes).toBeGreaterThan(48 * 20 * transcript.length * 0.5);
    // The tool ran once, in the gateway; the client saw no function call.
    expect(tool.runs()).toBe(1);
    expect(client.types().filter((t) => t.includes("function_call"))).toEqual([]);
    // The STT heard the appended audio, resampled once to its 16 kHz.
    expect(stt.audioBytes).toBeGreaterThan(0);
    expect(llm.violations).toEqual([]);
    expect(client.errors).toEqual([]);
  }, 30_000);

  it("is barged in on: speech over the reply cancels it (turn_detected), and response.cancel cancels the next", async () => {
    const { stt, llm } = served.fakes;
    client = new RealtimeTestClient(served.port, "k");
    await client.next("response.done");

    llm.enqueue({ text: "Your order shipped on Friday, it is on the truck now, and it should reach you by Tuesday afternoon at the latest, weather permitting." });
    let after = client.events.length;
    const { cut } = await bargeInOnAnswer(client, stt, 600, after);
    expect(cut.response.status).toBe("cancelled");
    expect(cut.response.status_details).toMatchObject({ type: "cancelled", reason: "turn_detected" });
    expect(client.types().slice(after).indexOf("input_audio_buffer.speech_started")).toBeLessThan(client.types().slice(after).indexOf("response.done"));

    llm.enqueue({ text: "Sure, take your time, I will wait here for as long as you need, no rush at all." });
    stt.final("wait a moment please", { speechFinal: true });
    after = client.events.length;
    await client.next("response.output_audio.delta", after);
    client.rt.send({ type: "response.cancel" });
    const cancelled = await client.next("response.done", after);
    expect(cancelled.response.status_details).toMatchObject({ type: "cancelled", reason: "client_cancelled" });
    expect(client.errors).toEqual([]);
  }, 30_000);
});
