import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { virtualClock, type VirtualClock } from "../../../src/clock.js";
import type { S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sSession, S2sSetup } from "../../../src/s2s/s2s-port.js";
import { geminiLive, type GeminiLiveOptions } from "../../../src/s2s/providers/gemini-live.js";
import { GEMINI_RESUMPTION_WAIT_MS } from "../../../src/s2s/providers/gemini-live/go-away.js";
import { GEMINI_LIVE_DEFAULT_MODEL, GEMINI_LIVE_URL } from "../../../src/s2s/providers/gemini-live/settings.js";
import { toGeminiSchema } from "../../../src/s2s/providers/gemini-live/setup.js";
import { FAKE_GEMINI_KEY, startFakeGeminiLive, type FakeGemini, type FakeGeminiOptions } from "../../../fakes/gemini-live.js";
import { closeAfterEach, fakePerTest } from "../../helpers/cleanups.js";

const ENV = { GOOGLE_API_KEY: FAKE_GEMINI_KEY };

const SETUP: S2sSetup = {
  instructions: "You are a phone agent.",
  tools: [
    {
      name: "lookup_order",
      description: "Look up an order",
      parameters: { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
    },
    { name: "hang_up", description: "End the call", parameters: { type: "object", properties: {} } },
  ],
  toolChoice: "auto",
  interruptResponse: true,
};

type Call = { name: string; args: unknown[] };

function recorder() {
  const calls: Call[] = [];
  const push = (name: string, ...args: unknown[]): void => {
    calls.push({ name, args });
  };
  const events: S2sEvents = {
    audio: (pcm, info) => push("audio", Buffer.from(pcm), info),
    agentTranscript: (delta, info) => push("agentTranscript", delta, info),
    speechStarted: () => push("speechStarted"),
    speechStopped: () => push("speechStopped"),
    userTranscript: (text, info) => push("userTranscript", text, info),
    responseStarted: (info) => push("responseStarted", info),
    responseDone: (info) => push("responseDone", info),
    toolCall: (call) => push("toolCall", call),
    error: (error, info) => push("error", error, info),
    closed: (info) => push("closed", info),
  };
  const of = (name: string): Call[] => calls.filter((c) => c.name === name);
  const waitFor = async (name: string, count = 1, timeoutMs = 2000): Promise<Call> => {
    const deadline = Date.now() + timeoutMs;
    while (of(name).length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} × ${name}; got ${JSON.stringify(calls.map((c) => c.name))}`);
      await sleep(2);
    }
    return of(name)[count - 1]!;
  };
  return { calls, events, of, waitFor, names: () => calls.map((c) => c.name) };
}

function historyTurnsOf(history: readonly S2sHistoryItem[]) {
  return history.map((item) => ({ role: item.role === "assistant" ? "model" : "user", parts: [{ text: item.text }] }));
}

function logRecorder() {
  const lines: { level: "debug" | "warn"; msg: string; obj: object }[] = [];
  return {
    lines,
    log: { debug: (obj: object, msg: string) => void lines.push({ level: "debug", msg, obj }), warn: (obj: object, msg: string) => void lines.push({ level: "warn", msg, obj }) },
    has: (level: "debug" | "warn", fragment: string) => lines.some((l) => l.level === level && l.msg.includes(fragment)),
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** Move virtual time in steps (each firing due timers), letting real socket I/O run in between, until `check` holds. */
async function drive(clock: VirtualClock, check: () => boolean, what: string, stepMs = 50, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out driving the clock until ${what}`);
    await clock.advance(stepMs);
    await sleep(2);
  }
}

const closing = closeAfterEach();
let fake: FakeGemini;
const restart = fakePerTest(closing, (options?: FakeGeminiOptions) => startFakeGeminiLive(options), (started) => (fake = started));
/** The session the test opened last, closed after it. */
let session: S2sSession | undefined;

function provider(options: Record<string, unknown> = {}, runtime: GeminiLiveOptions = {}, env: Record<string, string> = ENV) {
  return geminiLive({ kind: "gemini-live", options: { url: fake.url, ...options } }, env, runtime);
}

