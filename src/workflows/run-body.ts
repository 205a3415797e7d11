/**
 * What a run's body and steps see (docs/workflows.md "Writing a workflow"): the body's `ctx` for
 * one replay, every call going through the SDK's journalled primitives; a declared step's policy
 * mapped onto the SDK's errors; and the built-in step behind `ctx.calls.place`.
 */
import { FatalError, RetryableError } from "@workflow/errors";
import {
  parseDuration,
  PermanentStepError,
  retryDelayMs,
  type AnyWorkflowDef,
  type CallOutcome,
  type CallRequest,
  type PlacedCall,
  type ResolvedRetry,
  type RunContextData,
  type StepDef,
  type WaitResult,
  type WorkflowContext,
} from "../manifest/index.js";
import type { CallPlacer } from "./engine.js";
import { errorText, isNamed } from "./journal.js";
import { currentAttempt, stepId, type VmHook, type VmPrimitives } from "./sdk-contract.js";

/** Why `ctx.calls.place` cannot place: no telephony was lent to the engine. */
const NO_CALLS = "ctx.calls.place: this gateway places no calls: mount twilio or telnyx in the agent's telephony field (the gateway lends its calls to its workflow engine)";

/** The built-in step behind `ctx.calls.place` (a name no declared step can have: those have no "."). */
export const PLACE_STEP = "calls.place";
/**
 * Its tries: a refusal no retry changes fails at once (PermanentStepError); the rest (a budget
 * full this minute, a carrier 5xx) are tried again. The placer never dials twice per key, so a
 * retry after a try that may have dialled answers `uncertain` instead.
 */
export const PLACE_RETRY: ResolvedRetry = { attempts: 4, backoff: "exponential", delayMs: 5_000, maxDelayMs: 60_000 };

/** What a run carries as its one argument: the validated input and the starter's data. */
export interface Envelope {
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

/** The host side of `ctx.calls.place`: `(request, token, n, ctx)` after the step meta, to the gateway's placer. */
export function placeCall(placer: () => CallPlacer | undefined): (...args: unknown[]) => Promise<PlacedCall> {
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
export function stepRunner(spec: StepDef): (...args: unknown[]) => Promise<unknown> {
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
export function bodyContext(name: string, def: AnyWorkflowDef, vm: VmPrimitives, key: string | undefined, context: RunContextData, placing: boolean): WorkflowContext<Record<string, StepDef>> {
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
