/**
 * The workflow engine: the Workflow SDK (@workflow/core) on one of two stores (run-store.ts) —
 * its local world in a directory (no server, no network; local-store.ts) or its PostgreSQL world,
 * shared by every process of a deployment (postgres-store.ts). Why this engine: docs/workflows.md
 * "Why this engine".
 *
 * The SDK keeps one world per process (`setWorld`) and one step registry, so one engine may be
 * open per process at a time; a second `createWorkflowEngine` before `close()` is refused.
 */
import { cancelRun, resumeHook, setWorld, start, stepEntrypoint, workflowEntrypoint } from "@workflow/core/runtime";
import type { WorkflowRun, WorkflowRunWithoutData } from "@workflow/world";
import { systemClock, type Clock, type Timer } from "../clock.js";
import { silentLogger, type Logger } from "../log.js";
import { WORKFLOW_NAME, type AnyWorkflowDef, type JsonValue, type RunContextData, type StepDef } from "../manifest/index.js";
import {
  checkJsonSize,
  checkKey,
  DEFAULT_LIMITS,
  WorkflowRequestError,
  type CallPlacer,
  type EndStatus,
  type EnginePort,
  type RunEnd,
  type RunEvent,
  type RunInfo,
  type RunsIn,
  type RunStatus,
  type StartOptions,
  type WorkflowEngine,
  type WorkflowLimits,
} from "./engine.js";
import { isNamed, liveState, MAX_ERROR_CHARS, toRunEvent } from "./journal.js";
import { openLocalStore } from "./local-store.js";
import { DEFAULT_RETENTION_DAYS, PRUNE_INTERVAL_MS } from "./retention.js";
import { bodyContext, PLACE_RETRY, PLACE_STEP, placeCall, stepRunner, type Envelope } from "./run-body.js";
import type { RunStore } from "./run-store.js";
import { BRIDGE, createdFirst, decodeOutput, registerStep, stepId, workflowBundle, workflowId, workflowName, type Bridge } from "./sdk-contract.js";
import { spread } from "../spread.js";

export type WorkflowEngineOptions = RunsIn & {
  /** The workflows it runs, by the name they are started under. */
  readonly workflows: Readonly<Record<string, AnyWorkflowDef>>;
  /** Days an ended run is kept (default 7). */
  readonly retentionDays?: number;
  readonly limits?: Partial<WorkflowLimits>;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** The gateway's telephony behind `ctx.calls` (absent: `ctx.calls.place` refuses, naming why). */
  readonly calls?: CallPlacer;
};

const RUN_ID = /^wrun_[0-9A-Z]{26}$/;
const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);
const END_EVENTS: Readonly<Record<string, EndStatus>> = { run_completed: "completed", run_failed: "failed", run_cancelled: "cancelled" };

let engineOpen = false;

const ms = (date: Date | undefined): number | undefined => (date === undefined ? undefined : date.getTime());

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Open the engine on `options.dir` or `options.database`: runs left active by a previous process
 * (a crash, a restart) are re-enqueued and continue from their last completed step.
 */
