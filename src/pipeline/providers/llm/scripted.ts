/**
 * The `scripted` model: the offline demo/test model. A real AI SDK `LanguageModelV4` that answers
 * from a small script (the per-agent `offline.json`) instead of a network model. No keys, no I/O,
 * and the same prompt always yields the same reply.
 *
 * Step 1 (the prompt ends with a user message): the first rule whose `when` matches the last user
 * text says `say` and calls its tool(s). After the tools ran (the prompt ends with a tool message):
 * the rule that made those calls says `then`, with `{result}` filled from the tool results.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
  SharedV4Warning,
} from "@ai-sdk/provider";
import { compileScript, groupNamesOf, PLACEHOLDER, RESULT, type CompiledRule, type CompiledScript, type Script } from "./script.js";
import { spread } from "../../../spread.js";

export type ScriptedSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface ScriptedModelOptions {
  /** Reported as `modelId` (default "scripted"). */
  modelId?: string | undefined;
  /** Replaces the setTimeout-based wait between streamed text chunks. */
  sleep?: ScriptedSleep | undefined;
}

interface PlannedCall {
  readonly toolCallId: string;
  readonly toolName: string;
  /** JSON-encoded arguments. */
  readonly input: string;
}

/** What one model call answers, before it is shaped as generate content or stream parts. */
interface Reply {
  readonly text: string;
  readonly calls: readonly PlannedCall[];
  readonly delayMs: number;
  readonly warnings: readonly SharedV4Warning[];
}


/**
 * Builds the offline demo/test model from a script. Validates the script (every regular expression
 * is compiled here, once) and throws a `ConfigError` naming each bad field and its fix.
 */
export function scriptedModel(script: Script, options?: ScriptedModelOptions): LanguageModelV4;
export function scriptedModel(script: unknown, options?: ScriptedModelOptions): LanguageModelV4;
export function scriptedModel(script: unknown, options: ScriptedModelOptions = {}): LanguageModelV4 {
  const compiled = compileScript(script);
  const modelId = options.modelId ?? "scripted";
  const sleep = options.sleep ?? sleepWithTimeout;
  return {
    specificationVersion: "v4",
    provider: "scripted",
    modelId,
    supportedUrls: {},
    doGenerate(call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      if (call.abortSignal?.aborted === true) return Promise.reject(abortError(call.abortSignal));
      const reply = replyFor(compiled, call);
      return Promise.resolve({
        content: contentFor(reply),
        finishReason: finishReasonOf(reply),
        usage: usageOf(call.prompt, reply),
        warnings: [...reply.warnings],
        response: { modelId },
      });
    },
    doStream(call: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      const reply = replyFor(compiled, call);
      const parts = streamPartsFor(reply, call.prompt, modelId);
      return Promise.resolve({ stream: timedStream(parts, call.abortSignal, sleep) });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The state machine: which reply a prompt gets

function replyFor(script: CompiledScript, call: LanguageModelV4CallOptions): Reply {
  const last = call.prompt.at(-1);
  return last?.role === "tool" ? replyAfterTools(script, call.prompt) : replyToUser(script, call);
}

/** Step 1: the first rule whose `when` matches the last user message speaks and calls its tools. */
function replyToUser(script: CompiledScript, call: LanguageModelV4CallOptions): Reply {
  const userText = lastUserText(call.prompt);
  const hit = userText.trim() === "" ? undefined : matchRule(script.rules, userText);
  if (hit === undefined) return textReply(script.fallback, script.delayMs);
  const { rule, groups } = hit;
  const delayMs = rule.rule.delayMs ?? script.delayMs;
  const say = rule.rule.say === undefined ? "" : renderTemplate(rule.rule.say, groups);
  if (rule.calls.length === 0) return textReply(say, delayMs);
  const sayOrFallback = say === "" ? script.fallback : say;
  if (call.toolChoice?.type === "none") return textReply(sayOrFallback, delayMs);
  // A rule's calls go out together or not at all: a partial set would leave `then` half-filled.
  const offered = new Set((call.tools ?? []).map((tool) => tool.name));
  const missing = rule.calls.filter((scripted) => !offered.has(scripted.tool)).map((scripted) => scripted.tool);
  if (missing.length > 0) {
    const message = `scripted model: tool ${missing.map((name) => JSON.stringify(name)).join(", ")} is not offered in this call, so the rule's tool calls were skipped.`;
    return spread(textReply(sayOrFallback, delayMs), { warnings: [{ type: "other", message }] });
  }
  // Ids are unique within the conversation and depend only on the prompt, keeping replies deterministic.
  const earlier = countToolCalls(call.prompt);
  const calls = rule.calls.map((scripted, i) => ({
    toolCallId: `scripted_call_${earlier + i + 1}`,
    toolName: scripted.tool,
    input: JSON.stringify(renderArgs(scripted.args ?? {}, groups)),
  }));
  return { text: say, calls, delayMs, warnings: [] };
}

/** Step 2+: the rule that made the latest tool calls says `then`, filled with their results. */
function replyAfterTools(script: CompiledScript, prompt: LanguageModelV4Prompt): Reply {
  const { toolNames, results } = latestToolExchange(prompt);
  const userText = lastUserText(prompt);
  const rule = ruleForToolCalls(script.rules, toolNames, userText);
  const result = results.join(" ");
  if (rule === undefined) return textReply(result === "" ? script.fallback : result, script.delayMs);
  const match = rule.pattern?.exec(userText) ?? undefined;
  const groups = spread(groupsOf(rule.pattern, match), { [RESULT]: result });
  return textReply(renderTemplate(rule.rule.then ?? `{${RESULT}}`, groups), rule.rule.delayMs ?? script.delayMs);
}

function textReply(text: string, delayMs: number): Reply {
  return { text, calls: [], delayMs, warnings: [] };
}

function matchRule(rules: readonly CompiledRule[], text: string): { rule: CompiledRule; groups: Record<string, string> } | undefined {
  for (const rule of rules) {
    const match = rule.pattern?.exec(text);
    if (match !== undefined && match !== null) return { rule, groups: groupsOf(rule.pattern, match) };
  }
  return undefined;
}

/**
 * The first rule (in script order) whose calls cover every tool just called. When several do,
 * the one whose `when` also matches the last user message wins.
 */
function ruleForToolCalls(rules: readonly CompiledRule[], toolNames: readonly string[], userText: string): CompiledRule | undefined {
  if (toolNames.length === 0) return undefined;
  const candidates = rules.filter((rule) => rule.calls.length > 0 && toolNames.every((name) => rule.toolNames.has(name)));
  return candidates.find((rule) => rule.pattern?.test(userText) === true) ?? candidates[0];
}

/** Every named group of `pattern` as a string; groups that did not take part are "". */
function groupsOf(pattern: RegExp | undefined, match: RegExpExecArray | undefined): Record<string, string> {
  const groups: Record<string, string> = {};
  for (const name of groupNamesOf(pattern)) groups[name] = match?.groups?.[name] ?? "";
  return groups;
}

function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? (values[name] ?? "") : whole));
}

