/**
 * The direct model call (model-prompt.ts, model-parts.ts) against the AI SDK's
 * `streamLanguageModelCall` it stands in for: the same requests and the same provider part
 * sequences through both must give deep-equal `doStream` options and deep-equal parts (the
 * timing figures of `model-call-end` aside). Run against the installed `ai`, so an SDK upgrade
 * that changes either shows here.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MissingToolResultsError, type ModelMessage, type ToolChoice, type ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { systemClock, virtualClock } from "../../../src/clock.js";
import { openModelCall, openThroughSdk, type ModelCallPart, type ModelCallStream, type ModelRequest } from "../../../src/pipeline/model-call.js";
import { directCallOptions, providerPrompt } from "../../../src/pipeline/model-prompt.js";
import { aiToolSet } from "../../../src/pipeline/tool-port.js";
import { streamingModel } from "../../../src/testing/streaming-model.js";

const USAGE = { inputTokens: { total: 10, noCache: 8, cacheRead: 2, cacheWrite: undefined }, outputTokens: { total: 5, text: 4, reasoning: 1 } };
const finish = (unified: "stop" | "tool-calls" | "interrupted" = "stop", providerMetadata?: Record<string, Record<string, string>>): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: USAGE,
  ...(providerMetadata === undefined ? {} : { providerMetadata }),
});
const META = { openai: { itemId: "msg_1" } };

const TOOLS: ToolSet = aiToolSet([
  { name: "lookup_order", description: "Look up an order.", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
  { name: "end_call", description: "Hang up.", parameters: { type: "object", properties: {} } },
]);

/** Every message shape the voice loop sends (history, heard corrections, step prompts, tool results). */
const HISTORY: ModelMessage[] = [
  { role: "user", content: "Where is my order?" },
  { role: "assistant", content: "Let me look." },
  { role: "user", content: [{ type: "text", text: "It is 42." }, { type: "text", text: "" }, { type: "text", text: "Thanks.", providerOptions: { x: { y: "z" } } }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user gave an id.", providerOptions: { openai: { itemId: "rs_1" } } },
      { type: "text", text: "" },
      { type: "text", text: "", providerOptions: { openai: { itemId: "msg_0" } } },
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: { id: "42" }, providerOptions: { openai: { itemId: "fc_1" } } },
      { type: "tool-call", toolCallId: "c2", toolName: "lookup_order", input: { id: "43" } },
    ],
  },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup_order", output: { type: "text", value: "Shipped." } }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "lookup_order", output: { type: "error-text", value: "No such order." } }] },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "c3", toolName: "end_call", input: {} }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c3", toolName: "end_call", output: { type: "json", value: { ok: true } } }] },
  { role: "user", content: "Okay, bye.", providerOptions: { anthropic: { cacheControl: "ephemeral" } } },
];

interface Run {
  readonly options: LanguageModelV4CallOptions;
  readonly parts: ModelCallPart[];
}

/** A model that records its call options and streams `parts`. */
function recording(parts: readonly LanguageModelV4StreamPart[]) {
  const calls: LanguageModelV4CallOptions[] = [];
  const model = streamingModel("rec", (options) => {
    calls.push(options);
    return Promise.resolve({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    });
  });
  return { model, calls };
}

/** `model-call-end` without its timing figures, which differ run to run. */
function untimed(parts: ModelCallPart[]): unknown[] {
  return parts.map((part) => {
    if (part.type !== "model-call-end") return part;
    const { performance, ...rest } = part;
    expect(typeof performance.responseTimeMs).toBe("number");
    return rest;
  });
}

async function throughSdk(request: Omit<ModelRequest, "model">, parts: readonly LanguageModelV4StreamPart[], signal: AbortSignal): Promise<Run> {
  const { model, calls } = recording(parts);
  const stream = await openThroughSdk({ ...request, model }, signal);
  const out: ModelCallPart[] = [];
  for await (const part of stream) out.push(part);
  return { options: calls[0] as LanguageModelV4CallOptions, parts: out };
}

/** Every part of `stream`, read to its end. */
async function readAll(stream: ModelCallStream): Promise<ModelCallPart[]> {
  const out: ModelCallPart[] = [];
  while (await stream.read(out));
  return out;
}

async function direct(request: Omit<ModelRequest, "model">, parts: readonly LanguageModelV4StreamPart[], signal: AbortSignal): Promise<Run> {
  const { model, calls } = recording(parts);
  const stream = await openModelCall({ ...request, model }, { clock: systemClock, maxRetries: 0, signal });
  return { options: calls[0] as LanguageModelV4CallOptions, parts: await readAll(stream) };
}

