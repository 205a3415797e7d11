// Workflows from a live session, on the real engine (the Workflow SDK's local world on a temporary
// directory; one engine for the file, as the SDK keeps one world per process) and the project's
// session harnesses: a tool starts a run with a key, a later session finds it, and a run started
// with `notify` is told to the agent at the next polite moment in text, pipeline and s2s — held
// while the caller speaks or a reply is in flight, said after. A run that ends after its session
// tells nobody. No wall-clock thresholds: the engine runs in real time, the sessions' notes on
// their clocks; what is asserted is order and content.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { agent, tool, withTools, workflow } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";
import { textSession } from "../../../src/testing/text-session.js";
import { voiceSession } from "../../../src/testing/voice-session.js";
import { NOTE_RETRY_MS } from "../../../src/session/workflow-notes.js";
import { createWorkflowEngine, type EndStatus, type WorkflowEngine } from "../../../src/workflows/index.js";

const dir = mkdtempSync(join(tmpdir(), "wf-session-"));
let engine: WorkflowEngine;

const workflows = {
  callback: workflow({
    description: "Wait for the order to ship, then say how it went",
    input: Type.Object({ orderId: Type.String() }),
  }).body(async (input, ctx) => {
    const shipped = await ctx.waitFor<{ outcome: string }>(`go:${input.orderId}`);
    return { outcome: shipped.status === "received" ? shipped.payload.outcome : "timeout", context: ctx.context };
  }),
};

/** A tool call the test lets finish: the reply that made it stays in flight meanwhile. */
let release: () => void = () => {};

const tools = {
  start_callback: tool({
    description: "Start a callback for an order",
    parameters: Type.Object({ orderId: Type.String(), customer: Type.Optional(Type.String()), notify: Type.Optional(Type.Boolean()) }),
    execute: async ({ orderId, customer, notify }, ctx) => {
      if (ctx.workflows === undefined) return "no workflows";
      const { runId } = await ctx.workflows.start("callback", { orderId }, { key: `cust-${customer ?? orderId}`, notify: notify ?? true });
      return runId;
    },
  }),
  start_bad: tool({
    description: "Start a workflow wrongly",
    parameters: Type.Object({ what: Type.String() }),
    execute: async ({ what }, ctx) => (await ctx.workflows?.start(what === "name" ? "nope" : "callback", what === "name" ? {} : { orderId: 42 }))?.runId ?? "",
  }),
  find_runs: tool({
    description: "Find a customer's runs",
    parameters: Type.Object({ orderId: Type.String() }),
    execute: async ({ orderId }, ctx) => JSON.stringify((await ctx.workflows?.find(`cust-${orderId}`)) ?? []),
  }),
  hold: tool({
    description: "Something slow",
    execute: () =>
      new Promise<string>((resolve) => {
        release = () => resolve("held");
      }),
  }),
};

const script: Script = {
  rules: [
    { when: "call me back about (?<id>\\w+)", call: { tool: "start_callback", args: { orderId: "{id}" } }, then: "I'll let you know. {result}" },
    { when: "quietly about (?<id>\\w+) for (?<customer>\\w+)", call: { tool: "start_callback", args: { orderId: "{id}", customer: "{customer}", notify: false } }, then: "Started {result}" },
    { when: "news about (?<id>\\w+)", call: { tool: "find_runs", args: { orderId: "{id}" } }, then: "{result}" },
    { when: "bad (?<what>\\w+)", call: { tool: "start_bad", args: { what: "{what}" } }, then: "{result}" },
    { when: "hold on", call: { tool: "hold", args: {} }, then: "Thanks for waiting." },
    // The note arrives as a workflow_update tool result: the scripted brain says it.
    { call: { tool: "workflow_update", args: {} }, then: "Update: {result}" },
  ],
  fallback: "Okay.",
};

const shop = (extra: Record<string, unknown> = {}) => withTools(agent({ name: "shop", greeting: "Hi.", workflows, ...extra }), tools);

/** Resolves when `runId` ends (the engine's own notice). */
function runEnd(runId: string): Promise<EndStatus> {
  return new Promise((resolve) => {
    const stop = engine.onRunEnd((end) => {
      if (end.runId !== runId) return;
      stop();
      resolve(end.status);
    });
  });
}

/** Move virtual time in small steps, letting real work (the engine's) run between them, until `done`. */
async function until(clock: { advance(ms: number): Promise<void> }, done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) {
    await clock.advance(50);
    await sleep(5);
  }
}

/** Deliver once the run waits for `token` (deliver reaches only a waiting run). */
async function ship(token: string, outcome: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await engine.deliver(token, { outcome })) return;
    await sleep(10);
  }
  throw new Error(`no run waited for ${token}`);
}

/** Ship `orderId`'s run and wait until it has ended, and the session has read it (an engine read in real time). */
async function shipAndEnd(runId: string, orderId: string, outcome: string): Promise<void> {
  const ended = runEnd(runId);
  await ship(`go:${orderId}`, outcome);
  expect(await ended).toBe("completed");
  await sleep(NOTE_RETRY_MS * 2);
}

