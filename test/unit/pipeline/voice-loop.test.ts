import { Type } from "@sinclair/typebox";
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { virtualClock, type VirtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { agent, toAgentConfig, tool, withTools, type AgentConfigSource, type AgentOptions, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { type Script } from "../../../src/pipeline/providers/llm/script.js";
import { deepgramStt } from "../../../src/pipeline/providers/stt/deepgram.js";
import type { SttEvents, SttProvider } from "../../../src/pipeline/stt-port.js";
import { Session } from "../../../src/session/session.js";
import { MemorySessionStore } from "../../../src/session/store.js";
import { FakeTts, fakeVad } from "../../../src/testing/fake-speech.js";
import { MemoryLink } from "../../../src/testing/memory-link.js";
import { streamingModel } from "../../../src/testing/streaming-model.js";
import { voiceSession } from "../../../src/testing/voice-session.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../../fakes/deepgram.js";

const slowLookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

function def(extra: Partial<AgentOptions> = {}): ResolvedAgentDef {
  return withTools(agent({ name: "voice", greeting: "Hi there.", ...extra }), { lookup: slowLookup });
}

const script = {
  rules: [
    { when: "caller interrupted you", say: "As I was saying, I can help with orders." },
    { when: "hello", say: "Hello! I can help you track an order, check a delivery date, or answer questions about returns." },
    { when: "order (?<id>\\w+)", say: "Let me check.", call: { tool: "lookup", args: { orderId: "{id}" } }, then: "{result}" },
  ],
};

describe("pipeline turns", () => {
  it("speaks the greeting, then answers a turn ended by the STT's endpointing", async () => {
    const { link, stt, tts, clock, started } = voiceSession(def(), { script });
    await started;
    await clock.advance(2000);
    expect(tts.spoken).toEqual(["Hi there."]);
    expect(link.types().slice(1, 5)).toEqual(["agent-transcript.updated", "audio.completed", "agent-transcript.committed", "reply.completed"]);
    stt.current.speechStarted();
    stt.current.partial("hello");
    stt.current.final("hello", true);
    await clock.advance(10_000);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toMatch(/^Hello! I can help/);
    expect(tts.spoken.slice(1).map((t) => t.trim()).join(" ")).toBe("Hello! I can help you track an order, check a delivery date, or answer questions about returns.");
    expect(tts.spoken[1]?.trim()).toBe("Hello!");
    const metrics = link.of("metrics.turn").at(-1);
    expect(metrics).toMatchObject({ turnId: "turn_2" });
    expect(metrics?.voiceToVoiceMs).toBeGreaterThanOrEqual(0);
    expect(link.audioOut.length).toBeGreaterThan(5);
  });

  it("interrupts on real speech while the agent is audible, and records what was heard", async () => {
    const { link, stt, clock, started, store, session } = voiceSession(def({ interruption: { minWords: 2, minDurationMs: 300, interruptPhrases: [] } }), { script }); // the thresholds alone: "wait" is a default interrupt phrase
    await started;
    await clock.advance(2000);
    stt.current.final("hello", true);
    await clock.advance(1200);
    const before = link.of("reply.cancelled").length;
    stt.current.speechStarted();
    stt.current.partial("wait");
    await clock.advance(400);
    stt.current.partial("wait stop");
    expect(link.of("reply.cancelled")).toHaveLength(before + 1);
    const types = link.types();
    expect(types.slice(types.lastIndexOf("reply.cancelled"))).toEqual(["reply.cancelled", "speech.started", "user-transcript.updated"]);
    stt.current.final("wait stop", true);
    await clock.advance(5000);
    const history = (await store.load(session.id))?.history ?? [];
    const interrupted = history.find((m) => m.role === "assistant" && JSON.stringify(m.content).includes("[interrupted]"));
    expect(JSON.stringify(interrupted?.content)).toMatch(/Hello!.*\[interrupted\]/);
    expect(JSON.stringify(interrupted?.content)).not.toContain("returns");
  });

  it("a cough does not interrupt: one word below minWords, or speech shorter than minDurationMs", async () => {
    const { link, stt, clock, started } = voiceSession(def({ interruption: { minWords: 2, minDurationMs: 500, interruptPhrases: [] } }), { script });
    await started;
    await clock.advance(2000);
    stt.current.final("hello", true);
    await clock.advance(1000);
    stt.current.speechStarted();
    stt.current.partial("uh");
    await clock.advance(600);
    stt.current.partial("uh");
    expect(link.of("reply.cancelled")).toHaveLength(0);
    stt.current.final("", false);
    await clock.advance(5000);
    // A new utterance: two words, but not yet sustained for minDurationMs.
    stt.current.final("hello", true);
    await clock.advance(1000);
    stt.current.speechStarted();
    stt.current.partial("no wait");
    await clock.advance(300);
    stt.current.partial("no wait");
    expect(link.of("reply.cancelled")).toHaveLength(0);
    await clock.advance(300);
    stt.current.partial("no wait please");
    expect(link.of("reply.cancelled")).toHaveLength(1);
  });

  it("speech before the agent is audible queues instead of interrupting", async () => {
    const { link, stt, clock, started } = voiceSession(def({ greeting: "" }), { script, ttsLatencyMs: 800 });
    await started;
    stt.current.final("hello", true);
    await clock.advance(100);
    stt.current.speechStarted();
    stt.current.partial("my order");
    stt.current.final("my order A1", true);
    await clock.advance(20_000);
    expect(link.of("reply.cancelled")).toHaveLength(0);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "my order A1"]);
    expect(link.of("reply.completed")).toHaveLength(2);
  });

  it("resumes a falsely interrupted reply when no final ever commits", async () => {
    const { link, stt, clock, started, tts } = voiceSession(def(), { script });
    await started;
    await clock.advance(2000);
    stt.current.final("hello", true);
    await clock.advance(1500);
    stt.current.speechStarted();
    stt.current.partial("hmm");
    await clock.advance(600);
    stt.current.partial("hmm");
    expect(link.of("reply.cancelled")).toHaveLength(1);
    await clock.advance(4500);
    await clock.advance(10_000);
    expect(tts.spoken.join(" ").replace(/\s+/g, " ")).toContain("As I was saying");
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
  });

  it("builds no transcript snapshot for a link that shows none (a phone line), and commits the same lines", async () => {
    const { link, stt, clock, started } = voiceSession(def(), { script });
    // As a carrier's link: it sends its caller no events (those that move audio still reach it).
    Object.assign(link, { shows: () => false });
    await started;
    await clock.advance(2000);
    stt.current.speechStarted();
    stt.current.partial("hello");
    stt.current.final("hello", true);
    await clock.advance(10_000);
    expect(link.types()).not.toContain("user-transcript.updated");
    expect(link.types()).not.toContain("agent-transcript.updated");
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hi there.", expect.stringMatching(/^Hello! I can help/)]);
  });
});