async function expectSame(request: Omit<ModelRequest, "model">, parts: readonly LanguageModelV4StreamPart[]): Promise<ModelCallPart[]> {
  const signal = new AbortController().signal;
  // The request must take the direct path: otherwise both sides below would be the SDK.
  expect(await directCallOptions({ ...request, model: recording([]).model }, signal)).toBeDefined();
  const sdk = await throughSdk(request, parts, signal);
  const ours = await direct(request, parts, signal);
  expect(ours.options).toEqual(sdk.options);
  expect(untimed(ours.parts)).toEqual(untimed(sdk.parts));
  return ours.parts;
}

const spoken: LanguageModelV4StreamPart[] = [
  { type: "stream-start", warnings: [{ type: "other", message: "a warning" }] },
  { type: "response-metadata", id: "resp_1", modelId: "m-2", timestamp: new Date(0) },
  { type: "reasoning-start", id: "r", providerMetadata: META },
  { type: "reasoning-delta", id: "r", delta: "Thinking." },
  { type: "reasoning-end", id: "r" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Your order " },
  { type: "text-delta", id: "t", delta: "" },
  { type: "text-delta", id: "t", delta: "shipped.", providerMetadata: META },
  { type: "text-end", id: "t", providerMetadata: META },
  finish("stop", { openai: { responseId: "resp_1" } }),
];

const toolStep = (input: string, toolName = "lookup_order"): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "tool-input-start", id: "c9", toolName },
  { type: "tool-input-delta", id: "c9", delta: input },
  { type: "tool-input-end", id: "c9" },
  { type: "tool-call", toolCallId: "c9", toolName, input, providerMetadata: META },
  finish("tool-calls"),
];

