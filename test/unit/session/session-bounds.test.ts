import { Type } from "@sinclair/typebox";
import type { LanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { DEFAULTS, agent, clientTool, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { type Script } from "../../../src/pipeline/providers/llm/script.js";
import { MAX_DTMF_DIGITS, MAX_QUEUED_TURNS, MAX_TOOL_RESULT_CHARS } from "../../../src/session/conversation.js";
import { MAX_STORED_RECORDS, MemorySessionStore, type SessionRecord } from "../../../src/session/store.js";
import type { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";
import { textSession } from "../../../src/testing/text-session.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

/** The scripted model, keeping every prompt it is sent. */
function recording(script: Script, sleep?: (ms: number, signal?: AbortSignal) => Promise<void>): { model: LanguageModel; prompts: unknown[] } {
  const inner = scriptedModel(script, sleep === undefined ? {} : { sleep }) as unknown as { doStream: (options: { prompt: unknown }) => Promise<unknown> };
  const prompts: unknown[] = [];
  const model = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "doStream") {
        return (options: { prompt: unknown }) => {
          prompts.push(options.prompt);
          return target.doStream(options);
        };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { model: model as unknown as LanguageModel, prompts };
}

/** Every tool result's text in a model prompt. */
function toolResultTexts(prompt: unknown): string[] {
  const out: string[] = [];
  for (const message of prompt as { role: string; content: unknown }[]) {
    if (message.role !== "tool" || !Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; output?: { value?: unknown } }[]) {
      if (part.type === "tool-result" && typeof part.output?.value === "string") out.push(part.output.value);
    }
  }
  return out;
}

const overflow = /^too many turns waiting \(8\): this one was dropped; wait for the reply$/;

describe("queued typed turns", () => {
  it("a text session answers at most 1 + MAX_QUEUED_TURNS of 50 typed turns sent while its model is slow, and reports the rest", async () => {
    expect(MAX_QUEUED_TURNS).toBe(8);
    const clock = virtualClock();
    const def = agent({ name: "slow", mode: "text", greeting: "Hi." }) as ResolvedAgentDef;
    const { link, started } = textSession(def, { clock, script: { rules: [{ when: ".", say: "Okay." }], delayMs: 1_000 } });
    await started;
    for (let i = 0; i < 50; i++) link.send({ type: "user_text", text: `turn ${i}` });
    const errors = link.of("error.reported");
    expect(errors).toHaveLength(50 - 1 - MAX_QUEUED_TURNS);
    expect(errors.every((e) => e.code === "protocol" && !e.fatal && overflow.test(e.message))).toBe(true);
    await clock.advance(60_000);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(Array.from({ length: 1 + MAX_QUEUED_TURNS }, (_, i) => `turn ${i}`));
    expect(link.of("metrics.turn")).toHaveLength(1 + MAX_QUEUED_TURNS);
    // Once the queue has drained, typed turns are taken again.
    link.send({ type: "user_text", text: "again" });
    await clock.advance(2_000);
    expect(link.of("user-transcript.committed").at(-1)?.text).toBe("again");
    expect(link.of("error.reported")).toHaveLength(41);
  });

  it("a pipeline session bounds typed turns queued behind the reply the same way", async () => {
    const def = agent({ name: "voice", greeting: "Hi." }) as ResolvedAgentDef;
    const { link, clock, started } = voiceSession(def, { script: { rules: [{ when: ".", say: "Okay." }], delayMs: 1_000 } });
    await started;
    await clock.advance(2_000);
    for (let i = 0; i < 50; i++) link.send({ type: "user_text", text: `turn ${i}` });
    const errors = link.of("error.reported");
    expect(errors).toHaveLength(50 - 1 - MAX_QUEUED_TURNS);
    expect(errors.every((e) => e.code === "protocol" && !e.fatal && overflow.test(e.message))).toBe(true);
    await clock.advance(120_000);
    expect(link.of("user-transcript.committed")).toHaveLength(1 + MAX_QUEUED_TURNS);
    expect(link.of("metrics.turn")).toHaveLength(1 + MAX_QUEUED_TURNS);
  });

  it("an s2s session hands typed turns to the service at once: nothing queues", async () => {
    const def = agent({ name: "s2s", greeting: "", s2s: { kind: "openai-realtime", options: {} } }) as ResolvedAgentDef;
    const { link, fake } = await s2sSession(def);
    for (let i = 0; i < 20; i++) link.send({ type: "user_text", text: `turn ${i}` });
    expect(fake.calls.filter((c) => c.kind === "text")).toHaveLength(20);
    expect(link.of("error.reported")).toEqual([]);
  });
});

describe("tool results in the model history", () => {
  it("a host tool's long result reaches the model cut to MAX_TOOL_RESULT_CHARS, with a marker", async () => {
    expect(MAX_TOOL_RESULT_CHARS).toBe(32_000);
    const dump = tool({ description: "Dump everything", parameters: Type.Object({}), execute: () => "d".repeat(50_000) });
    const def = withTools(agent({ name: "dump", mode: "text", greeting: "" }), { dump });
    const { model, prompts } = recording({ rules: [{ when: "dump", call: { tool: "dump", args: {} }, then: "Done." }] });
    const { say, link, store, session } = textSession(def, { model });
    await say("dump it");
    const results = prompts.flatMap(toolResultTexts);
    expect(results).toHaveLength(1);
    const seen = results[0] ?? "";
    expect(seen.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
    const marker = /…\[truncated (\d+) characters\]$/.exec(seen);
    expect(marker).not.toBeNull();
    expect(seen.length - (marker?.[0].length ?? 0) + Number(marker?.[1])).toBe(50_000);
    expect(seen.startsWith("ddd")).toBe(true);
    // The event stays cut to 4 000 as before; the record keeps a clipped copy.
    expect(link.of("tool.completed")[0]?.result.length).toBe(4_000);
    await session.end();
    const record = await store.load(session.id);
    expect((record?.toolCalls[0]?.result ?? "").length).toBeLessThanOrEqual(2_000);
  });

  it("a client tool_result of 1 000 000 characters enters the history cut, marker included", async () => {
    const pick = clientTool({ description: "Pick", parameters: Type.Object({}) });
    const def = withTools(agent({ name: "paint", mode: "text", greeting: "" }), { pick });
    const { model, prompts } = recording({ rules: [{ when: "pick", call: { tool: "pick", args: {} }, then: "Done." }] });
    const { link, started } = textSession(def, { model });
    await started;
    link.send({ type: "user_text", text: "pick one" });
    const called = await link.next("tool.called", 0);
    link.send({ type: "tool_result", toolCallId: called.toolCallId, result: "p".repeat(1_000_000) });
    await link.next("reply.completed", 0);
    const seen = prompts.flatMap(toolResultTexts)[0] ?? "";
    expect(seen.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
    expect(seen).toMatch(/…\[truncated \d+ characters\]$/);
  });

  it("a short result is untouched", async () => {
    const echo = tool({ description: "Echo", parameters: Type.Object({}), execute: () => "e".repeat(MAX_TOOL_RESULT_CHARS) });
    const def = withTools(agent({ name: "echo", mode: "text", greeting: "" }), { echo });
    const { model, prompts } = recording({ rules: [{ when: "echo", call: { tool: "echo", args: {} }, then: "Done." }] });
    const { say } = textSession(def, { model });
    await say("echo");
    expect(prompts.flatMap(toolResultTexts)).toEqual(["e".repeat(MAX_TOOL_RESULT_CHARS)]);
  });
});

describe("keypad digits", () => {
  const pins: string[] = [];
  const enterPin = tool({
    description: "The caller keyed in digits",
    parameters: Type.Object({ digits: Type.String() }),
    execute: ({ digits }) => {
      pins.push(digits);
      return "ok";
    },
  });

  async function phone(extra: Record<string, unknown> = {}) {
    const def = withTools(agent({ name: "phone", greeting: "", s2s: { kind: "openai-realtime", options: {} }, telephony: true, ...extra }), { enter_pin: enterPin }) as ResolvedAgentDef;
    return s2sSession(def, { transport: "twilio" });
  }
  const texts = (fake: FakeS2s): string[] => fake.calls.flatMap((c) => (c.kind === "text" ? [c.text] : []));

  it("an entry is flushed at MAX_DTMF_DIGITS digits, so it never grows without bound", async () => {
    expect(MAX_DTMF_DIGITS).toBe(64);
    const { link, fake, clock } = await phone();
    for (let i = 0; i < 150; i++) link.sendDtmf(String(i % 10));
    const all = Array.from({ length: 150 }, (_, i) => String(i % 10)).join("");
    expect(texts(fake)).toEqual([`The caller pressed ${all.slice(0, 64)}`, `The caller pressed ${all.slice(64, 128)}`]);
    await clock.advance(DEFAULTS.dtmfInterDigitMs);
    expect(texts(fake)).toEqual([`The caller pressed ${all.slice(0, 64)}`, `The caller pressed ${all.slice(64, 128)}`, `The caller pressed ${all.slice(128)}`]);
  });

  it("a dtmf.tool gets at most MAX_DTMF_DIGITS digits per call", async () => {
    pins.length = 0;
    const { link, clock } = await phone({ dtmf: { tool: "enter_pin" } });
    for (let i = 0; i < 100; i++) link.sendDtmf("7");
    await clock.advance(DEFAULTS.dtmfInterDigitMs);
    expect(pins).toEqual(["7".repeat(64), "7".repeat(36)]);
  });
});

describe("MemorySessionStore", () => {
  const rec = (sessionId: string): SessionRecord => ({ sessionId, agent: "a", transcript: [], toolCalls: [], history: [], updatedAt: 0 });

  it("holds at most maxRecords, evicting the least recently saved", async () => {
    const clock = virtualClock();
    const store = new MemorySessionStore(clock, { maxRecords: 3 });
    for (const id of ["a", "b", "c"]) await store.save(rec(id), 120_000);
    await store.save(rec("a"), 120_000);
    await store.save(rec("d"), 120_000);
    expect(store.size).toBe(3);
    expect(await store.load("b")).toBeUndefined();
    for (const id of ["a", "c", "d"]) expect(await store.load(id)).toBeDefined();
    // The evicted record's expiry timer went with it.
    expect(clock.pending()).toBe(3);
  });

  it("defaults to MAX_STORED_RECORDS", async () => {
    expect(MAX_STORED_RECORDS).toBe(10_000);
    const clock = virtualClock();
    const store = new MemorySessionStore(clock);
    for (let i = 0; i <= MAX_STORED_RECORDS; i++) await store.save(rec(`s${i}`), 120_000);
    expect(store.size).toBe(MAX_STORED_RECORDS);
    expect(await store.load("s0")).toBeUndefined();
    expect(await store.load(`s${MAX_STORED_RECORDS}`)).toBeDefined();
  });
});
