// One in-band response at a time: "Only one Response can write to the default Conversation at a time"
// (the `openai` SDK's `ResponseCreateEvent`), and the service refuses a `response.create` meanwhile. So
// the adapter holds one asked for while a response runs — a typed turn, a tool call's follow-up —
// until that response is done. Found by the s2s-over-sockets property (test/fuzz/s2s-sockets.test.ts):
// a `user_text` while the model spoke was refused, and the typed question never answered.
//
// The order comes from the adapter's state (idle | requested | running), not from the service's error
// text (issue 15 item 5): a request that crosses a response the service started itself is refused in
// whatever words, and goes out again after that response's `response.done`; `response.cancel` goes
// out only while a response runs.
import { describe, expect, it, vi } from "vitest";
import type { S2sEvents, S2sSetup } from "../../../src/s2s/s2s-port.js";
import { openAiRealtime } from "../../../src/s2s/providers/openai-realtime.js";
import type { OpenAiRealtimeSession } from "../../../src/s2s/providers/openai-realtime/session.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime, type FakeOpenAiRealtimeOptions } from "../../../fakes/openai-realtime.js";
import { closeAfterEach } from "../../helpers/cleanups.js";

const SETUP: S2sSetup = { instructions: "You are a phone agent.", tools: [], toolChoice: "auto", interruptResponse: true };

const closing = closeAfterEach();

const waitFor = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 3000, interval: 5 });

interface Started {
  readonly server: FakeOpenAiRealtime;
  readonly session: OpenAiRealtimeSession;
  readonly errors: Error[];
  readonly started: string[];
  readonly calls: string[];
  /** Resolves once the adapter has read every event the fake sent before the call. */
  readonly settled: () => Promise<void>;
}

async function start(options: FakeOpenAiRealtimeOptions = {}): Promise<Started> {
  const server = closing(await startFakeOpenAiRealtime({ manualResponses: true, ...options }));
  const errors: Error[] = [];
  const started: string[] = [];
  const calls: string[] = [];
  const transcripts: string[] = [];
  const events: S2sEvents = {
    audio: () => undefined,
    agentTranscript: () => undefined,
    speechStarted: () => undefined,
    speechStopped: () => undefined,
    userTranscript: (text) => transcripts.push(text),
    responseStarted: (info) => started.push(info.responseId),
    responseDone: () => undefined,
    toolCall: (call) => calls.push(call.callId),
    error: (error) => errors.push(error),
    closed: () => undefined,
  };
  const provider = openAiRealtime({ kind: "openai-realtime", options: { url: server.url } }, { OPENAI_API_KEY: "test-key" }, { reconnectDelaysMs: [0] });
  const session = closing(await provider.open({ setup: SETUP, history: () => [{ role: "user", text: "where is my order" }] }, events));
  // A probe (an interim transcript on an item of its own) behind everything sent so far: events on one
  // socket are read in order, so once it is through, so is everything before it.
  let probes = 0;
  const settled = async (): Promise<void> => {
    const probe = `probe${++probes}`;
    server.send({ type: "conversation.item.input_audio_transcription.delta", item_id: probe, content_index: 0, delta: probe });
    await waitFor(() => expect(transcripts).toContain(probe));
  };
  return { server, session, errors, started, calls, settled };
}

/** In-band `response.create`s the service received (on one connection). */
function creates(server: FakeOpenAiRealtime, connection = 0): number {
  return server.messages.filter((m) => m.connection === connection && m.message.type === "response.create" && (m.message.response as { conversation?: string } | undefined)?.conversation !== "none").length;
}

/** The `response.cancel`s the service received. */
function cancels(server: FakeOpenAiRealtime): Record<string, unknown>[] {
  return server.messages.filter((m) => m.message.type === "response.cancel").map((m) => m.message);
}

/** A response that made a tool call and finished: the call's id, once the adapter has it. */
async function toolStep(server: FakeOpenAiRealtime, started: string[], calls: string[]): Promise<string> {
  const step = await serviceResponse(server, started);
  const callId = server.callIn(step, "lookup_order", { id: "A1" });
  server.finish(step);
  await waitFor(() => expect(calls).toContain(callId));
  return callId ?? "";
}

/** The service starts a response of its own (its VAD) and the adapter has seen it. */
async function serviceResponse(server: FakeOpenAiRealtime, started: string[]): Promise<string> {
  const response = server.startResponse();
  if (response === undefined) throw new Error("no response started");
  await waitFor(() => expect(started).toContain(response.id));
  return response.id;
}

