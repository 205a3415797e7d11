// The engine on each store — the local world on a temporary directory, and the PostgreSQL world
// on a private server (fakes/postgres-server.ts) — : runs with steps, retries per policy, a
// permanent failure, durable sleep, waitFor with and without its timeout, find(key), onRunEnd,
// cancel, the journal and bounds. One engine open at a time: the SDK keeps one world per process.
// No wall-clock thresholds: outcomes and order only.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermanentStepError, step, workflow, type StepContext } from "../../../src/manifest/index.js";
import { createWorkflowEngine, WorkflowRequestError, type CallPlacement, type EnginePort, type RunEnd, type RunInfo, type RunsIn, type WorkflowEngine } from "../../../src/workflows/index.js";
import { POSTGRES_BIN, startPostgres, type PostgresServer } from "../../../fakes/postgres-server.js";
import { runUntil } from "../../helpers/workflow-runs.js";

const dir = mkdtempSync(join(tmpdir(), "wf-engine-"));
const tries = new Map<string, number>();
const seen: StepContext[] = [];

const workflows = {
  order: workflow({
    description: "Charge, then confirm",
    input: Type.Object({ orderId: Type.String() }),
    steps: {
      charge: (orderId: string, ctx: StepContext) => {
        seen.push(ctx);
        return { orderId, amount: 10 };
      },
      confirm: (charged: { orderId: string; amount: number }) => `confirmed ${charged.orderId} for ${charged.amount}`,
    },
  }).body(async (input, ctx) => {
    const charged = await ctx.steps.charge(input.orderId);
    return { message: await ctx.steps.confirm(charged), runId: ctx.runId, key: ctx.key ?? null, context: ctx.context };
  }),
  flaky: workflow({
    description: "A step that fails twice, then succeeds",
    input: Type.Object({ id: Type.String() }),
    steps: {
      attempt: step({ retry: { attempts: 3, delay: "1s" } }, (id: string, ctx: StepContext) => {
        tries.set(id, ctx.attempt);
        if (ctx.attempt < 3) throw new Error(`not yet (${ctx.attempt})`);
        return ctx.attempt;
      }),
    },
  }).body(async (input, ctx) => ctx.steps.attempt(input.id)),
  refused: workflow({
    description: "A permanent failure",
    steps: {
      refuse: step({ retry: { attempts: 5 } }, (ctx: StepContext) => {
        tries.set(`refused:${ctx.runId}`, ctx.attempt);
        throw new PermanentStepError("the carrier said 400: bad number");
      }),
    },
  }).body(async (_input, ctx) => ctx.steps.refuse()),
  nap: workflow({
    description: "Sleep, then a step",
    steps: { after: () => "woke" },
  }).body(async (_input, ctx) => {
    await ctx.sleep("1s");
    return ctx.steps.after();
  }),
  shipped: workflow({
    description: "Wait for the shipment event",
    input: Type.Object({ orderId: Type.String(), timeout: Type.String() }),
    steps: { note: (what: string) => what },
  }).body(async (input, ctx) => {
    const event = await ctx.waitFor<{ carrier: string }>(`shipped:${input.orderId}`, { timeout: input.timeout as "1s" });
    return ctx.steps.note(event.status === "received" ? `shipped via ${event.payload.carrier}` : "timed out");
  }),
  forever: workflow({ description: "Waits until cancelled" }).body(async (_input, ctx) => ctx.waitFor("never:1")),
  dial: workflow({ description: "Place one call" }).body(async (_input, ctx) => (await ctx.calls.place({ to: "+14155550123" })).token),
};

let engine: WorkflowEngine;
const ends: RunEnd[] = [];

/** Resolves when `runId` ends (heard through onRunEnd, not polled). */
function ended(runId: string): Promise<RunEnd> {
  const already = ends.find((end) => end.runId === runId);
  if (already !== undefined) return Promise.resolve(already);
  return new Promise((resolve) => {
    const off = engine.onRunEnd((end) => {
      if (end.runId !== runId) return;
      off();
      resolve(end);
    });
  });
}

/** Until the run is where `ready` says. */
const until = (runId: string, ready: (run: RunInfo) => boolean): Promise<RunInfo> => runUntil(engine, runId, ready);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Why the PostgreSQL suite cannot run here, or undefined: said once in the output, and in the suite's name. */
const SKIPPED = POSTGRES_BIN === undefined ? "PostgreSQL is not installed (sudo apt-get install postgresql)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
let postgres: PostgresServer | undefined;