const speech = (ms: number): Uint8Array => new Uint8Array(32 * ms).fill(1);
const silence = (ms: number): Uint8Array => new Uint8Array(32 * ms);

describe("tools, silence and failures in a spoken reply", () => {
  it("a barge-in during a tool call lets the tool finish once and keeps its result", async () => {
    let runs = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const waiting = tool({
      description: "Look up an order",
      parameters: Type.Object({ orderId: Type.String() }),
      execute: async ({ orderId }) => {
        runs += 1;
        await gate;
        return `Order ${orderId} shipped.`;
      },
    });
    const agentDef = withTools(agent({ name: "v", greeting: "" }), { lookup: waiting }) as ResolvedAgentDef;
    const { link, stt, clock, started, store, session } = voiceSession(agentDef, {
      script: { rules: [{ when: "order (?<id>\\w+)", say: "Let me check that order for you right now.", call: { tool: "lookup", args: { orderId: "{id}" } }, then: "{result}" }] },
    });
    await started;
    stt.current.final("where is order A1", true);
    await clock.advance(800);
    stt.current.speechStarted();
    stt.current.final("actually never mind", true);
    expect(link.of("reply.cancelled")).toHaveLength(1);
    release();
    await clock.advance(5000);
    expect(runs).toBe(1);
    expect(link.of("tool.completed")).toMatchObject([{ result: "Order A1 shipped." }]);
    const history = (await store.load(session.id))?.history ?? [];
    const roles = history.map((m) => m.role);
    expect(roles.slice(0, 3)).toEqual(["user", "assistant", "tool"]);
    expect(JSON.stringify(history[1])).toContain("[interrupted]");
    expect(JSON.stringify(history[2])).toContain("Order A1 shipped.");
  });

  it("covers dead air during a slow tool with declarative fillers, never recorded", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = tool({ description: "Slow", execute: async () => (await gate, "Done.") });
    const agentDef = withTools(agent({ name: "v", greeting: "" }), { slow }) as ResolvedAgentDef;
    const { link, stt, tts, clock, started, store, session } = voiceSession(agentDef, {
      script: { rules: [{ when: "go", call: { tool: "slow", args: {} }, then: "All done." }] },
    });
    await started;
    stt.current.final("go", true);
    await clock.advance(2500);
    expect(tts.spoken).toEqual(["I'm checking on this."]);
    // The filler played ~1.1 s; the backoff doubled to 4.8 s after it.
    await clock.advance(5000);
    expect(tts.spoken).toEqual(["I'm checking on this."]);
    await clock.advance(1000);
    expect(tts.spoken).toEqual(["I'm checking on this.", "I'm still checking on this."]);
    release();
    await clock.advance(3000);
    expect(tts.spoken.slice(2).join("").trim()).toBe("All done.");
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["All done."]);
    expect(JSON.stringify((await store.load(session.id))?.history)).not.toContain("checking");
  });

  it("a tool with its own delayed lines stands the dead-air cover down", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const covered = tool({ description: "Covered", messages: { start: "One moment.", delayed: [{ afterMs: 3000, content: "Still on it." }] }, execute: async () => (await gate, "Done.") });
    const agentDef = withTools(agent({ name: "v", greeting: "" }), { covered }) as ResolvedAgentDef;
    const { stt, tts, clock, started, link } = voiceSession(agentDef, { script: { rules: [{ when: "go", call: { tool: "covered", args: {} }, then: "Finished." }] } });
    await started;
    stt.current.final("go", true);
    await clock.advance(6000);
    expect(tts.spoken).toEqual(["One moment.", "Still on it."]);
    expect(link.of("tool.message").map((m) => m.kind)).toEqual(["start", "delayed"]);
    release();
    await clock.advance(3000);
    expect(tts.spoken.at(-1)?.trim()).toBe("Finished.");
  });

  it("nudges after silence between turns, at most three in a row", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "Hi.", silence: { nudge: { afterMs: 5000 } } }), {}) as ResolvedAgentDef;
    const { tts, clock, started } = voiceSession(agentDef, { script: { rules: [{ when: "silent for a while", say: "Are you still there?" }] } });
    await started;
    for (let i = 0; i < 10; i++) await clock.advance(6000);
    expect(tts.spoken.filter((t) => t.includes("still there")).length).toBe(3);
  });

  it("speaks the error phrase when the model fails, as a non-fatal llm error", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", errorPhrase: "Sorry, say that again?" }), {}) as ResolvedAgentDef;
    const failing = scriptedModelThatFails();
    const { link, stt, tts, clock, started } = voiceSession(agentDef, { model: failing });
    await started;
    stt.current.final("hello", true);
    await clock.advance(3000);
    expect(link.of("error.reported")).toMatchObject([{ code: "llm", fatal: false }]);
    expect(tts.spoken).toEqual(["Sorry, say that again?"]);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Sorry, say that again?");
  });
});

