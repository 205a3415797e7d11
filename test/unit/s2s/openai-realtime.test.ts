import { Base64Audio } from "../../../src/audio/audio-payload.js";
import { describe, expect, it, vi } from "vitest";
import { virtualClock, type VirtualClock } from "../../../src/clock.js";
import type { S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sSetup, S2sToolCall } from "../../../src/s2s/s2s-port.js";
import { openAiRealtime, type OpenAiRealtimeOptions } from "../../../src/s2s/providers/openai-realtime.js";
import type { OpenAiRealtimeSession } from "../../../src/s2s/providers/openai-realtime/session.js";
import { rampPcm, startFakeOpenAiRealtime, type FakeOpenAiRealtime, type FakeOpenAiRealtimeOptions } from "../../../fakes/openai-realtime.js";
import { closeAfterEach } from "../../helpers/cleanups.js";

const KEY = { OPENAI_API_KEY: "test-key" };

const SETUP: S2sSetup = {
  instructions: "You are a phone agent.",
  tools: [
    {
      name: "lookup_order",
      description: "Find an order.",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  ],
  toolChoice: "auto",
  interruptResponse: true,
};

const closing = closeAfterEach();

async function fake(options: FakeOpenAiRealtimeOptions = {}): Promise<FakeOpenAiRealtime> {
  return closing(await startFakeOpenAiRealtime(options));
}

/** Every event, in order, plus typed views. */
function recorder() {
  const log: { event: string; args: unknown[] }[] = [];
  const push =
    (event: string) =>
    (...args: unknown[]): void => {
      log.push({ event, args });
    };
  const events: S2sEvents = {
    audio: (pcm, info) => log.push({ event: "audio", args: [Buffer.from(pcm), info] }),
    agentTranscript: push("agentTranscript"),
    speechStarted: push("speechStarted"),
    speechStopped: push("speechStopped"),
    userTranscript: push("userTranscript"),
    responseStarted: push("responseStarted"),
    responseDone: push("responseDone"),
    toolCall: push("toolCall"),
    error: push("error"),
    closed: push("closed"),
  };
  const of = (event: string): unknown[][] => log.filter((e) => e.event === event).map((e) => e.args);
  return {
    events,
    log,
    of,
    audio: () => Buffer.concat(of("audio").map(([pcm]) => pcm as Buffer)),
    transcript: () => of("agentTranscript").map(([delta]) => delta as string).join(""),
    done: () => of("responseDone").map(([info]) => info as { responseId: string; outOfBand: boolean; status: string; usage?: unknown }),
    started: () => of("responseStarted").map(([info]) => info as { responseId: string; outOfBand: boolean }),
    toolCalls: () => of("toolCall").map(([call]) => call as S2sToolCall),
    errors: () => of("error").map(([error, info]) => ({ error: error as Error, fatal: (info as { fatal: boolean }).fatal })),
  };
}

interface OpenArgs {
  readonly setup?: S2sSetup;
  readonly history?: () => readonly S2sHistoryItem[];
  readonly signal?: AbortSignal;
  readonly options?: Record<string, unknown>;
  readonly adapter?: OpenAiRealtimeOptions;
  readonly env?: Readonly<Record<string, string>>;
}

function provider(server: FakeOpenAiRealtime, args: OpenArgs = {}) {
  return openAiRealtime({ kind: "openai-realtime", options: { url: server.url, ...args.options } }, args.env ?? KEY, args.adapter ?? {});
}

async function open(server: FakeOpenAiRealtime, args: OpenArgs = {}) {
  const rec = recorder();
  const openOptions: S2sOpenOptions = { setup: args.setup ?? SETUP, history: args.history ?? (() => []), ...(args.signal === undefined ? {} : { signal: args.signal }) };
  const session: OpenAiRealtimeSession = closing(await provider(server, args).open(openOptions, rec.events));
  return { session, rec };
}

/** Client messages of one type (optionally on one connection). */
function sent(server: FakeOpenAiRealtime, type: string, connection?: number): Record<string, unknown>[] {
  return server.messages.filter((m) => m.message.type === type && (connection === undefined || m.connection === connection)).map((m) => m.message);
}

const CREATE_EVENT = /^sb_create_\d+$/;

/**
 * An in-band `response.create` as the adapter sends it: its own `event_id` (which an error answering
 * it names), and the same id as `metadata.switchboard_request` (which its `response.created` echoes).
 */
function inBandCreate(response: Record<string, unknown> = {}): unknown {
  return {
    type: "response.create",
    event_id: expect.stringMatching(CREATE_EVENT) as unknown,
    response: { ...response, metadata: { switchboard_request: expect.stringMatching(CREATE_EVENT) as unknown } },
  };
}

/** Move virtual time in steps, letting real I/O run between them, until `done()` holds. */
async function advanceUntil(clock: VirtualClock, done: () => boolean, stepMs = 50, maxMs = 20_000): Promise<void> {
  for (let t = 0; t < maxMs && !done(); t += stepMs) {
    await clock.advance(stepMs);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(done()).toBe(true);
}

const waitFor = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 3000, interval: 5 });

