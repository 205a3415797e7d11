import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { GatewayError } from "../../../src/errors.js";
import { ASSEMBLYAI_FATAL_CLOSE_CODES, assemblyAiStreamingUrl, assemblyAiStt, type AssemblyAiSttOptions } from "../../../src/pipeline/providers/stt/assemblyai.js";
import type { SttOpenOptions, SttSession } from "../../../src/pipeline/stt-port.js";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi, type FakeAssemblyAi, type FakeAssemblyAiOptions } from "../../../fakes/assemblyai.js";
import { sttRecorder } from "../../helpers/stt-recorder.js";
import { closeAfterEach, fakePerTest } from "../../helpers/cleanups.js";

const ENV = { ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY };
const OPEN: SttOpenOptions = { sampleRate: 16000, minSilenceMs: 400, maxSilenceMs: 1280 };
/** 20 ms of PCM16 mono at 16 kHz (2 bytes a sample); 50 ms is 1600 bytes. */
const FRAME = new Uint8Array(640);

const recorder = () => sttRecorder();

const closing = closeAfterEach();
let fake: FakeAssemblyAi;
const restartFake = fakePerTest(closing, (options?: FakeAssemblyAiOptions) => startFakeAssemblyAi(options), (started) => (fake = started));
/** The session the test opened last, closed after it. */
let session: SttSession | undefined;

function provider(options: Record<string, unknown> = {}, runtime: AssemblyAiSttOptions = {}, env: Record<string, string> = ENV) {
  return assemblyAiStt({ kind: "assemblyai", options: { url: fake.url, ...options } }, env, runtime);
}

async function openSession(open: Partial<SttOpenOptions> = {}, options: Record<string, unknown> = {}, runtime: AssemblyAiSttOptions = {}) {
  const rec = recorder();
  session = closing(await provider(options, runtime).open({ ...OPEN, ...open }, rec.events));
  return rec;
}

describe("assemblyAiStt: connection", () => {
  it("connects with the v3 query (min_turn_silence, not the deprecated name) and the raw key as Authorization", async () => {
    await openSession({ prompt: "Acme, order id\nZed", minSilenceMs: 560, maxSilenceMs: 2000 });
    const c = fake.latest;
    expect(c.headers.authorization).toBe(FAKE_ASSEMBLYAI_KEY);
    expect(Object.fromEntries(c.query.entries())).toEqual({
      sample_rate: "16000",
      encoding: "pcm_s16le",
      speech_model: "universal-streaming-english",
      format_turns: "true",
      end_of_turn_confidence_threshold: "0.4",
      min_turn_silence: "560",
      max_turn_silence: "2000",
      keyterms_prompt: JSON.stringify(["Acme", "order id", "Zed"]),
    });
    expect(session!.endpointing).toBe(true);
  });

  it("takes speechModel / model, language, formatTurns, the EOT threshold and extra params from options", () => {
    const url = (settings: Parameters<typeof assemblyAiStreamingUrl>[1], open: Partial<SttOpenOptions> = {}) =>
      new URL(assemblyAiStreamingUrl("wss://streaming.assemblyai.com/v3/ws", settings, { ...OPEN, ...open })).searchParams;
    const q = url({ speechModel: "u3-rt-pro", formatTurns: false, eotThreshold: 0.7, params: { vad_threshold: 0.5, sample_rate: 8000 } }, { minSilenceMs: 900, maxSilenceMs: 500 });
    expect(q.get("speech_model")).toBe("u3-rt-pro");
    expect(q.get("format_turns")).toBe("false");
    expect(q.get("end_of_turn_confidence_threshold")).toBe("0.7");
    expect(q.get("max_turn_silence")).toBe("900"); // never below the minimum
    expect(q.get("vad_threshold")).toBe("0.5");
    expect(q.get("sample_rate")).toBe("16000"); // the audio format is the adapter's
    expect(q.has("keyterms_prompt")).toBe(false);
  });

  it("picks the multilingual model for a non-English language unless a model is named", async () => {
    await openSession({ language: "fr" });
    expect(fake.latest.query.get("speech_model")).toBe("universal-streaming-multilingual");
    await session!.close();
    await openSession({ language: "fr" }, { model: "u3-rt-pro" });
    expect(fake.latest.query.get("speech_model")).toBe("u3-rt-pro");
    await session!.close();
    await openSession({}, { speechModel: "universal-streaming-multilingual", formatTurns: false, endOfTurnConfidenceThreshold: 0.6 });
    expect(fake.latest.query.get("format_turns")).toBe("false");
    expect(fake.latest.query.get("end_of_turn_confidence_threshold")).toBe("0.6");
  });

  // The key at construction and a 401 at the upgrade: test/conformance/stt.test.ts.
  it("refuses bad options at construction", () => {
    expect(() => assemblyAiStt({ kind: "assemblyai", options: { endOfTurnConfidenceThreshold: 2 } }, ENV)).toThrow(/from 0 to 1/);
    expect(() => assemblyAiStt({ kind: "assemblyai", options: { formatTurns: "yes" } }, ENV)).toThrow(/true or false/);
  });

  it("maps a close 4001 before Begin the same way as a 401 at the upgrade (test/conformance/stt.test.ts)", async () => {
    await restartFake({ authFailure: "close" });
    const failure = await provider({ apiKeyEnv: "AAI_KEY" }, {}, { AAI_KEY: "wrong" }).open(OPEN, recorder().events).catch((e: unknown) => e);
    expect((failure as GatewayError).message).toMatch(/close 4001.*AAI_KEY.*Not authorized/);
    expect((failure as GatewayError).fatal).toBe(true);
  });

  it("maps a query the server refuses (close 4101 / 4000) to a fatal error with the server's message", async () => {
    const failure = await provider({ params: { keyterms_prompt: "not json" } }).open(OPEN, recorder().events).catch((e: unknown) => e);
    expect((failure as GatewayError).message).toMatch(/code 4101.*keyterms_prompt/);
    expect((failure as GatewayError).fatal).toBe(true);
    const rate = await provider().open({ ...OPEN, sampleRate: 1000 }, recorder().events).catch((e: unknown) => e);
    expect((rate as GatewayError).message).toMatch(/code 4000.*sample rate/);
  });

});