beforeAll(async () => {
  engine = await createWorkflowEngine({ dir, workflows });
});

afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("ctx.workflows from a live session", () => {
  it("a tool starts a run with a key and the session's data as its context; a later session finds it by key, newest first", async () => {
    const first = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await first.say("call me back quietly about T1 for ann");
    const runId = first.link.of("tool.completed")[0]?.result ?? "";
    expect(runId).toMatch(/^wrun_/);
    await first.say("call me back quietly about T2 for ann");
    const second = first.link.of("tool.completed")[1]?.result ?? "";
    await first.session.end();
    await shipAndEnd(runId, "T1", "shipped");

    const later = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await later.say("any news about ann");
    const found = JSON.parse(later.link.of("tool.completed")[0]?.result ?? "[]") as { runId: string; status: string; key: string; output?: { outcome: string; context: Record<string, unknown> } }[];
    expect(found.map((run) => run.runId)).toEqual([second, runId]);
    expect(found[1]).toMatchObject({ status: "completed", key: "cust-ann", output: { outcome: "shipped", context: { sessionId: first.session.id, agent: "shop", mode: "text", transport: "websocket" } } });
    expect(found[0]?.status).toBe("waiting");
    await later.session.end();
    await engine.cancel(second);
  });

  it("refuses an unknown workflow and bad input with a message the model reads", async () => {
    const { say, link, session } = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await say("bad name");
    await say("bad input");
    const [name, input] = link.of("tool.completed");
    expect(name).toMatchObject({ isError: true, result: expect.stringMatching(/there is no workflow "nope" for this agent; its workflows are callback/) as string });
    expect(input).toMatchObject({ isError: true, result: expect.stringMatching(/workflow "callback" was not started: input: /) as string });
    await session.end();
  });

  it("gives a tool no ctx.workflows when the session has no engine", async () => {
    const { say, link, session } = textSession(shop({ mode: "text" }), { script });
    await say("call me back about N1");
    expect(link.of("tool.completed")[0]?.result).toBe("no workflows");
    await session.end();
  });
});

