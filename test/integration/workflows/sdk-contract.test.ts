// The Workflow SDK's internal contract (src/workflows/sdk-contract.ts: registerStepFunction,
// the generated bundle in __private_workflows, the WORKFLOW_* symbols) and where each world keeps
// a run (world-local's files, which retention.ts deletes by run id; world-postgres's rows, which
// postgres-store.ts deletes), pinned at @workflow/core 4.8.9, @workflow/world-local 4.4.1 and
// @workflow/world-postgres 4.3.7. A tiny run with a step, a sleep and a hook must produce exactly
// this journal on both; an upgrade that changes any of it fails here first. Then: a reopened
// engine prunes ended runs past retention.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../../../src/manifest/index.js";
import { createWorkflowEngine, type RunEnd, type RunsIn, type WorkflowEngine } from "../../../src/workflows/index.js";
import type { Clock } from "../../../src/clock.js";
import { systemClock } from "../../../src/clock.js";
import { POSTGRES_BIN, startPostgres, type PostgresServer } from "../../../fakes/postgres-server.js";

const dir = mkdtempSync(join(tmpdir(), "wf-contract-"));
/** Why the PostgreSQL half cannot run here, or undefined. */
const SKIPPED = POSTGRES_BIN === undefined ? "PostgreSQL is not installed (sudo apt-get install postgresql)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
let postgres: PostgresServer | undefined;
let database = "";
beforeAll(async () => {
  if (SKIPPED !== undefined) return;
  postgres = await startPostgres();
  database = postgres.database("contract");
});
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** world-local 4.4.1's layout: the run's files in each directory retention deletes from. */
function filesOf(runId: string): Record<string, number> {
  const world = join(dir, "world");
  const count = (sub: string): number => (existsSync(join(world, sub)) ? readdirSync(join(world, sub)).filter((name) => name.startsWith(runId)).length : 0);
  return { runs: count("runs"), events: count("events"), steps: count("steps"), waits: count("waits") };
}

/** world-postgres 4.3.7's tables: the run's rows in each table postgres-store.ts deletes from, and its key. */
async function rowsOf(runId: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    const count = async (table: string, column = "run_id"): Promise<number> => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} = $1`, [runId])).rows[0]?.n);
    return { runs: await count("workflow.workflow_runs", "id"), events: await count("workflow.workflow_events"), steps: await count("workflow.workflow_steps"), waits: await count("workflow.workflow_waits"), keys: await count("switchboard.workflow_keys") };
  } finally {
    await client.end();
  }
}

const stores: ReadonlyArray<{ readonly title: string; readonly skipped?: string | undefined; readonly runsIn: () => RunsIn; readonly stored: (runId: string) => Promise<Record<string, number>> }> = [
  { title: "on a directory", runsIn: () => ({ dir }), stored: (runId) => Promise.resolve(filesOf(runId)) },
  { title: `on PostgreSQL${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, skipped: SKIPPED, runsIn: () => ({ database }), stored: rowsOf },
];

const tiny = workflow({ description: "A step, a sleep, a hook", steps: { double: (n: number) => n * 2 } }).body(async (_input, ctx) => {
  const doubled = await ctx.steps.double(21);
  await ctx.sleep(1000);
  const event = await ctx.waitFor<{ plus: number }>("contract:1");
  return event.status === "received" ? doubled + event.payload.plus : -1;
});

function endOf(engine: WorkflowEngine, runId: string): Promise<RunEnd> {
  return new Promise((resolve) => engine.onRunEnd((end) => end.runId === runId && resolve(end)));
}

for (const { title, skipped, runsIn, stored } of stores) describe.skipIf(skipped !== undefined)(`the Workflow SDK contract, ${title}`, () => {
  let runId = "";

  it("runs a step, a durable sleep and a hook, and journals exactly these events", async () => {
    const engine = await createWorkflowEngine({ ...runsIn(), workflows: { tiny } });
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
      // Where the world keeps the run, which retention deletes by run id.
      const kept = await stored(runId);
      expect(kept.runs).toBe(1);
      expect(kept.events).toBeGreaterThan(0);
      expect(kept.steps).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it("keeps an ended run within retention, and prunes it (files and key) once it is older", async () => {
    const reopened = await createWorkflowEngine({ ...runsIn(), workflows: { tiny }, retentionDays: 7 });
    try {
      expect((await reopened.find("contract")).map((run) => run.runId)).toEqual([runId]);
    } finally {
      await reopened.close();
    }
    const later: Clock = { ...systemClock, now: () => Date.now() + 8 * 86_400_000 };
    const pruning = await createWorkflowEngine({ ...runsIn(), workflows: { tiny }, retentionDays: 7, clock: later });
    try {
      expect(await pruning.get(runId)).toBeUndefined();
      expect(await pruning.find("contract")).toEqual([]);
      expect(Object.values(await stored(runId)).every((count) => count === 0)).toBe(true);
    } finally {
      await pruning.close();
    }
  });
});