describe("assemblyAiStt: turns", () => {
  it("maps Turn end_of_turn:false → partial with eotConfidence, and the formatted end of turn → one final", async () => {
    const rec = await openSession();
    fake.speechStarted();
    fake.partial("hi", { confidence: 0.01, trailingWord: "my" });
    fake.partial("hi my name", { confidence: 0.2 });
    fake.endOfTurn("hi my name is ada", { confidence: 0.93 });
    await rec.waitFor("final");
    await sleep(30);
    expect(rec.calls).toEqual([
      { name: "speechStarted", args: [] },
      { name: "partial", args: ["hi my", { eotConfidence: 0.01 }] },
      { name: "partial", args: ["hi my name", { eotConfidence: 0.2 }] },
      { name: "final", args: ["Hi my name is ada.", { endOfTurn: true, eotConfidence: 0.93 }] },
    ]);
    // The next turn (a higher turn_order) is independent.
    fake.partial("and");
    fake.endOfTurn("and you", { formatted: "And you?" });
    await rec.waitFor("final", 2);
    expect(rec.of("final")[1]!.args[0]).toBe("And you?");
  });

  it("a partial is the whole turn so far (never repeated after its final); an emptied one withdraws it", async () => {
    const rec = await openSession({}, { formatTurns: false });
    fake.partial("", { trailingWord: "uh" });
    fake.partial(""); // the non-final word is gone
    fake.partial(""); // nothing left to withdraw
    fake.speak("what is the status of my order");
    fake.speak("thanks");
    await rec.waitFor("final", 2);
    expect(rec.of("partial").slice(0, 2).map((c) => c.args[0])).toEqual(["uh", ""]);
    expect(rec.of("partial").at(-1)!.args[0]).toBe("thanks");
    expect(rec.finals()).toEqual(["what is the status of my order", "thanks"]);
  });

  it("falls back to the unformatted turn when the formatted copy does not come", async () => {
    const rec = await openSession({}, {}, { formatWaitMs: 40 });
    fake.endOfTurn("no format", { confidence: 0.8, formatted: false });
    expect((await rec.waitFor("final")).args).toEqual(["no format", { endOfTurn: true, eotConfidence: 0.8 }]);
    // …or as soon as the next turn starts.
    const rec2 = await openSession({}, {}, { formatWaitMs: 10_000 });
    fake.endOfTurn("first", { formatted: false });
    fake.partial("second");
    await rec2.waitFor("partial");
    expect(rec2.calls.map((c) => [c.name, c.args[0]])).toEqual([
      ["final", "first"],
      ["partial", "second"],
    ]);
  });

  it("with format_turns off, the end_of_turn message is the final", async () => {
    const rec = await openSession({}, { formatTurns: false });
    fake.endOfTurn("plain text", { confidence: 0.7 });
    expect((await rec.waitFor("final")).args).toEqual(["plain text", { endOfTurn: true, eotConfidence: 0.7 }]);
  });

  it("finalize() flushes buffered audio (padded to 50 ms) and sends ForceEndpoint, which ends the turn", async () => {
    const rec = await openSession();
    session!.sendAudio(FRAME); // 20 ms: buffered
    fake.partial("push to talk");
    await rec.waitFor("partial");
    expect(fake.audioBytes).toBe(0);
    session!.finalize();
    expect(await fake.waitForMessage("ForceEndpoint")).toEqual({ type: "ForceEndpoint" });
    expect(fake.latest.frameMs).toEqual([50]);
    expect((await rec.waitFor("final")).args[0]).toBe("Push to talk.");
    expect(fake.violations).toEqual([]);
  });

  it("ignores malformed JSON (logged) and logs {error} messages", async () => {
    const warnings: string[] = [];
    const log = { debug: () => {}, warn: (_obj: object, msg?: string) => warnings.push(msg ?? "") };
    const rec = await openSession({}, {}, { log });
    // Malformed frames are logged once an interval, however many come.
    for (let i = 0; i < 3; i++) fake.sendRaw("{oops");
    fake.sendRaw(JSON.stringify({ error: "something odd" }));
    fake.partial("fine");
    await rec.waitFor("partial");
    expect(warnings).toEqual([expect.stringMatching(/malformed JSON/), expect.stringMatching(/reported an error/)]);
  });
});

