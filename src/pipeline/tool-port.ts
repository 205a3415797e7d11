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
 * The AI SDK tool set for a declared list. Every call goes to the invoker; the model reads its
 * text (`error-text` for a failure, so providers that mark errors do).
 */
export function aiToolSet(declarations: readonly ToolDeclaration[], invoke: ToolInvoker | undefined): ToolSet {
  const set: ToolSet = {};
  for (const declaration of declarations) {
    set[declaration.name] = {
      description: declaration.description,
      inputSchema: jsonSchema(declaration.parameters, { validate: acceptAll }),
      ...(invoke === undefined
        ? {}
        : {
            execute: (args: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) =>
              invoke({
                toolCallId: options.toolCallId,
                toolName: declaration.name,
                args,
                signal: options.abortSignal ?? new AbortController().signal,
              }),
            toModelOutput: ({ output }: { output: unknown }) => {
              const answer = output as ToolAnswer;
              return answer.isError ? { type: "error-text" as const, value: answer.modelText } : { type: "text" as const, value: answer.modelText };
            },
          }),
    };
  }
  return set;
}

/** Narrow a JSON value the model produced (args) for logs and events. */
export type ToolArgs = JSONValue;
