import type { LanguageModel, ModelMessage, ToolChoice, ToolSet } from "ai";
import type { Clock } from "../clock.js";
import { aiToolSet, type ToolAnswer, type ToolDeclaration, type ToolInvoker } from "./tool-port.js";
import { joinSpoken } from "./join-spoken.js";
import { readStep, stepPrompt, StepReader, toolResults, type StepRecord, type StepUsage } from "./step-reader.js";
import { spread } from "../spread.js";

/** The LLM settings of one agent (config.md), already defaulted. */
export interface ReplySettings {
  readonly maxSteps: number;
  readonly toolChoice: "auto" | "required" | "none" | { readonly type: "tool"; readonly toolName: string };
  readonly resetToolChoice: boolean;
  readonly maxRetries: number;
  readonly temperature?: number | undefined;
  readonly maxOutputTokens?: number | undefined;
}

export interface ReplyLoopDeps {
  readonly model: LanguageModel;
  readonly tools: readonly ToolDeclaration[];
  readonly invoke: ToolInvoker;
  readonly settings: ReplySettings;
  readonly clock: Clock;
  /** The system prompt for this request (presets and prompt context applied). */
  readonly instructions: () => string | Promise<string>;
}

/** What a hand-off changes: the agent whose model, tools, settings and prompt the next replies run on. */
export type ReplyAgentDeps = Pick<ReplyLoopDeps, "model" | "tools" | "settings" | "instructions">;

/** What a reply reports while it runs. */
export interface ReplyObserver {
  /** Model text as it streams. */
  text?(delta: string): void;
  /** The model called a tool (text before it should be released to TTS now). */
  toolCall?(): void;
  /** Milliseconds from the request to the first text or tool call. */
  firstToken?(ms: number): void;
  /** A step's model request went out (model-call.ts `requested`). */
  requested?(): void;
}

export interface ReplyUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly steps: number;
}

/** The outcome of one reply. `messages` are what to append to the history, as it must read. */
export interface ReplyResult {
  readonly status: "completed" | "cancelled" | "failed";
  readonly messages: ModelMessage[];
  /** The reply's recorded text: model text plus verbatim completion lines. */
  readonly text: string;
  /** A cancelled reply's unfinished step text (not in `messages`): the caller records what was heard of it. */
  readonly partialText?: string;
  readonly usage: ReplyUsage;
  readonly error?: unknown;
}

const NO_USAGE: ReplyUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, steps: 0 };

/** `sum` plus one step (a count the provider lacks is 0). */
function addStep(sum: ReplyUsage, usage: StepUsage): ReplyUsage {
  return {
    inputTokens: sum.inputTokens + (usage.inputTokens ?? 0),
    outputTokens: sum.outputTokens + (usage.outputTokens ?? 0),
    totalTokens: sum.totalTokens + (usage.totalTokens ?? 0),
    steps: sum.steps + 1,
  };
}

export { joinSpoken };

/**
 * History for the steps that completed, as a provider requires it: each assistant tool call
 * followed by its result, no call without a result (a dangling call after an abort is dropped
 * with its step's tail), no empty assistant message.
 */
export function stepsToMessages(steps: readonly StepRecord[], partialText: string | undefined): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const step of steps) {
    const answered = step.calls.filter((c) => step.results.has(c.toolCallId));
    const content: Exclude<ModelMessage, { role: "system" | "user" | "tool" }>["content"] & unknown[] = [];
    if (step.text.trim() !== "") content.push({ type: "text", text: step.text });
    for (const call of answered) content.push({ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: call.input });
    if (content.length === 0) continue;
    messages.push({ role: "assistant", content });
    if (answered.length > 0) {
      messages.push(toolResults(step, answered));
    }
  }
  if (partialText !== undefined && partialText.trim() !== "") messages.push({ role: "assistant", content: partialText });
  return messages;
}

