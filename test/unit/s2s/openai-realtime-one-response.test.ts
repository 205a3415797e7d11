// One in-band response at a time: the OpenAI Realtime service refuses a `response.create` while an
// in-band response runs (`conversation_already_has_active_response`), so the adapter holds one asked
// for meanwhile — a typed turn, a tool call's follow-up — until that response is done. Found by the
// s2s-over-sockets property (test/fuzz/s2s-sockets.test.ts): a `user_text` while the model spoke was
// refused, and the typed question never answered.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { S2sEvents, S2sSetup } from "../../../src/s2s/s2s-port.js";
import { openAiRealtime, type OpenAiRealtimeSession } from "../../../src/s2s/providers/openai-realtime.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../helpers/fake-openai-realtime.js";

const SETUP: S2sSetup = { instructions: "You are a phone agent.", tools: [], toolChoice: "auto", interruptResponse: true };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const waitFor = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 3000, interval: 5 });

async function start(): Promise<{ server: FakeOpenAiRealtime; session: OpenAiRealtimeSession; errors: Error[]; started: string[]; calls: string[] }> {
  const server = await startFakeOpenAiRealtime({ manualResponses: true });
  cleanups.push(() => server.close());
  const errors: Error[] = [];
  const started: string[] = [];
  const calls: string[] = [];
  const events: S2sEvents = {
    audio: () => undefined,
    agentTranscript: () => undefined,
    speechStarted: () => undefined,
    speechStopped: () => undefined,
    userTranscript: () => undefined,
    responseStarted: (info) => started.push(info.responseId),
    responseDone: () => undefined,
    toolCall: (call) => calls.push(call.callId),
    error: (error) => errors.push(error),
    closed: () => undefined,
  };
  const provider = openAiRealtime({ kind: "openai-realtime", options: { url: server.url } }, { OPENAI_API_KEY: "test-key" }, { reconnectDelaysMs: [0] });
  const session = await provider.open({ setup: SETUP, history: () => [{ role: "user", text: "where is my order" }] }, events);
  cleanups.push(() => session.close());
  return { server, session, errors, started, calls };
}

/** In-band `response.create`s the service received (on one connection). */
function creates(server: FakeOpenAiRealtime, connection = 0): number {
  return server.messages.filter((m) => m.connection === connection && m.message.type === "response.create" && (m.message.response as { conversation?: string } | undefined)?.conversation !== "none").length;
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

  it("asks again, without reporting an error, when its request crossed a response the service started", async () => {
    const { server, session, errors, started } = await start();
    session.createResponse();
    await waitFor(() => expect(creates(server)).toBe(1));
    // The service started its own response first and refuses ours.
    const running = await serviceResponse(server, started);
    server.send({ type: "error", error: { type: "invalid_request_error", code: "conversation_already_has_active_response", message: `Conversation already has an active response in progress: ${running}.` } });
    server.finish(running);
    await waitFor(() => expect(creates(server)).toBe(2));
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
