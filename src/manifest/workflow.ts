import { ToolDefinitionError } from "./errors.js";
import { compileParameters, NO_PARAMETERS, type CompiledSchema, type InferParameters, type ParameterSchema } from "./schema.js";

const WORKFLOW = Symbol.for("switchboard.workflow");
const DECLARATION = Symbol.for("switchboard.workflowDeclaration");

/** What a running workflow may use. */
export interface WorkflowContext<Session = unknown> {
  readonly signal: AbortSignal;
  readonly sessionId?: string;
  readonly session: Session;
}

/** A named, long-running job an agent can start (and a host can list). */
export interface WorkflowDef<Input = unknown, Output = unknown, Session = unknown> {
  readonly [WORKFLOW]: true;
  readonly description: string;
  /** Validates to `Input`; typed `unknown` so defs of any input share one erased type. */
  readonly input: CompiledSchema;
  readonly run: (input: Input, ctx: WorkflowContext<Session>) => Output | Promise<Output>;
}

/** A workflow of any types, as collections hold them. */
export type AnyWorkflowDef = WorkflowDef<never, unknown, never>;

/** The first phase of a two-phase declaration: it becomes a def once `.body()` is given. */
export interface WorkflowDeclaration<Input, Session = unknown> {
  readonly [DECLARATION]: true;
  readonly description: string;
  body<Output>(run: (input: Input, ctx: WorkflowContext<Session>) => Output | Promise<Output>): WorkflowDef<Input, Output, Session>;
}

type InputOf<P> = P extends ParameterSchema ? InferParameters<P> : Record<string, never>;

interface WorkflowOptions<P extends ParameterSchema | undefined> {
  readonly description: string;
  readonly input?: P;
}

/**
 * Declare a workflow in two phases — `workflow({ description, input }).body(run)` — so the
 * input type is inferred before the body is written.
 */
export function workflow<P extends ParameterSchema | undefined = undefined, Session = unknown>(
  options: WorkflowOptions<P>,
): WorkflowDeclaration<InputOf<P>, Session> {
  if (typeof options?.description !== "string" || options.description.trim() === "") {
    throw new ToolDefinitionError("workflow(): `description` must be a non-empty string.");
  }
  const description = options.description.trim();
  const input = options.input === undefined ? NO_PARAMETERS : compileParameters(options.input, "workflow()");
  return {
    [DECLARATION]: true,
    description,
    body(run) {
      if (typeof run !== "function") throw new ToolDefinitionError("workflow().body(run): `run` must be a function (input, ctx) => result.");
      return { [WORKFLOW]: true, description, input, run };
    },
  };
}

export function isWorkflowDef(value: unknown): value is AnyWorkflowDef {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[WORKFLOW] === true;
}

export function isWorkflowDeclaration(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[DECLARATION] === true;
}
