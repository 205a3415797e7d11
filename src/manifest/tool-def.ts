import type { DialogStore } from "./dialog-store.js";
import { ToolDefinitionError } from "./errors.js";
import { compileParameters, NO_PARAMETERS, type CompiledSchema, type InferParameters, type ParameterSchema } from "./schema.js";
import { normalizeToolMessages, type ToolMessages, type ToolMessagesInput } from "./tool-messages.js";

/** What a running tool may use. One per call. */
export interface ToolContext<Session = unknown> {
  readonly toolCallId: string;
  /** Aborted when the reply that made the call is cancelled, or the call times out. */
  readonly signal: AbortSignal;
  /** The gateway session id; absent outside a gateway session (e.g. under the AI SDK). */
  readonly sessionId?: string;
  /** The value the agent's `sessionContext()` made for this session (AI SDK: its `context`). */
  readonly session: Session;
  /** Progress for a long call, where the host can show it; undefined where nobody listens. */
  readonly progress?: ((update: string) => void) | undefined;
  /** Ask the person on the line; undefined where there is nobody to answer. */
  readonly ask?: ((question: string) => Promise<string>) | undefined;
  /**
   * Where this conversation's dialogs are (one store per conversation), which a dialog's tools
   * read and move. The gateway gives one per session; elsewhere it is absent and a dialog tool
   * keeps its position by `session` object instead (docs/config.md, "Dialogs").
   */
  readonly dialogs?: DialogStore | undefined;
  /**
   * The agent's durable workflows, started and found from this call (docs/workflows.md "From a
   * live session"). Undefined when the agent declares no `workflows`, in a sub-agent's tools, and
   * outside a gateway session.
   */
  readonly workflows?: ToolWorkflows | undefined;
}

/** `ctx.workflows.start`'s options. */
export interface WorkflowStartOptions {
  /** The correlation key a later call finds the run by (`find(key)`): e.g. the caller's account or number. */
  readonly key?: string | undefined;
  /** Tell the agent when the run ends while this session is live: it says so at the next polite moment. */
  readonly notify?: boolean | undefined;
}

/** A run as `ctx.workflows.find` lists it. Timestamps are epoch milliseconds. */
export interface WorkflowRunView {
  readonly runId: string;
  readonly workflow: string;
  /** `pending`, `running`, `sleeping`, `waiting`, `completed`, `failed` or `cancelled`. */
  readonly status: string;
  readonly key?: string;
  /** The body's return value, once `completed`. */
  readonly output?: unknown;
  /** Why it failed, once `failed`. */
  readonly error?: { readonly message: string; readonly code?: string };
  readonly createdAt: number;
  readonly startedAt?: number;
  readonly completedAt?: number;
}

/** What a tool sees of the agent's workflows (`ctx.workflows`). */
export interface ToolWorkflows {
  /** Start a run of one of the agent's workflows; rejects with a readable message for an unknown name or bad input. */
  start(name: string, input?: unknown, options?: WorkflowStartOptions): Promise<{ readonly runId: string }>;
  /** The runs started under `key`, newest first (at most `MAX_FOUND_RUNS`, docs/workflows.md). */
  find(key: string): Promise<readonly WorkflowRunView[]>;
}

/** A refusal the model reads: why the tool cannot run now, and how to get there. */
export interface ToolRefusal {
  readonly reason: string;
  readonly recover?: string;
}

/** The text a model reads for a refusal. */
export function refusalText(tool: string, refusal: ToolRefusal): string {
  const recover = refusal.recover === undefined ? "" : ` ${refusal.recover}`;
  return `${tool} cannot run now: ${refusal.reason}.${recover}`.replace(/\.\./g, ".");
}

/** A tool's result in its normalized form. */
export interface ToolResult<Details = unknown> {
  /** What the model reads (and, for a voice agent, what it will paraphrase). */
  readonly text?: string;
  /** Structured data for the program (UI, logs, tests); the model does not read it. */
  readonly details?: Details;
  readonly isError?: boolean;
}

