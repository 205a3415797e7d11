import { afterEach, describe, expect, it } from "vitest";
import { cartesiaTts, type CartesiaTtsOptions } from "../../../src/pipeline/providers/tts/cartesia.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { CARTESIA_FAKE_VERSION, startFakeCartesia, textFromPcm, type FakeCartesia, type FakeCartesiaOptions } from "../../../fakes/cartesia.js";
import { ttsRecorder } from "../../helpers/tts-recorder.js";

const KEY = { CARTESIA_API_KEY: "test-key" };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(options: FakeCartesiaOptions = {}): Promise<FakeCartesia> {
  const server = await startFakeCartesia(options);
  cleanups.push(() => server.close());
  return server;
}

async function open(server: FakeCartesia, sampleRate = 16000, options: Record<string, unknown> = {}, adapter: CartesiaTtsOptions = {}): Promise<TtsSession> {
  const session = await cartesiaTts({ kind: "cartesia", options: { url: server.url, ...options } }, KEY, adapter).open({ sampleRate });
  cleanups.push(() => session.close());
  return session;
}

const recorder = ttsRecorder;

describe("cartesiaTts", () => {
  it("streams two pushes on one context: audio, word timings from the first sample, done", async () => {
    const server = await fake();
    const session = await open(server, 16000);
    expect(session.sampleRate).toBe(16000);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hello there, ");
    stream.push("how are you?");
    stream.end();
    expect(await rec.ended).toBe("done");

    const text = "Hello there, how are you?";
    // The fake speaks 10 ms a character: 160 samples at 16 kHz, 2 bytes each.
    expect(rec.pcm().length).toBe(text.length * 160 * 2);
    expect(textFromPcm(rec.pcm(), 16000)).toBe(text);
    expect(rec.words.map((w) => w.word)).toEqual(["Hello", "there,", "how", "are", "you?"]);
    expect(rec.words[0]).toEqual({ word: "Hello", startMs: 0, endMs: 50 });
    expect(rec.words[2]!.startMs).toBeCloseTo(130);
    expect(rec.words[4]!.endMs).toBeCloseTo(250);

    const [first, second, last] = server.messages;
    expect(server.messages).toHaveLength(3);
    expect(first).toMatchObject({
      model_id: "sonic-3",
      transcript: "Hello there, ",
      continue: true,
      add_timestamps: true,
      voice: expect.any(String) as unknown,
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    });
    expect(second).toMatchObject({ transcript: "how are you?", continue: true, context_id: first!.context_id });
    expect(last).toMatchObject({ transcript: "", continue: false, context_id: first!.context_id });
    expect(server.connections[0]!.headers["cartesia-version"]).toBe(CARTESIA_FAKE_VERSION);
    expect(server.connections[0]!.headers.authorization).toBe("Bearer test-key");
    expect(server.violations).toEqual([]);
  });

  it("sends model, voice (a voice id, as 2026-08-14 declares it) and language from the options", async () => {
    const server = await fake();
    const session = await open(server, 24000, { model: "sonic-2", voice: "voice-123", language: "fr" });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Bonjour. ");
    stream.end();
    expect(await rec.ended).toBe("done");
    expect(server.messages[0]).toMatchObject({ model_id: "sonic-2", voice: "voice-123", language: "fr" });
    expect(server.violations).toEqual([]);
  });

  it("sends the Cartesia-Version the official SDK sends; a version the service does not serve is refused at open", async () => {
    const server = await fake();
    const session = await open(server);
    expect(session.sampleRate).toBe(16000);
    expect(server.connections.map((c) => c.headers["cartesia-version"])).toEqual(["2026-08-14"]);
    // `tts.options.version` overrides the header: the fake (a versioned API) refuses what it does not serve.
    const old = cartesiaTts({ kind: "cartesia", options: { url: server.url, version: "2025-11-04" } }, KEY);
    await expect(old.open({ sampleRate: 16000 })).rejects.toThrow(/HTTP 400/);
    expect(server.connections).toHaveLength(1);
  });

  it("word timestamps absent from a timestamps message (optional in 2026-08-14) are not a protocol warning", async () => {
    const server = await fake({ chunkDelayMs: 10 });
    const warnings: string[] = [];
    const log = { warn: (_obj: object, msg: string) => void warnings.push(msg), debug: () => undefined };
    const session = await open(server, 16000, {}, { log });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Timed words. ");
    stream.end();
    await rec.firstAudio;
    const contextId = server.messages[0]!.context_id as string;
    server.sendRaw(JSON.stringify({ type: "timestamps", context_id: contextId, status_code: 206, done: false, word_timestamps: null }));
    server.sendRaw(JSON.stringify({ type: "timestamps", context_id: contextId, status_code: 206, done: false }));
    expect(await rec.ended).toBe("done");
    expect(rec.words.map((w) => w.word)).toEqual(["Timed", "words."]);
    expect(warnings).toEqual([]);
  });

  it("runs streams on separate contexts of one socket", async () => {
    const server = await fake();
    const session = await open(server);
    const a = recorder();
    const b = recorder();
    const sa = session.stream(a.events);
    const sb = session.stream(b.events);
    sa.push("First one. ");
    sb.push("Second. ");
    sa.end();
    sb.end();
    expect(await a.ended).toBe("done");
    expect(await b.ended).toBe("done");
    expect(textFromPcm(a.pcm(), 16000)).toBe("First one. ");
    expect(textFromPcm(b.pcm(), 16000)).toBe("Second. ");
    expect(new Set(server.messages.map((m) => m.context_id)).size).toBe(2);
    expect(server.connections).toHaveLength(1);
  });

  it("negotiates the nearest supported sample rate", async () => {
    const server = await fake();
    for (const [requested, expected] of [
      [8000, 8000],
      [22000, 22050],
      [23600, 24000],
      [45000, 44100],
      [96000, 48000],
    ] as const) {
      const session = await open(server, requested);
      expect(session.sampleRate).toBe(expected);
      const rec = recorder();
      const stream = session.stream(rec.events);
      stream.push("Hi. ");
      stream.end();
      expect(await rec.ended).toBe("done");
      expect(server.messages.at(-1)).toMatchObject({ output_format: { sample_rate: expected } });
      expect(textFromPcm(rec.pcm(), expected)).toBe("Hi. ");
    }
  });
});
