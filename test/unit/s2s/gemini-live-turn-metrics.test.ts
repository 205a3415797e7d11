// `metrics.turn` for Gemini Live (issue 15 item 3c): the turn stages are timed from the end of the
// caller's speech as the service reports it. Gemini reports it only through `voiceActivity`
// (ACTIVITY_END); without it the model's first output is the first sign the caller stopped, and a
// turn timed from there would read ~0 ms. Sessions run on the real adapter against the loopback
// fake under a virtual clock, so every interval below is set by the test, not measured on the wall.
import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import type { VirtualClock } from "../../../src/clock.js";
import { agent, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { geminiLive } from "../../../src/s2s/providers/gemini-live.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";
import type { MemoryLink } from "../../../src/testing/memory-link.js";
import { FAKE_GEMINI_KEY, startFakeGeminiLive, type FakeGemini } from "../../../fakes/gemini-live.js";

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Let socket I/O run (real time) and virtual time pass in small steps until `check` holds; a ceiling for a failing test only. */
async function until(clock: VirtualClock, check: () => boolean, what: string, stepMs = 0): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.advance(stepMs);
    await sleep(2);
  }
}

let fake: FakeGemini | undefined;
let end: (() => Promise<void>) | undefined;

afterEach(async () => {
  await end?.();
  end = undefined;
  await fake?.close();
  fake = undefined;
});

async function geminiSession(): Promise<{ link: MemoryLink; clock: VirtualClock; service: FakeGemini }> {
  const service = await startFakeGeminiLive();
  fake = service;
  const provider = geminiLive({ kind: "gemini-live", options: { url: service.url } }, { GOOGLE_API_KEY: FAKE_GEMINI_KEY });
  const def = withTools(agent({ name: "g", greeting: "", s2s: { kind: "gemini-live", options: {} } }), {}) as ResolvedAgentDef;
  const { session, link, clock } = await s2sSession(def, { provider });
  end = () => session.end();
  return { link, clock, service };
}

describe("metrics.turn on Gemini Live", () => {
  it("without voiceActivity there is no end of speech to time from: no endpointMs, no voiceToVoiceMs (not a fabricated 0)", async () => {
    const { link, clock, service } = await geminiSession();
    service.userSays("where is my order");
    await until(clock, () => link.of("user-transcript.updated").length === 4, "the caller's words");
    await clock.advance(700);
    service.modelTurn({ chunks: 2, text: "It shipped today." });
    // The whole model turn is in before virtual time moves on: the runner sees it at one instant.
    await until(clock, () => link.of("audio.completed").length === 1, "the model's turn");
    await until(clock, () => link.of("metrics.turn").length === 1, "the turn's metrics (once played out)", 50);
    expect(link.of("speech.stopped")).toHaveLength(1);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["where is my order"]);
    const [turn] = link.of("metrics.turn");
    expect(turn).not.toHaveProperty("endpointMs");
    expect(turn).not.toHaveProperty("voiceToVoiceMs");
  });

  it("an end of speech inferred from the model's answer dates nothing later either: a typed turn after it has no speech stages", async () => {
    const { link, clock, service } = await geminiSession();
    service.userSays("where is my order");
    await until(clock, () => link.of("user-transcript.updated").length === 4, "the caller's words");
    service.modelTurn({ chunks: 2, text: "It shipped today." });
    await until(clock, () => link.of("metrics.turn").length === 1, "the first turn's metrics", 50);
    link.send({ type: "user_text", text: "and the other one?" });
    await clock.advance(300);
    service.modelTurn({ chunks: 2, text: "That one too." });
    await until(clock, () => link.of("metrics.turn").length === 2, "the typed turn's metrics", 50);
    expect(link.of("metrics.turn")[1]).not.toHaveProperty("endpointMs");
    expect(link.of("metrics.turn")[1]).not.toHaveProperty("voiceToVoiceMs");
  });

  it("with voiceActivity ACTIVITY_END, endpointMs runs from that report to the model's first output", async () => {
    const { link, clock, service } = await geminiSession();
    service.voiceActivity("ACTIVITY_START");
    service.userSays("where is my order");
    service.voiceActivity("ACTIVITY_END");
    await until(clock, () => link.of("speech.stopped").length === 1, "the end of speech");
    await clock.advance(400);
    service.modelTurn({ chunks: 2, text: "It shipped today." });
    // The whole model turn is in before virtual time moves on: the runner sees it at one instant.
    await until(clock, () => link.of("audio.completed").length === 1, "the model's turn");
    await until(clock, () => link.of("metrics.turn").length === 1, "the turn's metrics (once played out)", 50);
    expect(link.of("metrics.turn")[0]).toMatchObject({ endpointMs: 400, voiceToVoiceMs: 400 });
  });
});

describe("the s2s runner: an end of speech reported after the response that answers it started", () => {
  it("times nothing from an end the service inferred from its own answer, not even the continuation after a tool step", async () => {
    const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }), { lookup }) as ResolvedAgentDef;
    const { session, link, fake: service, clock } = await s2sSession(def);
    end = () => session.end();
    service.events.speechStarted();
    await clock.advance(1000);
    const step = service.start(); // the service answers before it reports the end of speech
    service.events.speechStopped({ inferred: true });
    service.events.toolCall({ callId: "call_1", name: "lookup", args: { orderId: "A1" }, responseId: step });
    service.done(step);
    await clock.advance(100);
    const answer = service.start();
    await clock.advance(200);
    service.speak(answer, "It shipped.", 600);
    service.done(answer);
    await clock.advance(2000);
    const turns = link.of("metrics.turn");
    expect(turns).toHaveLength(1);
    expect(turns[0]).not.toHaveProperty("endpointMs");
    expect(turns[0]).not.toHaveProperty("voiceToVoiceMs");
  });

  it("still times a response from an end of speech reported before it, while the caller has begun to speak again", async () => {
    const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }), { lookup }) as ResolvedAgentDef;
    const { session, link, fake: service, clock } = await s2sSession(def);
    end = () => session.end();
    service.events.speechStarted();
    await clock.advance(800);
    service.events.speechStopped();
    await clock.advance(100);
    service.events.speechStarted(); // a second utterance begins before the answer to the first
    await clock.advance(150);
    const answer = service.start();
    service.speak(answer, "It shipped.", 600);
    service.done(answer);
    service.events.speechStopped();
    await clock.advance(2000);
    expect(link.of("metrics.turn")[0]).toMatchObject({ endpointMs: 250 });
  });
});