describe("assemblyAiStt: where the finalized audio ends", () => {
  it("is the end (ms) of the last word of the latest ended turn, and unset before any", async () => {
    const rec = await openSession({}, { formatTurns: false });
    const turn = (order: number, end: boolean, words: [string, number, number][]): string =>
      JSON.stringify({
        type: "Turn",
        turn_order: order,
        turn_is_formatted: false,
        end_of_turn: end,
        transcript: words.map(([w]) => w).join(" "),
        end_of_turn_confidence: end ? 0.9 : 0.1,
        words: words.map(([text, start, stop]) => ({ text, start, end: stop, confidence: 0.9, word_is_final: true })),
      });
    fake.sendRaw(turn(0, false, [["hi", 1920, 2000]]));
    await rec.waitFor("partial");
    expect(session?.finalizedAudioMs).toBeUndefined();
    fake.sendRaw(turn(0, true, [["hi", 1920, 2000], ["there", 2100, 2480]]));
    await rec.waitFor("final");
    expect(session?.finalizedAudioMs).toBe(2480);
  });
});

describe("assemblyAiStt: audio framing, backlog and drops", () => {
  it("sends audio in 50–1000 ms binary frames: small frames are buffered, large ones split", async () => {
    await openSession();
    const sent: number[] = [];
    for (let i = 0; i < 10; i++) {
      const frame = Uint8Array.from({ length: 640 }, (_, j) => (i * 640 + j) % 251);
      sent.push(...frame);
      session!.sendAudio(frame);
    }
    // 200 ms sent as 20 ms frames → three 60 ms frames, 20 ms still buffered.
    await fake.waitForAudio(3 * 1920);
    await sleep(20);
    expect(fake.latest.frameMs).toEqual([60, 60, 60]);
    // 1.5 s in one call → the 20 ms remainder + 1000 ms, then 520 ms.
    const big = new Uint8Array(48_000);
    session!.sendAudio(big);
    await fake.waitForAudio(3 * 1920 + 48_000);
    expect(fake.latest.frameMs).toEqual([60, 60, 60, 1000, 520]);
    expect([...Buffer.concat(fake.latest.frames).subarray(0, sent.length)]).toEqual(sent);
    expect(fake.violations).toEqual([]);
    expect(session!.droppedBytes).toBe(0);
  });

  it("frames at 8 kHz are 50 ms = 800 bytes", async () => {
    await openSession({ sampleRate: 8000 });
    for (let i = 0; i < 10; i++) session!.sendAudio(new Uint8Array(320)); // 20 ms each
    await fake.waitForAudio(2880);
    await sleep(20);
    expect(fake.latest.frames.map((f) => f.byteLength)).toEqual([960, 960, 960]); // 20 ms still buffered
    expect(fake.violations).toEqual([]);
  });

  it("closes 4032 (audio too short) and 4033 (audio too long) are recoverable, as the SDK retries them", async () => {
    for (const [code, reason] of [
      [4032, "Audio too short"],
      [4033, "Audio too long"],
    ] as const) {
      const rec = await openSession();
      fake.fail(code, reason);
      await rec.waitFor("closed");
      expect(rec.of("error")[0]!.args[1], `close ${code}`).toEqual({ recoverable: true });
      expect((rec.of("error")[0]!.args[0] as GatewayError).fatal).toBe(false);
      expect((rec.of("error")[0]!.args[0] as Error).message).toContain(`code ${code}`);
    }
    // Before Begin too: open() rejects with an error a retry may fix.
    await restartFake({ begin: false });
    const pending = provider().open(OPEN, recorder().events);
    await fake.waitForConnection(1);
    fake.fail(4033, "Audio too long");
    const failure = await pending.catch((e: unknown) => e);
    expect((failure as GatewayError).fatal).toBe(false);
  });

  it("only the SDK's non-retryable codes are fatal: 4000, 4001, 4002, 4003, 4101", () => {
    expect([...ASSEMBLYAI_FATAL_CLOSE_CODES].sort()).toEqual([4000, 4001, 4002, 4003, 4101]);
  });

  it("classifies vendor close codes: 4002 insufficient funds is fatal, 4029 rate limited is recoverable", async () => {
    const rec = await openSession();
    fake.fail(4002, "Insufficient funds");
    await rec.waitFor("closed");
    expect(rec.of("error")[0]!.args[1]).toEqual({ recoverable: false });
    expect((rec.of("error")[0]!.args[0] as Error).message).toMatch(/4002.*Insufficient funds/);

    const rec2 = await openSession();
    fake.closeWith(4029, "Rate limited");
    await rec2.waitFor("closed");
    expect(rec2.of("error")[0]!.args[1]).toEqual({ recoverable: true });
  });

  it("a pending unformatted turn is handed over before an unexpected close", async () => {
    const rec = await openSession({}, {}, { formatWaitMs: 10_000 });
    fake.endOfTurn("cut off", { formatted: false });
    await sleep(20);
    fake.drop();
    await rec.waitFor("closed");
    expect(rec.calls.map((c) => [c.name, c.args[0]])).toEqual([
      ["final", "cut off"],
      ["error", expect.any(GatewayError)],
      ["closed", { expected: false }],
    ]);
  });
});