describe("turn detection", () => {
  it("local VAD + silence timers end the turn when the STT has no endpointing", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { minSilenceMs: 800, maxSilenceMs: 2000 } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { sttEndpointing: false, script: { rules: [{ when: "hello", say: "Hi!" }] } });
    await started;
    const send = (chunk: Uint8Array) => link.sendAudio(chunk);
    send(speech(400));
    stt.current.partial("hello");
    stt.current.final("hello", false);
    send(silence(400));
    await clock.advance(500);
    expect(link.of("user-transcript.committed")).toHaveLength(0);
    await clock.advance(600);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
    expect(stt.current.finalizeCalls).toBeGreaterThan(0);
  });

  it("push-to-talk: the turn ends on user_turn_commit, not on the STT's endpointing", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { detection: "manual" } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [{ when: "hello", say: "Hi!" }] } });
    await started;
    link.send({ type: "user_turn_start" });
    stt.current.final("hello", true);
    await clock.advance(3000);
    expect(link.of("user-transcript.committed")).toHaveLength(0);
    stt.current.final("there", true);
    link.send({ type: "user_turn_commit" });
    stt.current.final("", true);
    await clock.advance(100);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello there"]);
    link.send({ type: "user_turn_start" });
    stt.current.final("discard me", true);
    link.send({ type: "user_turn_clear" });
    await clock.advance(5000);
    expect(link.of("user-transcript.committed")).toHaveLength(1);
  });

  it("cuts an over-long turn at userTurnLimit and says so", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { userTurnLimit: { maxWords: 5 } } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.current.speechStarted();
    stt.current.partial("one two three");
    stt.current.partial("one two three four five six");
    expect(link.of("user-turn.exceeded")).toMatchObject([{ limit: "words", words: 6 }]);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["one two three four five six"]);
    await clock.advance(100);
  });

  it("falls back to typed turns, still spoken, when the recognizer is not installed", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "Hi." }), {}) as ResolvedAgentDef;
    const { link, tts, clock, started } = voiceSession(agentDef, { sttUnavailable: true, script: { rules: [{ when: "hello", say: "Hello!" }] } });
    await started;
    expect(link.of("error.reported")).toMatchObject([{ code: "stt", fatal: false, message: expect.stringContaining("apt-get install pocketsphinx") as string }]);
    link.sendAudio(new Uint8Array(640));
    link.send({ type: "user_text", text: "hello" });
    await clock.advance(3000);
    expect(tts.spoken.map((t) => t.trim())).toEqual(["Hi.", "Hello!"]);
    expect(link.closed).toBeUndefined();
  });

  it("an STT link lost beyond the reconnect budget ends the session with a fatal connection error", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.failOpens = 10;
    stt.current.drop();
    await clock.advance(5000);
    expect(link.of("error.reported")).toMatchObject([{ code: "connection", fatal: true }]);
    expect(link.closed?.code).toBe(1011);
  });

  it("an STT drop mid-utterance reconnects and replays the unfinalized audio", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [{ when: "hello", say: "Hi!" }] } });
    await started;
    link.sendAudio(speech(200));
    stt.current.final("earlier words", false);
    link.sendAudio(speech(300));
    const first = stt.current;
    first.drop();
    await clock.advance(10);
    expect(stt.sessions).toHaveLength(2);
    expect(stt.current.audioBytes).toBe(speech(300).byteLength);
    stt.current.final("hello", true);
    await clock.advance(2000);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["earlier words hello"]);
  });
});