/** Fills placeholders in every string of an args value; "{name}" alone becomes the captured string. */
function renderArgs(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === "string") return renderTemplate(value, values);
  if (Array.isArray(value)) return value.map((item) => renderArgs(item, values));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderArgs(item, values)]));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Reading the prompt (system messages are ignored)

/** The text of the prompt's last user message ("" when there is none). */
export function lastUserText(prompt: LanguageModelV4Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== "user") continue;
    return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ");
  }
  return "";
}

/** The tool names of the last assistant message with tool calls, and the results after it. */
function latestToolExchange(prompt: LanguageModelV4Prompt): { toolNames: string[]; results: string[] } {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== "assistant") continue;
    const toolNames = message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolName] : []));
    if (toolNames.length === 0) continue;
    const results = prompt
      .slice(i + 1)
      .flatMap((later) => (later.role === "tool" ? later.content : []))
      .flatMap((part) => (part.type === "tool-result" ? [toolResultText(part.output)] : []));
    return { toolNames, results };
  }
  return { toolNames: [], results: [] };
}

function countToolCalls(prompt: LanguageModelV4Prompt): number {
  return prompt.reduce((n, message) => n + (message.role === "assistant" ? message.content.filter((part) => part.type === "tool-call").length : 0), 0);
}

/** A tool result as words a voice can say. Error results are already worded for the caller (tool runner), so they pass unchanged. */
function toolResultText(output: LanguageModelV4ToolResultOutput): string {
  return withoutGuidance(rawToolResultText(output));
}

/** `[guidance] …` lines (a tool's system-role completion message) are instructions for a model, not words to say. */
function withoutGuidance(text: string): string {
  return text
    .split("\n")
    .filter((line) => !line.startsWith("[guidance]"))
    .join("\n")
    .trim();
}

function rawToolResultText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
      return output.value;
    case "json":
      return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    case "error-text":
      return output.value;
    case "error-json":
      return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    case "execution-denied":
      return output.reason === undefined ? "The tool call was denied." : `The tool call was denied: ${output.reason}`;
    case "content":
      return output.value
        .map((part) => (part.type === "text" ? part.text : part.type === "file" ? `[${part.filename ?? part.mediaType} file]` : ""))
        .filter((text) => text !== "")
        .join(" ");
  }
}

