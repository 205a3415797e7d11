// The Workflow SDK's internal contract (src/workflows/sdk-contract.ts: registerStepFunction,
// the generated bundle in __private_workflows, the WORKFLOW_* symbols) and world-local's file
// layout (retention.ts), pinned at @workflow/core 4.8.9 / @workflow/world-local 4.4.1. A tiny run
// with a step, a sleep and a hook must produce exactly this journal; an upgrade that changes
// any of it fails here first. Then: a reopened engine prunes ended runs past retention.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { workflow } from "../../../src/manifest/index.js";
import { createWorkflowEngine, type RunEnd, type WorkflowEngine } from "../../../src/workflows/index.js";
import type { Clock } from "../../../src/clock.js";
import { systemClock } from "../../../src/clock.js";

const dir = mkdtempSync(join(tmpdir(), "wf-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tiny = workflow({ description: "A step, a sleep, a hook", steps: { double: (n: number) => n * 2 } }).body(async (_input, ctx) => {
  const doubled = await ctx.steps.double(21);
  await ctx.sleep(1000);
  const event = await ctx.waitFor<{ plus: number }>("contract:1");
  return event.status === "received" ? doubled + event.payload.plus : -1;
});

function endOf(engine: WorkflowEngine, runId: string): Promise<RunEnd> {
  return new Promise((resolve) => engine.onRunEnd((end) => end.runId === runId && resolve(end)));
}

describe("the Workflow SDK contract", () => {
  let runId = "";

  it("runs a step, a durable sleep and a hook, and journals exactly these events", async () => {
    const engine = await createWorkflowEngine({ dir, workflows: { tiny } });
    try {
      runId = (await engine.start("tiny", {}, { key: "contract" })).runId;
      const end = endOf(engine, runId);
      while (!(await engine.deliver("contract:1", { plus: 1 }))) await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await end).status).toBe("completed");
      expect((await engine.get(runId))?.output).toBe(43);
      const events = (await engine.events(runId)) ?? [];
      expect(events.map((event) => event.type)).toEqual([
        "run_created",
        "run_started",
        "step_created",
        "step_started",
        "step_completed",
        "wait_created",
        "wait_completed",
        "hook_created",
        "hook_received",
        "run_completed",
      ]);
      expect(events.find((event) => event.type === "step_started")).toMatchObject({ step: "double", attempt: 1 });
      expect(events.find((event) => event.type === "hook_created")?.token).toBe("contract:1");
      expect(events.find((event) => event.type === "wait_created")?.wakeAt).toBeGreaterThan(0);
      // world-local 4.4.1's layout, which retention deletes by run id.
      const world = join(dir, "world");
      expect(existsSync(join(world, "runs", `${runId}.json`))).toBe(true);
      expect(readdirSync(join(world, "events")).some((name) => name.startsWith(`${runId}-`))).toBe(true);
      expect(readdirSync(join(world, "steps")).some((name) => name.startsWith(`${runId}-`))).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it("keeps an ended run within retention, and prunes it (files and key) once it is older", async () => {
    const reopened = await createWorkflowEngine({ dir, workflows: { tiny }, retentionDays: 7 });
    try {
      expect((await reopened.find("contract")).map((run) => run.runId)).toEqual([runId]);
    } finally {
      await reopened.close();
    }
    const later: Clock = { ...systemClock, now: () => Date.now() + 8 * 86_400_000 };
    const pruning = await createWorkflowEngine({ dir, workflows: { tiny }, retentionDays: 7, clock: later });
    try {
      expect(await pruning.get(runId)).toBeUndefined();
      expect(await pruning.find("contract")).toEqual([]);
      const world = join(dir, "world");
      for (const sub of ["runs", "events", "steps", "waits"]) {
        const names = existsSync(join(world, sub)) ? readdirSync(join(world, sub)) : [];
        expect(names.filter((name) => name.startsWith(runId))).toEqual([]);
      }
    } finally {
      await pruning.close();
    }
  });
});
