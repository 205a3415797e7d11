import { jsonSchema, type JSONValue, type ToolSet } from "ai";
import type { JSONSchema7 } from "json-schema";

/** One tool call the model made, as the reply loop hands it to whoever runs tools. */
export interface ToolInvocation {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
  /** Aborted when the reply is cancelled. */
  readonly signal: AbortSignal;
}

/** What the model reads back, and whether the step ends in a verbatim assistant line. */
export interface ToolAnswer {
  readonly modelText: string;
  readonly isError: boolean;
  /** A `complete`/`failed` message with role "assistant": spoken verbatim, recorded, and the model is not called again. */
  readonly verbatim?: string;
}

/** Runs tool calls: the session's tool runner in production, a fake in a test. */
export type ToolInvoker = (call: ToolInvocation) => Promise<ToolAnswer>;

/** A tool as the model is told about it. */
export interface ToolDeclaration {
  readonly name: string;
  readonly description: string;
  readonly parameters: JSONSchema7;
}

/** Accepts whatever the model sent: the invoker validates, so a bad call is a result the model reads. */
const acceptAll = (value: unknown) => ({ success: true as const, value });

/**
 * The AI SDK tool set for a declared list: declarations only. The reply loop runs each call
 * through the session's invoker itself (reply-loop.ts) and sends the model its text
 * (`error-text` for a failure, so providers that mark errors do).
 */
export function aiToolSet(declarations: readonly ToolDeclaration[]): ToolSet {
  const set: ToolSet = {};
  for (const declaration of declarations) {
    set[declaration.name] = { description: declaration.description, inputSchema: jsonSchema(declaration.parameters, { validate: acceptAll }) };
  }
  return set;
}

/** Narrow a JSON value the model produced (args) for logs and events. */
export type ToolArgs = JSONValue;
