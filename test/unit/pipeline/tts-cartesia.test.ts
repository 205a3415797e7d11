import { afterEach, describe, expect, it, vi } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { MissingKeyError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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

  it("cancel is a barrier: no audio after it, and Cartesia gets the cancel message", async () => {
    const server = await fake({ chunkDelayMs: 15 });
    const session = await open(server);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("one two three four five six seven eight nine ten ");
    await rec.firstAudio;
    stream.cancel();
    const atCancel = rec.order.length;
    await sleep(120);
    expect(rec.order.slice(atCancel)).toEqual([]);
    const contextId = server.messages[0]!.context_id;
    await vi.waitFor(() => expect(server.messages).toContainEqual({ context_id: contextId, cancel: true }));
    // Pushes after cancel are ignored; the session still serves the next stream.
    stream.push("more");
    stream.end();
    const next = recorder();
    const again = session.stream(next.events);
    again.push("Next turn. ");
    again.end();
    expect(await next.ended).toBe("done");
    expect(server.messages.filter((m) => m.transcript === "more")).toEqual([]);
  });

  it("an empty stream is done at once, without a context", async () => {
    const server = await fake();
    const session = await open(server);
    const rec = recorder();
    session.stream(rec.events).end();
    expect(await rec.ended).toBe("done");
    expect(server.messages).toEqual([]);
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

  it("refuses a wrong key naming the variable (and options.apiKeyEnv)", async () => {
    const server = await fake();
    const provider = cartesiaTts({ kind: "cartesia", options: { url: server.url } }, { CARTESIA_API_KEY: "wrong" });
    await expect(provider.open({ sampleRate: 16000 })).rejects.toThrow(/HTTP 401.*CARTESIA_API_KEY/);
    const named = cartesiaTts({ kind: "cartesia", options: { url: server.url, apiKeyEnv: "TEAM_TTS_KEY" } }, { TEAM_TTS_KEY: "wrong" });
    await expect(named.open({ sampleRate: 16000 })).rejects.toThrow(/TEAM_TTS_KEY/);
  });

  it("a missing key fails at construction with MissingKeyError", () => {
    expect(() => cartesiaTts({ kind: "cartesia", options: {} }, {})).toThrow(MissingKeyError);
    expect(() => cartesiaTts({ kind: "cartesia", options: {} }, {})).toThrow(/set CARTESIA_API_KEY/);
    expect(() => cartesiaTts({ kind: "cartesia", options: { apiKeyEnv: "TEAM_TTS_KEY" } }, KEY)).toThrow(/set TEAM_TTS_KEY/);
    expect(() => cartesiaTts({ kind: "cartesia", options: { voice: 42 } }, KEY)).toThrow(/tts.options.voice/);
    expect(cartesiaTts({ kind: "cartesia", options: {} }, KEY).kind).toBe("cartesia");
  });

  it("open() times out after 10 s when the handshake never completes", async () => {
    const server = await fake({ hangHandshake: true });
    const clock = virtualClock();
    const opening = cartesiaTts({ kind: "cartesia", options: { url: server.url } }, KEY, { clock }).open({ sampleRate: 16000 });
    const outcome = opening.then(
      () => "opened",
      (error: Error) => error.message,
    );
    await sleep(30);
    await clock.advance(9_999);
    await sleep(10);
    await clock.advance(1);
    expect(await outcome).toMatch(/timed out after 10 s/);
  });

  it("open() rejects when its signal aborts", async () => {
    const server = await fake({ hangHandshake: true });
    const controller = new AbortController();
    const opening = cartesiaTts({ kind: "cartesia", options: { url: server.url } }, KEY).open({ sampleRate: 16000, signal: controller.signal });
    controller.abort();
    await expect(opening).rejects.toThrow(/aborted/);
  });

  it("reconnects after a drop mid-stream and speaks the rest from the first unspoken word", async () => {
    const server = await fake({ chunkDelayMs: 5 });
    const session = await open(server, 16000, {}, { retryDelaysMs: [20, 20, 20] });
    const rec = recorder();
    const stream = session.stream(rec.events);
    const text = "One two three four five six seven eight.";
    server.dropAfterChunks(3);
    stream.push(text);
    stream.end();
    expect(await rec.ended).toBe("done");

    expect(server.connections).toHaveLength(2);
    const resent = server.connections[1]!.messages[0]!;
    expect(typeof resent.transcript).toBe("string");
    const rest = resent.transcript as string;
    // A suffix starting at a word, shorter than the whole: the spoken words were skipped.
    expect(text.endsWith(rest)).toBe(true);
    expect(rest.length).toBeLessThan(text.length);
    expect(rest).toMatch(/^(three|four) /);
    expect(resent.context_id).not.toBe(server.connections[0]!.messages[0]!.context_id);
    expect(server.connections[1]!.messages.at(-1)).toMatchObject({ transcript: "", continue: false });
    // What the caller heard is the whole sentence, once, and the timings run on from the first sample.
    expect(textFromPcm(rec.pcm(), 16000)).toBe(text);
    const eight = rec.words.at(-1)!;
    expect(eight.word).toBe("eight.");
    expect(eight.startMs).toBeCloseTo(text.indexOf("eight.") * 10);
  });

  it("reports an error on open streams once the reconnect budget is spent", async () => {
    const server = await fake({ chunkDelayMs: 20 });
    const session = await open(server, 16000, {}, { retryDelaysMs: [10, 10, 10] });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("This will not finish in time. ");
    await rec.firstAudio;
    await server.close();
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/3 reconnect attempts failed/);
  });

  it("ignores malformed server JSON with a log line", async () => {
    const server = await fake({ chunkDelayMs: 10 });
    const warnings: string[] = [];
    const log = { warn: (_obj: object, msg: string) => void warnings.push(msg), debug: () => undefined };
    const session = await open(server, 16000, {}, { log });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Still fine after noise. ");
    stream.end();
    await rec.firstAudio;
    server.sendRaw("{not json");
    server.sendRaw('{"type":"chunk","context_id":"nobody","data":"AAAA"}');
    expect(await rec.ended).toBe("done");
    expect(textFromPcm(rec.pcm(), 16000)).toBe("Still fine after noise. ");
    expect(warnings.some((w) => /malformed JSON/.test(w))).toBe(true);
  });

  it("accepts a pino logger, and a stream on a closed session reports an error", async () => {
    const server = await fake();
    const session = await open(server, 16000, {}, { log: silentLogger });
    await session.close();
    const rec = recorder();
    session.stream(rec.events).push("late");
    expect(await rec.ended).toBeInstanceOf(Error);
  });
});