async function openSession(
  args: { options?: Record<string, unknown>; runtime?: GeminiLiveOptions; setup?: Partial<S2sSetup>; history?: () => readonly S2sHistoryItem[] } = {},
) {
  const rec = recorder();
  const open: S2sOpenOptions = { setup: { ...SETUP, ...args.setup }, history: args.history ?? (() => []) };
  session = closing(await provider(args.options, args.runtime).open(open, rec.events));
  return { rec, session };
}

describe("geminiLive: construction", () => {
  it("takes GEMINI_API_KEY too", () => {
    expect(provider({}, {}, { GEMINI_API_KEY: "k" }).kind).toBe("gemini-live");
  });

  it("reads GOOGLE_API_KEY, then GEMINI_API_KEY (an empty value is skipped), as the SDK's getApiKeyFromEnv does", async () => {
    session = closing(await provider({}, {}, { GOOGLE_API_KEY: FAKE_GEMINI_KEY, GEMINI_API_KEY: "the-other-key" }).open({ setup: SETUP, history: () => [] }, recorder().events));
    expect(fake.latest.query.get("key")).toBe(FAKE_GEMINI_KEY);
    await session.close();
    session = closing(await provider({}, {}, { GOOGLE_API_KEY: "", GEMINI_API_KEY: FAKE_GEMINI_KEY }).open({ setup: SETUP, history: () => [] }, recorder().events));
    expect(fake.latest.query.get("key")).toBe(FAKE_GEMINI_KEY);
  });

  it("connects where the official SDK does: v1beta, GenerativeService.BidiGenerateContent", () => {
    // @google/genai 2.32.0 dist/node/index.mjs: GOOGLE_AI_API_DEFAULT_VERSION = 'v1beta' and
    // `${websocketBaseUrl}/ws/google.ai.generativelanguage.${apiVersion}.GenerativeService.${method}?${keyName}=${apiKey}`.
    expect(GEMINI_LIVE_URL).toBe("wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent");
  });

  it("refuses a bad option", () => {
    expect(() => provider({ model: 42 })).toThrow(/s2s\.options\.model/);
    expect(() => provider({ url: "http://x" })).toThrow(/ws:\/\//);
  });
});

describe("geminiLive: setup", () => {
  it("sends one setup per socket, first, with the key as the query parameter (docs/vendors.md (Gemini Live))", async () => {
    await openSession({ options: { voice: "Puck", model: "gemini-live-2.5-flash-preview" } });
    const c = fake.latest;
    expect(c.query.get("key")).toBe(FAKE_GEMINI_KEY);
    expect(c.setups).toHaveLength(1);
    expect(c.messages[0]).toHaveProperty("setup");
    expect(c.setups[0]).toEqual({
      model: "models/gemini-live-2.5-flash-preview",
      generationConfig: { responseModalities: ["AUDIO"], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Puck" } } } },
      systemInstruction: { parts: [{ text: "You are a phone agent." }] },
      tools: [
        {
          functionDeclarations: [
            { name: "lookup_order", description: "Look up an order", parameters: { type: "OBJECT", properties: { id: { type: "STRING" } }, required: ["id"] } },
            { name: "hang_up", description: "End the call" },
          ],
        },
      ],
      realtimeInputConfig: { automaticActivityDetection: { disabled: false }, activityHandling: "START_OF_ACTIVITY_INTERRUPTS" },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      sessionResumption: {},
    });
    expect(session!.inputSampleRate).toBe(16000);
    expect(session!.outputSampleRate).toBe(24000);
    expect(fake.violations).toEqual([]);
  });

  it("uses the default model, NO_INTERRUPTION for interruption off, and no tools for toolChoice none", async () => {
    await openSession({ setup: { interruptResponse: false, toolChoice: "none" } });
    const setup = fake.latest.setups[0]!;
    expect(setup.model).toBe(GEMINI_LIVE_DEFAULT_MODEL);
    expect(setup.realtimeInputConfig).toEqual({ automaticActivityDetection: { disabled: false }, activityHandling: "NO_INTERRUPTION" });
    expect(setup).not.toHaveProperty("tools");
    expect(setup.generationConfig).toEqual({ responseModalities: ["AUDIO"] });
  });

  it("converts JSON Schema to Gemini's Schema", () => {
    expect(
      toGeminiSchema({
        type: "object",
        properties: {
          size: { type: "string", enum: ["S", "M"] },
          count: { type: ["integer", "null"], minimum: 1 },
          mode: { const: "fast" },
          level: { type: "number", enum: [1, 2] },
          tags: { type: "array", items: { type: "string" }, maxItems: 3 },
          either: { oneOf: [{ type: "string" }, { type: "number" }] },
        },
        required: ["size", "missing"],
        additionalProperties: false,
      }),
    ).toEqual({
      type: "OBJECT",
      properties: {
        size: { type: "STRING", enum: ["S", "M"] },
        count: { type: "INTEGER", nullable: true, minimum: 1 },
        mode: { type: "STRING", enum: ["fast"] },
        level: { type: "NUMBER", description: "One of: 1, 2." },
        tags: { type: "ARRAY", items: { type: "STRING" }, maxItems: 3 },
        either: { anyOf: [{ type: "STRING" }, { type: "NUMBER" }] },
      },
      required: ["size"],
    });
    expect(toGeminiSchema({ allOf: [{ type: "object", properties: { a: { type: "boolean" } } }, { required: ["a"] }] })).toEqual({
      type: "OBJECT",
      properties: { a: { type: "BOOLEAN" } },
      required: ["a"],
    });
  });
});

describe("geminiLive: open", () => {
  it("rejects with a fatal error when the service refuses the key (close 1008)", async () => {
    const opening = provider({}, {}, { GOOGLE_API_KEY: "wrong" }).open({ setup: SETUP, history: () => [] }, recorder().events);
    await expect(opening).rejects.toMatchObject({ fatal: true, message: expect.stringMatching(/1008.*API key not valid/) as unknown });
  });
});

describe("geminiLive: audio, transcripts and responses", () => {
  it("sends mic audio as base64 realtimeInput.audio at 16 kHz and forwards model audio per synthesized response", async () => {
    const { rec } = await openSession();
    session!.sendAudio(new Uint8Array(640).fill(7));
    session!.sendAudio(new Uint8Array(320).fill(9));
    const first = await fake.waitForMessage("realtimeInput", 1);
    expect(first).toEqual({ realtimeInput: { audio: { data: Buffer.alloc(640, 7).toString("base64"), mimeType: "audio/pcm;rate=16000" } } });
    await until(() => fake.latest.audioBytes === 960, "960 audio bytes");

    const sent = fake.modelTurn({ chunks: 3, usage: { prompt: 12, response: 7 } });
    await rec.waitFor("responseDone");
    const audio = Buffer.concat(rec.of("audio").map((c) => c.args[0] as Buffer));
    expect(audio.equals(sent)).toBe(true);
    expect(rec.of("audio")[0]!.args[1]).toEqual({ responseId: "gemini_1", itemId: "gemini_1" });
    expect(rec.of("responseStarted")[0]!.args[0]).toEqual({ responseId: "gemini_1", outOfBand: false });
    expect(rec.of("responseDone")[0]!.args[0]).toEqual({
      responseId: "gemini_1",
      outOfBand: false,
      status: "completed",
      usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 },
    });

    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone", 2);
    expect(rec.of("responseStarted")[1]!.args[0]).toEqual({ responseId: "gemini_2", outOfBand: false });
    expect(fake.violations).toEqual([]);
  });

  it("maps input and output transcription: speech edges, interim then final before the response is done", async () => {
    const { rec } = await openSession();
    fake.userSays("what is my order status");
    await rec.waitFor("userTranscript", 5);
    expect(rec.of("userTranscript").map((c) => c.args)).toEqual([
      ["what", { final: false }],
      ["what is", { final: false }],
      ["what is my", { final: false }],
      ["what is my order", { final: false }],
      ["what is my order status", { final: false }],
    ]);
    fake.modelTurn({ chunks: 2, text: "It shipped today." });
    await rec.waitFor("responseDone");
    expect(rec.of("agentTranscript").map((c) => c.args[0]).join("")).toBe("It shipped today.");
    expect(rec.of("agentTranscript")[0]!.args[1]).toEqual({ responseId: "gemini_1", itemId: "gemini_1" });
    const names = rec.names().filter((n) => n !== "audio" && n !== "agentTranscript");
    // No voiceActivity from the service: the model answering is the first sign the caller stopped,
    // reported after the response started (nothing to time a turn from).
    expect(names).toEqual(["speechStarted", ...Array<string>(5).fill("userTranscript"), "responseStarted", "speechStopped", "userTranscript", "responseDone"]);
    expect(rec.of("userTranscript").at(-1)!.args).toEqual(["what is my order status", { final: true }]);
  });

  it("finalizes the caller's words on inputTranscription.finished", async () => {
    const { rec } = await openSession();
    fake.userSays("hello there", { finished: true });
    await rec.waitFor("userTranscript", 3);
    expect(rec.of("userTranscript").at(-1)!.args).toEqual(["hello there", { final: true }]);
  });

  it("ends an utterance at a barge-in: two utterances are two finals, though 2.5 models never set finished", async () => {
    const { rec } = await openSession();
    fake.userSays("what is your return policy");
    await rec.waitFor("userTranscript", 5);
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    fake.interrupted();
    await rec.waitFor("responseDone");
    fake.userSays("wait a second");
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone", 2);
    const finals = rec.of("userTranscript").filter((c) => (c.args[1] as { final: boolean }).final);
    expect(finals.map((c) => c.args[0])).toEqual(["what is your return policy", "wait a second"]);
    expect(rec.of("userTranscript").map((c) => c.args[0])).not.toContainEqual(expect.stringContaining("policywait"));
    // The first utterance is final before the response it interrupted is reported done.
    const firstFinal = rec.calls.indexOf(finals[0]!);
    const cancelled = rec.calls.findIndex((c) => c.name === "responseDone");
    expect(firstFinal).toBeLessThan(cancelled);
  });

  it("ends an utterance at a turnComplete that answered nothing", async () => {
    const { rec } = await openSession();
    fake.userSays("um");
    await rec.waitFor("userTranscript");
    fake.send({ serverContent: { turnComplete: true } });
    fake.userSays("where is my order");
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone");
    const finals = rec.of("userTranscript").filter((c) => (c.args[1] as { final: boolean }).final);
    expect(finals.map((c) => c.args[0])).toEqual(["um", "where is my order"]);
  });

  it("joins transcription pieces as sent: they carry their own spaces, split mid-word, and are never double-spaced", async () => {
    const { rec } = await openSession();
    // As the service splits them (js-genai test/system/recordings: " could talk about … you" then "'d like").
    for (const text of ["Can", " I pl", "ease ", " help", " me"]) fake.send({ serverContent: { inputTranscription: { text } } });
    await rec.waitFor("userTranscript", 5);
    expect(rec.of("userTranscript").map((c) => c.args[0])).toEqual(["Can", "Can I pl", "Can I please", "Can I please help", "Can I please help me"]);
    fake.send({ serverContent: { inputTranscription: { finished: true } } });
    await rec.waitFor("userTranscript", 6);
    expect(rec.of("userTranscript").at(-1)!.args).toEqual(["Can I please help me", { final: true }]);
  });

  it("reports the caller's speech edges from voiceActivity when the service sends it", async () => {
    const { rec } = await openSession();
    session!.sendAudio(new Uint8Array(3200));
    await until(() => fake.latest.audioBytes === 3200, "the audio");
    fake.voiceActivity("ACTIVITY_START");
    await rec.waitFor("speechStarted");
    fake.userSays("hello");
    fake.voiceActivity("ACTIVITY_END");
    await rec.waitFor("speechStopped");
    expect(rec.of("responseStarted")).toEqual([]);
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone");
    expect(rec.names().filter((n) => n.startsWith("speech") || n === "responseStarted")).toEqual(["speechStarted", "speechStopped", "responseStarted"]);
  });

  it("accepts binary frames and ignores a malformed frame with a warning", async () => {
    await restart({ binary: true });
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { log: logs.log } });
    for (let i = 0; i < 3; i++) fake.sendRaw("{not json");
    fake.sendRaw("[1,2]", { binary: true });
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone");
    // Once an interval, however many come.
    expect(logs.lines.filter((l) => l.msg.includes("malformed JSON"))).toHaveLength(1);
    expect(logs.has("warn", "not a JSON object")).toBe(true);
    expect(rec.of("error")).toEqual([]);
  });

  it("drops model audio that is not strict base64, with one warning, and plays the rest", async () => {
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { log: logs.log } });
    const good = Buffer.alloc(480, 5).toString("base64");
    // Node's decoder would take each of these as some bytes: a URL-safe letter, a stray '=', a space.
    for (const data of ["AAA-AAAA", "AA=AAAAA", "AAAA AAA"]) fake.send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data } }] } } });
    fake.send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data: good } }] } } });
    fake.send({ serverContent: { turnComplete: true } });
    await rec.waitFor("responseDone");
    expect(Buffer.concat(rec.of("audio").map((c) => c.args[0] as Uint8Array)).equals(Buffer.alloc(480, 5))).toBe(true);
    expect(logs.lines.filter((l) => l.msg.includes("not base64"))).toHaveLength(1);
    expect(rec.of("error")).toEqual([]);
  });

  it("reports an in-band error message as a non-fatal error", async () => {
    const { rec } = await openSession();
    fake.send({ error: { code: 400, message: "bad request", status: "INVALID_ARGUMENT" } });
    const call = await rec.waitFor("error");
    expect((call.args[0] as Error).message).toMatch(/bad request/);
    expect(call.args[1]).toEqual({ fatal: false });
  });
});