describe("notify: the agent says a run's end at the next polite moment", () => {
  it("text: a run that ends while a reply is in flight is said after it, once, in one reply recorded with its note", async () => {
    const { say, link, session, store } = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await say("call me back about X1");
    const runId = link.of("tool.completed")[0]?.result ?? "";
    // A reply in flight (its tool holds it): the run ends meanwhile and its note waits.
    const before = link.events.length;
    link.send({ type: "user_text", text: "hold on" });
    await link.next("tool.called", before);
    await shipAndEnd(runId, "X1", "shipped to Lyon");
    expect(link.of("workflow.updated")).toEqual([]);
    release();
    await link.next("workflow.updated", before);
    await link.next("reply.completed", link.events.findIndex((e) => e.type === "workflow.updated"));
    const after = link.types().slice(before);
    const held = after.indexOf("reply.completed");
    expect(after.indexOf("workflow.updated")).toBeGreaterThan(held);
    const update = link.of("workflow.updated")[0];
    expect(update?.runs).toEqual([{ runId, workflow: "callback", status: "completed" }]);
    expect(update?.note).toContain(`workflow "callback" (run ${runId}) completed; its output: {"outcome":"shipped to Lyon"`);
    expect(update?.note).toMatch(/^Workflow update from the system, not from the caller\./);
    const said = link.of("agent-transcript.committed").at(-1)?.text ?? "";
    expect(said).toMatch(/^Update: Workflow update/);
    // Recorded like any turn: the reply's line, the note in the tool-call record.
    expect(link.of("workflow.updated")).toHaveLength(1);
    await session.end();
    const record = await store.load(session.id);
    expect(record?.toolCalls.at(-1)).toMatchObject({ toolName: "workflow_update", result: update?.note });
    expect(record?.transcript.at(-1)).toEqual({ role: "assistant", text: said });
    expect(record?.history.slice(-3).map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
  });

  it("a run that ends after the session ended tells nobody, breaks nothing, and is found by its key", async () => {
    const { say, link, session } = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await say("call me back about E1");
    const runId = link.of("tool.completed")[0]?.result ?? "";
    await session.end();
    const count = link.events.length;
    await shipAndEnd(runId, "E1", "late");
    expect(link.events.length).toBe(count);
    const later = textSession(shop({ mode: "text" }), { script, workflows: engine });
    await later.say("news about E1");
    expect(later.link.of("tool.completed")[0]?.result).toContain('"outcome":"late"');
    expect(later.link.of("workflow.updated")).toEqual([]);
    await later.session.end();
  });

  it("pipeline: held while the caller speaks, said after the caller's turn has been answered and heard", async () => {
    const clock = virtualClock();
    const { link, stt, started, session } = voiceSession(shop(), { clock, script, workflows: engine });
    await started;
    await clock.advance(2_000);
    stt.current.final("call me back about P1", true);
    await until(clock, () => link.of("reply.completed").length >= 2);
    const runId = link.of("tool.completed")[0]?.result ?? "";
    expect(runId).toMatch(/^wrun_/);
    // The caller is mid-utterance when the run ends.
    const before = link.events.length;
    stt.current.partial("well I was");
    await clock.advance(100);
    await shipAndEnd(runId, "P1", "delivered");
    await clock.advance(NOTE_RETRY_MS * 4);
    expect(link.of("workflow.updated")).toEqual([]);
    stt.current.final("well I was wondering", true);
    await until(clock, () => link.of("workflow.updated").length > 0);
    await until(clock, () => link.of("reply.completed").length >= 4);
    const after = link.types().slice(before);
    const answered = after.indexOf("reply.completed");
    expect(after.indexOf("user-transcript.committed")).toBeLessThan(answered);
    expect(after.indexOf("workflow.updated")).toBeGreaterThan(answered);
    expect(after.lastIndexOf("reply.completed")).toBeGreaterThan(after.indexOf("workflow.updated"));
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hi.", expect.stringMatching(/^I'll let you know\./) as string, "Okay.", expect.stringMatching(/^Update: Workflow update.*"outcome":"delivered"/s) as string]);
    await session.end();
  });

  it("s2s: held while the caller speaks, then a note to the service and its response, recorded in the model's voice", async () => {
    const { fake, link, clock, session } = await s2sSession(shop({ s2s: { kind: "openai-realtime", options: {} } }), { workflows: engine });
    const greeting = fake.start(true);
    fake.speak(greeting, "Hi.", 300);
    fake.done(greeting, "completed", true);
    await clock.advance(1_000);
    const ask = fake.start();
    fake.events.toolCall({ callId: "call_1", name: "start_callback", args: { orderId: "S1" }, responseId: ask });
    fake.done(ask);
    for (let i = 0; i < 200 && !fake.calls.some((c) => c.kind === "results"); i++) await sleep(5);
    const results = fake.calls.find((c) => c.kind === "results");
    const runId = results?.kind === "results" ? (results.results[0]?.output ?? "") : "";
    expect(runId).toMatch(/^wrun_/);
    const told = fake.start();
    fake.speak(told, "I'll let you know.", 300);
    fake.done(told);
    await clock.advance(1_000);
    // The caller speaks as the run ends: nothing goes to the service until they stop and are answered.
    fake.events.speechStarted();
    await shipAndEnd(runId, "S1", "ready");
    await clock.advance(NOTE_RETRY_MS * 4);
    expect(fake.calls.some((c) => c.kind === "note")).toBe(false);
    fake.events.speechStopped();
    fake.events.userTranscript("is it done", { final: true });
    const answer = fake.start();
    fake.speak(answer, "Let me see.", 300);
    await clock.advance(NOTE_RETRY_MS * 2);
    expect(fake.calls.some((c) => c.kind === "note")).toBe(false);
    fake.done(answer);
    for (let i = 0; i < 100 && !fake.calls.some((c) => c.kind === "note"); i++) await clock.advance(NOTE_RETRY_MS);
    const note = fake.calls.find((c) => c.kind === "note");
    expect(note?.kind === "note" ? note.text : "").toContain('"outcome":"ready"');
    const spoken = fake.start();
    fake.speak(spoken, "Good news: your order is ready.", 400);
    fake.done(spoken);
    await clock.advance(1_000);
    const types = link.types();
    expect(types.indexOf("workflow.updated")).toBeGreaterThan(types.lastIndexOf("user-transcript.committed"));
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Hi.", "I'll let you know.", "Let me see.", "Good news: your order is ready."]);
    expect(fake.calls.filter((c) => c.kind === "note")).toHaveLength(1);
    await session.end();
  });

  it("s2s: a service that cannot take a note refuses notify, clearly, and still starts runs without it", async () => {
    const provider = new FakeS2s();
    provider.takesNotes = false;
    const { link, clock, session } = await s2sSession(shop({ s2s: { kind: "openai-realtime", options: {} } }), { workflows: engine, provider });
    const greeting = provider.start(true);
    provider.done(greeting, "completed", true);
    await clock.advance(1_000);
    const ask = provider.start();
    provider.events.toolCall({ callId: "call_1", name: "start_callback", args: { orderId: "R1" }, responseId: ask });
    provider.events.toolCall({ callId: "call_2", name: "start_callback", args: { orderId: "R2", notify: false }, responseId: ask });
    provider.done(ask);
    for (let i = 0; i < 200 && link.of("tool.completed").length < 2; i++) await sleep(5);
    const [notify, plain] = link.of("tool.completed");
    expect(notify).toMatchObject({ isError: true, result: expect.stringContaining("notify: this speech-to-speech service cannot be told of a run's end during the call") as string });
    expect(plain?.result).toMatch(/^wrun_/);
    await session.end();
    await engine.cancel(plain?.result ?? "");
  });
});