describe("openAiRealtime: setup", () => {
  it("sends exactly one session.update with the expected shape, and resolves on session.updated", async () => {
    const server = await fake();
    const { session } = await open(server, {
      setup: { ...SETUP, toolChoice: { type: "tool", toolName: "lookup_order" }, interruptResponse: false, transcriptionPrompt: "Acme, SKU" },
    });
    expect(session.inputSampleRate).toBe(24000);
    expect(session.outputSampleRate).toBe(24000);
    expect(server.sessionUpdates).toEqual([1]);
    const [update] = sent(server, "session.update");
    expect(server.messages[0]!.message.type).toBe("session.update");
    expect(update).toEqual({
      type: "session.update",
      session: {
        type: "realtime",
        model: "gpt-realtime",
        instructions: "You are a phone agent.",
        output_modalities: ["audio"],
        audio: {
          input: {
            format: { type: "audio/pcm", rate: 24000 },
            transcription: { model: "gpt-4o-mini-transcribe", prompt: "Acme, SKU" },
            turn_detection: { type: "server_vad", create_response: true, interrupt_response: false },
          },
          output: { format: { type: "audio/pcm", rate: 24000 }, voice: "marin" },
        },
        tools: [{ type: "function", name: "lookup_order", description: "Find an order.", parameters: SETUP.tools[0]!.parameters }],
        tool_choice: { type: "function", name: "lookup_order" },
      },
    });
    const connection = server.connections[0]!;
    expect(connection.url).toBe("/v1/realtime?model=gpt-realtime");
    expect(connection.headers.authorization).toBe("Bearer test-key");
    expect(connection.headers["openai-beta"]).toBeUndefined();
    expect(server.violations).toEqual([]);
  });

  it("takes model, voice, transcription and turn detection from the options", async () => {
    const server = await fake();
    await open(server, { options: { model: "gpt-realtime-mini", voice: "cedar", transcription: false, turnDetection: { type: "semantic_vad", eagerness: "low" } }, setup: { ...SETUP, toolChoice: "required" } });
    const session = sent(server, "session.update")[0]!.session as Record<string, unknown>;
    expect(server.connections[0]!.url).toBe("/v1/realtime?model=gpt-realtime-mini");
    expect(session.model).toBe("gpt-realtime-mini");
    expect(session.tool_choice).toBe("required");
    expect(session.audio).toEqual({
      input: { format: { type: "audio/pcm", rate: 24000 }, turn_detection: { type: "semantic_vad", eagerness: "low", create_response: true, interrupt_response: true } },
      output: { format: { type: "audio/pcm", rate: 24000 }, voice: "cedar" },
    });
  });

  it("rejects a bad turnDetection at construction", () => {
    expect(() => openAiRealtime({ kind: "openai-realtime", options: { turnDetection: "none" } }, KEY)).toThrow(/s2s\.options\.turnDetection/);
  });

  it("abort during the handshake rejects open() and closes the socket", async () => {
    const server = await fake({ silent: true });
    const controller = new AbortController();
    const opening = provider(server)
      .open({ setup: SETUP, history: () => [], signal: controller.signal }, recorder().events)
      .catch((e: unknown) => e);
    await waitFor(() => expect(server.openSockets()).toBe(1));
    controller.abort(new Error("caller hung up"));
    expect(await opening).toMatchObject({ message: "caller hung up" });
    await waitFor(() => expect(server.openSockets()).toBe(0));
    expect(server.sessionUpdates).toEqual([0]);
  });
});

