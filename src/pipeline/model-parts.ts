/**
 * A provider's stream parts as the reply loop reads them: what the AI SDK's
 * `streamLanguageModelCall` part transform makes of them (ai@7), done in the loop's own read
 * instead of two web-stream hops per part. Text and reasoning deltas are renamed; a tool call is
 * parsed as `parseToolCall` parses it with no repair (empty input is `{}`, JSON parsed securely
 * and checked against the tool's schema, an unknown tool or bad input an invalid call followed by
 * its `tool-error`); tool parts are withheld under tool choice `none`; `finish` becomes
 * `model-call-end` with the SDK's usage and timing, then the tool-choice violation error if the
 * model broke the choice; a provider's error object becomes a `StreamProviderError`. Of the
 * timing, the gaps between output chunks (`timeBetweenOutputChunksMs`, optional in the SDK's part)
 * are not kept: nothing in the gateway reads them, and keeping them costs a clock read and an
 * array slot per delta (the turn tracer times the legs, session/turn-tracer.ts).
 *
 * Generated files (`file`, `reasoning-file`) and provider tool-approval requests are not mapped:
 * the voice loop does not read them (step-reader.ts), and resolving a file means a download.
 * test/unit/pipeline/model-direct.test.ts holds the rest to the SDK part for part.
 */
import { AISDKError, getErrorMessage, type LanguageModelV4Content, type LanguageModelV4StreamPart, type SharedV4ProviderMetadata, type LanguageModelV4ToolCall, type LanguageModelV4ToolChoice, type LanguageModelV4Usage } from "@ai-sdk/provider";
import { asSchema, isProviderStreamError, safeParseJSON, safeValidateTypes } from "@ai-sdk/provider-utils";
import { InvalidToolInputError, NoSuchToolError, StreamProviderError, ToolCallNotFoundForApprovalError, ToolChoiceViolationError, type Experimental_LanguageModelStreamPart, type LanguageModelUsage, type ToolSet } from "ai";
import { spread } from "../spread.js";

/** A part of one model call's stream, as the reply loop reads it. */
export type ModelCallPart = Experimental_LanguageModelStreamPart<ToolSet>;
type ToolCallPart = Extract<ModelCallPart, { type: "tool-call" }>;
type ModelCallEnd = Extract<ModelCallPart, { type: "model-call-end" }>;
/** A text or reasoning run as the violation error's `content` keeps it. */
type TextContent = { type: "text" | "reasoning"; text: string; providerMetadata?: SharedV4ProviderMetadata };

export interface PartContext {
  readonly tools: ToolSet | undefined;
  readonly toolChoice: LanguageModelV4ToolChoice;
  readonly provider: string;
  readonly modelId: string;
  readonly signal: AbortSignal;
  /** Milliseconds, on the gateway's clock (the SDK reads `performance.now()`): only differences are used. */
  readonly now: () => number;
  /** When the request went out (`now()` just before `doStream`). */
  readonly startedMs: number;
}

const own = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined => (record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined);

/** The SDK's usage from the provider's (ai `asLanguageModelUsage`). */
export function languageModelUsage(usage: LanguageModelV4Usage): LanguageModelUsage {
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  return {
    inputTokens: input,
    inputTokenDetails: { noCacheTokens: usage.inputTokens.noCache, cacheReadTokens: usage.inputTokens.cacheRead, cacheWriteTokens: usage.inputTokens.cacheWrite },
    outputTokens: output,
    outputTokenDetails: { textTokens: usage.outputTokens.text, reasoningTokens: usage.outputTokens.reasoning },
    totalTokens: input == null && output == null ? undefined : (input ?? 0) + (output ?? 0),
    ...(usage.raw === undefined ? {} : { raw: usage.raw }),
  };
}

const tokensPerSecond = (tokens: number | undefined, durationMs: number): number => {
  const rate = (1000 * (tokens ?? 0)) / durationMs;
  return Number.isFinite(rate) ? rate : 0;
};