describe("fake assemblyai: strictness and auto mode", () => {
  it("closes with 3007 (input duration violation) on a frame under 50 ms, after an Error message (as a raw client would trigger)", async () => {
    const ws = new WebSocket(`${fake.url}?sample_rate=16000&speech_model=universal-streaming-english`, { headers: { Authorization: FAKE_ASSEMBLYAI_KEY } });
    await new Promise((resolve) => ws.once("message", resolve)); // Begin
    const messages: unknown[] = [];
    ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString())));
    ws.send(new Uint8Array(640));
    const code = await new Promise<number>((resolve) => ws.once("close", resolve));
    expect(code).toBe(3007);
    expect(messages).toEqual([{ type: "Error", error_code: 3007, error: "Input duration violation: 20.0 ms. Expected between 50 and 1000 ms" }]);
    expect(fake.violations[0]).toMatch(/20\.0 ms/);
  });

  it("speaks a scripted transcript once it has received N ms of audio: a growing transcript, then the end of turn", async () => {
    await restartFake({ transcriptAfterMs: 100, transcript: "what time is it" });
    const rec = await openSession();
    for (let i = 0; i < 10; i++) session!.sendAudio(FRAME);
    expect((await rec.waitFor("final")).args).toEqual(["What time is it.", { endOfTurn: true, eotConfidence: 0.9 }]);
    expect(rec.of("speechStarted")).toHaveLength(1);
    // Each Turn's transcript holds the finalized words, and its words end with the newest, not final yet.
    expect(rec.of("partial").map((c) => c.args[0])).toEqual(["what", "what time", "what time is", "what time is it"]);
  });
});
