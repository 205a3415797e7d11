import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import type { GatewayError } from "../../../src/errors.js";
import { deepgramListenUrl, deepgramStt, splitKeyterms, type DeepgramSttOptions } from "../../../src/pipeline/providers/stt/deepgram.js";
import type { SttEvents, SttOpenOptions, SttSession } from "../../../src/pipeline/stt-port.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../../fakes/deepgram.js";
import { sttRecorder } from "../../helpers/stt-recorder.js";
import { closeAfterEach, fakePerTest } from "../../helpers/cleanups.js";

const ENV = { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY };
const OPEN: SttOpenOptions = { sampleRate: 16000, minSilenceMs: 300, maxSilenceMs: 1200 };
/** 20 ms of PCM16 mono at 16 kHz (2 bytes a sample). */
const FRAME = new Uint8Array(640);

const recorder = () => sttRecorder();

const closing = closeAfterEach();
let fake: FakeDeepgram;
fakePerTest(closing, () => startFakeDeepgram(), (started) => (fake = started));
/** The session the test opened last, closed after it. */
let session: SttSession | undefined;

function provider(options: Record<string, unknown> = {}, runtime: DeepgramSttOptions = {}, env: Record<string, string> = ENV) {
  return deepgramStt({ kind: "deepgram", options: { url: fake.url, ...options } }, env, runtime);
}

async function openSession(open: Partial<SttOpenOptions> = {}, options: Record<string, unknown> = {}, runtime: DeepgramSttOptions = {}) {
  const rec = recorder();
  session = closing(await provider(options, runtime).open({ ...OPEN, ...open }, rec.events));
  return rec;
}

