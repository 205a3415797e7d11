import { afterEach, describe, expect, it, vi } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { MissingKeyError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import { openAiTts, type OpenAiTtsOptions } from "../../../src/pipeline/providers/tts/openai.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { OPENAI_PCM_RATE, pcmForText, startFakeOpenAiTts, textFromPcm, type FakeOpenAiTts, type FakeOpenAiTtsOptions } from "../../../fakes/openai-tts.js";
import { ttsRecorder } from "../../helpers/tts-recorder.js";

const KEY = { OPENAI_API_KEY: "test-key" };
/** 10 ms a character at 24 kHz: 240 samples, 480 bytes. */
const BYTES_PER_CHAR = 480;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(options: FakeOpenAiTtsOptions = {}): Promise<FakeOpenAiTts> {
  const server = await startFakeOpenAiTts(options);
  cleanups.push(() => server.close());
  return server;
}

async function open(server: FakeOpenAiTts, options: Record<string, unknown> = {}, adapter: OpenAiTtsOptions = {}, sampleRate = 16000): Promise<TtsSession> {
  const session = await openAiTts({ kind: "openai", options: { baseURL: server.url, ...options } }, KEY, adapter).open({ sampleRate });
  cleanups.push(() => session.close());
  return session;
}

const recorder = ttsRecorder;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("openAiTts", () => {
  it("sends one request per pushed segment, in order and one at a time; done after the last", async () => {
    const server = await fake({ chunkDelayMs: 2 });
    const session = await open(server);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hello there, ");
    stream.push("how are you?");
    stream.end();
    expect(await rec.ended).toBe("done");

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
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hi.");
    stream.end();
    expect(await rec.ended).toBe("done");
    expect(server.messages[0]).toEqual({ model: "tts-1", voice: "nova", response_format: "pcm", instructions: "Speak warmly.", speed: 1.2, input: "Hi." });
  });

  it.each([1, 333, 999, 4096])("never emits half a sample when body chunks are %i bytes", async (chunkBytes) => {
    const server = await fake({ chunkBytes });
    const session = await open(server);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Odd boundaries.");
    stream.end();
    expect(await rec.ended).toBe("done");
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

  it("cancel aborts the request in flight: no audio after it, and queued segments are never sent", async () => {
    const server = await fake({ chunkDelayMs: 10, chunkBytes: 480 });
    const session = await open(server);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("A fairly long first sentence to speak. ");
    stream.push("A second one that must never be requested.");
    stream.end();
    await rec.firstAudio;
    stream.cancel();
    const atCancel = rec.order.length;
    await sleep(100);
    expect(rec.order.slice(atCancel)).toEqual([]);
    await vi.waitFor(() => expect(server.aborted).toBe(1));
    expect(server.messages).toHaveLength(1);
  });

  it("a wrong key fails the stream naming the variable, without echoing the key", async () => {
    const server = await fake();
    const session = await openAiTts({ kind: "openai", options: { baseURL: server.url } }, { OPENAI_API_KEY: "sk-wrong-key" }).open({ sampleRate: 24000 });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hello.");
    stream.end();
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/HTTP 401.*OPENAI_API_KEY/);
    expect((outcome as Error).message).not.toMatch(/sk-/);
    expect(server.unauthorized).toBe(1); // not retried
  });

  it("a missing key fails at construction with MissingKeyError", () => {
    expect(() => openAiTts({ kind: "openai", options: {} }, {})).toThrow(MissingKeyError);
    expect(() => openAiTts({ kind: "openai", options: {} }, {})).toThrow(/set OPENAI_API_KEY/);
    expect(() => openAiTts({ kind: "openai", options: { apiKeyEnv: "SPEECH_KEY" } }, KEY)).toThrow(/set SPEECH_KEY/);
    expect(() => openAiTts({ kind: "openai", options: { speed: 9 } }, KEY)).toThrow(/tts.options.speed/);
    expect(openAiTts({ kind: "openai", options: {} }, KEY).kind).toBe("openai");
  });

  it("re-sends the segment in progress after a drop mid-response, then carries on", async () => {
    const server = await fake({ chunkBytes: 480 });
    const session = await open(server, {}, { retryDelaysMs: [10, 10, 10] });
    const rec = recorder();
    const stream = session.stream(rec.events);
    server.dropNextAfterBytes(480 * 3);
    stream.push("Dropped halfway. ");
    stream.push("Then the rest.");
    stream.end();
    expect(await rec.ended).toBe("done");
    expect(server.messages.map((m) => m.input)).toEqual(["Dropped halfway. ", "Dropped halfway. ", "Then the rest."]);
    // The start of the first segment was heard before the drop; the whole segment follows, then the next.
    const tail = Buffer.concat([pcmForText("Dropped halfway. ", OPENAI_PCM_RATE), pcmForText("Then the rest.", OPENAI_PCM_RATE)]);
    const pcm = rec.pcm();
    expect(pcm.length).toBeGreaterThan(tail.length);
    expect(pcm.subarray(pcm.length - tail.length).equals(tail)).toBe(true);
  });

  it("retries 5xx, fails at once on other 4xx, and gives up after the retry budget", async () => {
    const server = await fake();
    const session = await open(server, {}, { retryDelaysMs: [5, 5, 5] });

    server.failNext(503, 2);
    const retried = recorder();
    const a = session.stream(retried.events);
    a.push("Second time lucky.");
    a.end();
    expect(await retried.ended).toBe("done");
    expect(textFromPcm(retried.pcm(), OPENAI_PCM_RATE)).toBe("Second time lucky.");

    server.failNext(400);
    const refused = recorder();
    const b = session.stream(refused.events);
    b.push("Refused.");
    b.end();
    expect(((await refused.ended) as Error).message).toMatch(/HTTP 400.*fake failure 400/);

    server.failNext(503, 4);
    const exhausted = recorder();
    const c = session.stream(exhausted.events);
    c.push("Never.");
    c.end();
    expect(((await exhausted.ended) as Error).message).toMatch(/3 retries failed/);
  });

  it("times out a request that gets no response in 10 s", async () => {
    const clock = virtualClock();
    const hang: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
      });
    const session = await openAiTts({ kind: "openai", options: {} }, KEY, { clock, fetch: hang, retryDelaysMs: [] }).open({ sampleRate: 24000 });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hello?");
    stream.end();
    await clock.advance(9_999);
    expect(rec.order).toEqual([]);
    await clock.advance(1);
    expect(((await rec.ended) as Error).message).toMatch(/no response within 10 s/);
  });

  it("an empty stream is done without a request; a closed session refuses streams", async () => {
    const server = await fake();
    const session = await open(server, {}, { log: silentLogger });
    const rec = recorder();
    session.stream(rec.events).end();
    expect(await rec.ended).toBe("done");
    expect(server.requests).toEqual([]);
    await session.close();
    const late = recorder();
    session.stream(late.events).push("late");
    expect(await late.ended).toBeInstanceOf(Error);
  });
});