export async function createWorkflowEngine(options: WorkflowEngineOptions): Promise<WorkflowEngine> {
  if (engineOpen) throw new Error("a workflow engine is already open in this process (the Workflow SDK keeps one per process): close it first");
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger;
  const limits: WorkflowLimits = spread(DEFAULT_LIMITS, options.limits);
  const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error(`retentionDays: ${retentionDays} is not a whole number of days ≥ 1`);
  const defs = new Map<string, AnyWorkflowDef>();
  for (const [name, def] of Object.entries(options.workflows)) {
    if (!WORKFLOW_NAME.test(name)) throw new Error(`workflow "${name}": a workflow name is 1–64 letters, digits, "_" or "-"; rename its file or its key`);
    defs.set(name, def);
  }

  let store: RunStore;
  if (options.database !== undefined) {
    // Loaded only for a database: an embedded deployment never holds the PostgreSQL world in memory.
    const { openPostgresStore } = await import("./postgres-store.js");
    store = await openPostgresStore({ url: options.database, clock, log });
  } else {
    store = await openLocalStore(options.dir, () => clock.now());
  }
  const { world, keys } = store;
  engineOpen = true;
  /** The telephony behind `ctx.calls`: given at creation, or lent later (`useCalls`). */
  let calls: CallPlacer | undefined = options.calls;

  const listeners = new Set<(end: RunEnd) => void>();
  const eventListeners = new Set<(runId: string) => void>();
  const tell = (listener: () => void, runId: string): void => {
    queueMicrotask(() => {
      try {
        listener();
      } catch (err) {
        log.error({ err, runId }, "a run listener threw");
      }
    });
  };
  // Every run event this process writes passes through here and is announced to every engine on
  // the store (this one included), which tells its listeners: each event, each end, no polling.
  const create = world.events.create.bind(world.events) as (...args: unknown[]) => Promise<unknown>;
  (world.events as { create: unknown }).create = async (...args: unknown[]): Promise<unknown> => {
    const result = await create(...args);
    const [runId, data] = args as [string | null, { eventType?: string } | undefined];
    if (typeof runId === "string") store.announce(runId, data?.eventType ?? "").catch((err: unknown) => log.warn({ err, runId }, "announcing a run event failed"));
    return result;
  };
  store.onAnnounce((runId, eventType) => {
    for (const listener of eventListeners) tell(() => listener(runId), runId);
    const status = END_EVENTS[eventType];
    if (status === undefined || listeners.size === 0) return;
    keys.entryOf(runId).then(
      (entry) => {
        const end: RunEnd = { runId, status, ...(entry === undefined ? {} : { workflow: entry.workflow, key: entry.key }) };
        for (const listener of listeners) tell(() => listener(end), runId);
      },
      (err: unknown) => log.error({ err, runId }, "reading a run's key failed"),
    );
  });

  for (const [name, def] of defs) {
    for (const [step, spec] of Object.entries(def.steps)) registerStep(stepId(name, step), stepRunner(spec), spec.retry.attempts);
    registerStep(stepId(name, PLACE_STEP), stepRunner({ fn: placeCall(() => calls), retry: PLACE_RETRY } as StepDef), PLACE_RETRY.attempts);
  }
  const bridge: Bridge = {
    run: (name, envelope, primitives) => {
      const def = defs.get(name);
      if (def === undefined) throw new Error(`no workflow "${name}" in this engine`);
      const { input, key, context } = envelope as Envelope;
      return Promise.resolve(def.run(input as never, bodyContext(name, def, primitives, key, context, calls !== undefined) as never));
    },
  };
  (globalThis as Record<symbol, unknown>)[BRIDGE] = bridge;
  setWorld(world);
  await store.start({ workflow: workflowEntrypoint(workflowBundle([...defs.keys()])), step: stepEntrypoint });

  const cutoffMs = retentionDays * 86_400_000;
  let pruneTimer: Timer | undefined;
  let closed = false;
  const prune = async (): Promise<void> => {
    const before = clock.now() - cutoffMs;
    const old: string[] = [];
    for (const status of ["completed", "failed", "cancelled"] as const) {
      let cursor: string | undefined;
      do {
        const page = await world.runs.list({ status, resolveData: "none", pagination: { limit: 1000, ...(cursor === undefined ? {} : { cursor }) } });
        for (const run of page.data) if (run.completedAt !== undefined && run.completedAt.getTime() < before) old.push(run.runId);
        cursor = page.hasMore && page.cursor !== null ? page.cursor : undefined;
      } while (cursor !== undefined);
    }
    await store.deleteRuns(old);
    if (old.length > 0) log.info({ runs: old.length, retentionDays }, "pruned ended workflow runs");
  };
  const schedulePrune = (): void => {
    pruneTimer = clock.setTimeout(() => {
      if (closed) return;
      prune()
        .catch((err: unknown) => log.error({ err }, "pruning workflow runs failed"))
        .finally(() => {
          if (!closed) schedulePrune();
        });
    }, PRUNE_INTERVAL_MS);
  };
  await prune();
  schedulePrune();

  const readRun = async (runId: string): Promise<WorkflowRun | undefined> => {
    if (!RUN_ID.test(runId)) return undefined;
    try {
      const run = await world.runs.get(runId);
      return workflowName(run.workflowName) === undefined ? undefined : run;
    } catch (err) {
      if (isNamed(err, "WorkflowRunNotFoundError")) return undefined;
      throw err;
    }
  };
  const readEvents = async (runId: string): Promise<RunEvent[]> => {
    const out: RunEvent[] = [];
    const tries = new Map<string, number>();
    let cursor: string | undefined;
    do {
      const page = await world.events.list({ runId, resolveData: "all", pagination: { limit: 1000, ...(cursor === undefined ? {} : { cursor }) } });
      for (const event of page.data) out.push(toRunEvent(event, tries));
      cursor = page.hasMore && page.cursor !== null ? page.cursor : undefined;
    } while (cursor !== undefined);
    return createdFirst(out);
  };
  const info = async (run: WorkflowRun | WorkflowRunWithoutData, withOutput: boolean): Promise<RunInfo> => {
    const entry = await keys.entryOf(run.runId);
    const live = TERMINAL.has(run.status) ? { status: run.status as RunStatus } : liveState(await readEvents(run.runId));
    const out: { -readonly [K in keyof RunInfo]: RunInfo[K] } = {
      runId: run.runId,
      workflow: workflowName(run.workflowName) ?? run.workflowName,
      ...live,
      createdAt: run.createdAt.getTime(),
    };
    if (entry !== undefined) out.key = entry.key;
    const startedAt = ms(run.startedAt);
    const completedAt = ms(run.completedAt);
    if (startedAt !== undefined) out.startedAt = startedAt;
    if (completedAt !== undefined) out.completedAt = completedAt;
    if (run.status === "failed" && run.error !== undefined) out.error = { message: run.error.message.slice(0, MAX_ERROR_CHARS), ...(run.error.code === undefined ? {} : { code: run.error.code }) };
    if (withOutput && run.status === "completed") out.output = await decodeOutput(run.output, run.runId);
    return out;
  };
  const activeRunsOf = async (key: string): Promise<number> => {
    let active = 0;
    for (const entry of await keys.runsOf(key)) {
      if (!RUN_ID.test(entry.runId)) continue;
      try {
        const run = await world.runs.get(entry.runId, { resolveData: "none" });
        if (!TERMINAL.has(run.status)) active += 1;
      } catch (err) {
        if (!isNamed(err, "WorkflowRunNotFoundError")) throw err;
      }
    }
    return active;
  };

  const engine: WorkflowEngine = {
    where: store.where,
    workflows: new Map([...defs].map(([name, def]) => [name, { description: def.description, input: def.input.json as Record<string, unknown>, steps: Object.keys(def.steps) }])),

    async start(name: string, input: unknown, startOptions: StartOptions = {}) {
      if (closed) throw new Error("the workflow engine is closed");
      const def = typeof name === "string" ? defs.get(name) : undefined;
      if (def === undefined) throw new WorkflowRequestError("unknown_workflow", "name", `no workflow ${JSON.stringify(name)}; the workflows are ${[...defs.keys()].join(", ") || "(none)"}`);
      checkJsonSize(input ?? {}, "input", limits.maxInputBytes);
      const checked = def.input.validate(input ?? {});
      if (!checked.ok) throw new WorkflowRequestError("invalid", "input", checked.errors.join("; "));
      const key = startOptions.key === undefined ? undefined : checkKey(startOptions.key, "key", limits);
      if (startOptions.context !== undefined && !isPlainObject(startOptions.context)) throw new WorkflowRequestError("invalid", "context", "must be an object of plain JSON data");
      checkJsonSize(startOptions.context ?? {}, "context", limits.maxContextBytes);
      // A JSON round trip: the run carries data only (no Dates, class instances or functions).
      const context = JSON.parse(JSON.stringify(startOptions.context ?? {})) as RunContextData;
      if (key !== undefined && (await activeRunsOf(key)) >= limits.maxActiveRunsPerKey) {
        throw new WorkflowRequestError("too_many_runs", "key", `already has ${limits.maxActiveRunsPerKey} runs that have not ended; wait for one to end or cancel one`);
      }
      const envelope: Envelope = { input: checked.value, ...(key === undefined ? {} : { key }), context };
      const run = await start({ workflowId: workflowId(name) }, [envelope]);
      if (key !== undefined) await keys.add({ key, runId: run.runId, workflow: name, at: clock.now() });
      log.info({ runId: run.runId, workflow: name }, "workflow run started");
      return { runId: run.runId };
    },

    async get(runId: string) {
      const run = await readRun(runId);
      return run === undefined ? undefined : info(run, true);
    },

    async find(key: string) {
      checkKey(key, "key", limits);
      const runs: RunInfo[] = [];
      for (const entry of await keys.runsOf(key)) {
        const run = await readRun(entry.runId);
        if (run !== undefined) runs.push(await info(run, true));
      }
      return runs;
    },

    async events(runId: string, eventOptions: { readonly after?: string; readonly limit?: number } = {}) {
      if ((await readRun(runId)) === undefined) return undefined;
      const limit = Math.max(1, Math.min(limits.maxEventsPerPage, Math.floor(eventOptions.limit ?? limits.maxEventsPerPage)));
      const all = await readEvents(runId);
      const from = eventOptions.after === undefined ? 0 : all.findIndex((event) => event.id === eventOptions.after) + 1;
      // An unknown `after` (from another run, or pruned) reads from the start rather than skipping everything.
      return all.slice(Math.max(0, from), Math.max(0, from) + limit);
    },

    onRunEvent(listener: (runId: string) => void) {
      eventListeners.add(listener);
      return () => {
        eventListeners.delete(listener);
      };
    },

    onRunEnd(listener: (end: RunEnd) => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async deliver(token: string, payload: JsonValue) {
      checkKey(token, "token", limits);
      checkJsonSize(payload ?? null, "payload", limits.maxPayloadBytes);
      try {
        await resumeHook(token, JSON.parse(JSON.stringify(payload ?? null)) as JsonValue);
        return true;
      } catch (err) {
        if (isNamed(err, "HookNotFoundError")) return false;
        throw err;
      }
    },

    useCalls(placer: CallPlacer | undefined) {
      if (placer === calls) return;
      calls?.attach(undefined);
      calls = closed ? undefined : placer;
      calls?.attach(port);
    },

    async cancel(runId: string) {
      const run = await readRun(runId);
      if (run === undefined || TERMINAL.has(run.status)) return false;
      await cancelRun(world, runId);
      return true;
    },

    async close() {
      if (closed) return;
      closed = true;
      pruneTimer?.cancel();
      listeners.clear();
      calls?.attach(undefined);
      calls = undefined;
      eventListeners.clear();
      await store.close();
      setWorld(undefined);
      delete (globalThis as Record<symbol, unknown>)[BRIDGE];
      engineOpen = false;
    },
  };
  const port: EnginePort = { deliver: (token, payload) => engine.deliver(token, payload), placings: store.placings };
  calls?.attach(port);
  return engine;
}
