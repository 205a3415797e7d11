/**
 * One model request of a reply: the AI SDK's single-call stream (`streamLanguageModelCall`:
 * model resolution, prompt conversion, tool declarations, tool-call parsing and repair, tool
 * choice enforcement), with no step loop, no tool execution and no result replay. The reply loop
 * owns those (reply-loop.ts).
 *
 * Why not `streamText`: at 20 text deltas per reply it builds about ten web-stream transforms
 * per call, which cost ~4 ms of CPU per reply on the bench machine, against ~0.7 ms here and
 * 0.07 ms for the provider's own stream (docs/benchmarks.md, "bench:pipeline").
 */
import { APICallError, experimental_streamLanguageModelCall as streamLanguageModelCall, type LanguageModel, type ModelMessage, type ToolChoice, type ToolSet } from "ai";
import type { Experimental_LanguageModelStreamPart } from "ai";
import type { Clock } from "../clock.js";
import { reconnect } from "../providers/reconnect.js";

/** A part of one model call's stream. */
export type ModelCallPart = Experimental_LanguageModelStreamPart<ToolSet>;

export interface ModelRequest {
  readonly model: LanguageModel;
  readonly system: string;
  readonly messages: readonly ModelMessage[];
  /** Declared only (no `execute`): the reply loop runs tools itself. */
  readonly tools?: ToolSet | undefined;
  readonly toolChoice?: ToolChoice<ToolSet> | undefined;
  readonly temperature?: number | undefined;
  readonly maxOutputTokens?: number | undefined;
}

/**
 * The AI SDK's retry schedule for a model request (ms before each retry): 2 s, doubling, one
 * entry per retry. Only the request is retried, never a stream that has begun.
 */
export function modelRetryDelays(maxRetries: number): number[] {
  return Array.from({ length: maxRetries }, (_, i) => 2000 * 2 ** i);
}

/** A failure a retry may cure: the SDK's own verdict on an API error (429, 5xx, a dropped connection). */
function retryableApiError(error: Error): boolean {
  return APICallError.isInstance(error) && error.isRetryable;
}

/**
 * Open one model call's stream, retrying the request `maxRetries` times on a retryable API
 * error (waits on `clock`). Throws the request's last error, or the signal's reason when it aborts.
 */
export async function openModelCall(request: ModelRequest, options: { readonly clock: Clock; readonly maxRetries: number; readonly signal: AbortSignal }): Promise<AsyncIterable<ModelCallPart>> {
  const { clock, maxRetries, signal } = options;
  let stream: AsyncIterable<ModelCallPart> | undefined;
  const outcome = await reconnect({
    clock,
    signal,
    immediately: true,
    delaysMs: modelRetryDelays(maxRetries),
    retryable: retryableApiError,
    attempt: async () => {
      const opened = await streamLanguageModelCall({
        model: request.model,
        system: request.system,
        messages: [...request.messages],
        ...(request.tools === undefined ? {} : { tools: request.tools }),
        ...(request.toolChoice === undefined ? {} : { toolChoice: request.toolChoice }),
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
        abortSignal: signal,
      });
      stream = opened.stream;
    },
  });
  switch (outcome.kind) {
    case "connected":
      return stream as AsyncIterable<ModelCallPart>;
    case "refused":
      throw outcome.error;
    case "exhausted":
      throw outcome.last ?? new Error("the model request was not made");
    case "stopped":
      throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
  }
}