describe("openAiRealtime: conversation", () => {
  it("audio in: sendAudio appends base64 PCM; audio out: deltas decode to the same bytes", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    const mic = rampPcm(40, 123);
    session.sendAudio(mic.subarray(0, 960));
    session.sendAudio(mic.subarray(960));
    await waitFor(() => expect(server.connections[0]!.audioIn().equals(mic)).toBe(true));
    expect(sent(server, "input_audio_buffer.append")[0]).toEqual({ type: "input_audio_buffer.append", audio: mic.subarray(0, 960).toString("base64") });

    server.enqueue({ say: "Hello there, how can I help?", audioMs: 100 });
    session.createResponse();
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(sent(server, "response.create")).toEqual([inBandCreate()]);
    const [create] = sent(server, "response.create");
    expect((create!.response as { metadata: Record<string, unknown> }).metadata.switchboard_request).toBe(create!.event_id);
    expect(rec.audio().equals(rampPcm(100))).toBe(true);
    expect(rec.transcript()).toBe("Hello there, how can I help?");
    const [started] = rec.started();
    const [, info] = rec.of("audio")[0]!;
    expect(info).toEqual({ responseId: started!.responseId, itemId: expect.stringMatching(/^item_/) as unknown });
    expect(rec.of("agentTranscript")[0]![1]).toEqual(info);
    expect(rec.done()[0]).toEqual({ responseId: started!.responseId, outOfBand: false, status: "completed", usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } });
    expect(started!.outOfBand).toBe(false);
    expect(rec.errors()).toEqual([]);
  });

  it("audio in with the link's base64 text: that text is the append's audio, not a second encoding", async () => {
    const server = await fake();
    const { session } = await open(server);
    const mic = rampPcm(20, 7);
    // The link promises the text spells these bytes; a different one shows which the adapter sent.
    const spelled = Buffer.from("the link's own text").toString("base64");
    session.sendAudio(new Base64Audio(spelled, mic.byteLength));
    session.sendAudio(mic);
    await waitFor(() => expect(sent(server, "input_audio_buffer.append")).toHaveLength(2));
    const [given, encoded] = sent(server, "input_audio_buffer.append");
    expect(given).toEqual({ type: "input_audio_buffer.append", audio: spelled });
    expect(encoded).toEqual({ type: "input_audio_buffer.append", audio: mic.toString("base64") });
  });

  it("accepts the beta audio and transcript event names", async () => {
    const server = await fake({ betaNames: true });
    const { session, rec } = await open(server);
    server.enqueue({ say: "Beta voice.", audioMs: 60 });
    session.createResponse({ instructions: "Greet." });
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(sent(server, "response.create")).toEqual([inBandCreate({ instructions: "Greet." })]);
    expect(rec.audio().equals(rampPcm(60))).toBe(true);
    expect(rec.transcript()).toBe("Beta voice.");
  });

  it("reports the caller's speech and transcript (interim deltas accumulate, then final), then the automatic response", async () => {
    const server = await fake();
    const { rec } = await open(server);
    server.enqueue({ say: "A table for two, sure." });
    await server.userSays("book a table for two");
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    // Each names the caller's item, which deleteItem may remove.
    const item = server.connections[0]?.items.find((i) => i.role === "user")?.id;
    expect(rec.of("userTranscript")).toEqual([
      ["book ", { final: false, itemId: item }],
      ["book a ", { final: false, itemId: item }],
      ["book a table ", { final: false, itemId: item }],
      ["book a table for ", { final: false, itemId: item }],
      ["book a table for two", { final: false, itemId: item }],
      ["book a table for two", { final: true, itemId: item }],
    ]);
    const order = rec.log.map((e) => e.event).filter((e) => e !== "audio" && e !== "agentTranscript" && e !== "userTranscript");
    expect(order).toEqual(["speechStarted", "speechStopped", "responseStarted", "responseDone"]);
    expect(rec.transcript()).toBe("A table for two, sure.");
  });

  it("a tool call → sendToolResults: one conversation.item.create per result, then one response.create", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.enqueue({ toolCalls: [{ name: "lookup_order", args: { id: "42" } }, { name: "lookup_order", args: "not json" }] }, { say: "Both shipped." });
    await server.userSays("where are orders 42 and 43");
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    const calls = rec.toolCalls();
    expect(calls).toHaveLength(2);
    const [started] = rec.started();
    expect(calls[0]).toEqual({ callId: expect.stringMatching(/^call_/) as unknown, name: "lookup_order", args: { id: "42" }, responseId: started!.responseId });
    expect(calls[1]!.args).toBe("not json");

    const before = server.messages.length;
    session.sendToolResults(
      calls.map((c) => ({ callId: c.callId, output: JSON.stringify({ status: "shipped" }) })),
      true,
    );
    await waitFor(() => expect(rec.done()).toHaveLength(2));
    expect(server.messages.slice(before).map((m) => m.message)).toEqual([
      { type: "conversation.item.create", item: { type: "function_call_output", call_id: calls[0]!.callId, output: '{"status":"shipped"}' } },
      { type: "conversation.item.create", item: { type: "function_call_output", call_id: calls[1]!.callId, output: '{"status":"shipped"}' } },
      inBandCreate(),
    ]);
    expect(rec.transcript()).toBe("Both shipped.");
    expect(server.violations).toEqual([]);
  });

  it("sendToolResults without respond sends no response.create", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.enqueue({ toolCall: { name: "lookup_order", args: { id: "1" } } });
    await server.userSays("order one");
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    const [call] = rec.toolCalls();
    session.sendToolResults([{ callId: call!.callId, output: "ok" }], false);
    await waitFor(() => expect(sent(server, "conversation.item.create")).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent(server, "response.create")).toEqual([]);
  });

  it("an out-of-band response: conversation none, no tools, empty input, reported outOfBand", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.enqueue({ say: "One moment please.", audioMs: 40 });
    session.createResponse({ instructions: "Say: one moment please.", outOfBand: true });
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(sent(server, "response.create")).toEqual([
      {
        type: "response.create",
        response: { instructions: "Say: one moment please.", conversation: "none", tools: [], tool_choice: "none", input: [], metadata: { switchboard: "oob" } },
      },
    ]);
    expect(rec.started()).toEqual([{ responseId: expect.any(String) as unknown, outOfBand: true }]);
    expect(rec.done()[0]).toMatchObject({ outOfBand: true, status: "completed" });
    expect(rec.audio().length).toBe(40 * 48);
    // Never written to the conversation.
    expect(server.connections[0]!.items).toEqual([]);
  });

  it("recognizes an out-of-band response by conversation_id null even without our metadata", async () => {
    const server = await fake();
    const { rec } = await open(server);
    server.send({ type: "response.created", response: { id: "resp_x", status: "in_progress", conversation_id: null, output: [] } });
    server.send({ type: "response.done", response: { id: "resp_x", status: "completed", conversation_id: null, output: [] } });
    await waitFor(() => expect(rec.done()).toEqual([{ responseId: "resp_x", outOfBand: true, status: "completed" }]));
    expect(rec.started()).toEqual([{ responseId: "resp_x", outOfBand: true }]);
  });

  it("truncate sends item_id, content_index 0 and audio_end_ms, clamped to the audio received", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.enqueue({ say: "A long answer.", audioMs: 400 });
    session.createResponse();
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    const itemId = (rec.of("audio")[0]![1] as { itemId: string }).itemId;
    session.truncate(itemId, 250.7);
    session.truncate(itemId, 10_000);
    session.truncate(itemId, -5);
    session.truncate("item_unknown", 100);
    await waitFor(() => expect(sent(server, "conversation.item.truncate")).toHaveLength(3));
    expect(sent(server, "conversation.item.truncate")).toEqual([
      { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: 250 },
      { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: 400 },
      { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: 0 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.violations).toEqual([]);
    expect(rec.errors()).toEqual([]);
  });

  it("deleteItem removes a caller item and an answer from the conversation (one not on this socket is skipped); remember adds a line", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.enqueue({ say: "Sure, reading it back.", audioMs: 100 });
    await server.userSays("my card is 4111");
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    const caller = server.connections[0]!.items.find((i) => i.role === "user")!.id;
    const answer = (rec.of("audio")[0]![1] as { itemId: string }).itemId;
    session.deleteItem(caller);
    session.deleteItem(answer);
    session.deleteItem("item_unknown");
    session.remember({ role: "assistant", text: "I can't take card numbers." });
    await waitFor(() => expect(sent(server, "conversation.item.create")).toHaveLength(1));
    expect(sent(server, "conversation.item.delete")).toEqual([
      { type: "conversation.item.delete", item_id: caller },
      { type: "conversation.item.delete", item_id: answer },
    ]);
    expect(server.connections[0]!.items.map((i) => i.role)).toEqual(["assistant"]);
    expect(server.violations).toEqual([]);
    expect(rec.errors()).toEqual([]);
  });

  it("cancelResponse sends response.cancel (with the id when given) while the response runs; it ends cancelled", async () => {
    const server = await fake({ paceMs: 5 });
    const { session, rec } = await open(server);
    server.enqueue({ say: "This is a very long answer that will be cut.", audioMs: 3000 }, { say: "Another long one.", audioMs: 3000 });
    session.createResponse();
    await waitFor(() => expect(rec.of("audio").length).toBeGreaterThan(1));
    session.cancelResponse();
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(rec.done()[0]).toMatchObject({ status: "cancelled" });

    session.createResponse();
    await waitFor(() => expect(rec.started()).toHaveLength(2));
    const id = rec.started()[1]!.responseId;
    session.cancelResponse(id);
    await waitFor(() => expect(rec.done()).toHaveLength(2));
    expect(rec.done()[1]).toMatchObject({ responseId: id, status: "cancelled" });
    const cancelEvent = expect.stringMatching(/^sb_cancel_\d+$/) as unknown;
    expect(sent(server, "response.cancel")).toEqual([
      { type: "response.cancel", event_id: cancelEvent },
      { type: "response.cancel", event_id: cancelEvent, response_id: id },
    ]);

    // Nothing running: nothing is sent (openai-realtime-one-response.test.ts has the details).
    session.cancelResponse();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent(server, "response.cancel")).toHaveLength(2);
    expect(rec.errors()).toEqual([]);
  });

  it("the service's VAD cancels a running response when interruptResponse is on", async () => {
    const server = await fake({ paceMs: 5 });
    const { session, rec } = await open(server);
    server.enqueue({ say: "Long talk.", audioMs: 3000 });
    session.createResponse();
    await waitFor(() => expect(rec.of("audio").length).toBeGreaterThan(1));
    server.speechStarted();
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(rec.done()[0]!.status).toBe("cancelled");
    expect(rec.of("speechStarted")).toHaveLength(1);
  });

  it("reports in-band errors as non-fatal and keeps going", async () => {
    const server = await fake();
    const { session, rec } = await open(server);
    server.send({ type: "error", error: { type: "invalid_request_error", code: "invalid_value", message: "Bad thing" } });
    await waitFor(() => expect(rec.errors()).toHaveLength(1));
    expect(rec.errors()[0]!.fatal).toBe(false);
    expect(rec.errors()[0]!.error.message).toContain("Bad thing");
    server.enqueue({ say: "Still here." });
    session.createResponse();
    await waitFor(() => expect(rec.transcript()).toBe("Still here."));
  });

  it("drops an audio delta that is not strict base64, with one warning, and plays the rest", async () => {
    const server = await fake();
    const warn = vi.fn();
    const { rec } = await open(server, { adapter: { log: { debug: () => undefined, warn } } });
    const at = { response_id: "resp_1", item_id: "item_1", output_index: 0, content_index: 0 };
    // Node's decoder would take each of these as some bytes: a URL-safe letter, a stray '=', a space.
    for (const delta of ["AAA-AAAA", "AA=AAAAA", "AAAA AAA"]) server.send({ type: "response.output_audio.delta", ...at, delta });
    server.send({ type: "response.output_audio.delta", ...at, delta: Buffer.alloc(480, 5).toString("base64") });
    await waitFor(() => expect(rec.audio().length).toBe(480));
    expect(rec.audio().equals(Buffer.alloc(480, 5))).toBe(true);
    expect(warn.mock.calls.filter(([, message]) => String(message).includes("not base64"))).toEqual([[{ itemId: "item_1", chars: 8 }, "OpenAI Realtime sent audio that is not base64; dropped"]]);
    expect(rec.errors()).toEqual([]);
  });

  it("ignores a malformed frame with a warning", async () => {
    const server = await fake();
    const warn = vi.fn();
    const { rec } = await open(server, { adapter: { log: { debug: () => undefined, warn } } });
    for (let i = 0; i < 3; i++) server.sendRaw("{not json");
    server.send({ type: "input_audio_buffer.speech_started", audio_start_ms: 0, item_id: "item_1" });
    await waitFor(() => expect(rec.of("speechStarted")).toHaveLength(1));
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ sample: "{not json" }), expect.stringMatching(/malformed JSON/));
    // Once an interval, however many come.
    expect(warn.mock.calls.filter(([, message]) => /malformed JSON/.test(String(message)))).toHaveLength(1);
    expect(rec.errors()).toEqual([]);
  });
});

