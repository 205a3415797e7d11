/**
 * The Workflow SDK's internal contract, in one place. Pinned: @workflow/core 4.8.9,
 * @workflow/world-local 4.4.1, @workflow/world 4.5.0, @workflow/errors 4.2.1 (package.json
 * pins them exactly; test/integration/workflows/sdk-contract.test.ts runs a step, a sleep and
 * a hook through it, so an upgrade that breaks it fails there first).
 *
 * The SDK expects its compiler to turn `"use workflow"` / `"use step"` functions into two
 * bundles. We write what the compiler would emit ourselves:
 * - step mode: `registerStepFunction("step//<module>//<name>", fn)` in the host, `fn.maxRetries`
 *   the retries after the first try;
 * - workflow mode: a code string evaluated in the SDK's `node:vm` context, which registers each
 *   workflow function in `globalThis.__private_workflows` under `"workflow//<module>//<name>"` and
 *   reaches steps, sleep and hooks through `globalThis[Symbol.for("WORKFLOW_USE_STEP" |
 *   "WORKFLOW_SLEEP" | "WORKFLOW_CREATE_HOOK")]`, the run through `Symbol.for("WORKFLOW_CONTEXT")`.
 * Our generated functions call back into host-realm bodies through `BRIDGE` on the host's
 * globalThis, reached from the VM through `useStep.constructor` (a host-realm Function): a
 * deliberate way out of the sandbox, since bodies are the author's own host code.
 */
import { registerStepFunction } from "@workflow/core/private";
import { hydrateWorkflowReturnValue } from "@workflow/core/serialization";
import { getStepMetadata } from "@workflow/core";

/** The module part of every id this gateway registers. */
const MODULE = "switchboard";

/** The host global the generated bundle finds bodies through. */
export const BRIDGE = Symbol.for("switchboard.workflows.bridge");

export const workflowId = (name: string): string => `workflow//${MODULE}//${name}`;
export const stepId = (workflow: string, step: string): string => `step//${MODULE}/${workflow}//${step}`;

/** The workflow name back from an id, or undefined for an id this gateway did not make. */
export function workflowName(id: string): string | undefined {
  const prefix = `workflow//${MODULE}//`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : undefined;
}

/** The step name back from a step id (`step//switchboard/<workflow>//<step>`). */
export function stepName(id: string): string | undefined {
  const at = id.lastIndexOf("//");
  return id.startsWith(`step//${MODULE}/`) && at > 0 ? id.slice(at + 2) : undefined;
}

/**
 * A run's journal with `run_created` first. The SDK's start() writes `run_created` and queues the
 * run in parallel; when the queue wins, its "resilient start" writes `run_started` and then
 * `run_created` in the same millisecond with a later id, and world-local sorts by (time, id).
 */
export function createdFirst<E extends { readonly type: string }>(events: E[]): E[] {
  const at = events.findIndex((event) => event.type === "run_created");
  if (at <= 0) return events;
  const [created] = events.splice(at, 1);
  return created === undefined ? events : [created, ...events];
}

/** What the VM hands a host body: the run's id and the SDK's primitives, bound to this replay. */
export interface VmPrimitives {
  readonly runId: string;
  readonly useStep: (id: string) => (...args: unknown[]) => Promise<unknown>;
  readonly sleep: (ms: number) => Promise<void>;
  readonly createHook: (options: { token: string }) => VmHook;
}

/** The SDK's hook as the body uses it: thenable to its payload, disposable. */
export interface VmHook {
  then<R>(onFulfilled: (payload: unknown) => R, onRejected?: (reason: unknown) => R): Promise<R>;
  dispose(): void;
}

/** What the bundle calls in the host. */
export interface Bridge {
  run(name: string, envelope: unknown, primitives: VmPrimitives): Promise<unknown>;
}

/** Register a host step function under `id`, tried `attempts` times in all. */
export function registerStep(id: string, fn: (...args: unknown[]) => Promise<unknown>, attempts: number): void {
  const registered = Object.assign(fn, { maxRetries: attempts - 1 });
  registerStepFunction(id, registered);
}

/** The current step's try (1-based); only inside a step function. */
export function currentAttempt(): number {
  return getStepMetadata().attempt;
}

/** A run's stored output, decoded (world-local stores devalue bytes; no encryption here). */
export function decodeOutput(output: unknown, runId: string): Promise<unknown> {
  return hydrateWorkflowReturnValue(output, runId, undefined) as Promise<unknown>;
}

/** The workflow bundle for `names`: each workflow delegates to the host bridge. */
export function workflowBundle(names: readonly string[]): string {
  return `globalThis.__private_workflows = new Map();
const hostGlobal = globalThis[Symbol.for("WORKFLOW_USE_STEP")].constructor("return globalThis")();
for (const name of ${JSON.stringify(names)}) {
  const fn = async function (envelope) {
    const bridge = hostGlobal[Symbol.for(${JSON.stringify(BRIDGE.description)})];
    if (bridge === undefined) throw new Error("the workflow engine is closed");
    return bridge.run(name, envelope, {
      runId: globalThis[Symbol.for("WORKFLOW_CONTEXT")].workflowRunId,
      useStep: globalThis[Symbol.for("WORKFLOW_USE_STEP")],
      sleep: globalThis[Symbol.for("WORKFLOW_SLEEP")],
      createHook: globalThis[Symbol.for("WORKFLOW_CREATE_HOOK")],
    });
  };
  fn.workflowId = ${JSON.stringify(`workflow//${MODULE}//`)} + name;
  globalThis.__private_workflows.set(fn.workflowId, fn);
}
`;
}