describe("geminiLive: barge-in, cancel, truncate, out of band", () => {
  it("interrupted → speechStarted and the response done as cancelled; the following turnComplete is ignored", async () => {
    const { rec } = await openSession();
    fake.modelTurn({ chunks: 2, complete: false });
    await rec.waitFor("audio", 2);
    fake.interrupted();
    await rec.waitFor("responseDone");
    expect(rec.of("responseDone")[0]!.args[0]).toEqual({ responseId: "gemini_1", outOfBand: false, status: "cancelled" });
    expect(rec.of("speechStarted")).toHaveLength(1);
    fake.userSays("stop");
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone", 2);
    expect(rec.of("responseDone")[1]!.args[0]).toMatchObject({ responseId: "gemini_2", status: "completed" });
    expect(rec.of("userTranscript").at(-1)!.args).toEqual(["stop", { final: true }]);
  });

  it("cancelResponse mutes the rest of the response, which ends as cancelled; truncate is a logged no-op", async () => {
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { log: logs.log } });
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    session!.cancelResponse("gemini_1");
    session!.truncate("gemini_1", 120);
    expect(logs.has("debug", "truncate is not supported")).toBe(true);
    fake.modelTurn({ chunks: 3, text: "more words" });
    await rec.waitFor("responseDone");
    expect(rec.of("audio")).toHaveLength(1);
    expect(rec.of("agentTranscript")).toEqual([]);
    expect(rec.of("responseDone")[0]!.args[0]).toMatchObject({ responseId: "gemini_1", status: "cancelled" });
    const sent = fake.latest.messages.filter((m) => !("setup" in m));
    expect(sent).toEqual([]); // nothing on the wire: Gemini has no cancel or truncate message
  });

  it("createResponse sends a clientContent user turn; an out-of-band one is reported outOfBand", async () => {
    const { rec } = await openSession();
    session!.createResponse({ instructions: 'Say exactly: "Hi!"', outOfBand: true });
    const message = await fake.waitForMessage("clientContent");
    expect(message).toEqual({ clientContent: { turns: [{ role: "user", parts: [{ text: 'Say exactly: "Hi!"' }] }], turnComplete: true } });
    fake.modelTurn({ chunks: 1, text: "Hi!" });
    await rec.waitFor("responseDone");
    expect(rec.of("responseStarted")[0]!.args[0]).toEqual({ responseId: "gemini_1", outOfBand: true });
    expect(rec.of("responseDone")[0]!.args[0]).toMatchObject({ outOfBand: true, status: "completed" });

    session!.createResponse();
    expect(await fake.waitForMessage("clientContent", 2)).toEqual({ clientContent: { turnComplete: true } });
    session!.sendText!("I want a refund");
    expect(await fake.waitForMessage("clientContent", 3)).toEqual({ clientContent: { turns: [{ role: "user", parts: [{ text: "I want a refund" }] }], turnComplete: true } });
  });
});