function scriptedModelThatFails(): LanguageModel {
  return streamingModel("failing", () => Promise.reject(new Error("upstream 500")));
}

/** The scripted model, counting the requests it gets. */
function counted(rules: Script["rules"]): { model: LanguageModel; calls: () => number } {
  const inner = scriptedModel({ rules }) as unknown as { doStream: (options: unknown) => Promise<unknown> };
  let calls = 0;
  const model = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "doStream") {
        return (options: unknown) => {
          calls += 1;
          return target.doStream(options);
        };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { model: model as unknown as LanguageModel, calls: () => calls };
}

describe("preemptive generation and continuation", () => {
  const rules = [
    { when: "^what time is it$", say: "It is noon." },
    { when: "what time is it in", say: "It is noon there too." },
    { when: "hi.*also", say: "Hello to you both." },
  ];

  it("adopts a reply started on a confident interim when the final matches: one model request", async () => {
    const { model, calls } = counted(rules);
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { preemptiveGeneration: true } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { model });
    await started;
    stt.current.speechStarted();
    stt.current.partial("what time is it", 0.95);
    await clock.advance(50);
    expect(calls()).toBe(1);
    stt.current.final("What time is it?", true);
    await clock.advance(3000);
    expect(calls()).toBe(1);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("It is noon.");
  });

  it("discards it when the final differs, and never speaks or records it", async () => {
    const { model, calls } = counted(rules);
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { preemptiveGeneration: true } }), {}) as ResolvedAgentDef;
    const { link, stt, tts, clock, started, store, session } = voiceSession(agentDef, { model });
    await started;
    stt.current.speechStarted();
    stt.current.partial("what time is it", 0.95);
    await clock.advance(50);
    stt.current.final("what time is it in Paris", true);
    await clock.advance(3000);
    expect(calls()).toBe(2);
    expect(tts.spoken.join("")).not.toContain("It is noon.");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("It is noon there too.");
    expect(JSON.stringify((await store.load(session.id))?.history)).not.toContain('"It is noon."');
  });

  it("low-confidence interims never start a reply", async () => {
    const { model, calls } = counted(rules);
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { preemptiveGeneration: true } }), {}) as ResolvedAgentDef;
    const { stt, clock, started } = voiceSession(agentDef, { model });
    await started;
    stt.current.partial("what time is it", 0.5);
    await clock.advance(50);
    expect(calls()).toBe(0);
  });

  it("merges an utterance inside the continuation window into the turn in flight", async () => {
    const { model } = counted(rules);
    const agentDef = withTools(agent({ name: "v", greeting: "", interruption: { continuationWindowMs: 1500 } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started, store, session } = voiceSession(agentDef, { model, ttsLatencyMs: 500 });
    await started;
    stt.current.final("hi", true);
    await clock.advance(100);
    stt.current.speechStarted();
    stt.current.final("and my friend says hi also", true);
    await clock.advance(5000);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hello to you both."]);
    const users = ((await store.load(session.id))?.history ?? []).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["hi and my friend says hi also"]);
  });
});

