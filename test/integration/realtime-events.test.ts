// WS /v1/realtime's interim transcripts, usage and rate limits (docs/realtime.md "Semantics"), read
// by the `openai` package's Realtime client: a pipeline agent with a token budget on the vendor
// fakes (Deepgram's interim results, the OpenAI-compatible model's reported usage).
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { agent } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

let served: PipelineGateway | undefined;
let client: RealtimeTestClient | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  await served?.close();
  served = undefined;
});

describe("/v1/realtime: interim transcripts, usage and rate limits, from the openai package's client", () => {
  it("streams the STT's captions as transcription deltas, reports the reply's usage, and the token budget left", async () => {
    served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "", usageLimits: { totalTokens: 100_000 }, ...fakes.providers }));
    const { stt, llm } = served.fakes;
    client = new RealtimeTestClient(served.port, "k");
    const start = await client.next("rate_limits.updated");
    expect(start.rate_limits).toEqual([{ name: "tokens", limit: 100_000, remaining: 100_000 }]);

    llm.enqueue({ text: "It shipped on Friday.", usage: { promptTokens: 120, completionTokens: 7 } });
    const after = client.events.length;
    const silence = Buffer.alloc(960).toString("base64"); // 20 ms of 24 kHz PCM16
    for (let i = 0; i < 5; i++) {
      client.rt.send({ type: "input_audio_buffer.append", audio: silence });
      await sleep(20);
    }
    await stt.waitForAudio(1, 20_000);
    stt.speechStarted();
    stt.partial("where");
    stt.partial("where is my");
    stt.partial("wear is my order"); // a rewrite: no delta
    stt.final("where is my order", { speechFinal: true });
    const done = await client.next("response.done", after);
    const limits = await client.next("rate_limits.updated", after);

    const started = await client.next("input_audio_buffer.speech_started", after);
    const deltas = client.of("conversation.item.input_audio_transcription.delta");
    expect(deltas.map((e) => e.delta)).toEqual(["where", " is my", " order"]);
    expect(deltas.every((e) => e.item_id === started.item_id)).toBe(true);
    expect(await client.next("conversation.item.input_audio_transcription.completed", after)).toMatchObject({ item_id: started.item_id, transcript: "where is my order" });

    expect(done.response.status).toBe("completed");
    expect(done.response.usage).toEqual({ total_tokens: 127, input_tokens: 120, output_tokens: 7 });
    expect(limits.rate_limits).toEqual([{ name: "tokens", limit: 100_000, remaining: 100_000 - 127 }]);
    expect(client.errors).toEqual([]);
  }, 30_000);
});