describe("the direct model call against the AI SDK's streamLanguageModelCall", () => {
  it("sends the same doStream options for every message shape the voice loop sends, with and without tools and settings", async () => {
    await expectSame({ system: "You are terse.", messages: HISTORY }, spoken);
    await expectSame({ system: "", messages: HISTORY.slice(0, 1), tools: TOOLS, temperature: 0, maxOutputTokens: 200 }, spoken);
    await expectSame({ system: "S", messages: HISTORY, tools: {} }, spoken);
  });

  it("converts a recorded message once and shares it, changing none: the history sent again, whole or in part, reads the same", async () => {
    const first = providerPrompt("S", HISTORY);
    const again = providerPrompt("S", HISTORY);
    expect(again).toEqual(first);
    // The same message object, not a copy: a long call's history is converted once, not every turn.
    expect(again?.[1]).toBe(first?.[1]);
    // The two tool messages were merged into a new one; each alone still reads as itself.
    const alone = providerPrompt("S", HISTORY.slice(4, 5));
    expect(alone?.[1]).toEqual({ role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup_order", output: { type: "text", value: "Shipped." } }] });
    await expectSame({ system: "S", messages: HISTORY.slice(4) }, spoken);
  });

  it("maps text, reasoning, metadata and the end of the call as the SDK does", async () => {
    const parts = await expectSame({ system: "S", messages: HISTORY }, spoken);
    expect(parts.filter((part) => part.type === "text-delta").map((part) => part.text)).toEqual(["Your order ", "", "shipped."]);
    expect(parts.at(-1)).toMatchObject({ type: "model-call-end", finishReason: "stop", usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } });
  });

  it.each<[string, string, string?]>([
    ["a valid call", '{"id":"42"}'],
    ["an empty input", ""],
    ["input that is not JSON", '{"id":'],
    ["a tool that was not declared", '{"id":"42"}', "cancel_order"],
  ])("parses %s as the SDK does", async (_, input, toolName) => {
    await expectSame({ system: "S", messages: HISTORY, tools: TOOLS }, toolStep(input, toolName));
    await expectSame({ system: "S", messages: HISTORY }, toolStep(input, toolName));
  });

  it.each<[string, ToolChoice<ToolSet>, LanguageModelV4StreamPart[]]>([
    ["none, and the model calls a tool", "none", toolStep('{"id":"1"}')],
    ["required, and the model only speaks", "required", spoken],
    ["required, and the model calls a tool", "required", toolStep('{"id":"1"}')],
    ["a named tool, and the model calls another", { type: "tool", toolName: "end_call" }, toolStep('{"id":"1"}')],
    ["a named tool, and the call is interrupted", { type: "tool", toolName: "end_call" }, [...spoken.slice(0, -1), finish("interrupted")]],
  ])("enforces tool choice %s as the SDK does", async (_, toolChoice, parts) => {
    await expectSame({ system: "S", messages: HISTORY, tools: TOOLS, toolChoice }, parts);
  });

  it("normalizes provider stream errors as the SDK does", async () => {
    for (const error of [{ error: { message: "Overloaded", type: "overloaded_error" } }, { message: "bad", status: 429, code: "rate_limit" }, { response: { error: { message: "gone", status_code: "503" } } }, new Error("socket closed"), "a string", { no: "message" }]) {
      await expectSame({ system: "S", messages: HISTORY }, [{ type: "stream-start", warnings: [] }, { type: "error", error }, finish()]);
    }
  });

  it("passes provider-executed results, sources, raw chunks and pings as the SDK does", async () => {
    await expectSame({ system: "S", messages: HISTORY, tools: TOOLS }, [
      { type: "stream-start", warnings: [] },
      { type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: '{"q":"x"}', providerExecuted: true, dynamic: true },
      { type: "tool-result", toolCallId: "ws1", toolName: "web_search", result: { hits: 1 } },
      { type: "tool-result", toolCallId: "ws2", toolName: "web_search", result: "failed", isError: true },
      { type: "source", sourceType: "url", id: "s1", url: "https://example.com" },
      { type: "raw", rawValue: { a: 1 } },
      { type: "ping" },
      finish(),
    ]);
  });

  it("refuses a tool call left without a result, as the SDK does", async () => {
    const messages: ModelMessage[] = [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: {} }] }, { role: "user", content: "Hello?" }];
    const signal = new AbortController().signal;
    await expect(throughSdk({ system: "S", messages }, spoken, signal)).rejects.toBeInstanceOf(MissingToolResultsError);
    await expect(direct({ system: "S", messages }, spoken, signal)).rejects.toBeInstanceOf(MissingToolResultsError);
    // Which calls, at the first turn that finds them open; a call answered later does not count.
    const answeredLate: ModelMessage[] = [
      ...messages,
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c2", toolName: "lookup_order", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "lookup_order", output: { type: "text", value: "Shipped." } }] },
    ];
    expect(() => providerPrompt("S", answeredLate)).toThrow(expect.objectContaining({ toolCallIds: ["c1"] }));
    // A later message the direct call does not send leaves the whole request, and its check, to the SDK.
    expect(providerPrompt("S", [...messages, { role: "system", content: "Late." }])).toBeUndefined();
  });

  it("leaves to the SDK what the voice loop does not send: system messages, files, rich tool output, empty prompts, model ids", async () => {
    const signal = new AbortController().signal;
    const outside: ModelMessage[][] = [
      [],
      [{ role: "system", content: "Injected." }],
      [{ role: "user", content: [{ type: "file", data: new Uint8Array([1]), mediaType: "image/png" }] }],
      [{ role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "t", output: { type: "content", value: [{ type: "text", text: "x" }] } }] }],
    ];
    for (const messages of outside) expect(providerPrompt("S", messages)).toBeUndefined();
    const { model } = recording(spoken);
    expect(await directCallOptions({ model, system: "S", messages: HISTORY, tools: { t: { type: "provider", id: "openai.web_search", args: {}, inputSchema: TOOLS["end_call"]?.inputSchema } } as unknown as ToolSet }, signal)).toBeUndefined();
    // The SDK makes those calls, with its own errors.
    await expect(direct({ system: "S", messages: [{ role: "system", content: "Injected." }] }, spoken, signal)).rejects.toThrow(/System messages are not allowed/);
  });

  it("does not hand on generated files, which the voice loop does not read", async () => {
    const { model } = recording([{ type: "stream-start", warnings: [] }, { type: "file", mediaType: "image/png", data: { type: "data", data: "AAAA" } }, finish()]);
    const stream = await openModelCall({ model, system: "S", messages: HISTORY }, { clock: virtualClock(), maxRetries: 0, signal: new AbortController().signal });
    expect((await readAll(stream)).map((part) => part.type)).toEqual(["model-call-start", "model-call-end"]);
  });

  it("cancels the provider's stream when the reader stops early", async () => {
    let cancelled = false;
    const model = streamingModel("slow", () =>
      Promise.resolve({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: "Hi" });
          },
          cancel() {
            cancelled = true;
          },
        }),
      }),
    );
    const stream = await openModelCall({ model, system: "S", messages: HISTORY }, { clock: virtualClock(), maxRetries: 0, signal: new AbortController().signal });
    const out: ModelCallPart[] = [];
    while (!out.some((part) => part.type === "text-delta")) await stream.read(out);
    stream.cancel();
    await Promise.resolve();
    expect(cancelled).toBe(true);
  });
});
