import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { MissingKeyError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import { agent, toAgentConfig, tool, withTools, type AgentOptions, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { noMetrics } from "../../../src/session/metrics-port.js";
import { Session } from "../../../src/session/session.js";
import { MemorySessionStore } from "../../../src/session/store.js";
import { MemoryLink } from "../../../src/testing/memory-link.js";
import { textSession } from "../../../src/testing/text-session.js";

const note = tool({ description: "Write a note", parameters: Type.Object({ text: Type.String() }), effect: "write", execute: ({ text }) => `Noted: ${text}` });

const slowScript = {
  rules: [
    { when: "note (?<text>\\w+)", call: { tool: "note", args: { text: "{text}" } }, then: "I wrote it down and will now read you a very long confirmation of it", delayMs: 100 },
    { when: "hello", say: "Hello there friend" },
  ],
};

function def(extra: Partial<AgentOptions> = {}): ResolvedAgentDef {
  return withTools(agent({ name: "notes", mode: "text", greeting: "Hi.", ...extra }), { note });
}

describe("cancel and reset", () => {
  it("cancel mid-reply: reply.cancelled, the completed tool step kept, the shown prefix recorded as interrupted", async () => {
    const clock = virtualClock();
    const store = new MemorySessionStore(clock);
    const { link, started, session } = textSession(def(), { script: slowScript, clock, store });
    await started;
    link.send({ type: "user_text", text: "note milk" });
    await clock.advance(450);
    expect(link.of("tool.completed")).toHaveLength(1);
    link.send({ type: "cancel" });
    await clock.advance(2000);
    expect(link.of("reply.cancelled")).toHaveLength(1);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hi."]);
    const history = (await store.load(session.id))?.history ?? [];
    expect(history.map((m) => m.role)).toEqual(["assistant", "user", "assistant", "tool", "assistant"]);
    expect(history.at(-1)?.content).toMatch(/^I wrote it.* \[interrupted\]$/);
    expect(history.at(-1)?.content).not.toMatch(/confirmation/);
  });

  it("reset: session.reset, history discarded, greeting again; stale work cannot write into the new conversation", async () => {
    const clock = virtualClock();
    const store = new MemorySessionStore(clock);
    const { link, say, session } = textSession(def(), { script: slowScript, clock, store });
    const turn = say("hello");
    await clock.advance(1000);
    await turn;
    link.send({ type: "user_text", text: "note eggs" });
    await clock.advance(150);
    link.send({ type: "reset" });
    await clock.advance(3000);
    const types = link.types();
    const resetAt = types.indexOf("session.reset");
    expect(resetAt).toBeGreaterThan(0);
    expect(types[resetAt - 1]).toBe("reply.cancelled");
    expect(types.slice(resetAt)).toContain("agent-transcript.committed");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Hi.");
    const record = await store.load(session.id);
    expect(record?.transcript).toEqual([{ role: "assistant", text: "Hi." }]);
    expect(record?.history).toEqual([{ role: "assistant", content: "Hi." }]);
  });
});

describe("ordering and stale work", () => {
  it("answers input sent during start after the greeting", async () => {
    const clock = virtualClock();
    const { link, started } = textSession(def(), { script: slowScript, clock });
    link.send({ type: "user_text", text: "hello" });
    await started;
    await clock.advance(1000);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hi.", "Hello there friend"]);
  });

  it("a tool that ignores its signal settles as cancelled at once, and a reset strands its record", async () => {
    const stubborn = tool({ description: "Slow", execute: () => new Promise<string>((resolve) => setTimeout(() => resolve("late"), 300)) });
    const clock = virtualClock();
    const store = new MemorySessionStore(clock);
    const agentDef = withTools(agent({ name: "s", mode: "text", greeting: "Hi." }), { stubborn }) as ResolvedAgentDef;
    const { link, started, session } = textSession(agentDef, { script: { rules: [{ when: "go", call: { tool: "stubborn", args: {} }, then: "{result}" }] }, clock, store });
    await started;
    link.send({ type: "user_text", text: "go" });
    await clock.advance(10);
    link.send({ type: "reset" });
    await clock.advance(10);
    expect(link.of("tool.completed")).toMatchObject([{ isError: true, result: "The call was cancelled." }]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await clock.advance(10);
    expect((await store.load(session.id))?.toolCalls).toEqual([]);
  });

  it("a reset does not lift usage limits", async () => {
    const clock = virtualClock();
    const { link, say } = textSession(def({ usageLimits: { totalTokens: 5 } }), { script: slowScript, clock });
    const first = say("hello");
    await clock.advance(100);
    await first;
    link.send({ type: "reset" });
    link.send({ type: "user_text", text: "hello" });
    await clock.advance(100);
    expect(link.of("error.reported").at(-1)).toMatchObject({ fatal: true, message: expect.stringContaining("usage limit reached") as string });
  });
});

describe("idle timeout", () => {
  it("fires after idleTimeoutMs of no conversation: session.timed-out, close 1000; audio does not re-arm it", async () => {
    const clock = virtualClock();
    const { link, started, say } = textSession(def({ idleTimeoutMs: 10_000 }), { script: slowScript, clock });
    await started;
    await clock.advance(6000);
    const turn = say("hello");
    await clock.advance(1000);
    await turn;
    // The reply ended at t=6000: the deadline is t=16000.
    await clock.advance(8500);
    expect(link.of("session.timed-out")).toHaveLength(0);
    link.sendAudio(new Uint8Array(320));
    await clock.advance(600);
    expect(link.of("session.timed-out")).toHaveLength(1);
    expect(link.closed).toEqual({ code: 1000, reason: "idle timeout" });
  });

  it("idleTimeoutMs 0 disables it", async () => {
    const clock = virtualClock();
    const { link, started } = textSession(def({ idleTimeoutMs: 0 }), { clock });
    await started;
    await clock.advance(3_600_000);
    expect(link.closed).toBeUndefined();
  });
});

describe("usage limits", () => {
  it("reports usage.updated and ends the session at the next turn once the limit is crossed", async () => {
    const clock = virtualClock();
    const { link, say } = textSession(def({ usageLimits: { totalTokens: 5 } }), { script: slowScript, clock });
    const first = say("hello");
    await clock.advance(1000);
    await first;
    expect(link.of("usage.updated").at(-1)?.totalTokens).toBeGreaterThan(5);
    link.send({ type: "user_text", text: "hello" });
    await clock.advance(100);
    expect(link.of("error.reported").at(-1)).toMatchObject({ code: "llm", fatal: true, message: expect.stringContaining("usage limit reached") as string });
    expect(link.closed?.code).toBe(1008);
  });
});

describe("start", () => {
  function bare(resolveModel: () => never | ReturnType<typeof scriptedModel>, extra: Partial<ConstructorParameters<typeof Session>[0]> = {}) {
    const clock = virtualClock();
    const link = new MemoryLink(clock);
    const agentDef = def();
    const session = new Session({
      agent: { def: agentDef, config: toAgentConfig(agentDef) },
      link,
      clock,
      log: silentLogger,
      store: new MemorySessionStore(clock),
      resolveModel,
      ...extra,
    });
    return { clock, link, session };
  }

  it("sends session.configured at once, before providers open", async () => {
    const { link, session } = bare(() => scriptedModel({ rules: [] }), { connectMcp: () => new Promise(() => {}) });
    void session.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(link.events).toHaveLength(1);
    expect(link.events[0]).toMatchObject({ type: "session.configured", mode: "text", sessionId: session.id, audioFormat: "pcm16" });
  });

  it("counts a session's end in the metrics only once its start was counted", async () => {
    const counted: string[] = [];
    const metrics = { ...noMetrics, sessionStarted: () => void counted.push("started"), sessionEnded: () => void counted.push("ended") };
    // The link's format never settles (the client's start frame was refused): the session ends uncounted.
    const { link, session } = bare(() => scriptedModel({ rules: [] }), { metrics });
    Object.defineProperty(link, "ready", { value: Promise.reject(new Error("no audio format")) });
    await session.start();
    await session.end();
    expect(counted).toEqual([]);
    const opened = bare(() => scriptedModel({ rules: [] }), { metrics });
    await opened.session.start();
    await opened.session.end();
    expect(counted).toEqual(["started", "ended"]);
  });

  it("a missing key is a fatal error naming the variable, then close 1011", async () => {
    const { link, session } = bare(() => {
      throw new MissingKeyError("openai", "OPENAI_API_KEY");
    });
    await session.start();
    expect(link.of("error.reported")).toMatchObject([{ code: "internal", fatal: true, message: expect.stringContaining("set OPENAI_API_KEY") as string }]);
    expect(link.closed?.code).toBe(1011);
  });

  it("providers that do not open within the start timeout: fatal, 1011", async () => {
    const { link, session, clock } = bare(() => scriptedModel({ rules: [] }), { connectMcp: () => new Promise(() => {}) });
    const starting = session.start();
    await clock.advance(10_000);
    await starting;
    expect(link.of("error.reported")).toMatchObject([{ code: "internal", fatal: true, message: "providers did not open within 10000 ms" }]);
    expect(link.closed?.code).toBe(1011);
  });

  it("audio sent to a text agent earns one non-fatal audio error", async () => {
    const { link, session } = bare(() => scriptedModel({ rules: [] }));
    await session.start();
    link.sendAudio(new Uint8Array(640));
    link.sendAudio(new Uint8Array(640));
    expect(link.of("error.reported")).toMatchObject([{ code: "audio", fatal: false }]);
  });
});

describe("end_call", () => {
  it("ends the session after the reply that called it", async () => {
    const clock = virtualClock();
    const { link, say } = textSession(def({ builtinTools: ["end_call"] }), {
      script: { rules: [{ when: "bye", call: { tool: "end_call", args: {} }, then: "Goodbye!" }] },
      clock,
    });
    const turn = say("bye");
    await clock.advance(100);
    await turn;
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Goodbye!");
    expect(link.closed).toEqual({ code: 1000, reason: "call ended by the agent" });
  });
});