const record = (value: unknown): Record<string, unknown> | undefined => (typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined);
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const textOrNumber = (value: unknown): string | number | undefined => (typeof value === "string" || typeof value === "number" ? value : undefined);
const bool = (value: unknown): boolean | undefined => (typeof value === "boolean" ? value : undefined);
const httpStatus = (value: unknown): number | undefined => {
  const code = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599 ? code : undefined;
};
/** The SDK's reading of a bare message ("overloaded", …) as a status. */
const MESSAGE_STATUS: Readonly<Record<string, number>> = { overloaded: 503, "overloaded error": 503, "model overloaded": 503, "internal server error": 500, "service unavailable": 503 };

/** A provider's stream error as the SDK normalizes it (ai `normalizeStreamProviderError`). */
export function streamProviderError(error: unknown): unknown {
  if (error instanceof Error || Object.prototype.toString.call(error) === "[object Error]" || AISDKError.isInstance(error) || StreamProviderError.isInstance(error)) return error;
  const outer = record(error);
  if (outer === undefined) return error;
  const providerError = isProviderStreamError(error);
  const details = providerError ? outer : (record(record(outer["response"])?.["error"]) ?? record(outer["error"]) ?? outer);
  const message = details["message"];
  if (typeof message !== "string") return error;
  const keys = ["statusCode", "status_code", "status", "code"] as const;
  let explicit: number | undefined;
  for (const key of keys) explicit ??= httpStatus(details[key]) ?? httpStatus(outer[key]);
  const inferred = own(MESSAGE_STATUS, message.trim().toLowerCase());
  const statusCode = explicit ?? inferred;
  const retryable = bool(details["isRetryable"]) ?? bool(outer["isRetryable"]) ?? bool(details["is_retryable"]) ?? bool(outer["is_retryable"]);
  const type = text(details["type"]) ?? text(outer["type"]);
  const code = textOrNumber(details["code"]) ?? textOrNumber(outer["code"]);
  return new StreamProviderError({
    message,
    ...(type === undefined ? {} : { type }),
    ...(code === undefined ? {} : { code }),
    ...(statusCode === undefined ? {} : { statusCode }),
    isRetryable: retryable ?? (inferred !== undefined ? true : statusCode !== undefined && (statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500)),
    data: providerError ? outer["data"] : error,
  });
}

/** The provider's tool call as the SDK parses it without repair (ai `parseToolCall`). */
async function parseToolCall(call: LanguageModelV4ToolCall, tools: ToolSet | undefined, signal: AbortSignal): Promise<ToolCallPart> {
  const tool = own(tools, call.toolName);
  try {
    if (tool === undefined) {
      if (call.providerExecuted === true && call.dynamic === true) {
        const parsed = call.input.trim() === "" ? { success: true as const, value: {} } : await safeParseJSON({ text: call.input });
        if (!parsed.success) throw new InvalidToolInputError({ toolName: call.toolName, toolInput: call.input, cause: parsed.error });
        return { type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: parsed.value, providerExecuted: true, dynamic: true, providerMetadata: call.providerMetadata } as ToolCallPart;
      }
      throw new NoSuchToolError(tools === undefined ? { toolName: call.toolName } : { toolName: call.toolName, availableTools: Object.keys(tools) });
    }
    const schema = asSchema(tool.inputSchema);
    const parsed = call.input.trim() === "" ? await safeValidateTypes({ value: {}, schema }) : await safeParseJSON({ text: call.input, schema });
    if (!parsed.success) throw new InvalidToolInputError({ toolName: call.toolName, toolInput: call.input, cause: parsed.error });
    return {
      type: "tool-call",
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: parsed.value,
      providerExecuted: call.providerExecuted,
      providerMetadata: call.providerMetadata,
      ...(tool.metadata != null ? { toolMetadata: tool.metadata } : {}),
      title: tool.title,
    } as ToolCallPart;
  } catch (error) {
    signal.throwIfAborted();
    const parsed = await safeParseJSON({ text: call.input });
    return {
      type: "tool-call",
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: parsed.success ? parsed.value : call.input,
      dynamic: true,
      invalid: true,
      error,
      title: tool?.title,
      providerExecuted: call.providerExecuted,
      providerMetadata: call.providerMetadata,
      ...(tool?.metadata != null ? { toolMetadata: tool.metadata } : {}),
    } as ToolCallPart;
  }
}

/**
 * Maps one model call's provider parts, in order, keeping what the mapping needs across parts:
 * the tool calls seen, output timing, and (only when a tool choice is enforced) the content the
 * violation error carries.
 */
