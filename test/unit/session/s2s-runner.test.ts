import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { agent, toAgentConfig, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { sayExactly } from "../../../src/session/s2s-lines.js";
import { Session } from "../../../src/session/session.js";
import { MemorySessionStore } from "../../../src/session/store.js";
import { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { s2sSession as harness } from "../../../src/testing/s2s-session.js";
import { MemoryLink } from "../../../src/testing/memory-link.js";

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check that order." },
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

function s2sSession(extra: Record<string, unknown> = {}) {
  return harness(withTools(agent({ name: "rt", greeting: "Welcome.", s2s: { kind: "openai-realtime", options: {} }, ...extra }), { lookup }) as ResolvedAgentDef);
}

describe("speech-to-speech sessions", () => {
  it("declares the service's own rates to the link and resamples nothing itself: audio crosses untouched", async () => {
    const { link, fake } = await s2sSession();
    // FakeS2s speaks PCM16 at 24 kHz both ways, as OpenAI Realtime does.
    expect(link.sessionAudio).toEqual({ input: { encoding: "pcm16", sampleRate: 24000 }, output: { encoding: "pcm16", sampleRate: 24000 } });
    link.sendAudio(new Uint8Array(960));
    expect(fake.audioInBytes).toBe(960);
    const greeting = fake.start(true);
    fake.speak(greeting, "Welcome.", 600);
    expect(link.audioOut).toEqual([expect.objectContaining({ bytes: 48 * 600, ms: 600 })]);
  });

  it("sets up once with the frozen tools and instructions, and greets out of band in the model's voice", async () => {
    const { link, fake } = await s2sSession({ voicePresets: ["phoneEtiquette"] });
    expect(fake.opens).toHaveLength(1);
    const setup = fake.opens[0]?.setup;
    expect(setup?.tools.map((t) => t.name)).toEqual(["lookup"]);
    expect(setup?.instructions).toContain("You are on a phone call.");
    expect(fake.calls).toEqual([{ kind: "response", instructions: sayExactly("Welcome."), outOfBand: true }]);
    const greeting = fake.start(true);
    fake.speak(greeting, "Welcome.", 600);
    fake.done(greeting, "completed", true);
    expect(link.audioOut.length).toBe(1);
  });

  it("records the greeting once the caller has heard it; a barge-in during it cuts it: not recorded, no reply.completed", async () => {
    const heard = await s2sSession();
    const greeting = heard.fake.start(true);
    heard.fake.speak(greeting, "Welcome.", 600);
    heard.fake.done(greeting, "completed", true);
    // The service is done, but the caller has 600 ms of it still to hear.
    await heard.clock.advance(300);
    expect(heard.link.of("agent-transcript.committed")).toEqual([]);
    await heard.clock.advance(400);
    expect(heard.link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome."]);
    expect(heard.link.types()).toContain("reply.completed");

    const cut = await s2sSession();
    const cutGreeting = cut.fake.start(true);
    cut.fake.speak(cutGreeting, "Welcome.", 600);
    cut.fake.done(cutGreeting, "completed", true);
    await cut.clock.advance(300);
    cut.fake.events.speechStarted();
    await cut.clock.advance(1000);
    expect(cut.link.types().filter((t) => t.startsWith("reply."))).toEqual(["reply.cancelled"]);
    expect(cut.link.of("agent-transcript.committed")).toEqual([]);
  });

  it("runs a tool call through the runner, speaks its start line out of band, and answers the batch once", async () => {
    const { link, fake } = await s2sSession();
    const reply = fake.start();
    fake.events.toolCall({ callId: "call_1", name: "lookup", args: { orderId: "A1" }, responseId: reply });
    await Promise.resolve();
    expect(link.of("tool.message")).toMatchObject([{ kind: "start", text: "Let me check that order." }]);
    expect(fake.calls.at(-1)).toEqual({ kind: "response", instructions: sayExactly("Let me check that order."), outOfBand: true });
    fake.done(reply);
    await new Promise((resolve) => setImmediate(resolve));
    const results = fake.calls.filter((c) => c.kind === "results");
    expect(results).toEqual([{ kind: "results", results: [{ callId: "call_1", output: "Order A1 shipped." }], respond: true }]);
    expect(link.of("tool.completed")).toMatchObject([{ toolCallId: "call_1", result: "Order A1 shipped." }]);
  });

  it("a response lost with the service link mid tool call still asks for the model's next turn with the result", async () => {
    const { fake } = await s2sSession();
    const reply = fake.start();
    fake.events.toolCall({ callId: "call_1", name: "lookup", args: { orderId: "A1" }, responseId: reply });
    fake.done(reply, "failed");
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.calls.filter((c) => c.kind === "results")).toEqual([{ kind: "results", results: [{ callId: "call_1", output: "Order A1 shipped." }], respond: true }]);
  });

  it("times a spoken answer: end of speech → response (endpointMs) and → its first audio heard (voiceToVoiceMs), across a tool step", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "" });
    fake.events.speechStarted();
    await clock.advance(1000);
    fake.events.speechStopped();
    await clock.advance(300);
    const step = fake.start();
    fake.events.toolCall({ callId: "call_1", name: "lookup", args: { orderId: "A1" }, responseId: step });
    fake.done(step);
    await clock.advance(100);
    const answer = fake.start();
    await clock.advance(200);
    fake.speak(answer, "It shipped.", 600);
    fake.done(answer);
    await clock.advance(2000);
    expect(link.of("metrics.turn")).toMatchObject([{ endpointMs: 300, voiceToVoiceMs: 600 }]);
    // A typed turn answers no speech: no speech stages.
    link.send({ type: "user_text", text: "and the other one?" });
    const typed = fake.start();
    fake.speak(typed, "Also shipped.", 400);
    fake.done(typed);
    await clock.advance(2000);
    expect(link.of("metrics.turn").at(-1)).not.toHaveProperty("voiceToVoiceMs");
  });

  it("end_call waits for the reply that announced it, not for an earlier reply the caller is still hearing", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "", builtinTools: ["end_call"] });
    const earlier = fake.start();
    fake.speak(earlier, "Your order shipped on Monday.", 2000);
    fake.done(earlier);
    // The next response starts while the caller still hears the first: it ends the call, and its goodbye comes after.
    const goodbye = fake.start();
    fake.events.toolCall({ callId: "call_1", name: "end_call", args: {}, responseId: goodbye });
    await clock.advance(2100);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Your order shipped on Monday."]);
    expect(link.closed).toBeUndefined(); // the goodbye is not even said yet
    fake.speak(goodbye, "Goodbye.", 800);
    fake.done(goodbye);
    await clock.advance(1000);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Your order shipped on Monday.", "Goodbye."]);
    expect(link.closed).toMatchObject({ code: 1000 });
  });

  it("a tool line still being spoken stops when the tool settles", async () => {
    let release: () => void = () => {};
    const slow = tool({
      description: "Slow lookup",
      messages: { start: "One moment." },
      execute: async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return "Done.";
      },
    });
    const clock = virtualClock(0);
    const link = new MemoryLink(clock);
    const fake = new FakeS2s();
    const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }), { slow }) as ResolvedAgentDef;
    const session = new Session({ agent: { def, config: toAgentConfig(def) }, link, clock, log: silentLogger, store: new MemorySessionStore(clock), resolveModel: () => { throw new Error("no model"); }, s2s: () => fake });
    await session.start();
    const reply = fake.start();
    fake.events.toolCall({ callId: "c1", name: "slow", args: {}, responseId: reply });
    await Promise.resolve();
    const line = fake.start(true);
    expect(fake.calls.filter((c) => c.kind === "cancel")).toEqual([]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.calls).toContainEqual({ kind: "cancel", responseId: line });
  });

  it("a barge-in while the agent is audible clears playback and truncates at what was heard", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "" });
    const reply = fake.start();
    fake.speak(reply, "Your order shipped on Friday and arrives Tuesday.", 3000);
    await clock.advance(1200);
    fake.events.speechStarted();
    expect(link.types().slice(-2)).toEqual(["reply.cancelled", "speech.started"]);
    const truncate = fake.calls.find((c) => c.kind === "truncate");
    expect(truncate).toEqual({ kind: "truncate", itemId: `item_${reply}`, audioEndMs: 1200 });
    // interrupt_response is on: the service cancels the response itself, so no second cancel (it would earn an error).
    expect(fake.calls).not.toContainEqual({ kind: "cancel", responseId: reply });
    fake.done(reply, "cancelled");
    expect(link.of("agent-transcript.committed")).toHaveLength(0);
  });

  it("the client's cancel stops the response at the service, and speech with nothing to cut is no barge-in", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "" });
    const reply = fake.start();
    fake.speak(reply, "Your order shipped on Friday.", 1000);
    link.send({ type: "cancel" });
    expect(fake.calls).toContainEqual({ kind: "cancel", responseId: reply });
    fake.done(reply, "cancelled");
    await clock.advance(100);
    const cancelled = link.of("reply.cancelled").length;
    fake.events.speechStarted();
    expect(link.of("reply.cancelled")).toHaveLength(cancelled);
    expect(link.types().at(-1)).toBe("speech.started");
  });

  it("refuses calls past maxSteps with a result the model reads", async () => {
    const { fake } = await s2sSession({ greeting: "", maxSteps: 1 });
    const first = fake.start();
    fake.events.toolCall({ callId: "c1", name: "lookup", args: { orderId: "A1" }, responseId: first });
    fake.done(first);
    await new Promise((resolve) => setImmediate(resolve));
    const second = fake.start();
    fake.events.toolCall({ callId: "c2", name: "lookup", args: { orderId: "A2" }, responseId: second });
    fake.done(second);
    await new Promise((resolve) => setImmediate(resolve));
    const results = fake.calls.filter((c) => c.kind === "results");
    expect(results[1]).toMatchObject({ results: [{ callId: "c2", output: expect.stringContaining("Tool step limit reached") as string }] });
  });

  it("maps the service's transcripts and speech edges; a fatal provider error ends the session", async () => {
    const { link, fake } = await s2sSession({ greeting: "" });
    fake.events.speechStarted();
    fake.events.userTranscript("where is", { final: false });
    fake.events.userTranscript("where is my order", { final: true });
    fake.events.speechStopped();
    expect(link.types()).toEqual(["session.configured", "speech.started", "user-transcript.updated", "user-transcript.committed", "speech.stopped"]);
    fake.events.error(new Error("rate limited"), { fatal: false });
    expect(link.of("error.reported").at(-1)).toMatchObject({ code: "s2s", fatal: false });
    fake.events.error(new Error("link lost"), { fatal: true });
    expect(link.of("error.reported").at(-1)).toMatchObject({ code: "connection", fatal: true });
    expect(link.closed?.code).toBe(1011);
  });

  it("builds no transcript snapshot for a link that shows none (a phone line), and commits the same lines", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "" });
    // As a carrier's link: it sends its caller no events (those that move audio still reach it).
    Object.assign(link, { shows: () => false });
    fake.events.speechStarted();
    fake.events.userTranscript("where is", { final: false });
    fake.events.userTranscript("where is my order", { final: true });
    fake.events.speechStopped();
    const reply = fake.start();
    fake.speak(reply, "It shipped.", 300);
    fake.done(reply);
    await clock.advance(400);
    expect(link.types()).not.toContain("user-transcript.updated");
    expect(link.types()).not.toContain("agent-transcript.updated");
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["where is my order"]);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["It shipped."]);
  });

  it("still builds the snapshots a link shows", async () => {
    const { link, fake, clock } = await s2sSession({ greeting: "" });
    Object.assign(link, { shows: (type: string) => type === "agent-transcript.updated" });
    fake.events.userTranscript("where is", { final: false });
    const reply = fake.start();
    fake.speak(reply, "It shipped.", 300);
    fake.done(reply);
    await clock.advance(400);
    expect(link.types()).not.toContain("user-transcript.updated");
    expect(link.of("agent-transcript.updated").map((e) => e.text)).toEqual(["It shipped."]);
  });
});

describe("the service handshake", () => {
  it("is aborted when the client hangs up during start: no half-open socket", async () => {
    let aborted = false;
    const hanging = {
      kind: "hanging",
      audioFormats: ["pcm16"] as const,
      open: (options: { signal?: AbortSignal | undefined }) =>
        new Promise<never>((_, reject) => {
          options.signal?.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("handshake aborted"));
          });
        }),
    };
    const def = withTools(agent({ name: "rt", s2s: { kind: "openai-realtime", options: {} } }), {}) as ResolvedAgentDef;
    const { session, link } = await harness(def, { provider: hanging, start: false });
    const starting = session.start();
    await new Promise((resolve) => setImmediate(resolve));
    link.close(1001, "client went away");
    await starting;
    expect(aborted).toBe(true);
    expect(session.ended).toBe(true);
  });
});
