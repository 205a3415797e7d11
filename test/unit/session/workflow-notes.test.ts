// The bounds of a session's workflow notes, on an in-memory engine and a virtual clock: runs that
// end together make one note (at most MAX_PENDING_NOTES listed, the rest counted), a run's output
// is clipped, a session waits on at most MAX_NOTIFY_RUNS runs, and nothing is told after close.
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import type { EventBody } from "../../../src/events.js";
import { silentLogger } from "../../../src/log.js";
import { Conversation } from "../../../src/session/conversation.js";
import { MAX_NOTE_OUTPUT_CHARS, MAX_NOTIFY_RUNS, MAX_PENDING_NOTES, NOTE_RETRY_MS, noteText, WorkflowNotes, type WorkflowNoteHooks } from "../../../src/session/workflow-notes.js";
import type { AgentNote } from "../../../src/turn/agent-note.js";
import type { RunEnd, RunInfo, WorkflowEngine } from "../../../src/workflows/index.js";

function memoryEngine(): WorkflowEngine & { end(runId: string, output: unknown): void } {
  const runs = new Map<string, RunInfo>();
  const listeners = new Set<(end: RunEnd) => void>();
  let n = 0;
  return {
    where: { dir: "memory" },
    useCalls: () => undefined,
    workflows: new Map([["job", { description: "a job", input: { type: "object" }, steps: [] }]]),
    start: (name) => {
      const runId = `wrun_${String(++n).padStart(26, "0")}`;
      runs.set(runId, { runId, workflow: name, status: "running", createdAt: 0 });
      return Promise.resolve({ runId });
    },
    get: (runId) => Promise.resolve(runs.get(runId)),
    find: () => Promise.resolve([...runs.values()]),
    events: () => Promise.resolve([]),
    onRunEvent: () => () => undefined,
    onRunEnd: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    deliver: () => Promise.resolve(false),
    cancel: () => Promise.resolve(false),
    close: () => Promise.resolve(),
    end(runId, output) {
      const run = runs.get(runId);
      if (run === undefined) return;
      runs.set(runId, { ...run, status: "completed", output, completedAt: 1 });
      for (const listener of listeners) listener({ runId, status: "completed", workflow: run.workflow });
    },
  };
}

function hooks(): WorkflowNoteHooks & { polite: boolean; notes: AgentNote[]; events: EventBody[] } {
  const clock = virtualClock();
  const conversation = new Conversation();
  return {
    clock,
    log: silentLogger,
    conversation,
    polite: false,
    notes: [],
    events: [],
    emit(event) {
      this.events.push(event);
    },
    politeMoment() {
      return this.polite;
    },
    takesNotes: () => true,
    note(note) {
      this.notes.push(note);
      return true;
    },
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("workflow notes", () => {
  it("coalesce runs that end before a polite moment into one note: MAX_PENDING_NOTES listed, the rest counted", async () => {
    const engine = memoryEngine();
    const port = hooks();
    const notes = new WorkflowNotes(engine, ["job"], { sessionId: "s1" }, port);
    const ids: string[] = [];
    for (let i = 0; i < MAX_PENDING_NOTES + 2; i++) ids.push((await notes.tools.start("job", {}, { notify: true })).runId);
    for (const id of ids) engine.end(id, { id });
    await settle();
    expect(notes.waiting).toEqual({ runs: 0, notes: MAX_PENDING_NOTES + 2 });
    await (port.clock as ReturnType<typeof virtualClock>).advance(NOTE_RETRY_MS * 3);
    expect(port.notes).toEqual([]);
    port.polite = true;
    await (port.clock as ReturnType<typeof virtualClock>).advance(NOTE_RETRY_MS);
    expect(port.notes).toHaveLength(1);
    const text = port.notes[0]?.text ?? "";
    expect(text.split("\n").filter((line) => line.startsWith("- workflow"))).toHaveLength(MAX_PENDING_NOTES);
    expect(text).toContain("- 2 more runs ended (not listed)");
    expect(port.events).toEqual([{ type: "workflow.updated", runs: ids.slice(0, MAX_PENDING_NOTES).map((runId) => ({ runId, workflow: "job", status: "completed" })), note: text }]);
    expect(port.conversation.restoredEvent().toolCalls).toMatchObject([{ toolName: "workflow_update", result: text }]);
    await (port.clock as ReturnType<typeof virtualClock>).advance(NOTE_RETRY_MS * 4);
    expect(port.notes).toHaveLength(1);
    notes.close();
  });

  it("clip a run's output and error", () => {
    const text = noteText([{ runId: "wrun_1", workflow: "job", status: "completed", output: { blob: "x".repeat(10_000) } }, { runId: "wrun_2", workflow: "job", status: "failed", error: "e".repeat(5_000) }], 0);
    const [, output = "", error = ""] = text.split("\n");
    expect(output.length).toBeLessThan(MAX_NOTE_OUTPUT_CHARS + 100);
    expect(output.endsWith("…")).toBe(true);
    expect(error.length).toBeLessThan(600);
  });

  it(`wait on at most ${MAX_NOTIFY_RUNS} runs: one more notify start is refused, one without notify is not`, async () => {
    const engine = memoryEngine();
    const notes = new WorkflowNotes(engine, ["job"], {}, hooks());
    for (let i = 0; i < MAX_NOTIFY_RUNS; i++) await notes.tools.start("job", {}, { notify: true });
    await expect(notes.tools.start("job", {}, { notify: true })).rejects.toThrow(`notify: this call already waits on ${MAX_NOTIFY_RUNS} runs`);
    await expect(notes.tools.start("job", {})).resolves.toMatchObject({ runId: expect.stringMatching(/^wrun_/) as string });
    notes.close();
  });

  it("tell nothing once closed", async () => {
    const engine = memoryEngine();
    const port = hooks();
    port.polite = true;
    const notes = new WorkflowNotes(engine, ["job"], {}, port);
    const { runId } = await notes.tools.start("job", {}, { notify: true });
    notes.close();
    engine.end(runId, {});
    await settle();
    expect(port.notes).toEqual([]);
    await expect(notes.tools.start("job", {})).rejects.toThrow("the session has ended");
  });
});
