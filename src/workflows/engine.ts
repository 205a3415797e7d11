/**
 * The workflow engine as the rest of the gateway sees it: start a durable run, read it, find a
 * caller's runs by key, read its journal, hear when it ends, deliver an external event, cancel.
 * One implementation today (workflow-sdk.ts: the Workflow SDK on its local, file-based world);
 * a distributed one (the same SDK's Postgres world) goes behind this same interface.
 *
 * Everything a stranger can reach through a later HTTP API (start's input, key and context,
 * deliver's token and payload) is bounded by `WorkflowLimits` and refused with a
 * `WorkflowRequestError` naming the field.
 */
import type { CallRequest, JsonValue, PlacedCall, RunContextData, WorkflowRunView } from "../manifest/index.js";
import type { PlacingLedger } from "./placing-journal.js";

/** Where a run is. `sleeping` and `waiting` are `running` runs inside `ctx.sleep` / `ctx.waitFor`. */
export type RunStatus = "pending" | "running" | "sleeping" | "waiting" | "completed" | "failed" | "cancelled";

/** The statuses a run ends in. */
export type EndStatus = "completed" | "failed" | "cancelled";

/** A run as the engine reads it: what `ctx.workflows.find` shows a tool, with its status narrowed and where it waits. */
export interface RunInfo extends WorkflowRunView {
  readonly status: RunStatus;
  /** While `waiting`: the token `deliver` resumes it with. */
  readonly waitingFor?: string;
  /** While `sleeping` (or `waiting` with a timeout): when the timer fires (epoch ms). */
  readonly wakeAt?: number;
}

/** One entry of a run's journal, oldest first. Payloads (inputs, results) are not copied here. */
export interface RunEvent {
  /** Opaque and increasing within a run: pass the last one seen as `events(runId, { after })`. */
  readonly id: string;
  /** The engine's event type: run_created, run_started, step_created, step_started, step_retrying, step_completed, step_failed, wait_created, wait_completed, hook_created, hook_received, hook_disposed, run_completed, run_failed, run_cancelled. */
  readonly type: string;
  /** Epoch milliseconds. */
  readonly at: number;
  /** Ties a step's, a wait's or a hook's events together. */
  readonly correlationId?: string;
  /** The declared step's name, on step events. */
  readonly step?: string;
  /** The try a step_started event begins (1, 2, …). */
  readonly attempt?: number;
  /** The error message on step_retrying, step_failed and run_failed (clipped). */
  readonly error?: string;
  /** The token, on hook_created. */
  readonly token?: string;
  /** When a wait_created timer fires (epoch ms). */
  readonly wakeAt?: number;
}

/** What `onRunEnd` listeners hear. */
export interface RunEnd {
  readonly runId: string;
  readonly status: EndStatus;
  readonly workflow?: string;
  readonly key?: string;
}

/** One workflow as the engine lists it. */
export interface WorkflowSummary {
  readonly description: string;
  /** The JSON Schema a start's `input` is validated against. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The declared steps' names. */
  readonly steps: readonly string[];
}

export interface StartOptions {
  /** The correlation key `find(key)` finds the run by: e.g. a caller's number. */
  readonly key?: string;
  /** Plain JSON the body and its steps see as `ctx.context`. */
  readonly context?: RunContextData;
}

export interface WorkflowEngine {
  /** The workflows it runs, by name: their descriptions, input JSON Schemas and declared steps. */
  readonly workflows: ReadonlyMap<string, WorkflowSummary>;
  /** Where its runs are, for the log: `{ dir }`, or `{ database }` with the password hidden. */
  readonly where: Readonly<Record<string, string>>;
  /**
   * Lend it the telephony behind `ctx.calls` (undefined: take it back), as `createWorkflowEngine({
   * calls })` does at creation: a gateway given an engine (`createGateway({ workflowEngine })`)
   * lends it its calls as it starts listening.
   */
  useCalls(calls: CallPlacer | undefined): void;
  /** Start a run of `name`: `input` is validated with the workflow's schema. Refusals are `WorkflowRequestError`s. */
  start(name: string, input: unknown, options?: StartOptions): Promise<{ readonly runId: string }>;
  /** The run, or undefined when there is none by that id (or it was pruned). */
  get(runId: string): Promise<RunInfo | undefined>;
  /** The runs started with `key`, oldest first. */
  find(key: string): Promise<RunInfo[]>;
  /** The run's journal (after the event `after`, at most `limit`); undefined when there is no such run. */
  events(runId: string, options?: { readonly after?: string; readonly limit?: number }): Promise<RunEvent[] | undefined>;
  /**
   * Call `listener` with a run's id after each journal event this process writes for it (no
   * payload: read them with `events(runId, { after })`). Returns the unsubscribe.
   */
  onRunEvent(listener: (runId: string) => void): () => void;
  /** Call `listener` once when a run this process executes ends. Returns the unsubscribe. */
  onRunEnd(listener: (end: RunEnd) => void): () => void;
  /** Resume the run waiting for `token` with `payload`; false when no run waits for it now. */
  deliver(token: string, payload: JsonValue): Promise<boolean>;
  /** Cancel a run that has not ended; false when there is no such run or it already ended. */
  cancel(runId: string): Promise<boolean>;
  /** Stop executing runs (they resume when an engine opens the same directory again). */
  close(): Promise<void>;
}

