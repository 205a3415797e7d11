/**
 * A reply's model request as the provider's `doStream` options, prepared the way the AI SDK's
 * `streamLanguageModelCall` prepares them (ai@7: `standardizePrompt`, `convertToLanguageModelPrompt`,
 * `prepareTools`, `prepareToolChoice`), for the message and tool shapes the voice loop sends:
 * user and assistant text, reasoning, tool calls and their text/JSON results, function tools with
 * a JSON schema. Anything else answers `undefined` and the call goes through the SDK
 * (model-call.ts), which owns downloads, files, approvals, dynamic and provider tools.
 *
 * test/unit/pipeline/model-direct.test.ts holds this to the SDK: the same requests through both give
 * deep-equal `doStream` options.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Message, LanguageModelV4Prompt, LanguageModelV4ToolChoice, SharedV4ProviderOptions } from "@ai-sdk/provider";
import { asSchema } from "@ai-sdk/provider-utils";
import { MissingToolResultsError, type LanguageModel, type ModelMessage, type ToolChoice, type ToolSet } from "ai";
import type { ModelRequest } from "./model-call.js";

type AssistantContent = Extract<LanguageModelV4Message, { role: "assistant" }>["content"];
type ToolContent = Extract<LanguageModelV4Message, { role: "tool" }>["content"];

/** The model as the provider interface the SDK would call, or undefined (a model id string, a v2/v3 model: the SDK adapts those). */
export function directModel(model: LanguageModel): LanguageModelV4 | undefined {
  return typeof model === "object" && model.specificationVersion === "v4" ? model : undefined;
}

/** The SDK's tool choice for the provider: `auto` when none is given. */
export function providerToolChoice(toolChoice: ToolChoice<ToolSet> | undefined): LanguageModelV4ToolChoice {
  if (toolChoice === undefined) return { type: "auto" };
  return typeof toolChoice === "string" ? { type: toolChoice } : { type: "tool", toolName: toolChoice.toolName };
}

/** `target` with `providerOptions` when there are any (the SDK copies the key either way; providers read it only when set). */
function withOptions<T extends object>(target: T, providerOptions: SharedV4ProviderOptions | undefined): T & { providerOptions?: SharedV4ProviderOptions } {
  if (providerOptions !== undefined) Object.assign(target, { providerOptions });
  return target;
}

/** One message in the provider's prompt shape, or undefined when its shape is not one the voice loop sends. */
function providerMessage(message: ModelMessage): LanguageModelV4Message | undefined {
  switch (message.role) {
    case "user": {
      if (typeof message.content === "string") return withOptions<LanguageModelV4Message>({ role: "user", content: [{ type: "text", text: message.content }] }, message.providerOptions);
      const content: Extract<LanguageModelV4Message, { role: "user" }>["content"] = [];
      for (const part of message.content) {
        if (part.type !== "text") return undefined;
        if (part.text !== "") content.push(withOptions({ type: "text", text: part.text }, part.providerOptions));
      }
      return withOptions<LanguageModelV4Message>({ role: "user", content }, message.providerOptions);
    }
    case "assistant": {
      if (typeof message.content === "string") return withOptions<LanguageModelV4Message>({ role: "assistant", content: [{ type: "text", text: message.content }] }, message.providerOptions);
      const content: AssistantContent = [];
      for (const part of message.content) {
        switch (part.type) {
          case "text":
            // The SDK drops an empty text part unless it carries provider options.
            if (part.text !== "" || part.providerOptions != null) content.push(withOptions({ type: "text", text: part.text }, part.providerOptions));
            break;
          case "reasoning":
            content.push(withOptions({ type: "reasoning", text: part.text }, part.providerOptions));
            break;
          case "tool-call":
            content.push(
              withOptions(
                { type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }) },
                part.providerOptions,
              ),
            );
            break;
          default:
            return undefined;
        }
      }
      return withOptions<LanguageModelV4Message>({ role: "assistant", content }, message.providerOptions);
    }
    case "tool": {
      const content: ToolContent = [];
      for (const part of message.content) {
        if (part.type !== "tool-result" || part.output.type === "content") return undefined;
        content.push(withOptions({ type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: part.output }, part.providerOptions));
      }
      return withOptions<LanguageModelV4Message>({ role: "tool", content }, message.providerOptions);
    }
    default:
      // A system message in `messages` is refused by the SDK, with its own error.
      return undefined;
  }
}

/** A message in the provider's shape, with what the prompt's checks read of it. */
interface Converted {
  readonly message: LanguageModelV4Message;
  /** The tool calls it leaves waiting for a result (an assistant's, not provider-executed) and the results it gives (a tool message's): none on most. */
  readonly calls: readonly string[];
  readonly results: readonly string[];
}

const NONE: readonly string[] = [];

/**
 * Each message in the provider's shape (null: not a shape the voice loop sends), converted once.
 * A recorded message is never changed (a correction replaces it with a new one, turn/ledger.ts),
 * and every request sends the history again: on a long call 120 messages a turn
 * (MAX_HISTORY_MESSAGES), whose conversion was a fifth of what a turn allocated
 * (docs/benchmarks.md, bench:pipeline-turn-counts). Requests share the converted messages, so
 * nothing here changes one, and neither does a provider (the SDK's contract: the prompt is input).
 * The tool-call ids are read once too, so a request's check does not walk every message's parts.
 */