describe("openAiRealtime: resilience", () => {
  const history: S2sHistoryItem[] = [
    { role: "user", text: "Where is my order 42?" },
    { role: "assistant", text: "Let me check." },
  ];

  it("drop mid-tool-call: reconnects, one session.update, replays history, re-sends the undelivered result exactly once", async () => {
    const server = await fake();
    const clock = virtualClock();
    const { session, rec } = await open(server, { history: () => history, adapter: { clock } });
    // The first socket replays the history too (a resumed session).
    await waitFor(() => expect(sent(server, "conversation.item.create", 0)).toHaveLength(2));

    server.enqueue({ toolCall: { name: "lookup_order", args: { id: "42" } } }, { say: "It shipped yesterday." }, { say: "Anything else?" });
    session.createResponse();
    await waitFor(() => expect(rec.toolCalls()).toHaveLength(1));
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    const [call] = rec.toolCalls();

    // The socket dies right as the follow-up is asked for: the result was sent, no response started.
    server.dropOn("response.create");
    session.sendToolResults([{ callId: call!.callId, output: '{"status":"shipped"}' }], true);
    await waitFor(() => expect(server.openSockets()).toBe(0));
    expect(sent(server, "conversation.item.create", 0).at(-1)).toMatchObject({ item: { type: "function_call_output" } });

    await advanceUntil(clock, () => server.connections.length === 2 && rec.done().length === 2);
    expect(server.sessionUpdates).toEqual([1, 1]);
    const second = server.connections[1]!.messages;
    expect(second).toEqual([
      expect.objectContaining({ type: "session.update" }),
      { type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Where is my order 42?" }] } },
      { type: "conversation.item.create", item: { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] } },
      { type: "conversation.item.create", item: { type: "function_call", call_id: call!.callId, name: "lookup_order", arguments: '{"id":"42"}' } },
      { type: "conversation.item.create", item: { type: "function_call_output", call_id: call!.callId, output: '{"status":"shipped"}' } },
      inBandCreate(),
    ]);
    expect(rec.transcript()).toBe("It shipped yesterday.");
    expect(rec.errors()).toEqual([]);
    expect(rec.of("closed")).toEqual([]);
    expect(server.violations).toEqual([]);

    // Delivered now (a response started after it): a later drop does not answer the call again.
    server.drop();
    await advanceUntil(clock, () => server.connections.length === 3 && server.sessionUpdates[2] === 1);
    await waitFor(() => expect(server.connections[2]!.messages).toHaveLength(3));
    expect(server.connections[2]!.messages.map((m) => (m.item as { type?: string } | undefined)?.type ?? m.type)).toEqual(["session.update", "message", "message"]);
    const outputs = server.messages.filter((m) => (m.message.item as { type?: string } | undefined)?.type === "function_call_output");
    expect(outputs.map((m) => m.connection)).toEqual([0, 1]);
    expect(rec.errors()).toEqual([]);
  });

  it("a note the socket drops before its response is sent again on the next socket, then answered once; a later drop does not repeat it", async () => {
    const server = await fake();
    const clock = virtualClock();
    const { session, rec } = await open(server, { adapter: { clock } });
    const note = { type: "conversation.item.create", item: { type: "message", role: "system", content: [{ type: "input_text", text: "The callback run completed." }] } };

    // The socket dies right as the note's response is asked for: no response started after it.
    server.dropOn("response.create");
    expect(session.note("The callback run completed.")).toBe(true);
    await waitFor(() => expect(server.openSockets()).toBe(0));
    expect(sent(server, "conversation.item.create", 0)).toEqual([note]);

    server.enqueue({ say: "Good news: your order shipped." });
    await advanceUntil(clock, () => server.connections.length === 2 && rec.done().length === 1);
    expect(server.connections[1]!.messages).toEqual([expect.objectContaining({ type: "session.update" }), note, inBandCreate()]);
    expect(rec.transcript()).toBe("Good news: your order shipped.");

    // Answered now: a later drop does not say it again.
    server.drop();
    await advanceUntil(clock, () => server.connections.length === 3 && server.sessionUpdates[2] === 1);
    await waitFor(() => expect(server.connections[2]!.messages).toHaveLength(1));
    expect(rec.errors()).toEqual([]);
    expect(server.violations).toEqual([]);
  });

  it("a response in flight when the socket drops ends as failed; audio sent while reconnecting is dropped", async () => {
    const server = await fake({ paceMs: 5 });
    const clock = virtualClock();
    const { session, rec } = await open(server, { adapter: { clock } });
    server.enqueue({ say: "Long talk.", audioMs: 3000 });
    session.createResponse();
    await waitFor(() => expect(rec.of("audio").length).toBeGreaterThan(1));
    server.drop();
    await waitFor(() => expect(rec.done()).toHaveLength(1));
    expect(rec.done()[0]).toMatchObject({ status: "failed", outOfBand: false });
    session.sendAudio(new Uint8Array(960));
    expect(session.droppedAudioBytes).toBe(960);
    await advanceUntil(clock, () => server.sessionUpdates[1] === 1);
    session.sendAudio(new Uint8Array(960));
    await waitFor(() => expect(sent(server, "input_audio_buffer.append", 1)).toHaveLength(1));
  });

  it("a non-transient close (1008) is not retried: one fatal error, closed({expected:false})", async () => {
    const server = await fake();
    const clock = virtualClock();
    const { rec } = await open(server, { adapter: { clock } });
    server.closeWith(1008, "policy");
    await waitFor(() => expect(rec.of("closed")).toEqual([[{ expected: false }]]));
    expect(rec.errors()).toHaveLength(1);
    expect(rec.errors()[0]!.fatal).toBe(true);
    await clock.advance(10_000);
    expect(server.upgrades).toBe(1);
  });

  it("a 401 on reconnect gives up at once with the key error", async () => {
    const server = await fake();
    const clock = virtualClock();
    const { rec } = await open(server, { adapter: { clock } });
    server.refuse(401);
    server.drop();
    await advanceUntil(clock, () => rec.of("closed").length === 1);
    expect(server.upgrades).toBe(2);
    expect(rec.errors()).toHaveLength(1);
    expect(rec.errors()[0]!.error.message).toContain("OPENAI_API_KEY");
    expect(rec.of("closed")).toEqual([[{ expected: false }]]);
  });

  it("close() while reconnecting: closed({expected:true}), no further attempts", async () => {
    const server = await fake();
    const clock = virtualClock();
    const { session, rec } = await open(server, { adapter: { clock } });
    server.drop();
    await waitFor(() => expect(clock.pending()).toBe(1));
    await session.close();
    await clock.advance(10_000);
    expect(server.upgrades).toBe(1);
    expect(rec.of("closed")).toEqual([[{ expected: true }]]);
    expect(rec.errors()).toEqual([]);
  });
});
