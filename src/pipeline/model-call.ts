/**
 * One model request of a reply, with no step loop, no tool execution and no result replay (the
 * reply loop owns those, reply-loop.ts). Two ways, one result:
 * - direct (the voice loop's requests): the provider's `doStream` called with the options the AI
 *   SDK would send (model-prompt.ts) and its stream read here, each part mapped as the SDK maps
 *   it (model-parts.ts);
 * - the SDK's single-call stream (`streamLanguageModelCall`) for anything else: model ids and
 *   v2/v3 models, files, approvals, dynamic and provider tools.
 *
 * Why not the SDK for every call: it pipes the provider's stream through two web-stream
 * transforms per call (its part transform, then an async-iterable wrapper), about 0.25 ms of CPU
 * per spoken reply at 20 deltas and a fifth of what the gateway allocates per turn
 * (docs/benchmarks.md, "bench:reply-loop"). `streamText` costs ten times that.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { APICallError, experimental_streamLanguageModelCall as streamLanguageModelCall, type LanguageModel, type ModelMessage, type ToolChoice, type ToolSet } from "ai";
import type { Clock } from "../clock.js";
import { reconnect } from "../providers/reconnect.js";
import { ModelPartMapper, type ModelCallPart } from "./model-parts.js";
import { directCallOptions, directModel } from "./model-prompt.js";

export type { ModelCallPart } from "./model-parts.js";

/** One model call's parts, read a provider chunk at a time (one await per chunk, none per part). */
export interface ModelCallStream {
  /** Appends the parts of the next chunk to `out` (none, one or two); false once the stream has ended. Throws the stream's error. */
  read(out: ModelCallPart[]): Promise<boolean>;
  /** Stop reading before the end: cancels the provider's stream. */
  cancel(): void;
}

/** How a model call is made: its clock, retries and signal. */
export interface ModelCallOptions {
  readonly clock: Clock;
  readonly maxRetries: number;
  readonly signal: AbortSignal;
  /**
   * Called each time the request goes out, before its response: right after the provider's
   * `doStream` is called (through the SDK, once the SDK has been handed the call). What can wait
   * for the request (a reply's TTS stream) starts then.
   */
  readonly requested?: (() => void) | undefined;
}

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
  // A loop, not `Array.from({ length }, fn)`: every request asks, and that cost four times as much (Node 20).
  const delays: number[] = [];
  for (let i = 0; i < maxRetries; i++) delays.push(2000 * 2 ** i);
  return delays;
}

/** A failure a retry may cure: the SDK's own verdict on an API error (429, 5xx, a dropped connection). */
function retryableApiError(error: Error): boolean {
  return APICallError.isInstance(error) && error.isRetryable;
}

/**
 * Open one model call's stream, retrying the request `maxRetries` times on a retryable API
 * error (waits on `clock`). Throws the request's last error, or the signal's reason when it aborts.
 */
export async function openModelCall(request: ModelRequest, options: ModelCallOptions): Promise<ModelCallStream> {
  const { clock, maxRetries, signal, requested } = options;
  let stream: ModelCallStream | undefined;
  const outcome = await reconnect({
    clock,
    signal,
    immediately: true,
    delaysMs: modelRetryDelays(maxRetries),
    retryable: retryableApiError,
    attempt: async () => {
      const model = directModel(request.model);
      const options = model === undefined ? undefined : await directCallOptions(request, signal);
      if (model !== undefined && options !== undefined) {
        stream = await openDirect(model, options, request, clock, requested);
        return;
      }
      stream = new IteratedParts(await openThroughSdk(request, signal, requested));
    },
  });
  switch (outcome.kind) {
    case "connected":
      return stream as ModelCallStream;
    case "refused":
      throw outcome.error;
    case "exhausted":
      throw outcome.last ?? new Error("the model request was not made");
    case "stopped":
      throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
  }
}

/** The call made by the AI SDK's `streamLanguageModelCall`, for requests outside the direct call's shapes. */
export async function openThroughSdk(request: ModelRequest, signal: AbortSignal, requested?: () => void): Promise<AsyncIterable<ModelCallPart>> {
  const opening = streamLanguageModelCall({
    model: request.model,
    system: request.system,
    messages: [...request.messages],
    ...(request.tools === undefined ? {} : { tools: request.tools }),
    ...(request.toolChoice === undefined ? {} : { toolChoice: request.toolChoice }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
    abortSignal: signal,
  });
  requested?.();
  return (await opening).stream;
}

/** The provider's stream for `options`, read and mapped chunk by chunk as the SDK would. */
async function openDirect(model: LanguageModelV4, options: LanguageModelV4CallOptions, request: ModelRequest, clock: Clock, requested: (() => void) | undefined): Promise<ModelCallStream> {
  const startedMs = clock.now();
  const opening = model.doStream(options);
  requested?.();
  const { stream } = await opening;
  const mapper = new ModelPartMapper({
    tools: request.tools,
    toolChoice: options.toolChoice ?? { type: "auto" },
    provider: model.provider,
    modelId: model.modelId,
    signal: options.abortSignal ?? new AbortController().signal,
    now: () => clock.now(),
    startedMs,
  });
  return new MappedParts(stream.getReader(), mapper);
}

/** The provider's chunks through the mapper: one read of the provider's stream per `read`, as the relay reads it. */
class MappedParts implements ModelCallStream {
  readonly #reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
  readonly #mapper: ModelPartMapper;
  /** Where the read in flight appends (`read` is never called again before its promise settles). */
  #out: ModelCallPart[] = [];

  constructor(reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>, mapper: ModelPartMapper) {
    this.#reader = reader;
    this.#mapper = mapper;
  }

  /** A chunk's continuation, made once: each read is a `then`, not an async function's frame, promise and await (a read per provider chunk). */
  readonly #mapped = (next: Awaited<ReturnType<ReadableStreamDefaultReader<LanguageModelV4StreamPart>["read"]>>): boolean | Promise<boolean> => {
    if (next.done) return false;
    const pending = this.#mapper.map(next.value, this.#out);
    return pending === undefined ? true : pending.then(() => true);
  };

  read(out: ModelCallPart[]): Promise<boolean> {
    this.#out = out;
    return this.#reader.read().then(this.#mapped);
  }

  cancel(): void {
    this.#reader.cancel().catch(() => undefined);
  }
}

/** The SDK's parts, one per `read`. */
class IteratedParts implements ModelCallStream {
  readonly #parts: AsyncIterator<ModelCallPart>;

  constructor(parts: AsyncIterable<ModelCallPart>) {
    this.#parts = parts[Symbol.asyncIterator]();
  }

  async read(out: ModelCallPart[]): Promise<boolean> {
    const next = await this.#parts.next();
    if (next.done === true) return false;
    out.push(next.value);
    return true;
  }

  cancel(): void {
    this.#parts.return?.().catch(() => undefined);
  }
}
