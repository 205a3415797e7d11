import type { TeamMemberDef } from "./agent.js";
import { kindOf, ToolDefinitionError } from "./errors.js";
import { compileJsonSchema, compileParameters, type CompiledSchema, type ParameterSchema } from "./schema.js";

const SUBAGENT = Symbol.for("switchboard.subagent");

/** What `subagent()` takes. */
export interface SubagentOptions {
  /** What the calling model reads to decide when to delegate (the tool's description). */
  readonly description: string;
  /**
   * The tool's arguments (TypeBox or zod, an object). Default `{ task: string }`, whose text is
   * the sub-agent's one user message; with your own schema the message is the arguments as JSON.
   */
  readonly input?: ParameterSchema;
  /** The deadline of one delegation (ms, a positive integer); default `DEFAULTS.toolTimeoutMs` (30 000). */
  readonly timeoutMs?: number;
}

/**
 * A tool that runs another agent on a sub-task (docs/config.md "Sub-agents"): declared in
 * `agent({ subagents: { <tool name>: subagent(def, {...}) } })`, run by the gateway in text mode.
 */
export interface SubagentDef<Session = unknown> {
  readonly [SUBAGENT]: true;
  /** The agent that does the sub-task: its prompt, model and tools. */
  readonly agent: TeamMemberDef<Session>;
  readonly description: string;
  /** The tool's arguments, compiled once. */
  readonly parameters: CompiledSchema;
  /** True for the default input: the sub-agent's message is the `task` argument as it is. */
  readonly taskInput: boolean;
  readonly timeoutMs?: number;
}

let taskInput: CompiledSchema | undefined;

/** The default input: one task, written out in full (the sub-agent sees nothing else). Compiled on first use. */
function defaultTaskInput(): CompiledSchema {
  taskInput ??= compileJsonSchema(
  {
    type: "object",
    properties: { task: { type: "string", description: "The sub-task in full: the agent that does it sees nothing of this conversation but this text." } },
    required: ["task"],
    additionalProperties: false,
  },
  "subagent()",
  );
  return taskInput;
}

/**
 * Declare a tool backed by another agent. The def is checked here (it must be an agent
 * definition); whether it can run as a sub-agent (its mode, its tools, its own sub-agents) is
 * checked when the agent that declares it loads, with the field's path.
 */
export function subagent<Session = unknown>(agent: TeamMemberDef<Session>, options: SubagentOptions): SubagentDef<Session> {
  if (typeof agent !== "object" || agent === null || typeof (agent as { name?: unknown }).name !== "string") {
    throw new ToolDefinitionError(`subagent(): the first argument must be an agent definition, agent({ name, ... }) (got ${kindOf(agent)}).`);
  }
  if (typeof options !== "object" || options === null) {
    throw new ToolDefinitionError("subagent(): pass options such as { description: \"Researches a question and answers in two sentences.\" }.");
  }
  if (typeof options.description !== "string" || options.description.trim() === "") {
    throw new ToolDefinitionError("subagent(): `description` must be a non-empty string — the calling model reads it to decide when to delegate.");
  }
  if (options.timeoutMs !== undefined && (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0)) {
    throw new ToolDefinitionError("subagent(): `timeoutMs` must be a positive integer (milliseconds).");
  }
  const parameters = options.input === undefined ? defaultTaskInput() : compileParameters(options.input, "subagent()");
  return Object.freeze({
    [SUBAGENT]: true as const,
    agent,
    description: options.description.trim(),
    parameters,
    taskInput: options.input === undefined,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
}

/** Whether a value is what `subagent()` returns. */
export function isSubagentDef(value: unknown): value is SubagentDef {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[SUBAGENT] === true;
}

/** The one user message a delegation sends: the task itself, or the arguments as JSON. */
export function subagentPrompt(def: SubagentDef, args: unknown): string {
  if (def.taskInput) return (args as { task: string }).task;
  return JSON.stringify(args);
}
