import { describe, expect, it, vi } from "vitest";
import { cartesiaTts, type CartesiaTtsOptions } from "../../../src/pipeline/providers/tts/cartesia.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { CARTESIA_FAKE_VERSION, startFakeCartesia, textFromPcm, type FakeCartesia, type FakeCartesiaOptions } from "../../../fakes/cartesia.js";
import { closeAfterEach } from "../../helpers/cleanups.js";
import { expectBadAudioDropped, expectNearestRates, expectTwoPushes, speak, ttsRecorder, TWO_PUSHES } from "../../helpers/tts-recorder.js";

const KEY = { CARTESIA_API_KEY: "test-key" };

const closing = closeAfterEach();

async function fake(options: FakeCartesiaOptions = {}): Promise<FakeCartesia> {
  return closing(await startFakeCartesia(options));
}

async function open(server: FakeCartesia, sampleRate = 16000, options: Record<string, unknown> = {}, adapter: CartesiaTtsOptions = {}): Promise<TtsSession> {
  return closing(await cartesiaTts({ kind: "cartesia", options: { url: server.url, ...options } }, KEY, adapter).open({ sampleRate }));
}

describe("cartesiaTts", () => {
  it("streams two pushes on one context: audio, word timings from the first sample, done", async () => {
    const server = await fake();
    const session = await open(server, 16000);
    expect(session.sampleRate).toBe(16000);
    const rec = await speak(session, ...TWO_PUSHES);
    expectTwoPushes(rec, "Hello there, how are you?");

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

  it("drops audio that is not strict base64, with one warning; the words' audio plays", async () => {
    const server = await fake();
    const warn = vi.fn();
    const session = await open(server, 16000, {}, { log: { debug: () => undefined, warn } });
    const chunk = (context_id: unknown, data: string) => ({ type: "chunk", context_id, status_code: 206, done: false, step_time: 1, data });
    const rec = await expectBadAudioDropped(session, server, chunk, () => warn.mock.calls.filter(([, m]) => String(m).includes("not base64")).length);
    expectTwoPushes(rec, "Hello there, how are you?");
  });

  it("sends model, voice (a voice id, as 2026-08-14 declares it) and language from the options", async () => {
    const server = await fake();
    const session = await open(server, 24000, { model: "sonic-2", voice: "voice-123", language: "fr" });
    await speak(session, "Bonjour. ");
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
    const rec = ttsRecorder();
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
    const a = ttsRecorder();
    const b = ttsRecorder();
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
    const pairs = [[8000, 8000], [22000, 22050], [23600, 24000], [45000, 44100], [96000, 48000]] as const;
    await expectNearestRates(pairs, (rate) => open(server, rate), (offered) => expect(server.messages.at(-1)).toMatchObject({ output_format: { sample_rate: offered } }));
  });
});