describe("deepgramStt: connection", () => {
  it("connects with the documented listen params and the Token auth header", async () => {
    await openSession({ prompt: "Acme, order id; Zed\nacme", language: "en-US" });
    const c = fake.latest;
    expect(c.headers.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    const q = c.query;
    expect(Object.fromEntries([...q.entries()].filter(([k]) => k !== "keyterm"))).toEqual({
      model: "nova-3",
      encoding: "linear16",
      sample_rate: "16000",
      channels: "1",
      interim_results: "true",
      endpointing: "300",
      utterance_end_ms: "1200",
      vad_events: "true",
      smart_format: "true",
      language: "en-US",
    });
    expect(q.getAll("keyterm")).toEqual(["Acme", "order id", "Zed"]);
    expect(session!.endpointing).toBe(true);
  });

  it("clamps utterance_end_ms to 1000–5000 and lets options override model, language and extra params", () => {
    const url = (maxSilenceMs: number, settings: Parameters<typeof deepgramListenUrl>[1] = { model: "nova-3" }) =>
      new URL(deepgramListenUrl("wss://api.deepgram.com/v1/listen", settings, { ...OPEN, maxSilenceMs, prompt: "Acme, order id" })).searchParams;
    expect(url(400).get("utterance_end_ms")).toBe("1000");
    expect(url(20_000).get("utterance_end_ms")).toBe("5000");
    const nova2 = url(1500, { model: "nova-2", language: "fr", params: { numerals: true, encoding: "mulaw", tag: ["a", "b"] } });
    expect(nova2.get("model")).toBe("nova-2");
    expect(nova2.get("language")).toBe("fr");
    expect(nova2.getAll("keyterm")).toEqual([]);
    expect(nova2.getAll("keywords")).toEqual(["Acme"]); // keywords take single words only
    expect(nova2.get("numerals")).toBe("true");
    expect(nova2.get("encoding")).toBe("linear16"); // the audio format is the adapter's
    expect(nova2.getAll("tag")).toEqual(["a", "b"]);
  });

  it("splits a prompt into keyterms sensibly", () => {
    expect(splitKeyterms(undefined)).toEqual([]);
    expect(splitKeyterms("  Switchboard  |  voice   gateway ,, ")).toEqual(["Switchboard", "voice gateway"]);
    expect(splitKeyterms(Array.from({ length: 150 }, (_, i) => `t${i}`).join(","))).toHaveLength(100);
  });

  it("prefers the descriptor's language, then the session's", async () => {
    await openSession({ language: "de" });
    expect(fake.latest.query.get("language")).toBe("de");
    await session!.close();
    await openSession({ language: "de" }, { language: "multi" });
    expect(fake.latest.query.get("language")).toBe("multi");
  });

  // The key at construction and a 401 at the upgrade: test/conformance/stt.test.ts.
  it("refuses a url that is not ws:// and a bad option at construction", () => {
    expect(() => deepgramStt({ kind: "deepgram", options: { url: "http://x" } }, ENV)).toThrow(/ws:\/\//);
    expect(() => deepgramStt({ kind: "deepgram", options: { model: 3 } }, ENV)).toThrow(/options.model/);
  });

  it("maps a 400 (bad params) to a fatal error carrying the dg-error reason", async () => {
    const failure = await provider({ params: { utterance_end_ms: 500 } }).open(OPEN, recorder().events).catch((e: unknown) => e);
    expect((failure as GatewayError).message).toMatch(/HTTP 400.*utterance_end_ms/);
    expect((failure as GatewayError).fatal).toBe(true);
  });

});

describe("deepgramStt: transcripts", () => {
  it("maps interim → partial (the unfinalized tail only), is_final → final, speech_final → endOfTurn", async () => {
    const rec = await openSession();
    fake.speechStarted();
    fake.partial("hello");
    fake.final("hello there");
    fake.partial("how are");
    fake.final("how are you", { speechFinal: true });
    fake.utteranceEnd(); // after speech_final: ignored
    fake.final(""); // silence: Deepgram sends empty finals, ignored
    await rec.waitFor("final", 2);
    await sleep(30);
    expect(rec.calls).toEqual([
      { name: "speechStarted", args: [] },
      { name: "partial", args: ["hello", {}] },
      { name: "final", args: ["hello there", { endOfTurn: false }] },
      // The interim covers the audio after the last is_final result: never "hello there" again.
      { name: "partial", args: ["how are", {}] },
      { name: "final", args: ["how are you", { endOfTurn: true }] },
    ]);
  });

  it("an interim withdrawn (empty interim, or an empty is_final over it) clears the partial; silence alone sends nothing", async () => {
    const rec = await openSession();
    fake.partial(""); // silence before any speech: nothing
    fake.partial("uh");
    fake.partial(""); // withdrawn
    fake.partial(""); // still nothing to withdraw
    fake.partial("um");
    fake.final(""); // finalized as no words: covers the interim
    fake.final(""); // silence
    fake.partial("so");
    fake.final("", { speechFinal: true });
    await rec.waitFor("final", 2);
    await sleep(30);
    expect(rec.calls.map((c) => [c.name, ...c.args])).toEqual([
      ["partial", "uh", {}],
      ["partial", "", {}],
      ["partial", "um", {}],
      ["final", "", { endOfTurn: false }],
      ["partial", "so", {}],
      ["final", "", { endOfTurn: true }],
    ]);
  });

  it("UtteranceEnd closes an open turn: with the unfinalized interim, or an empty final", async () => {
    const rec = await openSession();
    fake.partial("one two");
    fake.utteranceEnd();
    await rec.waitFor("final", 1);
    fake.final("three");
    fake.utteranceEnd();
    await rec.waitFor("final", 3);
    expect(rec.of("final").map((c) => c.args)).toEqual([
      ["one two", { endOfTurn: true }],
      ["three", { endOfTurn: false }],
      ["", { endOfTurn: true }],
    ]);
    // A new utterance starts clean.
    fake.partial("four");
    await rec.waitFor("partial", 2);
    expect(rec.of("partial").at(-1)!.args[0]).toBe("four");
  });

  it("finalize() sends Finalize; the from_finalize result ends the turn", async () => {
    const rec = await openSession();
    fake.partial("push to talk");
    await rec.waitFor("partial");
    session!.finalize();
    expect(await fake.waitForMessage("Finalize")).toEqual({ type: "Finalize" });
    expect((await rec.waitFor("final")).args).toEqual(["push to talk", { endOfTurn: true }]);
  });

  it("streams audio as binary frames, byte for byte", async () => {
    await openSession();
    const frame = Uint8Array.from({ length: 640 }, (_, i) => i % 256);
    for (let i = 0; i < 5; i++) session!.sendAudio(frame);
    await fake.waitForAudio(3200);
    expect(fake.latest.frames).toHaveLength(5);
    expect([...fake.latest.frames[0]!]).toEqual([...frame]);
    expect(session!.droppedBytes).toBe(0);
  });

  it("ignores malformed JSON (logged) and survives a throwing event handler", async () => {
    const warnings: string[] = [];
    const log = { debug: () => {}, warn: (_obj: object, msg?: string) => warnings.push(msg ?? "") };
    const rec = recorder();
    let throwOnce = true;
    const events: SttEvents = {
      ...rec.events,
      partial: (text, info) => {
        rec.events.partial(text, info);
        if (throwOnce) {
          throwOnce = false;
          throw new Error("handler bug");
        }
      },
    };
    session = closing(await provider({}, { log }).open(OPEN, events));
    // Each kind of bad frame is logged once an interval, however many come.
    for (let i = 0; i < 3; i++) fake.sendRaw("{not json");
    for (let i = 0; i < 3; i++) fake.sendRaw(JSON.stringify([1, 2]));
    fake.partial("still");
    fake.partial("still works");
    await rec.waitFor("partial", 2);
    expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(/malformed JSON/), expect.stringMatching(/without a type/), expect.stringMatching(/handler threw/)]));
    expect(warnings.filter((w) => /malformed JSON|without a type/.test(w))).toHaveLength(2);
    expect(rec.of("error")).toEqual([]);
  });
});

