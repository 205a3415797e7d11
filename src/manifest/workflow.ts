/**
 * The workflow author's API: `workflow({ description, input, steps }).body(fn)`, and `step()`
 * for a step with its own retry policy. A workflow is a durable run (docs/workflows.md): its
 * body replays from the top after every step, so everything here is data and pure functions —
 * which engine runs it is src/workflows' business, not the author's.
 */
import { parseDuration, type Duration } from "./duration.js";
import { kindOf, ToolDefinitionError } from "./errors.js";
import { compileParameters, NO_PARAMETERS, type CompiledSchema, type InferParameters, type ParameterSchema } from "./schema.js";
import type { JsonValue } from "./tool-def.js";
import type { WorkflowCalls } from "./workflow-calls.js";

export type { Duration } from "./duration.js";

const WORKFLOW = Symbol.for("switchboard.workflow");
const DECLARATION = Symbol.for("switchboard.workflowDeclaration");
const STEP = Symbol.for("switchboard.workflowStep");

/** Names of workflows and steps: they become parts of the engine's ids and of URLs. */
export const WORKFLOW_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Plain JSON data a starter attaches to a run (a session's id, a caller's number): a run outlives any live object. */
export type RunContextData = { readonly [key: string]: JsonValue };

/** What a step function gets after its arguments. */
export interface StepContext {
  readonly runId: string;
  /** 1 on the first try, 2 on the first retry, … */
  readonly attempt: number;
  /** The run's correlation key, when its starter gave one. */
  readonly key?: string;
  readonly context: RunContextData;
}

/** How a failing step is tried again. */
export interface RetryPolicy {
  /** Tries in all, the first included: 1 (never retried) to 20. Default 4. */
  readonly attempts: number;
  /** `fixed`: `delay` between tries; `exponential`: `delay`, then ×2 each retry up to `maxDelay`. Default `fixed`. */
  readonly backoff?: "fixed" | "exponential";
  /** The wait before the first retry, 1 s to 1 d. The engine counts whole seconds, rounding up. Default `"1s"`. */
  readonly delay?: Duration;
  /** The longest wait between tries under `exponential`. Default `"1h"`, at most 1 d. */
  readonly maxDelay?: Duration;
}