/**
 * A reply: one streaming model call per step (model-call.ts), tools run through the invoker as
 * their calls arrive, at most `maxSteps` tool steps with step `maxSteps + 1` forced to
 * `toolChoice: "none"` so the reply ends in speech. A step whose every call settled with a
 * verbatim line ends the reply with those lines instead of another model call.
 */
export class ReplyLoop {
  #deps: ReplyLoopDeps;
  /** The tools as the model is told about them (declared only: this loop runs them itself). */
  #toolSet: ToolSet;

  constructor(deps: ReplyLoopDeps) {
    this.#deps = deps;
    this.#toolSet = aiToolSet(deps.tools);
  }

  /**
   * A hand-off: replies from the next one on run on another agent's model, tools, settings and
   * prompt (the history is the caller's, unchanged). A reply in flight keeps the agent it began with.
   */
  switchAgent(agent: ReplyAgentDeps): void {
    this.#deps = spread(this.#deps, agent);
    this.#toolSet = aiToolSet(agent.tools);
  }

  /**
   * Preemptive generation: the first step of a reply to a turn that may not be final yet, with
   * tools declared but never executed. It writes nothing anywhere; the caller adopts its text
   * only if the turn's final text matches, and only when the step wanted no tool.
   */
  async speculate(history: readonly ModelMessage[], signal: AbortSignal): Promise<{ readonly text: string; readonly usable: boolean; readonly usage: ReplyUsage }> {
    const deps = this.#deps;
    const { settings } = deps;
    const reader = new StepReader();
    const request = { model: deps.model, system: await deps.instructions(), messages: history, tools: this.#toolSet, toolChoice: settings.toolChoice as ToolChoice<ToolSet>, temperature: settings.temperature, maxOutputTokens: settings.maxOutputTokens };
    await readStep(reader, request, { clock: deps.clock, maxRetries: 0, signal }, undefined, () => {});
    const { text, calls } = reader.step;
    const usage = reader.usage === undefined ? NO_USAGE : addStep(NO_USAGE, reader.usage);
    return { text, usable: calls.length === 0 && reader.error === undefined && !signal.aborted && text.trim() !== "", usage };
  }

  /**
   * An out-of-band response (docs/realtime.md "Out-of-band responses"): one model call over
   * `messages` with no tools, its text to `text` as it streams. It writes nothing anywhere.
   */
  async once(
    messages: readonly ModelMessage[],
    options: { readonly instructions?: string | undefined; readonly maxOutputTokens?: number | undefined },
    signal: AbortSignal,
    text: (delta: string) => void,
  ): Promise<{ readonly status: "completed" | "cancelled" | "failed"; readonly text: string; readonly usage: ReplyUsage; readonly error?: unknown }> {
    const deps = this.#deps;
    const { settings } = deps;
    const reader = new StepReader();
    const maxOutputTokens = options.maxOutputTokens ?? settings.maxOutputTokens;
    const request = { model: deps.model, system: options.instructions ?? (await deps.instructions()), messages, temperature: settings.temperature, maxOutputTokens };
    await readStep(reader, request, { clock: deps.clock, maxRetries: settings.maxRetries, signal }, undefined, (delta) => {
      if (delta !== undefined) text(delta);
    });
    const { error } = reader;
    const out = reader.step.text;
    const usage = reader.usage === undefined ? NO_USAGE : addStep(NO_USAGE, reader.usage);
    if (signal.aborted) return { status: "cancelled", text: out, usage };
    return error === undefined ? { status: "completed", text: out, usage } : { status: "failed", text: out, usage, error };
  }

  /**
   * Run one reply. `stopAfterStep` is asked after every step whose tool calls all settled, with
   * the reply's usage so far: true ends the reply before the next model call (a barge-in during a
   * tool call lets the tool finish and keeps its result; a sub-agent's token budget stops it).
   */
  async run(
    history: readonly ModelMessage[],
    signal: AbortSignal,
    observer: ReplyObserver = {},
    stopAfterStep?: (usage: ReplyUsage) => boolean,
  ): Promise<ReplyResult> {
    const deps = this.#deps;
    const toolSet = this.#toolSet;
    const { settings, clock } = deps;
    const started = clock.now();
    const steps: StepRecord[] = [];
    let usage: ReplyUsage = NO_USAGE;
    let firstTokenSeen = false;
    let streamError: unknown;
    let partialText = "";
    const markFirst = (): void => {
      if (firstTokenSeen) return;
      firstTokenSeen = true;
      observer.firstToken?.(clock.now() - started);
    };
    const demanding = settings.toolChoice === "required" || typeof settings.toolChoice === "object";
    const toolChoiceFor = (stepNumber: number): ToolChoice<ToolSet> => {
      if (stepNumber >= settings.maxSteps) return "none";
      if (stepNumber > 0 && demanding && settings.resetToolChoice) return "auto";
      return settings.toolChoice;
    };
    const runTool = (call: { toolCallId: string; toolName: string; input: unknown }): Promise<ToolAnswer> =>
      deps.invoke({ toolCallId: call.toolCallId, toolName: call.toolName, args: call.input, signal });
    /** After a step whose calls all settled: whether the reply ends before another model call. */
    const stops = (): boolean => {
      const last = steps.at(-1) as StepRecord;
      const verbatim = last.calls.every((c) => last.results.get(c.toolCallId)?.verbatim !== undefined);
      const asked = stopAfterStep?.(usage) === true;
      return steps.length >= settings.maxSteps + 1 || verbatim || asked;
    };

    try {
      const system = await deps.instructions();
      for (;;) {
        const reader = new StepReader();
        // The first step's prompt is the history as given (a copy of 120 messages at the cap, every request, saved).
        const messages = steps.length === 0 ? history : [...history, ...stepPrompt(steps)];
        const request = { model: deps.model, system, messages, tools: toolSet, toolChoice: toolChoiceFor(steps.length), temperature: settings.temperature, maxOutputTokens: settings.maxOutputTokens };
        await readStep(reader, request, { clock, maxRetries: settings.maxRetries, signal, requested: () => observer.requested?.() }, runTool, (delta, textBefore) => {
          if (delta === undefined) {
            markFirst();
            observer.toolCall?.();
            return;
          }
          markFirst();
          // A new step's text reads as a new sentence: one space after the previous step's.
          const opening = textBefore === "" && steps.some((s) => s.text.trim() !== "") && !/^\s/.test(delta);
          observer.text?.(opening ? ` ${delta}` : delta);
        });
        streamError = reader.error;
        if (reader.usage === undefined && (signal.aborted || streamError !== undefined)) {
          // The call broke off: its text is what the caller may have heard, not history.
          partialText = reader.step.text;
          break;
        }
        usage = addStep(usage, reader.usage ?? {});
        steps.push(reader.step);
        if (streamError !== undefined || signal.aborted) break;
        const { calls, results } = reader.step;
        if (calls.length === 0 || !calls.every((c) => results.has(c.toolCallId)) || stops()) break;
      }
    } catch (error) {
      streamError = error;
    }

    if (signal.aborted) {
      return { status: "cancelled", messages: stepsToMessages(steps, undefined), text: "", partialText, usage };
    }
    if (streamError !== undefined) {
      return { status: "failed", messages: stepsToMessages(steps, undefined), text: "", usage, error: streamError };
    }
    const messages = stepsToMessages(steps, undefined);
    const last = steps.at(-1);
    const verbatim = last?.calls.map((c) => last.results.get(c.toolCallId)?.verbatim).filter((v): v is string => v !== undefined) ?? [];
    if (verbatim.length > 0 && last !== undefined && verbatim.length === last.calls.length) {
      const line = joinSpoken(verbatim);
      observer.text?.(line);
      messages.push({ role: "assistant", content: line });
    }
    const text = joinSpoken([...steps.map((s) => s.text), ...(verbatim.length > 0 ? verbatim : [])]);
    return { status: "completed", messages, text, usage };
  }
}
