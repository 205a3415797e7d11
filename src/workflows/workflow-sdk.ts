/**
 * The workflow engine: the Workflow SDK (@workflow/core) on one of two stores (run-store.ts) —
 * its local world in a directory (no server, no network; local-store.ts) or its PostgreSQL world,
 * shared by every process of a deployment (postgres-store.ts). Why this engine: docs/workflows.md
 * "Why this engine".
 *
 * The SDK keeps one world per process (`setWorld`) and one step registry, so one engine may be
 * open per process at a time; a second `createWorkflowEngine` before `close()` is refused.
 */
import { FatalError, RetryableError } from "@workflow/errors";
import { cancelRun, resumeHook, setWorld, start, stepEntrypoint, workflowEntrypoint } from "@workflow/core/runtime";
import type { Event, WorkflowRun, WorkflowRunWithoutData } from "@workflow/world";
import { systemClock, type Clock, type Timer } from "../clock.js";
import { silentLogger, type Logger } from "../log.js";
import {
  parseDuration,
  PermanentStepError,
  retryDelayMs,
  WORKFLOW_NAME,
  type AnyWorkflowDef,
  type CallOutcome,
  type CallRequest,
  type JsonValue,
  type PlacedCall,
  type ResolvedRetry,
  type RunContextData,
  type StepDef,
  type WaitResult,
  type WorkflowContext,
} from "../manifest/index.js";
import {
  checkJsonSize,
  checkKey,
  DEFAULT_LIMITS,
  WorkflowRequestError,
  type EndStatus,
  type RunEnd,
  type RunEvent,
  type RunInfo,
  type RunStatus,
  type StartOptions,
  type CallPlacer,
  type EnginePort,
  type RunsIn,
  type WorkflowEngine,
  type WorkflowLimits,
} from "./engine.js";
import { openLocalStore } from "./local-store.js";
import { DEFAULT_RETENTION_DAYS, PRUNE_INTERVAL_MS } from "./retention.js";
import type { RunStore } from "./run-store.js";
import { BRIDGE, createdFirst, currentAttempt, decodeOutput, registerStep, stepId, stepName, workflowBundle, workflowId, workflowName, type Bridge, type VmHook, type VmPrimitives } from "./sdk-contract.js";

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

/** Why `ctx.calls.place` cannot place: no telephony was lent to the engine. */
const NO_CALLS = "ctx.calls.place: this gateway places no calls: mount twilio or telnyx in the agent's telephony field (the gateway lends its calls to its workflow engine)";

/** The built-in step behind `ctx.calls.place` (a name no declared step can have: those have no "."). */
const PLACE_STEP = "calls.place";
/**
 * Its tries: a refusal no retry changes fails at once (PermanentStepError); the rest (a budget
 * full this minute, a carrier 5xx) are tried again. The placer never dials twice per key, so a
 * retry after a try that may have dialled answers `uncertain` instead.
 */
const PLACE_RETRY: ResolvedRetry = { attempts: 4, backoff: "exponential", delayMs: 5_000, maxDelayMs: 60_000 };

/** What a run carries as its one argument: the validated input and the starter's data. */
interface Envelope {
  readonly input: unknown;
  readonly key?: string;
  readonly context: RunContextData;
}

/** What every step call carries before its own arguments. */
interface StepMeta {
  readonly runId: string;
  readonly key?: string;
  readonly context: RunContextData;
}

const RUN_ID = /^wrun_[0-9A-Z]{26}$/;
const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);
const END_EVENTS: Readonly<Record<string, EndStatus>> = { run_completed: "completed", run_failed: "failed", run_cancelled: "cancelled" };
const MAX_ERROR_CHARS = 500;

let engineOpen = false;

function errorText(error: unknown): string {
  const text =
    typeof error === "string" ? error : error instanceof Error ? error.message : typeof (error as { message?: unknown } | null)?.message === "string" ? (error as { message: string }).message : JSON.stringify(error);
  return (text ?? "").slice(0, MAX_ERROR_CHARS);
}

const ms = (date: Date | undefined): number | undefined => (date === undefined ? undefined : date.getTime());