describe("interruption settings", () => {
  const talk = { rules: [{ when: "hello", say: "Hello! I can help you track an order, check a delivery date, or answer questions about returns." }] };

  it('interruption "off": speech never interrupts; it is answered after the reply', async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", interruption: "off" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: talk });
    await started;
    stt.current.final("hello", true);
    await clock.advance(1000);
    stt.current.speechStarted();
    stt.current.partial("stop stop stop");
    await clock.advance(800);
    stt.current.final("hello again", true);
    await clock.advance(20_000);
    expect(link.of("reply.cancelled")).toHaveLength(0);
    expect(link.of("reply.completed")).toHaveLength(2);
  });

  it("holds agent audio for the start-speaking floor, and for backoffMs after a real interruption", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { startSpeakingFloorMs: 700 }, interruption: { backoffMs: 1500, minDurationMs: 0 } }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: talk });
    await started;
    const t0 = clock.now();
    stt.current.final("hello", true);
    await clock.advance(3000);
    expect((link.audioOut[0]?.at ?? 0) - t0).toBeGreaterThanOrEqual(700);
    stt.current.speechStarted();
    stt.current.final("hello", true);
    const bargedAt = clock.now();
    expect(link.of("reply.cancelled")).toHaveLength(1);
    const before = link.audioOut.length;
    await clock.advance(20_000);
    expect((link.audioOut[before]?.at ?? 0) - bargedAt).toBeGreaterThanOrEqual(1500);
  });
});

describe("the utterance so far (stt-port.ts transcript contract): finals in order, then the partial", () => {
  it('final "what is the status" + partial "of" → caption "what is the status of"; the turn commits once', async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.current.speechStarted();
    stt.current.partial("what is");
    stt.current.final("what is the status", false);
    stt.current.partial("of");
    expect(link.of("user-transcript.updated").map((e) => e.text)).toEqual(["what is", "what is the status", "what is the status of"]);
    stt.current.final("of my order", true);
    await clock.advance(100);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["what is the status of my order"]);
  });

  it('"wait" + "wait" counts 2 words: no barge-in at minWords 3; a third word is one', async () => {
    const { link, stt, clock, started } = voiceSession(def({ interruption: { minWords: 3, minDurationMs: 300, interruptPhrases: [] } }), { script });
    await started;
    await clock.advance(2000);
    stt.current.final("hello", true);
    await clock.advance(1200);
    stt.current.speechStarted();
    await clock.advance(400);
    stt.current.partial("wait");
    stt.current.final("wait", false);
    stt.current.partial("wait");
    expect(link.of("reply.cancelled")).toHaveLength(0);
    stt.current.partial("wait stop");
    expect(link.of("reply.cancelled")).toHaveLength(1);
  });

  it("userTurnLimit.maxWords counts each word once across finals and the partial", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "", turnTaking: { userTurnLimit: { maxWords: 4 } } }), {}) as ResolvedAgentDef;
    const { link, stt, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.current.speechStarted();
    stt.current.final("one two", false);
    stt.current.partial("three four");
    expect(link.of("user-turn.exceeded")).toHaveLength(0);
    stt.current.partial("three four five");
    expect(link.of("user-turn.exceeded")).toMatchObject([{ limit: "words", words: 5 }]);
  });

  it("an empty final covers the pending partial: a withdrawn 'uh' is never committed", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.current.speechStarted();
    stt.current.partial("uh");
    stt.current.final("", true);
    await clock.advance(5000);
    expect(link.of("user-transcript.committed")).toEqual([]);
  });

  it("an empty partial withdraws the tail: the caption and the turn go back to the finals", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [] } });
    await started;
    stt.current.speechStarted();
    stt.current.final("what is the status", false);
    stt.current.partial("uh");
    stt.current.partial("");
    expect(link.of("user-transcript.updated").at(-1)?.text).toBe("what is the status");
    stt.current.final("", true);
    await clock.advance(100);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["what is the status"]);
  });
});