/** A retry policy checked and in milliseconds. */
export interface ResolvedRetry {
  readonly attempts: number;
  readonly backoff: "fixed" | "exponential";
  readonly delayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: ResolvedRetry = { attempts: 4, backoff: "fixed", delayMs: 1_000, maxDelayMs: 3_600_000 };
const MAX_ATTEMPTS = 20;
const MIN_DELAY_MS = 1_000;
const MAX_DELAY_MS = 86_400_000;

/**
 * Thrown by a step to fail it at once, without the retries its policy allows (a refusal no
 * retry can change: a validation error, a 4xx answer). The body's `await` rejects with it.
 */
export class PermanentStepError extends Error {
  override readonly name = "PermanentStepError";
}

/*
 * A step function: its arguments, then a StepContext. The author annotates its parameters
 * (`(orderId: string, ctx: StepContext) => …`); the callers' types come from those annotations
 * (`StepCaller`), so the parameters are left `any` here rather than constraining them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type StepFunction = (...args: any[]) => unknown;

/** A step declared with `step(options, fn)`. */
export interface StepDef<F extends StepFunction = StepFunction> {
  readonly [STEP]: true;
  readonly fn: F;
  readonly retry: ResolvedRetry;
}

/** What `steps` may hold: a function (the default policy) or `step(options, fn)`. */
export type StepSpec = StepFunction | StepDef;

/** Drops the trailing StepContext parameter (an `any`- or `unknown`-typed last parameter counts as one). */
type DropContext<P extends readonly unknown[]> = P extends readonly [...infer A, infer L] ? ([StepContext] extends [L] ? A : P) : P;

type CallerOf<F> = F extends (...args: infer P) => infer R ? (...args: DropContext<P>) => Promise<Awaited<R>> : never;

/** How the body calls a declared step: its arguments (JSON-like data), its result awaited. */
export type StepCaller<S> = S extends StepDef<infer F> ? CallerOf<F> : CallerOf<S>;

export type StepCallers<Steps> = { readonly [K in keyof Steps]: StepCaller<Steps[K]> };

/** What `ctx.waitFor` resolves to: the delivered payload, or the timeout. */
export type WaitResult<T = unknown> = { readonly status: "received"; readonly payload: T } | { readonly status: "timeout" };

/** What a workflow body may use. */
export interface WorkflowContext<Steps = Record<string, never>> {
  readonly runId: string;
  /** The run's correlation key, when its starter gave one. */
  readonly key?: string;
  /** The starter's data (plain JSON). */
  readonly context: RunContextData;
  /** The declared steps: each call is journalled and, once completed, never runs again for this run. */
  readonly steps: StepCallers<Steps>;
  /** A durable sleep: it survives a restart and ends at its original deadline. */
  readonly sleep: (duration: Duration) => Promise<void>;
  /**
   * Wait for the external event `token` (delivered by the engine's `deliver(token, payload)`),
   * at most `timeout` when given. Resolves to `{ status: "received", payload }` or
   * `{ status: "timeout" }`; never rejects on a timeout.
   */
  readonly waitFor: <T = unknown>(token: string, options?: { readonly timeout?: Duration }) => Promise<WaitResult<T>>;
  /** Place a phone call and wait for how it went (docs/workflows.md "Calling out"). */
  readonly calls: WorkflowCalls;
}

/** A workflow body: replayed from the top after each step, so deterministic outside its steps. */
export type WorkflowBody<Input, Output, Steps> = (input: Input, ctx: WorkflowContext<Steps>) => Output | Promise<Output>;

/** A named, durable job an agent can start (and a host can list). */
export interface WorkflowDef<Input = unknown, Output = unknown, Steps = Record<string, never>> {
  readonly [WORKFLOW]: true;
  readonly description: string;
  /** Validates to `Input`; typed `unknown` so defs of any input share one erased type. */
  readonly input: CompiledSchema;
  /** The declared steps, checked: name → function and retry policy. */
  readonly steps: Readonly<Record<string, StepDef>>;
  readonly run: WorkflowBody<Input, Output, Steps>;
}

/** A workflow of any types, as collections hold them. */
export type AnyWorkflowDef = WorkflowDef<never, unknown, never>;

/** The first phase of a two-phase declaration: it becomes a def once `.body()` is given. */
export interface WorkflowDeclaration<Input, Steps> {
  readonly [DECLARATION]: true;
  readonly description: string;
  body<Output>(run: WorkflowBody<Input, Output, Steps>): WorkflowDef<Input, Output, Steps>;
}

type InputOf<P> = P extends ParameterSchema ? InferParameters<P> : Record<string, never>;

interface WorkflowOptions<P extends ParameterSchema | undefined, Steps> {
  readonly description: string;
  readonly input?: P;
  readonly steps?: Steps;
}

const OPTION_FIELDS = ["description", "input", "steps"];
const RETRY_FIELDS = ["attempts", "backoff", "delay", "maxDelay"];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function refuseUnknown(value: Record<string, unknown>, known: readonly string[], where: string): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new ToolDefinitionError(`${where}: ${unknown.join(", ")} ${unknown.length === 1 ? "is not a field" : "are not fields"}; the fields are ${known.join(", ")}.`);
}

/** A retry policy checked against its bounds, in milliseconds. */
export function resolveRetry(retry: unknown, where: string): ResolvedRetry {
  if (retry === undefined) return DEFAULT_RETRY;
  if (!isPlainObject(retry)) throw new ToolDefinitionError(`${where}: must be an object { attempts, backoff?, delay?, maxDelay? } (got ${kindOf(retry)}).`);
  refuseUnknown(retry, RETRY_FIELDS, where);
  const { attempts, backoff = "fixed", delay = "1s", maxDelay = "1h" } = retry;
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    throw new ToolDefinitionError(`${where}.attempts: must be a whole number of tries from 1 (never retried) to ${MAX_ATTEMPTS} (got ${JSON.stringify(attempts) ?? kindOf(attempts)}).`);
  }
  if (backoff !== "fixed" && backoff !== "exponential") throw new ToolDefinitionError(`${where}.backoff: must be "fixed" or "exponential" (got ${JSON.stringify(backoff) ?? kindOf(backoff)}).`);
  const delayMs = parseDuration(delay, `${where}.delay`, MAX_DELAY_MS);
  if (delayMs < MIN_DELAY_MS) throw new ToolDefinitionError(`${where}.delay: must be at least 1s (the engine schedules retries in whole seconds).`);
  const maxDelayMs = parseDuration(maxDelay, `${where}.maxDelay`, MAX_DELAY_MS);
  if (maxDelayMs < delayMs) throw new ToolDefinitionError(`${where}.maxDelay: must be at least delay (${delayMs} ms).`);
  return { attempts, backoff, delayMs, maxDelayMs };
}