/** Whether `error` is the SDK's "no such run" / "no such hook" (matched by name: errors cross realms). */
const isNamed = (error: unknown, name: string): boolean => error instanceof Error && error.name === name;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** One journal entry, without payloads. `tries`: step_started events seen so far per step (the world may not record the attempt). */
function toRunEvent(event: Event, tries: Map<string, number>): RunEvent {
  const data = ("eventData" in event ? event.eventData : undefined) as Record<string, unknown> | undefined;
  const step = typeof data?.stepName === "string" ? stepName(data.stepName) : undefined;
  const out: { -readonly [K in keyof RunEvent]: RunEvent[K] } = { id: event.eventId, type: event.eventType, at: event.createdAt.getTime() };
  if (event.correlationId !== undefined) out.correlationId = event.correlationId;
  if (step !== undefined) out.step = step;
  if (event.eventType === "step_started") {
    const attempt = (tries.get(event.correlationId) ?? 0) + 1;
    tries.set(event.correlationId, attempt);
    out.attempt = typeof data?.attempt === "number" ? data.attempt : attempt;
  }
  if (data?.error !== undefined) out.error = errorText(data.error);
  if (event.eventType === "hook_created" && typeof data?.token === "string") out.token = data.token;
  if (event.eventType === "wait_created" && data?.resumeAt instanceof Date) out.wakeAt = data.resumeAt.getTime();
  return out;
}

/** Where a running run is, from its journal: in a step, waiting for a hook, or sleeping. */
function liveState(events: readonly RunEvent[]): { status: RunStatus; waitingFor?: string; wakeAt?: number } {
  const steps = new Set<string>();
  const hooks = new Map<string, string>();
  const waits = new Map<string, number>();
  for (const event of events) {
    const id = event.correlationId ?? "";
    if (event.type === "step_created") steps.add(id);
    else if (event.type === "step_completed" || event.type === "step_failed") steps.delete(id);
    else if (event.type === "hook_created") hooks.set(id, event.token ?? "");
    else if (event.type === "hook_received" || event.type === "hook_disposed") hooks.delete(id);
    else if (event.type === "wait_created") waits.set(id, event.wakeAt ?? 0);
    else if (event.type === "wait_completed") waits.delete(id);
  }
  if (steps.size > 0) return { status: "running" };
  // The most recent open wait is the one the body is in (an earlier one may be a timeout that lost its race).
  const wakeAt = [...waits.values()].at(-1);
  const token = [...hooks.values()].at(-1);
  if (token !== undefined) return { status: "waiting", waitingFor: token, ...(wakeAt === undefined ? {} : { wakeAt }) };
  if (wakeAt !== undefined) return { status: "sleeping", wakeAt };
  return { status: "running" };
}

/**
 * Open the engine on `options.dir` or `options.database`: runs left active by a previous process
 * (a crash, a restart) are re-enqueued and continue from their last completed step.
 */