/** JSON values a tool may return. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** What `execute` may return: a string, a JSON value, or `{ text, details?, isError? }`. */
export type ToolReturn<Details = unknown> = string | JsonValue | ToolResult<Details> | undefined | void;

/** What the tool does to the world. `write` tools are never re-run (a re-run is a second effect). */
export type ToolEffect = "read" | "write";

/** How a page displays a tool call. */
export interface ToolUi {
  readonly title?: string;
  readonly icon?: string;
  /** Keep the call out of the transcript view. */
  readonly hidden?: boolean;
}

/** A tool's own gate: `undefined` when it may run now. Travels with the def everywhere. */
export type ToolDefGate<Session = unknown> = (ctx: ToolContext<Session>) => ToolRefusal | undefined;

const CLIENT_TOOL = Symbol.for("switchboard.clientTool");
const TOOL_DEF = Symbol.for("switchboard.tool");

/** A tool as the runtime holds it: normalized schema and messages, ready to advertise. */
export interface ToolDef<Args = unknown, Details = unknown, Session = unknown> {
  readonly [TOOL_DEF]: true;
  readonly description: string;
  /** Validates to `Args`; typed `unknown` so defs of any arguments share one erased type. */
  readonly parameters: CompiledSchema;
  /** Absent on a clientTool, whose body runs in the connected page. */
  readonly execute?: (args: Args, ctx: ToolContext<Session>) => ToolReturn<Details> | Promise<ToolReturn<Details>>;
  readonly messages?: ToolMessages;
  readonly effect?: ToolEffect;
  readonly ui?: ToolUi;
  /** Per-call deadline in ms (runtime default 30 000). */
  readonly timeoutMs?: number;
  /** The voice-friendly text the model reads when the body throws. */
  readonly onError?: string | ((error: unknown) => string);
  readonly gate?: ToolDefGate<Session>;
}

/** A def of any arguments and session type, as collections hold them. */
export type AnyToolDef = ToolDef<never, unknown, never>;

/** A set of defs keyed by the name the model calls. */
export type ToolMap = Readonly<Record<string, AnyToolDef>>;