/**
 * A pipeline session whose STT is the real Deepgram adapter on the loopback fake (the session's
 * own timers on a virtual clock; the socket in real time). `seen` lists each STT event once the
 * voice loop has handled it.
 */
async function deepgramSession(agentDef: ResolvedAgentDef, rules: Script["rules"]): Promise<{ fake: FakeDeepgram; link: MemoryLink; clock: VirtualClock; seen: string[]; close: () => Promise<void> }> {
  const fake = await startFakeDeepgram();
  const clock = virtualClock();
  const link = new MemoryLink(clock);
  const seen: string[] = [];
  const inner = deepgramStt({ kind: "deepgram", options: { url: fake.url } }, { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY });
  const stt: SttProvider = {
    kind: inner.kind,
    open: (options, events) => {
      const spied: SttEvents = {
        ...events,
        partial: (text, info) => (events.partial(text, info), seen.push(`partial:${text}`)),
        final: (text, info) => (events.final(text, info), seen.push(`final:${text}`)),
        speechStarted: () => (events.speechStarted(), seen.push("speechStarted")),
      };
      return inner.open(options, spied);
    },
  };
  const config = toAgentConfig(
    { ...(agentDef as AgentConfigSource), stt: { kind: "deepgram", options: {} }, tts: { kind: "cartesia", options: {} }, llm: { kind: "scripted", options: {} } },
    { warn: () => {} },
  );
  const model = scriptedModel({ rules }, { sleep: (ms, signal) => clock.sleep(ms, signal) });
  const tts = new FakeTts(clock, { msPerChar: 50 });
  const session = new Session({
    agent: { def: agentDef, config },
    link,
    clock,
    log: silentLogger,
    store: new MemorySessionStore(clock),
    resolveModel: () => model,
    voice: { stt: () => stt, tts: () => tts, vad: (rate) => Promise.resolve(fakeVad(rate)) },
  });
  await session.start();
  return {
    fake,
    link,
    clock,
    seen,
    close: async () => {
      link.close(1000, "done");
      await clock.advance(100);
      await fake.close();
    },
  };
}

/** Real-time wait for the adapter's events (the socket is real). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe("the utterance so far over the Deepgram adapter (several is_final segments per utterance)", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('captions grow word by word: final "what is the status" + interim "of" reads "what is the status of"', async () => {
    const h = await deepgramSession(withTools(agent({ name: "v", greeting: "" }), {}), []);
    close = h.close;
    h.fake.speechStarted();
    h.fake.speak(["what is the status", "of my order"]);
    await until(() => h.seen.filter((e) => e.startsWith("final:")).length === 2, "both finals");
    expect(h.link.of("user-transcript.updated").map((e) => e.text)).toEqual([
      "what",
      "what is",
      "what is the",
      "what is the status",
      "what is the status", // the is_final segment
      "what is the status of",
      "what is the status of my",
      "what is the status of my order",
      "what is the status of my order",
    ]);
    await h.clock.advance(100);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["what is the status of my order"]);
  });

  it('"wait" + "wait" counts 2 words: no barge-in at minWords 3', async () => {
    const h = await deepgramSession(def({ interruption: { minWords: 3, interruptPhrases: [] } }), script.rules);
    close = h.close;
    await h.clock.advance(2000);
    h.fake.speak(["hello"]);
    await until(() => h.seen.includes("final:hello"), "the first turn");
    await h.clock.advance(1200); // the reply is audible
    h.fake.speechStarted();
    await until(() => h.seen.includes("speechStarted"), "speech");
    await h.clock.advance(600); // past minDurationMs (500)
    h.fake.speak(["wait", "wait"], { speechFinal: false, utteranceEnd: false });
    await until(() => h.seen.filter((e) => e.startsWith("final:wait")).length === 2, "both segments");
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    h.fake.partial("stop");
    await until(() => h.seen.includes("partial:stop"), "a third word");
    expect(h.link.of("reply.cancelled")).toHaveLength(1);
  });
});