const converted = new WeakMap<ModelMessage, Converted | null>();

function convertedMessage(message: ModelMessage): Converted | undefined {
  let known = converted.get(message);
  if (known === undefined) {
    const provider = providerMessage(message);
    known = provider === undefined ? null : { message: provider, calls: openedCalls(provider), results: givenResults(provider) };
    converted.set(message, known);
  }
  return known ?? undefined;
}

function openedCalls(message: LanguageModelV4Message): readonly string[] {
  if (message.role !== "assistant") return NONE;
  const ids = message.content.flatMap((part) => (part.type === "tool-call" && part.providerExecuted !== true ? [part.toolCallId] : []));
  return ids.length === 0 ? NONE : ids;
}

function givenResults(message: LanguageModelV4Message): readonly string[] {
  if (message.role !== "tool") return NONE;
  const ids = message.content.flatMap((part) => (part.type === "tool-result" ? [part.toolCallId] : []));
  return ids.length === 0 ? NONE : ids;
}

/**
 * The provider prompt for `system` and `messages`, or undefined when a message is outside the
 * voice loop's shapes. As the SDK: the system text first, consecutive tool messages merged, a
 * tool call without a result before the next user turn refused (`MissingToolResultsError`,
 * thrown once every message has converted: one that does not sends the request through the
 * SDK instead, which checks it itself).
 */
export function providerPrompt(system: string, messages: readonly ModelMessage[]): LanguageModelV4Prompt | undefined {
  if (messages.length === 0) return undefined;
  // Sized once (a history at its cap is 120 messages): grown by `push`, its backing store was copied four times a request.
  const prompt: LanguageModelV4Prompt = new Array<LanguageModelV4Message>(messages.length + 1);
  prompt[0] = { role: "system", content: system };
  let length = 1;
  /** Tool calls without a result yet; made at the first call (most histories have none). */
  let open: Set<string> | undefined;
  let missing: string[] | undefined;
  let emptyTool = false;
  for (const message of messages) {
    const entry = convertedMessage(message);
    if (entry === undefined) return undefined;
    const next = entry.message;
    if (next.role === "user" || next.role === "system") {
      if (open !== undefined && open.size > 0) missing ??= [...open];
    } else {
      for (const id of entry.calls) (open ??= new Set()).add(id);
      if (open !== undefined) for (const id of entry.results) open.delete(id);
    }
    const last = prompt[length - 1] as LanguageModelV4Message;
    if (next.role === "tool") {
      emptyTool ||= next.content.length === 0;
      if (last.role === "tool") {
        // The SDK folds a message-level option into the previous last part before merging; the voice loop sets none.
        if (last.providerOptions != null || next.providerOptions != null) return undefined;
        // A new message: both may be converted messages other requests share.
        prompt[length - 1] = { role: "tool", content: [...last.content, ...next.content] };
        continue;
      }
    }
    prompt[length++] = next;
  }
  prompt.length = length;
  if (missing !== undefined) throw new MissingToolResultsError({ toolCallIds: missing });
  if (open !== undefined && open.size > 0) throw new MissingToolResultsError({ toolCallIds: [...open] });
  return emptyTool ? prompt.filter((message) => message.role !== "tool" || message.content.length > 0) : prompt;
}

/** The tools as the provider declares them (undefined for none), or `null` when one is not a plain function tool. */
export async function providerTools(tools: ToolSet | undefined): Promise<LanguageModelV4FunctionTool[] | undefined | null> {
  if (tools === undefined || Object.keys(tools).length === 0) return undefined;
  const declared: LanguageModelV4FunctionTool[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    if ((tool.type !== undefined && tool.type !== "function") || (tool.description !== undefined && typeof tool.description !== "string")) return null;
    const { description, inputExamples, providerOptions, strict } = tool;
    declared.push({
      type: "function",
      name,
      inputSchema: await asSchema(tool.inputSchema).jsonSchema,
      ...(description != null ? { description } : {}),
      ...(inputExamples != null ? { inputExamples } : {}),
      ...(providerOptions != null ? { providerOptions } : {}),
      ...(strict != null ? { strict } : {}),
    });
  }
  return declared;
}

/**
 * The `doStream` options the SDK would send for `request`, or undefined when the request is
 * outside the voice loop's shapes (the SDK then makes the call).
 */
export async function directCallOptions(request: ModelRequest, signal: AbortSignal): Promise<LanguageModelV4CallOptions | undefined> {
  const prompt = providerPrompt(request.system, request.messages);
  if (prompt === undefined) return undefined;
  const tools = await providerTools(request.tools);
  if (tools === null) return undefined;
  // The SDK also sends `responseFormat`, `providerOptions`, `headers` and `includeRawChunks`, all undefined here.
  // Its properties first: a literal that starts with a spread and adds to it gets a hidden class of its own (src/spread.ts).
  return {
    toolChoice: providerToolChoice(request.toolChoice),
    prompt,
    abortSignal: signal,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
    ...(tools === undefined ? {} : { tools }),
  };
}