/** Bounds on what callers (later: strangers, through the HTTP API) can make the engine store. */
export interface WorkflowLimits {
  /** A start's `input`, as JSON (bytes). */
  readonly maxInputBytes: number;
  /** A start's `context`, as JSON (bytes). */
  readonly maxContextBytes: number;
  /** A `deliver` payload, as JSON (bytes). */
  readonly maxPayloadBytes: number;
  /** Characters in a key or a token. */
  readonly maxKeyLength: number;
  /** Runs of one key that have not ended; one more start with that key is refused. */
  readonly maxActiveRunsPerKey: number;
  /** Events one `events()` call returns. */
  readonly maxEventsPerPage: number;
}

export const DEFAULT_LIMITS: WorkflowLimits = {
  maxInputBytes: 64 * 1024,
  maxContextBytes: 8 * 1024,
  maxPayloadBytes: 64 * 1024,
  maxKeyLength: 256,
  maxActiveRunsPerKey: 16,
  maxEventsPerPage: 1000,
};

/** Why a request was refused; `code` maps onto an HTTP status later (404, 400, 413, 429). */
export type RequestErrorCode = "unknown_workflow" | "invalid" | "too_large" | "too_many_runs";

export class WorkflowRequestError extends Error {
  override readonly name = "WorkflowRequestError";
  constructor(
    readonly code: RequestErrorCode,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** Keys and tokens: printable, no spaces or control characters, bounded. */
const KEY = /^[\x21-\x7e]+$/;

/** `value` checked as a key or token named `field`. */
export function checkKey(value: unknown, field: string, limits: WorkflowLimits): string {
  if (typeof value !== "string" || value.length === 0) throw new WorkflowRequestError("invalid", field, "must be a non-empty string");
  if (value.length > limits.maxKeyLength) throw new WorkflowRequestError("too_large", field, `is ${value.length} characters; at most ${limits.maxKeyLength}`);
  if (!KEY.test(value)) throw new WorkflowRequestError("invalid", field, "must be printable ASCII without spaces");
  return value;
}

/** `value`'s JSON size checked against `max` bytes; refuses what JSON cannot carry. */
export function checkJsonSize(value: unknown, field: string, max: number): void {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    throw new WorkflowRequestError("invalid", field, "must be plain JSON data");
  }
  if (json === undefined) throw new WorkflowRequestError("invalid", field, "must be plain JSON data");
  const bytes = Buffer.byteLength(json);
  if (bytes > max) throw new WorkflowRequestError("too_large", field, `is ${bytes} bytes as JSON; at most ${max}`);
}

/** Who asks for a call: the run, and the identity of this placement within it. */
export interface CallPlacement {
  readonly runId: string;
  readonly workflow: string;
  readonly key?: string;
  /** The run's context (the call's session sees it when the request names none). */
  readonly context: RunContextData;
  /** The engine token the call's outcome is to be delivered under. */
  readonly token: string;
  /** Stable across the step's tries and a restart (`<runId>:call:<n>`): the same key never dials twice. */
  readonly idempotencyKey: string;
}

/** Where runs live: exactly one of a directory and a database (docs/workflows.md "Where runs live"). */
export type RunsIn =
  /** A directory (absolute, or relative to the working directory), created if missing: one process. */
  | { readonly dir: string; readonly database?: undefined }
  /** A PostgreSQL database (`postgres://…`), shared by every process that opens it. */
  | { readonly database: string; readonly dir?: undefined };

/** What an open engine lends its placer: the way outcomes reach runs, and where placements are remembered (beside the runs). */
export interface EnginePort {
  deliver(token: string, payload: JsonValue): Promise<boolean>;
  readonly placings: PlacingLedger;
}

/**
 * The telephony side of `ctx.calls` (src/server/telephony/workflow-calls.ts), handed to the
 * engine as `calls`: the engine calls `place` from a journalled step, and `attach` with its port
 * once open (undefined once closed) so placements are remembered and call outcomes reach the runs.
 */
export interface CallPlacer {
  /** Place the call; rejects with a `PermanentStepError` for a refusal no retry changes. */
  place(request: CallRequest, placement: CallPlacement): Promise<PlacedCall>;
  attach(port: EnginePort | undefined): void;
}