export async function createWorkflowEngine(options: WorkflowEngineOptions): Promise<WorkflowEngine> {
  if (engineOpen) throw new Error("a workflow engine is already open in this process (the Workflow SDK keeps one per process): close it first");
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger;
  const limits: WorkflowLimits = { ...DEFAULT_LIMITS, ...options.limits };
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

/** The host side of `ctx.calls.place`: `(request, token, n, ctx)` after the step meta, to the gateway's placer. */
function placeCall(placer: () => CallPlacer | undefined): (...args: unknown[]) => Promise<PlacedCall> {
  return async (...args: unknown[]) => {
    const [workflowName, request, token, n, ctx] = args as [string, CallRequest, string, number, { runId: string; key?: string; context: RunContextData }];
    const calls = placer();
    if (calls === undefined) throw new PermanentStepError(NO_CALLS);
    return calls.place(request, {
      runId: ctx.runId,
      workflow: workflowName,
      ...(ctx.key === undefined ? {} : { key: ctx.key }),
      context: ctx.context,
      token,
      idempotencyKey: `${ctx.runId}:call:${n}`,
    });
  };
}

/** The host function the SDK runs for one declared step: its policy mapped onto the SDK's errors. */
function stepRunner(spec: StepDef): (...args: unknown[]) => Promise<unknown> {
  return async (...args: unknown[]): Promise<unknown> => {
    const [meta, ...rest] = args as [StepMeta, ...unknown[]];
    const attempt = currentAttempt();
    try {
      return await spec.fn(...rest, { runId: meta.runId, attempt, ...(meta.key === undefined ? {} : { key: meta.key }), context: meta.context });
    } catch (err) {
      // FatalError: the SDK fails the step now. A plain throw on the last try: it fails it as out of retries.
      if (err instanceof PermanentStepError || isNamed(err, "FatalError")) throw new FatalError(errorText(err));
      if (attempt >= spec.retry.attempts) throw err;
      throw new RetryableError(errorText(err), { retryAfter: retryDelayMs(spec.retry, attempt) });
    }
  };
}

/** The body's ctx for one replay: every call goes through the SDK's journalled primitives. */
function bodyContext(name: string, def: AnyWorkflowDef, vm: VmPrimitives, key: string | undefined, context: RunContextData, placing: boolean): WorkflowContext<Record<string, StepDef>> {
  const meta: StepMeta = { runId: vm.runId, ...(key === undefined ? {} : { key }), context };
  const steps: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const step of Object.keys(def.steps)) {
    const call = vm.useStep(stepId(name, step));
    steps[step] = (...args: unknown[]) => call(meta, ...args);
  }
  const place = vm.useStep(stepId(name, PLACE_STEP));
  /** This replay's calls, by token: the hook each outcome arrives on. Counted in body order, so a replay makes the same tokens. */
  const callHooks = new Map<string, VmHook>();
  let placed = 0;
  return {
    runId: vm.runId,
    ...(key === undefined ? {} : { key }),
    context,
    steps: steps as never,
    sleep: (duration) => vm.sleep(parseDuration(duration, "ctx.sleep(duration)")),
    waitFor: async <T>(token: string, waitOptions: { readonly timeout?: unknown } = {}): Promise<WaitResult<T>> => {
      if (typeof token !== "string" || token === "") throw new Error("ctx.waitFor(token): token must be a non-empty string");
      const timeoutMs = waitOptions.timeout === undefined ? undefined : parseDuration(waitOptions.timeout, "ctx.waitFor(token, { timeout })");
      const hook = vm.createHook({ token });
      const received = hook.then((payload): WaitResult<T> => ({ status: "received", payload: payload as T }));
      // A rejection after the timeout won (the hook is disposed by then) must not surface as unhandled.
      received.catch(() => undefined);
      try {
        if (timeoutMs === undefined) return await received;
        return await Promise.race([received, vm.sleep(timeoutMs).then((): WaitResult<T> => ({ status: "timeout" }))]);
      } finally {
        // Frees the token for a later wait (this run's or another's).
        hook.dispose();
      }
    },
    calls: {
      place: async (request: CallRequest): Promise<PlacedCall> => {
        if (!placing) throw new Error(NO_CALLS);
        placed += 1;
        const token = `call:${vm.runId}:${placed}`;
        // The hook before the step, in the same suspension: the SDK writes hooks before it runs
        // steps, so no outcome can come before the run listens for it. Not awaited here (each
        // `then` takes one payload): `outcome` takes it.
        const hook = vm.createHook({ token });
        callHooks.set(token, hook);
        try {
          return (await place(meta, name, request, token, placed)) as PlacedCall;
        } catch (err) {
          callHooks.delete(token);
          hook.dispose();
          throw err;
        }
      },
      outcome: async (call: PlacedCall, waitOptions: { readonly timeout?: unknown } = {}): Promise<CallOutcome> => {
        const hook = typeof call?.token === "string" ? callHooks.get(call.token) : undefined;
        if (hook === undefined) throw new Error("ctx.calls.outcome(call): not a call this run placed, or its outcome was already awaited; pass what ctx.calls.place returned, once");
        callHooks.delete(call.token);
        const timeoutMs = waitOptions.timeout === undefined ? undefined : parseDuration(waitOptions.timeout, "ctx.calls.outcome(call, { timeout })");
        const received = hook.then((payload) => payload as CallOutcome);
        received.catch(() => undefined);
        try {
          if (timeoutMs === undefined) return await received;
          return await Promise.race([received, vm.sleep(timeoutMs).then((): CallOutcome => ({ status: "timeout" }))]);
        } finally {
          hook.dispose();
        }
      },
    },
  };
}
