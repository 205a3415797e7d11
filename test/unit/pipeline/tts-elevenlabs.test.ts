import { describe, expect, it, vi } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { GatewayError } from "../../../src/errors.js";
import { ELEVENLABS_FINAL_TIMEOUT_MS, ELEVENLABS_MAX_CONTEXTS, elevenLabsTts, type ElevenLabsTtsOptions } from "../../../src/pipeline/providers/tts/elevenlabs.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { startFakeElevenLabs, textFromPcm, type FakeElevenLabs, type FakeElevenLabsOptions } from "../../../fakes/elevenlabs.js";
import { closeAfterEach } from "../../helpers/cleanups.js";
import { expectBadAudioDropped, expectNearestRates, expectTwoPushes, speak, ttsRecorder, TWO_PUSHES, type TtsRecorder } from "../../helpers/tts-recorder.js";

const KEY = { ELEVENLABS_API_KEY: "test-key" };
const VOICE = "voice-abc";

const closing = closeAfterEach();

async function fake(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  return closing(await startFakeElevenLabs(options));
}

async function open(server: FakeElevenLabs, sampleRate = 16000, options: Record<string, unknown> = {}, adapter: ElevenLabsTtsOptions = {}): Promise<TtsSession> {
  return closing(await elevenLabsTts({ kind: "elevenlabs", options: { url: server.url, voiceId: VOICE, ...options } }, KEY, adapter).open({ sampleRate }));
}

/** The messages the fake received for one context, in order. */
const onContext = (server: FakeElevenLabs, id: unknown): Record<string, unknown>[] => server.messages.filter((m) => m.context_id === id);
const isClose = (message: Record<string, unknown>): boolean => message.close_context === true;
/** Context ids in the order their opening message (text " ") reached the fake. */
const opened = (server: FakeElevenLabs): unknown[] => server.messages.filter((m) => m.text === " ").map((m) => m.context_id);

describe("elevenLabsTts (multi-stream-input)", () => {
  it.each([false, true])("streams two pushes on one context: audio, word timings, done (snake_case %s)", async (snakeCase) => {
    const server = await fake({ snakeCase });
    const session = await open(server, 16000);
    expect(session.sampleRate).toBe(16000);
    const rec = await speak(session, ...TWO_PUSHES);
    // The adapter ends every chunk with a space (docs/vendors.md (ElevenLabs)), so the spoken text has one more character.
    expectTwoPushes(rec, "Hello there, how are you? ");

    const connection = server.connections[0]!;
    expect(connection.voiceId).toBe(VOICE);
    expect(connection.query).toMatchObject({ model_id: "eleven_flash_v2_5", output_format: "pcm_16000", sync_alignment: "true" });
    expect(connection.headers["xi-api-key"]).toBe("test-key");
    const id = server.messages[0]!.context_id;
    expect(server.messages.slice(0, 4)).toEqual([
      { text: " ", context_id: id },
      { text: "Hello there, ", context_id: id, flush: true },
      { text: "how are you? ", context_id: id, flush: true },
      { context_id: id, close_context: true },
    ]);
    expect(server.violations).toEqual([]);
  });

  it("drops audio that is not strict base64, with one warning; the words' audio plays", async () => {
    const server = await fake();
    const warn = vi.fn();
    const session = await open(server, 16000, {}, { log: { debug: () => undefined, warn } });
    const rec = await expectBadAudioDropped(session, server, (contextId, audio) => ({ audio, isFinal: null, contextId }), () => warn.mock.calls.filter(([, m]) => String(m).includes("not base64")).length);
    expectTwoPushes(rec, "Hello there, how are you? ");
  });

  it("sends voice settings, model and language from the options", async () => {
    const server = await fake();
    const voiceSettings = { stability: 0.5, similarity_boost: 0.8 };
    const session = await open(server, 24000, { model: "eleven_turbo_v2_5", language: "de", voiceSettings });
    await speak(session, "Guten Tag.");
    expect(server.connections[0]!.query).toMatchObject({ model_id: "eleven_turbo_v2_5", language_code: "de", output_format: "pcm_24000" });
    expect(server.messages[0]).toMatchObject({ text: " ", voice_settings: voiceSettings });
  });

  it("closes the socket with close_socket", async () => {
    const server = await fake();
    const session = await open(server);
    await session.close();
    expect(server.messages).toContainEqual({ close_socket: true });
  });

  it("negotiates the nearest pcm_<rate> output format", async () => {
    const server = await fake();
    const pairs = [[8000, 8000], [11025, 8000], [22000, 22050], [23600, 24000], [44000, 44100], [96000, 48000]] as const;
    await expectNearestRates(pairs, (rate) => open(server, rate), (offered) => expect(server.connections.at(-1)!.query.output_format).toBe(`pcm_${offered}`), "Hi.");
  });

  it("needs options.voiceId at construction, and refuses eleven_v3", () => {
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: {} }, KEY)).toThrow(GatewayError);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: {} }, KEY)).toThrow(/tts\.options\.voiceId/);
    expect(() => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE, model: "eleven_v3" } }, KEY)).toThrow(/eleven_v3/);
  });

  it("a server error message fails its stream", async () => {
    const server = await fake({ chunkDelayMs: 10 });
    const session = await open(server);
    const failing = ttsRecorder();
    const other = session.stream(failing.events);
    other.push("Doomed.");
    await failing.firstAudio;
    const id = server.messages.at(-1)!.context_id as string;
    server.sendRaw(JSON.stringify({ message: "quota exceeded", contextId: id }));
    const outcome = await failing.ended;
    expect((outcome as Error).message).toMatch(/quota exceeded/);
  });
});