export class ModelPartMapper {
  readonly #context: PartContext;
  readonly #withhold: boolean;
  readonly #calls = new Map<string, ToolCallPart>();
  /** Kept only when the tool choice is enforced (not `auto`): the violation error carries it. */
  readonly #content: LanguageModelV4Content[] | undefined;
  readonly #open = new Map<string, TextContent>();
  #firstOutputMs: number | undefined;

  constructor(context: PartContext) {
    this.#context = context;
    this.#withhold = context.toolChoice.type === "none";
    this.#content = context.toolChoice.type === "auto" ? undefined : [];
  }

  /** The parts `chunk` maps to, pushed on `out` (none, one or two). Async only for a tool call. */
  map(chunk: LanguageModelV4StreamPart, out: ModelCallPart[]): Promise<void> | undefined {
    if (this.#firstOutputMs === undefined && this.#isOutput(chunk)) this.#firstOutputMs = this.#context.now() - this.#context.startedMs;
    switch (chunk.type) {
      case "text-delta":
        this.#collect("text", chunk.id, chunk.delta, chunk.providerMetadata);
        out.push(chunk.providerMetadata === undefined ? { type: "text-delta", id: chunk.id, text: chunk.delta } : { type: "text-delta", id: chunk.id, text: chunk.delta, providerMetadata: chunk.providerMetadata });
        return undefined;
      case "reasoning-delta":
        this.#collect("reasoning", chunk.id, chunk.delta, chunk.providerMetadata);
        out.push(chunk.providerMetadata === undefined ? { type: "reasoning-delta", id: chunk.id, text: chunk.delta } : { type: "reasoning-delta", id: chunk.id, text: chunk.delta, providerMetadata: chunk.providerMetadata });
        return undefined;
      case "text-start":
      case "reasoning-start":
        this.#collect(chunk.type === "text-start" ? "text" : "reasoning", chunk.id, undefined, chunk.providerMetadata);
        out.push(chunk);
        return undefined;
      case "text-end":
      case "reasoning-end":
        this.#collect(chunk.type === "text-end" ? "text" : "reasoning", chunk.id, undefined, chunk.providerMetadata, true);
        out.push(chunk);
        return undefined;
      case "tool-input-start": {
        if (this.#withhold) return undefined;
        const tool = own(this.#context.tools, chunk.toolName);
        out.push(spread(chunk, { dynamic: chunk.dynamic ?? tool?.type === "dynamic", title: tool?.title, ...(tool?.metadata != null ? { toolMetadata: tool.metadata } : {}) }) as ModelCallPart);
        return undefined;
      }
      case "tool-input-delta":
      case "tool-input-end":
        if (!this.#withhold) out.push(chunk);
        return undefined;
      case "tool-call":
        return this.#toolCall(chunk, out);
      case "tool-result":
        this.#content?.push(chunk);
        if (!this.#withhold) out.push(this.#toolResult(chunk));
        return undefined;
      case "tool-approval-request":
        this.#content?.push(chunk);
        // The SDK passes an approval on; the voice loop does not read one. An unknown call is an error either way.
        if (!this.#withhold && !this.#calls.has(chunk.toolCallId)) out.push({ type: "error", error: new ToolCallNotFoundForApprovalError({ toolCallId: chunk.toolCallId, approvalId: chunk.approvalId }) });
        return undefined;
      case "stream-start":
        out.push({ type: "model-call-start", warnings: chunk.warnings });
        return undefined;
      case "response-metadata":
        out.push({
          type: "model-call-response-metadata",
          ...(chunk.id === undefined ? {} : { id: chunk.id }),
          ...(chunk.timestamp === undefined ? {} : { timestamp: chunk.timestamp }),
          ...(chunk.modelId === undefined ? {} : { modelId: chunk.modelId }),
        });
        return undefined;
      case "finish":
        this.#finish(chunk, out);
        return undefined;
      case "error":
        out.push({ type: "error", error: streamProviderError(chunk.error) });
        return undefined;
      case "file":
      case "reasoning-file":
        return undefined;
      case "custom":
      case "source":
        this.#content?.push(chunk);
        out.push(chunk);
        return undefined;
      default:
        out.push(chunk);
        return undefined;
    }
  }

  #isOutput(chunk: LanguageModelV4StreamPart): boolean {
    switch (chunk.type) {
      case "text-delta":
      case "reasoning-delta":
      case "tool-input-delta":
        return chunk.delta.length > 0;
      case "file":
      case "reasoning-file":
      case "tool-call":
        return true;
      default:
        return false;
    }
  }

  /** The violation error's content, as the SDK's raw content: one entry per text or reasoning id. */
  #collect(type: "text" | "reasoning", id: string, delta: string | undefined, providerMetadata: SharedV4ProviderMetadata | undefined, end = false): void {
    if (this.#content === undefined) return;
    const key = `${type}:${id}`;
    let part = this.#open.get(key);
    if (part === undefined) {
      part = { type, text: "", ...(providerMetadata != null ? { providerMetadata } : {}) };
      this.#open.set(key, part);
      this.#content.push(part);
    }
    if (delta !== undefined) part.text += delta;
    if (providerMetadata != null) part.providerMetadata = providerMetadata;
    if (end) this.#open.delete(key);
  }

  async #toolCall(chunk: LanguageModelV4ToolCall, out: ModelCallPart[]): Promise<void> {
    this.#content?.push(chunk);
    try {
      const call = await parseToolCall(chunk, this.#context.tools, this.#context.signal);
      this.#calls.set(call.toolCallId, call);
      if (this.#withhold) return;
      out.push(call);
      if (call.invalid === true && call.providerExecuted !== true) {
        out.push({
          type: "tool-error",
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          error: getErrorMessage(call.error),
          dynamic: true,
          title: call.title,
          ...(call.toolMetadata != null ? { toolMetadata: call.toolMetadata } : {}),
        } as ModelCallPart);
      }
    } catch (error) {
      out.push({ type: "error", error });
    }
  }

  #toolResult(chunk: Extract<LanguageModelV4StreamPart, { type: "tool-result" }>): ModelCallPart {
    const call = this.#calls.get(chunk.toolCallId);
    const common = {
      toolCallId: chunk.toolCallId,
      toolName: chunk.toolName,
      input: call?.input as unknown,
      providerExecuted: true,
      dynamic: chunk.dynamic,
      ...(chunk.providerMetadata != null ? { providerMetadata: chunk.providerMetadata } : {}),
      ...(call?.toolMetadata != null ? { toolMetadata: call.toolMetadata } : {}),
    };
    return chunk.isError === true ? { type: "tool-error", ...common, error: chunk.result } : { type: "tool-result", ...common, output: chunk.result };
  }

  #finish(chunk: Extract<LanguageModelV4StreamPart, { type: "finish" }>, out: ModelCallPart[]): void {
    const usage = languageModelUsage(chunk.usage);
    const responseTimeMs = this.#context.now() - this.#context.startedMs;
    const first = this.#firstOutputMs;
    const performance: ModelCallEnd["performance"] = {
      responseTimeMs,
      effectiveOutputTokensPerSecond: tokensPerSecond(usage.outputTokens, responseTimeMs),
      outputTokensPerSecond: first === undefined ? undefined : tokensPerSecond(usage.outputTokens, responseTimeMs - first),
      inputTokensPerSecond: first === undefined ? undefined : tokensPerSecond(usage.inputTokens, first),
      effectiveTotalTokensPerSecond: tokensPerSecond(usage.inputTokens == null && usage.outputTokens == null ? undefined : (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0), responseTimeMs),
      timeToFirstOutputMs: first,
    };
    const choice = this.#context.toolChoice;
    const calls = [...this.#calls.values()];
    const violated =
      choice.type === "auto" ? false : choice.type === "none" ? calls.length > 0 : chunk.finishReason.unified !== "interrupted" && !calls.some((call) => choice.type === "required" || call.toolName === choice.toolName);
    out.push({
      type: "model-call-end",
      finishReason: violated ? "error" : chunk.finishReason.unified,
      rawFinishReason: chunk.finishReason.raw,
      usage,
      ...(chunk.providerMetadata === undefined ? {} : { providerMetadata: chunk.providerMetadata }),
      performance,
    });
    if (violated && choice.type !== "auto") {
      const { provider, modelId } = this.#context;
      out.push({ type: "error", error: new ToolChoiceViolationError({ toolChoice: choice, finishReason: chunk.finishReason.unified, provider, modelId, content: this.#content ?? [] }) });
    }
  }
}