describe("geminiLive: tools", () => {
  it("a tool call ends its response; results go back as one toolResponse and the continuation is a new response", async () => {
    const { rec } = await openSession();
    fake.modelTurn({ chunks: 1, complete: false });
    const [id] = fake.toolCall([{ name: "lookup_order", args: { id: "A1" } }]);
    await rec.waitFor("responseDone");
    expect(rec.of("toolCall")[0]!.args[0]).toEqual({ callId: id, name: "lookup_order", args: { id: "A1" }, responseId: "gemini_1" });
    expect(rec.names().slice(-2)).toEqual(["toolCall", "responseDone"]);
    expect(rec.of("responseDone")[0]!.args[0]).toMatchObject({ responseId: "gemini_1", status: "completed" });

    session!.sendToolResults([{ callId: id!, output: '{"status":"shipped"}' }], true);
    expect(await fake.waitForMessage("toolResponse")).toEqual({
      toolResponse: { functionResponses: [{ id, name: "lookup_order", response: { output: '{"status":"shipped"}' } }] },
    });
    fake.modelTurn({ chunks: 1, text: "It shipped." });
    await rec.waitFor("responseDone", 2);
    expect(rec.of("responseStarted")[1]!.args[0]).toEqual({ responseId: "gemini_2", outOfBand: false });
    expect(fake.violations).toEqual([]);
  });

  it("a tool call with no response in flight starts one", async () => {
    const { rec } = await openSession();
    fake.toolCall([
      { name: "lookup_order", args: { id: "A1" } },
      { name: "hang_up", args: {} },
    ]);
    await rec.waitFor("responseDone");
    expect(rec.names()).toEqual(["responseStarted", "toolCall", "toolCall", "responseDone"]);
    expect(rec.of("toolCall").map((c) => (c.args[0] as { responseId: string }).responseId)).toEqual(["gemini_1", "gemini_1"]);
  });
});

