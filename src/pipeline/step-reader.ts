/**
 * One step of a reply, as its model call streams it: `StepReader` reads the parts into a
 * `StepRecord` (spoken text, tool calls in order, their answers, and the content as the provider
 * sent it), `readStep` drives one call, and `stepPrompt` turns finished steps into the prompt of
 * the reply's next call. The reply loop (reply-loop.ts) decides whether another step follows.
 */
import type { ModelMessage, TextPart } from "ai";
import { messageOf } from "../errors.js";
import { openModelCall, type ModelCallOptions, type ModelCallPart, type ModelRequest } from "./model-call.js";
import type { ToolAnswer } from "./tool-port.js";

/** A content part of an assistant message, as a provider gets it back within the reply. */
type AssistantPart = Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string>[number];
type ProviderOptions = NonNullable<TextPart["providerOptions"]>;

export interface StepRecord {
  /** The step's spoken text. */
  text: string;
  calls: { toolCallId: string; toolName: string; input: unknown }[];
  results: Map<string, ToolAnswer>;
  /**
   * What the provider sent, in order and with its metadata (reasoning, signatures, item ids):
   * the next step of the same reply is prompted with it, as the provider requires.
   */
  content: AssistantPart[];
}

const emptyStep = (): StepRecord => ({ text: "", calls: [], results: new Map(), content: [] });

/** A step's usage as the AI SDK reports it (a count the provider lacks is undefined). */
export interface StepUsage {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly totalTokens?: number | undefined;
}


/** The tool message answering `calls` (each settled): the model reads each answer's text, an error as `error-text`. */
export function toolResults(step: StepRecord, calls: StepRecord["calls"]): ModelMessage {
  return {
    role: "tool",
    content: calls.map((call) => {
      const answer = step.results.get(call.toolCallId) as ToolAnswer;
      return {
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: answer.isError ? { type: "error-text" as const, value: answer.modelText } : { type: "text" as const, value: answer.modelText },
      };
    }),
  };
}

/**
 * The messages a reply's next model call is prompted with after `steps`: each step as the
 * provider sent it (reasoning, text and tool calls with their provider metadata, which some
 * providers require back within a turn) and then its tool results. Only steps whose calls all
 * settled are continued, so every call here has its result.
 */
export function stepPrompt(steps: readonly StepRecord[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const step of steps) {
    if (step.content.length > 0) messages.push({ role: "assistant", content: step.content });
    if (step.calls.length === 0) continue;
    messages.push(toolResults(step, step.calls));
  }
  return messages;
}

/** Provider metadata as prompt options (absent when the provider sent none). */
const withOptions = (metadata: ProviderOptions | undefined): { providerOptions?: ProviderOptions } => (metadata === undefined ? {} : { providerOptions: metadata });

/**
 * Reads one model call's stream into a step: text and reasoning by part id, tool calls in the
 * order they came (each started on the invoker as it arrives), usage at the call's end.
 */
export class StepReader {
  readonly step = emptyStep();
  /** The call's usage once it ended (`model-call-end`); undefined while it runs or if it broke off. */
  usage: StepUsage | undefined;
  error: unknown;
  readonly #open = new Map<string, { type: "text" | "reasoning"; text: string; providerOptions?: ProviderOptions }>();
  readonly #running: Promise<void>[] = [];

  /** The part of kind `type` with this id, opened on first sight. */
  #part(type: "text" | "reasoning", id: string, metadata: ProviderOptions | undefined): { text: string; providerOptions?: ProviderOptions } {
    const key = `${type}:${id}`;
    let part = this.#open.get(key);
    if (part === undefined) {
      part = { type, text: "" };
      this.#open.set(key, part);
      this.step.content.push(part);
    }
    if (metadata !== undefined) part.providerOptions = metadata;
    return part;
  }

  /** The text and reasoning parts that carry nothing are dropped, as the SDK drops them. */
  #settleContent(): void {
    this.step.content = this.step.content.filter((part) => !((part.type === "text" || part.type === "reasoning") && part.text === "" && part.providerOptions === undefined));
  }

  /** One part; a tool call starts on `run` (when given) at once. Returns the text delta to speak, if any. */
  read(part: ModelCallPart, run: ((call: { toolCallId: string; toolName: string; input: unknown }) => Promise<ToolAnswer>) | undefined): string | undefined {
    switch (part.type) {
      case "text-start":
      case "text-end":
        this.#part("text", part.id, part.providerMetadata);
        return undefined;
      case "text-delta": {
        this.#part("text", part.id, part.providerMetadata).text += part.text;
        this.step.text += part.text;
        return part.text;
      }
      case "reasoning-start":
      case "reasoning-end":
        this.#part("reasoning", part.id, part.providerMetadata);
        return undefined;
      case "reasoning-delta":
        this.#part("reasoning", part.id, part.providerMetadata).text += part.text;
        return undefined;
      case "tool-call": {
        const given: unknown = part.input;
        const call = { toolCallId: part.toolCallId, toolName: part.toolName, input: given };
        this.step.calls.push(call);
        // An unparsable call keeps an object input, as the SDK sends it back; its tool-error part answers it.
        const input = part.invalid === true && (typeof given !== "object" || given === null) ? {} : given;
        this.step.content.push({ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input, ...withOptions(part.providerMetadata) });
        if (part.invalid !== true && part.providerExecuted !== true && run !== undefined) {
          const { results } = this.step;
          this.#running.push(
            run(call).then(
              (answer) => void results.set(call.toolCallId, answer),
              (error: unknown) => void results.set(call.toolCallId, { modelText: messageOf(error), isError: true }),
            ),
          );
        }
        return undefined;
      }
      case "tool-error":
        this.step.results.set(part.toolCallId, { modelText: messageOf(part.error), isError: true });
        return undefined;
      case "model-call-end":
        this.usage = part.usage;
        return undefined;
      case "error":
        this.error = part.error;
        return undefined;
      default:
        return undefined;
    }
  }

  /** Every tool call of the step has settled (the model's stream has ended). */
  async settled(): Promise<StepRecord> {
    await Promise.all(this.#running);
    this.#settleContent();
    return this.step;
  }
}

/**
 * Stream one model call into `reader`, starting tool calls on `runTool` as they arrive; `heard`
 * gets each text delta (with the step's text before it) and, with no delta, each tool call.
 * Never throws: a failure to open or read is the reader's error. Returns once the step's tool
 * calls have settled, so a tool finishes even when the stream broke off.
 */
export async function readStep(
  reader: StepReader,
  request: ModelRequest,
  options: ModelCallOptions,
  runTool: ((call: { toolCallId: string; toolName: string; input: unknown }) => Promise<ToolAnswer>) | undefined,
  heard: (delta: string | undefined, textBefore: string) => void,
): Promise<void> {
  try {
    const stream = await openModelCall(request, options);
    const parts: ModelCallPart[] = [];
    let ended = false;
    try {
      while (await stream.read(parts)) {
        for (const part of parts) {
          const textBefore = reader.step.text;
          const callsBefore = reader.step.calls.length;
          const delta = reader.read(part, runTool);
          if (delta !== undefined) heard(delta, textBefore);
          else if (reader.step.calls.length > callsBefore) heard(undefined, textBefore);
        }
        parts.length = 0;
      }
      ended = true;
    } finally {
      if (!ended) stream.cancel();
    }
  } catch (error) {
    reader.error ??= error;
  }
  await reader.settled();
}