describe("openAiRealtime: one in-band response at a time", () => {
  it("holds a typed turn's response until the running one is done, then asks once", async () => {
    const { server, session, errors, started } = await start();
    const running = await serviceResponse(server, started);
    session.sendText?.("and my refund?");
    // The create would follow the user's message on the same socket: once the message is there, it would be too.
    await waitFor(() => expect(server.messages.some((m) => JSON.stringify(m.message.item ?? {}).includes("and my refund?"))).toBe(true));
    expect(creates(server)).toBe(0);
    server.finish(running);
    await waitFor(() => expect(creates(server)).toBe(1));
    expect(server.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("holds a tool call's follow-up the same way, and never holds an out-of-band response", async () => {
    const { server, session, errors, started, calls } = await start();
    const callId = await toolStep(server, started, calls);
    // The caller spoke meanwhile: the service's VAD started the next response before the result was back.
    const running = await serviceResponse(server, started);
    session.sendToolResults([{ callId, output: "Shipped." }], true);
    session.createResponse({ instructions: "Say exactly: one moment.", outOfBand: true });
    await waitFor(() => expect(server.messages.filter((m) => m.message.type === "response.create")).toHaveLength(1));
    expect(server.messages.filter((m) => (m.message.item as { type?: string } | undefined)?.type === "function_call_output")).toHaveLength(1);
    expect(creates(server)).toBe(0);
    server.finish(running, "cancelled");
    await waitFor(() => expect(creates(server)).toBe(1));
    expect(server.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  /**
   * The service's VAD starts a response while our `response.create` is on its way: the two cross, the
   * service refuses ours (in `refusal`'s words), and ours must go out again after that response.
   */
  async function crossing(refusal: FakeOpenAiRealtimeOptions["refusals"]): Promise<void> {
    const { server, session, errors, started, settled } = await start(refusal === undefined ? {} : { refusals: refusal });
    const running = server.startResponse(); // response.created is on its way to the adapter…
    session.createResponse(); // …as the adapter asks for one
    expect(running).toBeDefined();
    await waitFor(() => expect(server.violations).toHaveLength(1)); // the service refused ours
    await settled();
    // Held while the service's response runs: asked for again only after its response.done.
    expect(creates(server)).toBe(1);
    server.finish(running!.id);
    await waitFor(() => expect(creates(server)).toBe(2));
    // Answered: the service starts it, and the adapter sees its own response start (and only once).
    const answer = server.startResponse();
    await waitFor(() => expect(started).toEqual([running!.id, answer?.id]));
    server.finish(answer!.id);
    await settled();
    expect(creates(server)).toBe(2);
    expect(errors).toEqual([]);
  }

  it("asks again, without reporting an error, when its request crossed a response the service started", async () => {
    await crossing(undefined);
  });

  it("asks again when the refusal is worded differently (another code, another message)", async () => {
    await crossing({ activeResponse: { code: "response_in_progress", message: "Another response is still being generated; try later." } });
  });

  it("asks again when the refusal has no code and names no event", async () => {
    await crossing({ activeResponse: { message: "Please wait.", echoEventId: false } });
  });

  it("holds a request while the one before it is on its way, before any response.created", async () => {
    const { server, session, errors, settled } = await start();
    session.createResponse();
    session.sendText?.("and my refund?");
    await waitFor(() => expect(server.messages.some((m) => JSON.stringify(m.message.item ?? {}).includes("and my refund?"))).toBe(true));
    await settled();
    expect(creates(server)).toBe(1);
    const first = server.startResponse();
    server.finish(first!.id);
    await waitFor(() => expect(creates(server)).toBe(2));
    expect(server.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("sends response.cancel only while a response runs", async () => {
    const { server, session, errors, started, settled } = await start();
    // Nothing runs: nothing to send.
    session.cancelResponse();
    session.cancelResponse("resp_unknown");
    const done = await serviceResponse(server, started);
    server.finish(done);
    await settled();
    // It has ended: nothing to send either.
    session.cancelResponse(done);
    session.cancelResponse();
    await settled();
    expect(cancels(server)).toEqual([]);
    // Running: the cancel goes out, naming it.
    const running = await serviceResponse(server, started);
    session.cancelResponse(running);
    await waitFor(() => expect(cancels(server)).toHaveLength(1));
    expect(cancels(server)[0]).toMatchObject({ type: "response.cancel", response_id: running });
    await settled();
    expect(errors).toEqual([]);
  });

  it("a cancel that crosses the response's end is refused in any words and not reported", async () => {
    const { server, session, errors, started, settled } = await start({ refusals: { cancelNotActive: { code: "nothing_to_cancel", message: "No response is in progress." } } });
    const running = await serviceResponse(server, started);
    server.finish(running); // response.done is on its way to the adapter…
    session.cancelResponse(running); // …as the caller barges in
    await waitFor(() => expect(cancels(server)).toHaveLength(1));
    await settled();
    expect(errors).toEqual([]);
    expect(creates(server)).toBe(0);
  });

  it("asks again on the next socket for a request the drop caught on its way", async () => {
    const { server, session, errors } = await start();
    server.dropOn("response.create"); // recorded, never answered: the socket dies with it
    session.createResponse();
    await waitFor(() => expect(server.sessionUpdates).toEqual([1, 1]));
    await waitFor(() => expect(creates(server, 1)).toBe(1));
    expect(creates(server, 0)).toBe(1);
    expect(server.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("asks for a held response on the next socket after a drop, once", async () => {
    const { server, session, started, calls } = await start();
    const callId = await toolStep(server, started, calls);
    await serviceResponse(server, started);
    session.sendText?.("and my refund?");
    session.sendToolResults([{ callId, output: "Shipped." }], true);
    await waitFor(() => expect(server.messages.some((m) => (m.message.item as { type?: string } | undefined)?.type === "function_call_output")).toBe(true));
    server.drop();
    await waitFor(() => expect(server.sessionUpdates).toEqual([1, 1]));
    await waitFor(() => expect(creates(server, 1)).toBe(1));
    expect(creates(server, 0)).toBe(0);
    expect(server.violations).toEqual([]);
  });
});