describe("geminiLive: reconnects", () => {
  const HISTORY: S2sHistoryItem[] = [
    { role: "user", text: "Where is my order A1?" },
    { role: "assistant", text: "Let me check." },
  ];

  it("drop after the tool results → reconnect with one setup, history replayed, the tool response re-sent once", async () => {
    const clock = virtualClock();
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { clock, log: logs.log, reconnectDelaysMs: [100, 200] }, history: () => HISTORY });
    const [id] = fake.toolCall([{ name: "lookup_order", args: { id: "A1" } }]);
    await rec.waitFor("responseDone");
    session!.sendToolResults([{ callId: id!, output: "shipped" }], true);
    await fake.waitForMessage("toolResponse", 1, fake.connections[0]);
    fake.drop();
    await until(() => logs.has("warn", "connection dropped"), "the drop to be seen");
    await drive(clock, () => fake.connections.length === 2 && fake.latest.messages.some((m) => "toolResponse" in m), "the reconnect");

    const second = fake.latest;
    expect(second.setups).toHaveLength(1);
    expect(second.messages.map((m) => Object.keys(m)[0])).toEqual(["setup", "clientContent", "toolResponse"]);
    expect(second.messages[1]).toEqual({
      clientContent: {
        turns: [
          { role: "user", parts: [{ text: "Where is my order A1?" }] },
          { role: "model", parts: [{ text: "Let me check." }] },
        ],
        turnComplete: false,
      },
    });
    expect(second.messages[2]).toEqual({ toolResponse: { functionResponses: [{ id, name: "lookup_order", response: { output: "shipped" } }] } });

    // The model acts on it: delivered, not re-sent after another drop.
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone", 2);
    fake.drop();
    await until(() => logs.lines.filter((l) => l.msg.includes("connection dropped")).length === 2, "the second drop");
    await drive(clock, () => fake.connections.length === 3 && fake.latest.setupComplete && fake.latest.messages.length >= 2, "the second reconnect");
    await sleep(20);
    expect(fake.latest.messages.map((m) => Object.keys(m)[0])).toEqual(["setup", "clientContent"]);
    expect(rec.of("error")).toEqual([]);
    expect(rec.of("closed")).toEqual([]);
    expect(fake.violations).toEqual([]);
  });

  it("drop mid-tool-call → the results sent while reconnecting go out once on the new socket; audio meanwhile is dropped", async () => {
    const clock = virtualClock();
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { clock, log: logs.log, reconnectDelaysMs: [100] }, history: () => HISTORY });
    fake.modelTurn({ chunks: 1, complete: false });
    const [id] = fake.toolCall([{ name: "lookup_order", args: { id: "A1" } }]);
    await rec.waitFor("responseDone");
    fake.drop();
    await until(() => logs.has("warn", "connection dropped"), "the drop to be seen");
    session!.sendToolResults([{ callId: id!, output: "shipped" }], true);
    session!.sendAudio(new Uint8Array(640));
    await drive(clock, () => fake.connections.length === 2 && fake.latest.messages.some((m) => "toolResponse" in m), "the reconnect");
    await sleep(20);
    const second = fake.latest;
    expect(second.setups).toHaveLength(1);
    expect(second.messages.map((m) => Object.keys(m)[0])).toEqual(["setup", "clientContent", "toolResponse"]);
    expect(fake.connections[0]!.messages.filter((m) => "toolResponse" in m)).toEqual([]);
    expect(second.audioBytes).toBe(0);
    session!.sendAudio(new Uint8Array(640));
    await until(() => second.audioBytes === 640, "audio on the new socket");
  });

  it("a response asked for but not started when the socket drops is asked for once more on the new socket", async () => {
    const clock = virtualClock();
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { clock, log: logs.log, reconnectDelaysMs: [100] }, history: () => HISTORY });
    session!.createResponse({ instructions: "Say exactly: Hi!", outOfBand: true });
    await fake.waitForMessage("clientContent", 1, fake.connections[0]);
    fake.drop();
    await until(() => logs.has("warn", "connection dropped"), "the drop to be seen");
    session!.sendText!("I want a refund");
    await drive(clock, () => fake.connections.length === 2 && fake.latest.messages.length >= 4, "the reconnect");
    await sleep(20);
    expect(fake.latest.messages.slice(1)).toEqual([
      { clientContent: { turns: historyTurnsOf(HISTORY), turnComplete: false } },
      { clientContent: { turns: [{ role: "user", parts: [{ text: "Say exactly: Hi!" }] }], turnComplete: true } },
      // The typed turn is in the replayed history (the session commits it first): only its turnComplete.
      { clientContent: { turnComplete: true } },
    ]);
    fake.modelTurn({ chunks: 1 });
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone", 2);
    expect(rec.of("responseStarted").map((c) => c.args[0])).toEqual([
      { responseId: "gemini_1", outOfBand: true },
      { responseId: "gemini_2", outOfBand: false },
    ]);
  });

  it("a response in flight when the socket drops ends as failed", async () => {
    const clock = virtualClock();
    const { rec } = await openSession({ runtime: { clock, reconnectDelaysMs: [100] } });
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    fake.drop();
    await rec.waitFor("responseDone");
    expect(rec.of("responseDone")[0]!.args[0]).toMatchObject({ responseId: "gemini_1", status: "failed" });
    await drive(clock, () => fake.connections.length === 2 && fake.latest.setupComplete, "the reconnect");
  });

  it("resumes with the last sessionResumption handle instead of replaying history", async () => {
    await restart({ resumption: true });
    const clock = virtualClock();
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { clock, log: logs.log, reconnectDelaysMs: [100] }, history: () => HISTORY });
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone");
    await sleep(20);
    fake.drop();
    await until(() => logs.has("warn", "connection dropped"), "the drop to be seen");
    await drive(clock, () => fake.connections.length === 2 && fake.latest.setupComplete, "the reconnect");
    await sleep(20);
    expect(fake.latest.setups[0]!.sessionResumption).toEqual({ handle: "handle-2" });
    expect(fake.latest.messages.map((m) => Object.keys(m)[0])).toEqual(["setup"]);
  });

  it("goAway mid-response → switches only once the handle sent after turnComplete (in its own message) arrives, and resumes with it", async () => {
    await restart({ resumption: true });
    const clock = virtualClock();
    const { rec } = await openSession({ runtime: { clock }, history: () => HISTORY });
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    fake.goAway("30s");
    fake.modelTurn({ chunks: 1 }); // generationComplete, turnComplete, then sessionResumptionUpdate handle-2
    const second = await fake.waitForConnection(2);
    await until(() => second.setups.length === 1, "the new socket's setup");
    expect(second.setups[0]!.sessionResumption).toEqual({ handle: "handle-2" });
    await until(() => second.setupComplete, "setupComplete");
    await sleep(20);
    expect(second.messages.map((m) => Object.keys(m)[0])).toEqual(["setup"]); // resumed: no history replay
    await fake.waitForClose(fake.connections[0]!);
    expect(fake.connections[0]!.closeCode).toBe(1000);
    expect(rec.of("error")).toEqual([]);
  });

  it("goAway → when no handle follows the turn, the switch waits GEMINI_RESUMPTION_WAIT_MS, then resumes with the newest handle", async () => {
    await restart({ resumption: true });
    const clock = virtualClock();
    const logs = logRecorder();
    const { rec } = await openSession({ runtime: { clock, log: logs.log }, history: () => HISTORY });
    await sleep(20); // handle-1, after setupComplete
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    fake.goAway("30s");
    fake.send({ serverContent: { turnComplete: true } }); // and no sessionResumptionUpdate after it
    await rec.waitFor("responseDone");
    await clock.advance(GEMINI_RESUMPTION_WAIT_MS - 1);
    await sleep(30);
    expect(fake.connections).toHaveLength(1);
    await clock.advance(1);
    const second = await fake.waitForConnection(2);
    await until(() => second.setups.length === 1, "the new socket's setup");
    expect(second.setups[0]!.sessionResumption).toEqual({ handle: "handle-1" });
    expect(logs.has("warn", "no resumption handle after the last turn")).toBe(true);
  });

  it("goAway during a tool round → no switch on the pre-call handle; it follows the continuation's turn and handle", async () => {
    await restart({ resumption: true });
    const clock = virtualClock();
    const { rec } = await openSession({ runtime: { clock }, history: () => HISTORY });
    const [id] = fake.toolCall([{ name: "lookup_order", args: { id: "A1" } }]); // then {resumable:false}
    await rec.waitFor("responseDone");
    fake.goAway("30s");
    await clock.advance(GEMINI_RESUMPTION_WAIT_MS);
    await sleep(30);
    expect(fake.connections).toHaveLength(1);
    session!.sendToolResults([{ callId: id!, output: "shipped" }], true);
    await fake.waitForMessage("toolResponse", 1, fake.connections[0]);
    fake.modelTurn({ chunks: 1, text: "It shipped." }); // then handle-2
    const second = await fake.waitForConnection(2);
    await until(() => second.setups.length === 1, "the new socket's setup");
    expect(second.setups[0]!.sessionResumption).toEqual({ handle: "handle-2" });
    await until(() => second.setupComplete, "setupComplete");
    await sleep(20);
    expect(second.messages.map((m) => Object.keys(m)[0])).toEqual(["setup"]); // the tool response was acted on: not re-sent
    expect(rec.of("responseDone").map((c) => (c.args[0] as { status: string }).status)).toEqual(["completed", "completed"]);
  });

  it("goAway → a proactive switch once the response in flight is done, with no error", async () => {
    const clock = virtualClock();
    const { rec } = await openSession({ runtime: { clock }, history: () => HISTORY });
    fake.modelTurn({ chunks: 1, complete: false });
    await rec.waitFor("audio");
    fake.goAway("30s");
    await sleep(30);
    expect(fake.connections).toHaveLength(1);
    fake.modelTurn({ chunks: 1 });
    await rec.waitFor("responseDone");
    const first = fake.connections[0]!;
    await fake.waitForConnection(2);
    await fake.waitForClose(first);
    expect(first.closeCode).toBe(1000);
    await until(() => fake.latest.messages.length >= 2, "the history on the new socket");
    expect(fake.latest.setups).toHaveLength(1);
    expect(fake.latest.messages[1]).toHaveProperty("clientContent.turnComplete", false);
    expect(rec.of("responseDone")[0]!.args[0]).toMatchObject({ status: "completed" });
    expect(rec.of("error")).toEqual([]);
    expect(rec.of("closed")).toEqual([]);
  });

  it("a close a retry cannot fix (1008) is fatal at once", async () => {
    const { rec } = await openSession();
    fake.closeWith(1008, "Quota exceeded");
    await rec.waitFor("closed");
    expect(fake.connections).toHaveLength(1);
    expect(rec.of("error")[0]!.args[1]).toEqual({ fatal: true });
    expect((rec.of("error")[0]!.args[0] as Error).message).toMatch(/1008: Quota exceeded/);
    expect(rec.of("closed")[0]!.args[0]).toEqual({ expected: false });
  });
});
