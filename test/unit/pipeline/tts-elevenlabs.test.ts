import { afterEach, describe, expect, it, vi } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { GatewayError, MissingKeyError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import { elevenLabsTts, type ElevenLabsTtsOptions } from "../../../src/pipeline/providers/tts/elevenlabs.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { startFakeElevenLabs, textFromPcm, type FakeElevenLabs, type FakeElevenLabsOptions } from "../../helpers/fake-elevenlabs.js";
import { ttsRecorder } from "../../helpers/tts-recorder.js";

const KEY = { ELEVENLABS_API_KEY: "test-key" };
const VOICE = "voice-abc";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const server = await startFakeElevenLabs(options);
  cleanups.push(() => server.close());
  return server;
}

async function open(server: FakeElevenLabs, sampleRate = 16000, options: Record<string, unknown> = {}, adapter: ElevenLabsTtsOptions = {}): Promise<TtsSession> {
  const session = await elevenLabsTts({ kind: "elevenlabs", options: { url: server.url, voiceId: VOICE, ...options } }, KEY, adapter).open({ sampleRate });
  cleanups.push(() => session.close());
  return session;
}

const recorder = ttsRecorder;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("elevenLabsTts (multi-stream-input)", () => {
  it.each([false, true])("streams two pushes on one context: audio, word timings, done (snake_case %s)", async (snakeCase) => {
    const server = await fake({ snakeCase });
    const session = await open(server, 16000);
    expect(session.sampleRate).toBe(16000);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Hello there, ");
    stream.push("how are you?");
    stream.end();
    expect(await rec.ended).toBe("done");

    // The adapter ends every chunk with a space (§6), so the spoken text has one more character.
    const spoken = "Hello there, how are you? ";
    expect(rec.pcm().length).toBe(spoken.length * 160 * 2);
    expect(textFromPcm(rec.pcm(), 16000)).toBe(spoken);
    expect(rec.words.map((w) => w.word)).toEqual(["Hello", "there,", "how", "are", "you?"]);
    expect(rec.words[0]).toEqual({ word: "Hello", startMs: 0, endMs: 50 });
    expect(rec.words[2]!.startMs).toBeCloseTo(130);
    expect(rec.words[4]!.endMs).toBeCloseTo(250);

    const connection = server.connections[0]!;
    expect(connection.voiceId).toBe(VOICE);
    expect(connection.query).toMatchObject({ model_id: "eleven_flash_v2_5", output_format: "pcm_16000", sync_alignment: "true" });
    expect(connection.headers["xi-api-key"]).toBe("test-key");
    const id = server.messages[0]!.context_id;
    expect(server.messages.slice(0, 4)).toEqual([
      { text: " ", context_id: id },
      { text: "Hello there, ", context_id: id },
      { text: "how are you? ", context_id: id },
      { context_id: id, flush: true },
    ]);
    expect(server.violations).toEqual([]);
  });

  it("sends voice settings, model and language from the options", async () => {
    const server = await fake();
    const voiceSettings = { stability: 0.5, similarity_boost: 0.8 };
    const session = await open(server, 24000, { model: "eleven_turbo_v2_5", language: "de", voiceSettings });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Guten Tag.");
    stream.end();
    expect(await rec.ended).toBe("done");
    expect(server.connections[0]!.query).toMatchObject({ model_id: "eleven_turbo_v2_5", language_code: "de", output_format: "pcm_24000" });
    expect(server.messages[0]).toMatchObject({ text: " ", voice_settings: voiceSettings });
  });

  it("cancel is a barrier: no audio after it, and the context is closed with close_context", async () => {
    const server = await fake({ chunkDelayMs: 15 });
    const session = await open(server);
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("one two three four five six seven eight nine ten");
    stream.end();
    await rec.firstAudio;
    stream.cancel();
    const atCancel = rec.order.length;
    await sleep(120);
    expect(rec.order.slice(atCancel)).toEqual([]);
    const id = server.messages[0]!.context_id;
    await vi.waitFor(() => expect(server.messages).toContainEqual({ context_id: id, close_context: true }));
    const next = recorder();
    const again = session.stream(next.events);
    again.push("Next turn.");
    again.end();
    expect(await next.ended).toBe("done");
    expect(textFromPcm(next.pcm(), 16000)).toBe("Next turn. ");
  });

  it("closes the socket with close_socket", async () => {
    const server = await fake();
    const session = await open(server);
    await session.close();
    expect(server.messages).toContainEqual({ close_socket: true });
  });

  it("negotiates the nearest pcm_<rate> output format", async () => {
    const server = await fake();
    for (const [requested, expected] of [
      [8000, 8000],
      [11025, 8000],
      [22000, 22050],
      [23600, 24000],
      [44000, 44100],
      [96000, 48000],
    ] as const) {
      const session = await open(server, requested);
      expect(session.sampleRate).toBe(expected);
      const rec = recorder();
      const stream = session.stream(rec.events);
      stream.push("Hi.");
      stream.end();
      expect(await rec.ended).toBe("done");
      expect(server.connections.at(-1)!.query.output_format).toBe(`pcm_${expected}`);
      expect(textFromPcm(rec.pcm(), expected)).toBe("Hi. ");
    }
  });

  it("refuses a wrong key naming the variable", async () => {
    const server = await fake();
    const provider = elevenLabsTts({ kind: "elevenlabs", options: { url: server.url, voiceId: VOICE } }, { ELEVENLABS_API_KEY: "wrong" });
    await expect(provider.open({ sampleRate: 16000 })).rejects.toThrow(/HTTP 401.*ELEVENLABS_API_KEY/);
    const named = elevenLabsTts({ kind: "elevenlabs", options: { url: server.url, voiceId: VOICE, apiKeyEnv: "XI_KEY" } }, { XI_KEY: "wrong" });
    await expect(named.open({ sampleRate: 16000 })).rejects.toThrow(/XI_KEY/);
  });

  it("needs a key and options.voiceId at construction, and refuses eleven_v3", () => {
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE } }, {})).toThrow(MissingKeyError);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE } }, {})).toThrow(/set ELEVENLABS_API_KEY/);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: {} }, KEY)).toThrow(GatewayError);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: {} }, KEY)).toThrow(/tts\.options\.voiceId/);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE, model: "eleven_v3" } }, KEY)).toThrow(/eleven_v3/);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE, voiceSettings: "loud" } }, KEY)).toThrow(/tts\.options\.voiceSettings/);
    expect(elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE } }, KEY).kind).toBe("elevenlabs");
  });

  it("open() times out after 10 s when the handshake never completes", async () => {
    const server = await fake({ hangHandshake: true });
    const clock = virtualClock();
    const opening = elevenLabsTts({ kind: "elevenlabs", options: { url: server.url, voiceId: VOICE } }, KEY, { clock }).open({ sampleRate: 16000 });
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
    const [opening, resent, flush] = server.connections[1]!.messages;
    expect(opening).toMatchObject({ text: " " });
    const rest = resent!.text as string;
    expect(`${text} `.endsWith(rest)).toBe(true);
    expect(rest.length).toBeLessThan(text.length);
    expect(rest).toMatch(/^(three|four) /);
    expect(resent!.context_id).not.toBe(server.connections[0]!.messages[0]!.context_id);
    expect(flush).toEqual({ context_id: resent!.context_id, flush: true });
    expect(textFromPcm(rec.pcm(), 16000)).toBe(`${text} `);
    const eight = rec.words.at(-1)!;
    expect(eight.word).toBe("eight.");
    expect(eight.startMs).toBeCloseTo(text.indexOf("eight.") * 10);
  });

  it("reports an error on open streams once the reconnect budget is spent", async () => {
    const server = await fake({ chunkDelayMs: 20 });
    const session = await open(server, 16000, {}, { retryDelaysMs: [10, 10, 10] });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("This will not finish in time.");
    await rec.firstAudio;
    await server.close();
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/3 reconnect attempts failed/);
  });

  it("ignores malformed server JSON with a log line; a server error message fails its stream", async () => {
    const server = await fake({ chunkDelayMs: 10 });
    const warnings: string[] = [];
    const log = { warn: (_obj: object, msg: string) => void warnings.push(msg), debug: () => undefined };
    const session = await open(server, 16000, {}, { log });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.push("Still fine after noise.");
    stream.end();
    await rec.firstAudio;
    server.sendRaw("{not json");
    server.sendRaw('{"audio":"AAAA","contextId":"nobody"}');
    expect(await rec.ended).toBe("done");
    expect(textFromPcm(rec.pcm(), 16000)).toBe("Still fine after noise. ");
    expect(warnings.some((w) => /malformed JSON/.test(w))).toBe(true);

    const failing = recorder();
    const other = session.stream(failing.events);
    other.push("Doomed.");
    await failing.firstAudio;
    const id = server.messages.at(-1)!.context_id as string;
    server.sendRaw(JSON.stringify({ message: "quota exceeded", contextId: id }));
    const outcome = await failing.ended;
    expect((outcome as Error).message).toMatch(/quota exceeded/);
  });

  it("accepts a pino logger", async () => {
    const server = await fake();
    const session = await open(server, 16000, {}, { log: silentLogger });
    const rec = recorder();
    const stream = session.stream(rec.events);
    stream.end();
    expect(await rec.ended).toBe("done");
  });
});