// The documented lifecycle (fake-elevenlabs.ts): text is buffered until the chunk_length_schedule step
// (120 characters first) or a flush; isFinal is sent only once a context is closed; 5 contexts a socket.
describe("elevenLabsTts: per-batch flush, close_context, bounded isFinal", () => {
  it("(a) a reply is done at its isFinal, after close_context sent exactly once, after its last text", async () => {
    const server = await fake();
    const session = await open(server);
    const rec = await speak(session, "Your order shipped on Friday. ", "It should arrive on Monday. ");

    const id = opened(server)[0];
    const messages = onContext(server, id);
    expect(messages.filter(isClose)).toHaveLength(1);
    expect(messages.at(-1)).toEqual({ context_id: id, close_context: true });
    const texts = messages.map((m, i) => (typeof m.text === "string" && m.text.trim() !== "" ? i : -1)).filter((i) => i >= 0);
    expect(texts.at(-1)).toBe(messages.length - 2);
    expect(server.finals).toEqual([id]);
    expect(rec.order.filter((event) => event === "done")).toEqual(["done"]);
    expect(rec.order.at(-1)).toBe("done");
    expect(textFromPcm(rec.pcm(), 16000)).toBe("Your order shipped on Friday. It should arrive on Monday. ");
    expect(server.violations).toEqual([]);
  });

  it("(b) six sequential replies on one socket all finish, each context closed once (no leak past the 5-context limit)", async () => {
    const server = await fake();
    const session = await open(server);
    for (let turn = 1; turn <= 6; turn++) {
      const rec = await speak(session, `Reply ${turn}. `, "Anything else? ");
      expect(textFromPcm(rec.pcm(), 16000)).toBe(`Reply ${turn}. Anything else? `);
    }
    expect(server.connections).toHaveLength(1);
    const ids = opened(server);
    expect(ids).toHaveLength(6);
    for (const id of ids) expect(onContext(server, id).filter(isClose)).toHaveLength(1);
    expect(server.finals).toEqual(ids);
    expect(server.connections[0]!.openContexts()).toBe(0);
    expect(server.violations).toEqual([]);
  });

  it("(c) flushes every batch: a short first sentence is heard before end(), then the next batch", async () => {
    const server = await fake();
    const session = await open(server);
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("Sure. "); // far below the schedule's first step (120 characters): only a flush speaks it
    await vi.waitFor(() => expect(textFromPcm(rec.pcm(), 16000)).toBe("Sure. "));
    stream.push("Your order shipped on Friday. ");
    await vi.waitFor(() => expect(textFromPcm(rec.pcm(), 16000)).toBe("Sure. Your order shipped on Friday. "));
    expect(rec.order).not.toContain("done");
    expect(server.messages.some(isClose)).toBe(false);
    stream.end();
    expect(await rec.ended).toBe("done");
  });

  it("(d) a closed context that never reports isFinal fails its stream after ELEVENLABS_FINAL_TIMEOUT_MS and frees its slot", async () => {
    const server = await fake({ neverFinal: true });
    const clock = virtualClock();
    const session = await open(server, 16000, {}, { clock, retryDelaysMs: [0] });
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("Hello there. ");
    stream.end();
    await vi.waitFor(() => expect(server.messages.filter(isClose)).toHaveLength(1));
    await vi.waitFor(() => expect(textFromPcm(rec.pcm(), 16000)).toBe("Hello there. "));

    // Four live streams take the other slots; a sixth waits for the closing context's slot.
    const live = [1, 2, 3, 4].map((n) => {
      const liveRec = ttsRecorder();
      session.stream(liveRec.events).push(`Live ${n}. `);
      return liveRec;
    });
    await vi.waitFor(() => {
      for (const liveRec of live) expect(liveRec.chunks.length).toBeGreaterThan(0);
    });
    const waiting = ttsRecorder();
    const sixth = session.stream(waiting.events);
    sixth.push("Waiting. ");
    sixth.end();

    await clock.advance(ELEVENLABS_FINAL_TIMEOUT_MS - 1);
    expect(rec.order).not.toContain("done");
    expect(rec.order).not.toContain("error");
    expect(waiting.order).toEqual([]);
    expect(opened(server)).toHaveLength(5);

    await clock.advance(1);
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(GatewayError);
    expect((outcome as Error).message).toMatch(/no isFinal within 5 s of close_context/);

    // The slot is free: the sixth stream opens its context. This fake still counts the silent
    // context, so it refuses a sixth (1008); the adapter speaks the stream on a fresh socket.
    await vi.waitFor(() => expect(opened(server)).toHaveLength(6));
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(textFromPcm(waiting.pcm(), 16000)).toBe("Waiting. ");
    });
    expect(server.connections).toHaveLength(2);
    expect(server.connections[0]!.peakContexts()).toBe(ELEVENLABS_MAX_CONTEXTS);
  });

  it("(e) cancel closes the context once; its slot comes back at isFinal: six barge-ins in a row, then a reply, on one socket", async () => {
    const server = await fake({ chunkDelayMs: 5 });
    const session = await open(server);
    const cancelled: { rec: TtsRecorder; at: number }[] = [];
    for (let n = 1; n <= 6; n++) {
      const rec = ttsRecorder();
      const stream = session.stream(rec.events);
      stream.push(`Barge-in number ${n} cuts this sentence short before it ends. `);
      await rec.firstAudio;
      stream.cancel();
      cancelled.push({ rec, at: rec.order.length });
    }
    const rec = await speak(session, "Go ahead. ");
    expect(textFromPcm(rec.pcm(), 16000)).toBe("Go ahead. ");

    await vi.waitFor(() => expect(server.finals).toHaveLength(7));
    for (const { rec: before, at } of cancelled) expect(before.order).toHaveLength(at); // the barrier held
    const ids = opened(server);
    expect(ids).toHaveLength(7);
    for (const id of ids) expect(onContext(server, id).filter(isClose)).toHaveLength(1);
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]!.peakContexts()).toBeLessThanOrEqual(ELEVENLABS_MAX_CONTEXTS);
    expect(server.violations).toEqual([]);
  });

  it("a cancelled context that never reports isFinal gives its slot back after ELEVENLABS_FINAL_TIMEOUT_MS", async () => {
    const server = await fake({ neverFinal: true });
    const clock = virtualClock();
    const session = await open(server, 16000, {}, { clock, retryDelaysMs: [0] });
    for (let n = 1; n <= ELEVENLABS_MAX_CONTEXTS; n++) {
      const rec = ttsRecorder();
      const stream = session.stream(rec.events);
      stream.push(`Cancelled ${n}. `);
      await rec.firstAudio;
      stream.cancel();
    }
    await vi.waitFor(() => expect(server.messages.filter(isClose)).toHaveLength(ELEVENLABS_MAX_CONTEXTS));
    const next = ttsRecorder();
    const stream = session.stream(next.events);
    stream.push("Next. ");
    stream.end();
    await clock.advance(ELEVENLABS_FINAL_TIMEOUT_MS - 1);
    expect(next.order).toEqual([]); // waiting for a slot, not failed
    expect(opened(server)).toHaveLength(ELEVENLABS_MAX_CONTEXTS);
    await clock.advance(1);
    // The fake still counts the silent contexts and refuses the sixth (1008): spoken on a fresh socket.
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(textFromPcm(next.pcm(), 16000)).toBe("Next. ");
    });
    expect(server.connections).toHaveLength(2);
  });

  it("a sixth stream while five are live (none closing) fails at once with the limit named", async () => {
    const server = await fake();
    const session = await open(server);
    const live = Array.from({ length: ELEVENLABS_MAX_CONTEXTS }, (_unused, n) => {
      const rec = ttsRecorder();
      session.stream(rec.events).push(`Live ${n}. `);
      return rec;
    });
    await Promise.all(live.map((rec) => rec.firstAudio));
    const sixth = ttsRecorder();
    session.stream(sixth.events).push("One too many. ");
    const outcome = await sixth.ended;
    expect((outcome as Error).message).toMatch(/at most 5 streams/);
    expect(opened(server)).toHaveLength(ELEVENLABS_MAX_CONTEXTS);
    expect(server.violations).toEqual([]);
  });
});