/** Run a def's body with arguments its own schema already validated. */
export function invokeTool(def: AnyToolDef, args: unknown, ctx: ToolContext): Promise<ToolReturn> {
  const execute = def.execute as ((args: unknown, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>) | undefined;
  if (execute === undefined) {
    return Promise.reject(new ToolDefinitionError("this tool is a clientTool: the connected page runs it, not this process."));
  }
  try {
    return Promise.resolve(execute(args, ctx));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

interface CommonOptions<P extends ParameterSchema | undefined, Session> {
  readonly description: string;
  readonly parameters?: P;
  readonly messages?: ToolMessagesInput;
  readonly ui?: ToolUi;
  readonly timeoutMs?: number;
  readonly gate?: ToolDefGate<Session>;
}

/** The arguments a `parameters` schema validates to (none when it is left out). */
export type ArgsOf<P> = P extends ParameterSchema ? InferParameters<P> : Record<string, never>;

/** What `tool()` takes. */
export interface ToolOptions<P extends ParameterSchema | undefined, Details, Session> extends CommonOptions<P, Session> {
  readonly execute: (args: ArgsOf<P>, ctx: ToolContext<Session>) => ToolReturn<Details> | Promise<ToolReturn<Details>>;
  readonly effect?: ToolEffect;
  readonly onError?: string | ((error: unknown) => string);
}

/** What `clientTool()` takes: no body, the page runs it and answers with `tool_result`. */
export type ClientToolOptions<P extends ParameterSchema | undefined, Session> = CommonOptions<P, Session>;

/** Default deadline for a call the page executes (ms). */
export const CLIENT_TOOL_TIMEOUT_MS = 30_000;

function checkCommon(options: CommonOptions<ParameterSchema | undefined, never>, kind: string): void {
  if (typeof options !== "object" || options === null) {
    throw new ToolDefinitionError(`${kind}(): pass an object such as { description, parameters, execute }.`);
  }
  if (typeof options.description !== "string" || options.description.trim() === "") {
    throw new ToolDefinitionError(`${kind}(): \`description\` must be a non-empty string — the model reads it to decide when to call the tool.`);
  }
  if (options.timeoutMs !== undefined && (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0)) {
    throw new ToolDefinitionError(`${kind}(): \`timeoutMs\` must be a positive integer (milliseconds).`);
  }
  if (options.gate !== undefined && typeof options.gate !== "function") {
    throw new ToolDefinitionError(`${kind}(): \`gate\` must be a function (ctx) => refusal | undefined.`);
  }
}

function build<Args, Details, Session>(
  options: CommonOptions<ParameterSchema | undefined, Session>,
  kind: string,
  extra: Partial<ToolDef<Args, Details, Session>>,
): ToolDef<Args, Details, Session> {
  checkCommon(options, kind);
  const parameters: CompiledSchema =
    options.parameters === undefined ? NO_PARAMETERS : compileParameters(options.parameters, `${kind}()`);
  const messages = normalizeToolMessages(options.messages);
  return {
    [TOOL_DEF]: true,
    description: options.description.trim(),
    parameters,
    ...(messages === undefined ? {} : { messages }),
    ...(options.ui === undefined ? {} : { ui: options.ui }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.gate === undefined ? {} : { gate: options.gate }),
    ...extra,
  };
}

/**
 * Declare a tool this process runs. `parameters` is a TypeBox or zod object schema, normalized
 * once to JSON Schema with a compiled validator; arguments are validated before `execute`.
 */
export function tool<P extends ParameterSchema | undefined = undefined, Details = unknown, Session = unknown>(
  options: ToolOptions<P, Details, Session>,
): ToolDef<ArgsOf<P>, Details, Session> {
  if (typeof options?.execute !== "function") {
    throw new ToolDefinitionError("tool(): `execute` must be a function (args, ctx) => result. For a tool the page runs, use clientTool().");
  }
  if (options.effect !== undefined && options.effect !== "read" && options.effect !== "write") {
    throw new ToolDefinitionError('tool(): `effect` must be "read" or "write".');
  }
  return build<ArgsOf<P>, Details, Session>(options, "tool", {
    execute: options.execute,
    ...(options.effect === undefined ? {} : { effect: options.effect }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
}

/** Declare a tool the connected page runs: the gateway emits `tool.called` and waits for `tool_result`. */
export function clientTool<P extends ParameterSchema | undefined = undefined, Session = unknown>(
  options: ClientToolOptions<P, Session>,
): ToolDef<ArgsOf<P>, unknown, Session> {
  const def = build<ArgsOf<P>, unknown, Session>(options, "clientTool", {
    timeoutMs: options?.timeoutMs ?? CLIENT_TOOL_TIMEOUT_MS,
  });
  return Object.defineProperty(def, CLIENT_TOOL, { value: true, enumerable: false });
}

/** What a tool is, for a message refusing something that is not one. */
export const TOOL_SHAPE = "tool({ description, execute }) or clientTool({ description })";

/** Whether a value is a def made by `tool()` or `clientTool()`. */
export function isToolDef(value: unknown): value is ToolDef {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[TOOL_DEF] === true;
}

/** Whether a def carries the clientTool brand. */
export function isClientTool(def: AnyToolDef): boolean {
  return (def as unknown as Record<PropertyKey, unknown>)[CLIENT_TOOL] === true;
}

function isResultShape(value: object): value is ToolResult {
  const keys = Object.keys(value);
  if (!keys.includes("text")) return false;
  const text = (value as { text?: unknown }).text;
  return typeof text === "string" && keys.every((k) => k === "text" || k === "details" || k === "isError");
}

/** Normalize what `execute` returned. A plain JSON value becomes `details` with no text. */
export function toToolResult(value: ToolReturn): ToolResult {
  if (value === undefined || value === null) return { text: "Done." };
  if (typeof value === "string") return { text: value };
  if (typeof value === "object" && !Array.isArray(value) && isResultShape(value)) return value;
  return { details: value };
}

/** The text a model reads for a result: its text, or the details as JSON. */
export function resultText(result: ToolResult): string {
  if (result.text !== undefined) return result.text;
  return JSON.stringify(result.details ?? null);
}