const stores: ReadonlyArray<{ readonly title: string; readonly skipped?: string | undefined; readonly where: () => Promise<RunsIn> }> = [
  { title: "the workflow engine on a directory", where: () => Promise.resolve({ dir: join(dir, "runs") }) },
  {
    title: `the workflow engine on PostgreSQL${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`,
    skipped: SKIPPED,
    where: async () => {
      postgres = await startPostgres();
      return { database: postgres.database("engine") };
    },
  },
];

for (const { title, skipped, where } of stores) describe.skipIf(skipped !== undefined)(title, () => {
  let runsIn: RunsIn;
  beforeAll(async () => {
    runsIn = await where();
    ends.length = 0;
    engine = await createWorkflowEngine({ ...runsIn, workflows });
    engine.onRunEnd((end) => ends.push(end));
  });

  afterAll(async () => {
    await engine?.close();
    await postgres?.stop();
    postgres = undefined;
  });
  it("runs a workflow's steps to completion; its journal lists them in order; the steps see the run's key and context", async () => {
    const { runId } = await engine.start("order", { orderId: "A1" }, { key: "+15550100", context: { sessionId: "s-1" } });
    expect(await ended(runId)).toEqual({ runId, status: "completed", workflow: "order", key: "+15550100" });
    const run = await engine.get(runId);
    expect(run).toMatchObject({ runId, workflow: "order", status: "completed", key: "+15550100" });
    expect(run?.output).toEqual({ message: "confirmed A1 for 10", runId, key: "+15550100", context: { sessionId: "s-1" } });
    expect(run?.completedAt).toBeGreaterThanOrEqual(run?.createdAt ?? Infinity);
    expect(seen).toContainEqual({ runId, attempt: 1, key: "+15550100", context: { sessionId: "s-1" } });

    const events = (await engine.events(runId)) ?? [];
    const steps = events.filter((event) => event.type === "step_completed").map((event) => event.step);
    expect(steps).toEqual(["charge", "confirm"]);
    expect(events[0]?.type).toBe("run_created");
    expect(events.at(-1)?.type).toBe("run_completed");
    const after = events[2]?.id ?? "";
    expect((await engine.events(runId, { after }))?.[0]).toEqual(events[3]);
    expect(await engine.events(runId, { limit: 2 })).toHaveLength(2);
  });

  it("retries a failing step per its policy: it fails twice, then succeeds on the third try", async () => {
    const { runId } = await engine.start("flaky", { id: "f1" });
    expect((await ended(runId)).status).toBe("completed");
    expect((await engine.get(runId))?.output).toBe(3);
    expect(tries.get("f1")).toBe(3);
    const events = (await engine.events(runId)) ?? [];
    expect(events.filter((event) => event.type === "step_retrying").map((event) => event.error)).toEqual(["not yet (1)", "not yet (2)"]);
    expect(events.filter((event) => event.type === "step_started").map((event) => event.attempt)).toEqual([1, 2, 3]);
  });

  it("fails the run at once on a PermanentStepError, without the retries its policy allows", async () => {
    const { runId } = await engine.start("refused", {});
    expect((await ended(runId)).status).toBe("failed");
    const run = await engine.get(runId);
    expect(run?.status).toBe("failed");
    expect(run?.error?.message).toContain("the carrier said 400: bad number");
    expect(tries.get(`refused:${runId}`)).toBe(1);
    const types = ((await engine.events(runId)) ?? []).map((event) => event.type);
    expect(types).toContain("step_failed");
    expect(types).not.toContain("step_retrying");
  });

  it("sleeps durably: the run shows as sleeping with its wake-up time, then continues", async () => {
    const { runId } = await engine.start("nap", {});
    const sleeping = await until(runId, (run) => run.status === "sleeping");
    expect(sleeping.wakeAt).toBeGreaterThan(sleeping.createdAt);
    expect((await ended(runId)).status).toBe("completed");
    expect((await engine.get(runId))?.output).toBe("woke");
    const types = ((await engine.events(runId)) ?? []).map((event) => event.type);
    expect(types.indexOf("wait_completed")).toBeGreaterThan(types.indexOf("wait_created"));
    expect(types.indexOf("step_created")).toBeGreaterThan(types.indexOf("wait_completed"));
  });

  it("waitFor resumes with a delivered payload; deliver to a token nobody waits for is false", async () => {
    const { runId } = await engine.start("shipped", { orderId: "B2", timeout: "1h" });
    const waiting = await until(runId, (run) => run.status === "waiting");
    expect(waiting.waitingFor).toBe("shipped:B2");
    expect(await engine.deliver("shipped:B2", { carrier: "UPS" })).toBe(true);
    expect((await ended(runId)).status).toBe("completed");
    expect((await engine.get(runId))?.output).toBe("shipped via UPS");
    expect(await engine.deliver("shipped:B2", { carrier: "UPS" })).toBe(false);
    expect(await engine.deliver("nobody:waits", {})).toBe(false);
  });

  it("waitFor resolves to the timeout result when nothing is delivered in time", async () => {
    const { runId } = await engine.start("shipped", { orderId: "C3", timeout: "1s" });
    expect((await ended(runId)).status).toBe("completed");
    expect((await engine.get(runId))?.output).toBe("timed out");
  });

  it("find(key) lists the key's runs oldest first; onRunEnd heard each run once", async () => {
    const a = await engine.start("order", { orderId: "K1" }, { key: "caller:7" });
    const b = await engine.start("order", { orderId: "K2" }, { key: "caller:7" });
    await Promise.all([ended(a.runId), ended(b.runId)]);
    expect((await engine.find("caller:7")).map((run) => run.runId)).toEqual([a.runId, b.runId]);
    expect(await engine.find("caller:none")).toEqual([]);
    const counts = new Map<string, number>();
    for (const end of ends) counts.set(end.runId, (counts.get(end.runId) ?? 0) + 1);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
  });

  it("cancels a waiting run; a second cancel and a cancel of nothing are false", async () => {
    const { runId } = await engine.start("forever", {});
    await until(runId, (run) => run.status === "waiting");
    expect(await engine.cancel(runId)).toBe(true);
    expect((await ended(runId)).status).toBe("cancelled");
    expect((await engine.get(runId))?.status).toBe("cancelled");
    expect(await engine.cancel(runId)).toBe(false);
    expect(await engine.cancel("wrun_00000000000000000000000000")).toBe(false);
    expect(await engine.get("../../etc/passwd")).toBeUndefined();
    expect(await engine.events("wrun_00000000000000000000000000")).toBeUndefined();
  });

  it("refuses an unknown workflow, bad input, oversized input or context, a bad key, an oversized payload", async () => {
    const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);
    expect(await refusal(engine.start("nope", {}))).toMatchObject({ code: "unknown_workflow", field: "name" });
    expect(await refusal(engine.start("order", { orderId: 5 }))).toMatchObject({ code: "invalid", field: "input" });
    expect(await refusal(engine.start("order", { orderId: "x".repeat(70_000) }))).toMatchObject({ code: "too_large", field: "input" });
    expect(await refusal(engine.start("order", { orderId: "A" }, { context: { blob: "x".repeat(9_000) } }))).toMatchObject({ code: "too_large", field: "context" });
    expect(await refusal(engine.start("order", { orderId: "A" }, { key: "has space" }))).toMatchObject({ code: "invalid", field: "key" });
    expect(await refusal(engine.deliver("t", { blob: "x".repeat(70_000) }))).toBeInstanceOf(WorkflowRequestError);
  });

  it("places calls only once lent a placer (useCalls), which it lends its port; taken back, it refuses again", async () => {
    const refused = await engine.start("dial", {});
    expect((await ended(refused.runId)).status).toBe("failed");
    expect((await engine.get(refused.runId))?.error?.message).toMatch(/places no calls/);

    const asked: CallPlacement[] = [];
    let port: EnginePort | undefined;
    engine.useCalls({
      place: (request, placement) => {
        asked.push(placement);
        return Promise.resolve({ token: placement.token, carrier: "twilio", to: request.to, from: "+14155550100" });
      },
      attach: (lent) => void (port = lent),
    });
    expect(port?.placings).toBeDefined();
    const placed = await engine.start("dial", {});
    expect((await ended(placed.runId)).status).toBe("completed");
    expect((await engine.get(placed.runId))?.output).toBe(`call:${placed.runId}:1`);
    expect(asked).toMatchObject([{ runId: placed.runId, workflow: "dial", token: `call:${placed.runId}:1`, idempotencyKey: `${placed.runId}:call:1` }]);
    engine.useCalls(undefined);
    expect(port).toBeUndefined();
  });

  it("refuses a second engine in the same process", async () => {
    await expect(createWorkflowEngine({ ...runsIn, workflows })).rejects.toThrow(/already open/);
  });
});

describe("settings that cannot work", () => {
  it("refuses a data directory it cannot create, naming the variable", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const { ensureWritableDir } = await import("../../../src/workflows/settings.js");
    await expect(ensureWritableDir(join(file, "runs"))).rejects.toThrow(/SWITCHBOARD_WORKFLOWS_DIR/);
  });
});