/** The wait before try `attempt + 1` after try `attempt` failed (ms). */
export function retryDelayMs(retry: ResolvedRetry, attempt: number): number {
  if (retry.backoff === "fixed") return retry.delayMs;
  return Math.min(retry.maxDelayMs, retry.delayMs * 2 ** Math.max(0, attempt - 1));
}

/** A step with its own retry policy: `steps: { callBack: step({ retry: { attempts: 5, backoff: "exponential", delay: "30s" } }, fn) }`. */
export function step<F extends StepFunction>(options: { readonly retry?: RetryPolicy }, fn: F): StepDef<F> {
  if (!isPlainObject(options)) throw new ToolDefinitionError(`step(options, fn): options must be an object { retry? } (got ${kindOf(options)}).`);
  refuseUnknown(options, ["retry"], "step(options, fn)");
  if (typeof fn !== "function") throw new ToolDefinitionError(`step(options, fn): fn must be a function (...args, ctx) => result (got ${kindOf(fn)}).`);
  return { [STEP]: true, fn, retry: resolveRetry(options.retry, "step(options, fn): retry") };
}

export function isStepDef(value: unknown): value is StepDef {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[STEP] === true;
}

function resolveSteps(steps: unknown): Readonly<Record<string, StepDef>> {
  if (steps === undefined) return {};
  if (!isPlainObject(steps)) throw new ToolDefinitionError(`workflow(): \`steps\` must be an object of name → function or step(options, fn) (got ${kindOf(steps)}).`);
  const resolved: Record<string, StepDef> = {};
  for (const [name, spec] of Object.entries(steps)) {
    if (!WORKFLOW_NAME.test(name)) {
      throw new ToolDefinitionError(`workflow(): steps.${name}: a step name is 1–64 letters, digits, "_" or "-"; rename it.`);
    }
    if (typeof spec === "function") resolved[name] = { [STEP]: true, fn: spec as StepFunction, retry: DEFAULT_RETRY };
    else if (isStepDef(spec)) resolved[name] = spec;
    else throw new ToolDefinitionError(`workflow(): steps.${name}: must be a function (...args, ctx) => result or step(options, fn) (got ${kindOf(spec)}).`);
  }
  return resolved;
}

/**
 * Declare a workflow in two phases — `workflow({ description, input, steps }).body(run)` — so
 * the input and step types are inferred before the body is written.
 */
export function workflow<P extends ParameterSchema | undefined = undefined, Steps extends Readonly<Record<string, StepSpec>> = Record<string, never>>(
  options: WorkflowOptions<P, Steps>,
): WorkflowDeclaration<InputOf<P>, Steps> {
  if (!isPlainObject(options)) throw new ToolDefinitionError(`workflow(options): options must be an object { description, input?, steps? } (got ${kindOf(options)}).`);
  refuseUnknown(options, OPTION_FIELDS, "workflow()");
  if (typeof options.description !== "string" || options.description.trim() === "") {
    throw new ToolDefinitionError("workflow(): `description` must be a non-empty string.");
  }
  const description = options.description.trim();
  const input = options.input === undefined ? NO_PARAMETERS : compileParameters(options.input, "workflow()");
  const steps = resolveSteps(options.steps);
  return {
    [DECLARATION]: true,
    description,
    body(run) {
      if (typeof run !== "function") throw new ToolDefinitionError("workflow().body(run): `run` must be a function (input, ctx) => result.");
      return { [WORKFLOW]: true, description, input, steps, run };
    },
  };
}

export function isWorkflowDef(value: unknown): value is AnyWorkflowDef {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[WORKFLOW] === true;
}

export function isWorkflowDeclaration(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[DECLARATION] === true;
}