// ---------------------------------------------------------------------------------------------
// Shaping a reply

function contentFor(reply: Reply): LanguageModelV4Content[] {
  const content: LanguageModelV4Content[] = reply.text === "" ? [] : [{ type: "text", text: reply.text }];
  for (const call of reply.calls) content.push({ type: "tool-call", ...call });
  return content;
}

function finishReasonOf(reply: Reply): LanguageModelV4FinishReason {
  return reply.calls.length > 0 ? { unified: "tool-calls", raw: "tool-calls" } : { unified: "stop", raw: "stop" };
}

/** One stream part and the wait before it (a test's own model can stream through `timedStream`). */
export interface TimedPart {
  readonly part: LanguageModelV4StreamPart;
  /** Wait before emitting this part. */
  readonly delayMs: number;
}

function streamPartsFor(reply: Reply, prompt: LanguageModelV4Prompt, modelId: string): TimedPart[] {
  const now = (part: LanguageModelV4StreamPart): TimedPart => ({ part, delayMs: 0 });
  const parts: TimedPart[] = [now({ type: "stream-start", warnings: [...reply.warnings] }), now({ type: "response-metadata", modelId })];
  if (reply.text !== "") {
    const id = "text_0";
    parts.push(now({ type: "text-start", id }));
    wordChunks(reply.text).forEach((delta, i) => parts.push({ part: { type: "text-delta", id, delta }, delayMs: i === 0 ? 0 : reply.delayMs }));
    parts.push(now({ type: "text-end", id }));
  }
  for (const call of reply.calls) {
    const id = call.toolCallId;
    parts.push(now({ type: "tool-input-start", id, toolName: call.toolName }));
    parts.push(now({ type: "tool-input-delta", id, delta: call.input }));
    parts.push(now({ type: "tool-input-end", id }));
    parts.push(now({ type: "tool-call", ...call }));
  }
  parts.push(now({ type: "finish", usage: usageOf(prompt, reply), finishReason: finishReasonOf(reply) }));
  return parts;
}

/** Word-sized chunks, each carrying the whitespace after it; they concatenate to `text` exactly. */
function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text];
}

/** Emits the parts in order, waiting where asked; an abort errors the stream at once. */
export function timedStream(parts: readonly TimedPart[], signal: AbortSignal | undefined, sleep: ScriptedSleep): ReadableStream<LanguageModelV4StreamPart> {
  let next = 0;
  let settled = false;
  let onAbort: (() => void) | undefined;
  const detach = (): void => {
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
    onAbort = undefined;
  };
  const fail = (controller: ReadableStreamDefaultController<LanguageModelV4StreamPart>, error: unknown): void => {
    if (settled) return;
    settled = true;
    detach();
    controller.error(error);
  };
  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      if (signal === undefined) return;
      onAbort = () => fail(controller, abortError(signal));
      signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      if (settled) return;
      const item = parts[next++];
      if (item === undefined) {
        settled = true;
        detach();
        controller.close();
        return;
      }
      if (item.delayMs > 0) {
        try {
          await sleep(item.delayMs, signal);
        } catch (error) {
          fail(controller, error);
          return;
        }
      }
      if (settled) return;
      if (signal?.aborted === true) {
        fail(controller, abortError(signal));
        return;
      }
      controller.enqueue(item.part);
    },
    cancel() {
      settled = true;
      detach();
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Usage, aborts, timers

/** Token counts are word counts: rough, but consistent across calls. */
function usageOf(prompt: LanguageModelV4Prompt, reply: Reply): LanguageModelV4Usage {
  const input = prompt.reduce((n, message) => n + wordCount(messageText(message)), 0);
  const text = wordCount(reply.text);
  const output = text + reply.calls.reduce((n, call) => n + wordCount(call.input), 0);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text, reasoning: undefined },
  };
}

function messageText(message: LanguageModelV4Message): string {
  if (message.role === "system") return message.content;
  const pieces: string[] = [];
  for (const part of message.content) {
    if (part.type === "text" || part.type === "reasoning") pieces.push(part.text);
    else if (part.type === "tool-call") pieces.push(typeof part.input === "string" ? part.input : (JSON.stringify(part.input) ?? ""));
    else if (part.type === "tool-result") pieces.push(toolResultText(part.output));
  }
  return pieces.join(" ");
}

function wordCount(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException("The operation was aborted.", "AbortError");
}

function sleepWithTimeout(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(abortError(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
