import { jsonSchema, tool as aiTool, type JSONValue, type Tool, type ToolExecutionOptions } from "ai";
import { kindOf, ToolDefinitionError } from "./errors.js";
import { isToolDef, TOOL_SHAPE, toToolResult, type ToolContext, type ToolDef, type ToolMap } from "./tool-def.js";
import { spread } from "../spread.js";

/**
 * What the program finds in `toolResults`: the details with the text added. When the details
 * are not an object they sit under `details`.
 */
export type AiToolOutput<Details = unknown> = Details extends object
  ? Details & { readonly text: string }
  : { readonly details: Details; readonly text: string };

/** Outputs of results that had no text: the model reads them whole, as JSON. */
const textless = new WeakSet<object>();

/** Validation failure lines in one Error, the same lines every other host shows. */
function validationError(errors: readonly string[]): Error {
  return new Error(`Invalid arguments:\n${errors.join("\n")}`);
}

function outputOf(result: { text?: string; details?: unknown }): unknown {
  const { text, details } = result;
  if (text === undefined) return details ?? null;
  if (typeof details === "object" && details !== null && !Array.isArray(details)) {
    if (Object.hasOwn(details, "text")) {
      throw new ToolDefinitionError(
        "the result's details have their own `text` field, which the AI SDK output's `text` would overwrite. Rename the field in details.",
      );
    }
    return spread(details, { text });
  }
  return details === undefined ? { text } : { details, text };
}

/**
 * A Switchboard tool as an AI SDK tool. The JSON Schema goes through `jsonSchema()` with the
 * def's compiled validator attached, so a bad input is refused with the same lines everywhere.
 * The program gets `{...details, text}`; the model reads the text alone (`toModelOutput`),
 * or the whole output as JSON when there is no text. `isError` throws its text, which the AI
 * SDK turns into a tool error the model can read. `progress` and `ask` are undefined: there
 * is nobody on the line. A clientTool becomes a tool without `execute` (the caller runs it).
 */
export function toAiTool<Args, Details, Session = unknown>(def: ToolDef<Args, Details, Session>): Tool<Args, AiToolOutput<Details>> {
  // Plain JavaScript can hand over anything; refused here rather than as a TypeError on `parameters`.
  if (!isToolDef(def)) throw new ToolDefinitionError(`toAiTool(): got ${kindOf(def)}, not a tool; pass what ${TOOL_SHAPE} returns.`);
  const inputSchema = jsonSchema<Args>(def.parameters.json, {
    validate: (value) => {
      const checked = def.parameters.validate(value);
      return checked.ok ? { success: true, value: checked.value as Args } : { success: false, error: validationError(checked.errors) };
    },
  });
  const execute = def.execute;
  if (execute === undefined) {
    return aiTool({ description: def.description, inputSchema });
  }
  // Built as the erased Tool and typed once on the way out: the SDK's generic overloads cannot
  // follow a conditional output type.
  const built: Tool = aiTool({
    description: def.description,
    inputSchema,
    execute: async (args: Args, options: ToolExecutionOptions<unknown>) => {
      const ctx: ToolContext<Session> = {
        toolCallId: options.toolCallId,
        signal: options.abortSignal ?? new AbortController().signal,
        session: options.context as Session,
        progress: undefined,
        ask: undefined,
      };
      const result = toToolResult(await execute(args, ctx));
      if (result.isError === true) throw new Error(result.text ?? JSON.stringify(result.details ?? null));
      const output = outputOf(result);
      if (result.text === undefined && typeof output === "object" && output !== null) textless.add(output);
      return output;
    },
    toModelOutput: ({ output }) => {
      const text = (output as { text?: unknown } | null)?.text;
      if (typeof text === "string" && !textless.has(output as object)) return { type: "text", value: text };
      return { type: "json", value: (output ?? null) as JSONValue };
    },
  });
  return built;
}

/**
 * Every tool of a map as AI SDK tools, keyed by tool name (seed 002: "toAiTools(tools); //
 * keyed by tool name"). The key IS the name the model calls, so an array — which plain
 * JavaScript can pass — is refused rather than advertising tools named "0", "1"; so is a value
 * that is not a tool, naming its key.
 */
export function toAiTools(tools: ToolMap): Record<string, Tool> {
  if (typeof tools !== "object" || tools === null || Array.isArray(tools)) {
    throw new ToolDefinitionError(
      `toAiTools(): got ${kindOf(tools)}; pass a record keyed by tool name ({ lookup_order: lookupOrder }) — the key is the name the model calls.`,
    );
  }
  const notTools = Object.entries(tools as Readonly<Record<string, unknown>>)
    .filter(([, value]) => !isToolDef(value))
    .map(([name, value]) => `tools.${name} is ${kindOf(value)}, not a tool`);
  if (notTools.length > 0) throw new ToolDefinitionError(`toAiTools(): ${notTools.join("; ")}; pass what ${TOOL_SHAPE} returns.`);
  return Object.fromEntries(Object.entries(tools).map(([name, def]) => [name, toAiTool(def) as Tool]));
}