describe("deepgramStt: keepalive, backlog and drops", () => {
  it("sends KeepAlive after keepAliveMs without audio, and not while audio flows", async () => {
    const clock = virtualClock();
    await openSession({}, {}, { clock });
    await clock.advance(4999);
    await sleep(20);
    expect(fake.messages).toEqual([]);
    await clock.advance(1);
    expect(await fake.waitForMessage("KeepAlive")).toEqual({ type: "KeepAlive" });
    // Audio every second for 12 s: no KeepAlive.
    for (let i = 0; i < 12; i++) {
      session!.sendAudio(FRAME);
      await clock.advance(1000);
    }
    await fake.waitForAudio(12 * 640);
    expect(fake.messages.filter((m) => m.type === "KeepAlive")).toHaveLength(1);
    // Quiet again: the next one 5 s after the last audio, then every 5 s.
    await clock.advance(5000);
    await fake.waitForMessage("KeepAlive", 2);
    await clock.advance(5000);
    await fake.waitForMessage("KeepAlive", 3);
    expect(fake.latest.closed).toBe(false);
  });

  it("honours an injected keepAliveMs, and stops after close()", async () => {
    await openSession({}, {}, { keepAliveMs: 20 });
    await fake.waitForMessage("KeepAlive", 2);
    await session!.close();
    const count = fake.messages.filter((m) => m.type === "KeepAlive").length;
    await sleep(60);
    expect(fake.messages.filter((m) => m.type === "KeepAlive")).toHaveLength(count);
  });

  it("KeepAlive keeps an idle stream open; without it the server closes with NET-0001 (recoverable)", async () => {
    await fake.close();
    fake = await startFakeDeepgram({ idleTimeoutMs: 150 });
    const kept = await openSession({}, {}, { keepAliveMs: 20 });
    await sleep(400);
    expect(kept.calls).toEqual([]);
    await session!.close();
    const idle = await openSession({}, {}, { keepAliveMs: 60_000 });
    await idle.waitFor("closed");
    const [error, info] = idle.of("error")[0]!.args as [Error, { recoverable: boolean }];
    expect(error.message).toMatch(/code 1011.*NET-0001/);
    expect(info).toEqual({ recoverable: true });
  });

  it("a 1008 close (undecodable audio) is not recoverable; a 1011 NET-0001 is", async () => {
    const rec = await openSession();
    fake.closeWith(1008, "DATA-0000: The payload cannot be decoded as audio.");
    await rec.waitFor("closed");
    expect(rec.of("error")[0]!.args[1]).toEqual({ recoverable: false });
    expect((rec.of("error")[0]!.args[0] as Error).message).toMatch(/DATA-0000/);

    const rec2 = await openSession();
    fake.closeWith(1011, "NET-0001");
    await rec2.waitFor("closed");
    expect(rec2.of("error")[0]!.args[1]).toEqual({ recoverable: true });
  });
});

describe("fake deepgram: auto mode", () => {
  it("speaks a scripted transcript once it has received N ms of audio, in two is_final segments; runs onAudio hooks", async () => {
    await fake.close();
    fake = await startFakeDeepgram({ transcriptAfterMs: 100, transcript: ["book a table", "for two"] });
    const hooked: number[] = [];
    fake.onAudio(60, (c) => hooked.push(Math.round(c.audioMs)));
    const rec = await openSession();
    for (let i = 0; i < 10; i++) session!.sendAudio(FRAME);
    await rec.waitFor("final", 4);
    expect(rec.of("final").map((c) => c.args)).toEqual([
      ["book a", { endOfTurn: false }],
      ["table", { endOfTurn: true }],
      ["for", { endOfTurn: false }],
      ["two", { endOfTurn: true }],
    ]);
    // Interims grow over the unfinalized audio only.
    expect(rec.of("partial").map((c) => c.args[0])).toEqual(["book", "book a", "table", "for", "two"]);
    expect(rec.of("speechStarted")).toHaveLength(2);
    expect(hooked).toEqual([60]);
  });
});
