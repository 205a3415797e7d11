import { describe, expect, it } from "vitest";
import { openAiTts, type OpenAiTtsOptions } from "../../../src/pipeline/providers/tts/openai.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { OPENAI_PCM_RATE, pcmForText, startFakeOpenAiTts, textFromPcm, type FakeOpenAiTts, type FakeOpenAiTtsOptions } from "../../../fakes/openai-tts.js";
import { closeAfterEach } from "../../helpers/cleanups.js";
import { speak, ttsRecorder, TWO_PUSHES } from "../../helpers/tts-recorder.js";

const KEY = { OPENAI_API_KEY: "test-key" };
/** 10 ms a character at 24 kHz: 240 samples, 480 bytes. */
const BYTES_PER_CHAR = 480;

const closing = closeAfterEach();

async function fake(options: FakeOpenAiTtsOptions = {}): Promise<FakeOpenAiTts> {
  return closing(await startFakeOpenAiTts(options));
}

async function open(server: FakeOpenAiTts, options: Record<string, unknown> = {}, adapter: OpenAiTtsOptions = {}, sampleRate = 16000): Promise<TtsSession> {
  return closing(await openAiTts({ kind: "openai", options: { baseURL: server.url, ...options } }, KEY, adapter).open({ sampleRate }));
}

describe("openAiTts", () => {
  it("sends one request per pushed segment, in order and one at a time; done after the last", async () => {
    const server = await fake({ chunkDelayMs: 2 });
    const session = await open(server);
    const rec = await speak(session, ...TWO_PUSHES);

    const text = "Hello there, how are you?";
    expect(rec.pcm().length).toBe(text.length * BYTES_PER_CHAR);
    expect(textFromPcm(rec.pcm(), OPENAI_PCM_RATE)).toBe(text);
    expect(rec.words).toEqual([]);
    expect(rec.order.at(-1)).toBe("done");
    expect(server.maxConcurrent).toBe(1);
    expect(server.messages).toEqual([
      { model: "gpt-4o-mini-tts", voice: "alloy", response_format: "pcm", input: "Hello there, " },
      { model: "gpt-4o-mini-tts", voice: "alloy", response_format: "pcm", input: "how are you?" },
    ]);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer test-key");
    expect(server.violations).toEqual([]);
  });

  it("passes model, voice, instructions and speed from the options", async () => {
    const server = await fake();
    const session = await open(server, { model: "tts-1", voice: "nova", instructions: "Speak warmly.", speed: 1.2 });
    await speak(session, "Hi.");
    expect(server.messages[0]).toEqual({ model: "tts-1", voice: "nova", response_format: "pcm", instructions: "Speak warmly.", speed: 1.2, input: "Hi." });
  });

  it.each([1, 333, 999, 4096])("never emits half a sample when body chunks are %i bytes", async (chunkBytes) => {
    const server = await fake({ chunkBytes });
    const session = await open(server);
    const rec = await speak(session, "Odd boundaries.");
    expect(rec.chunks.length).toBeGreaterThan(0);
    for (const chunk of rec.chunks) expect(chunk.length % 2).toBe(0);
    expect(rec.pcm().equals(pcmForText("Odd boundaries.", OPENAI_PCM_RATE))).toBe(true);
  });

  it("always reports 24 kHz (pcm is 24 kHz whatever was asked)", async () => {
    const server = await fake();
    for (const requested of [8000, 16000, 48000]) {
      const session = await open(server, {}, {}, requested);
      expect(session.sampleRate).toBe(24000);
    }
  });

  it("retries 5xx and fails at once on other 4xx (the budget spent: test/conformance/tts.test.ts)", async () => {
    const server = await fake();
    const session = await open(server, {}, { retryDelaysMs: [5, 5, 5] });

    server.failNext(503, 2);
    const retried = await speak(session, "Second time lucky.");
    expect(textFromPcm(retried.pcm(), OPENAI_PCM_RATE)).toBe("Second time lucky.");

    server.failNext(400);
    const refused = ttsRecorder();
    const b = session.stream(refused.events);
    b.push("Refused.");
    b.end();
    expect(((await refused.ended) as Error).message).toMatch(/HTTP 400.*fake failure 400/);

  });
});
