import type { LanguageModelV4CallOptions, LanguageModelV4Prompt, LanguageModelV4StreamPart, LanguageModelV4ToolResultOutput } from "@ai-sdk/provider";
import { generateText, isStepCount, jsonSchema, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { DEFAULT_FALLBACK, type Script, ScriptSchema } from "../../../src/pipeline/providers/llm/script.js";

const script: Script = {
  rules: [
    {
      when: "order (?<orderId>[A-Za-z0-9-]+)",
      say: "Let me look that up.",
      call: { tool: "lookup_order", args: { orderId: "{orderId}" } },
      then: "Here is what I found: {result}",
    },
    { when: "\\b(hi|hello)\\b", say: "Hello! How can I help?" },
    { when: "weather in (?<city>\\w+)", call: [{ tool: "weather", args: { city: "{city}" } }, { tool: "time", args: {} }], then: "{result}" },
  ],
  fallback: "Sorry, I can only help with orders in this demo.",
};

const executed: unknown[] = [];
const tools = {
  lookup_order: tool({
    description: "Look up an order",
    inputSchema: z.object({ orderId: z.string() }),
    execute: ({ orderId }) => {
      executed.push(orderId);
      return `Order ${orderId} has shipped.`;
    },
  }),
  weather: tool({
    description: "Weather for a city",
    inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    execute: ({ city }) => ({ city, sky: "sunny" }),
  }),
  time: tool({ description: "The time", inputSchema: z.object({}), execute: () => "It is noon." }),
};

const user = (text: string): LanguageModelV4Prompt => [{ role: "user", content: [{ type: "text", text }] }];
const call = (prompt: LanguageModelV4Prompt, extra: Partial<LanguageModelV4CallOptions> = {}): LanguageModelV4CallOptions => ({ prompt, ...extra });
const offered = (...names: string[]): NonNullable<LanguageModelV4CallOptions["tools"]> =>
  names.map((name) => ({ type: "function", name, inputSchema: { type: "object" } }));

async function collect(stream: ReadableStream<LanguageModelV4StreamPart>): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const deltas = (parts: LanguageModelV4StreamPart[]): string[] => parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));

/** Error message of `run`, or fails the test if it does not throw. */
function thrown(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("expected a throw");
}

describe("scriptedModel through the ai package", () => {
  it("streamText: says, calls the tool, then reads the result (order A-17)", async () => {
    executed.length = 0;
    const result = streamText({ model: scriptedModel(script), prompt: "where is order A-17", tools, stopWhen: isStepCount(3) });
    let full = "";
    for await (const delta of result.textStream) full += delta;
    const steps = await result.steps;

    expect(full).toBe("Let me look that up.Here is what I found: Order A-17 has shipped.");
    expect(steps).toHaveLength(2);
    expect(steps[0]?.text).toBe("Let me look that up.");
    expect(steps[0]?.finishReason).toBe("tool-calls");
    expect(steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["lookup_order", { orderId: "A-17" }]]);
    expect(executed).toEqual(["A-17"]);
    expect(steps[1]?.text).toBe("Here is what I found: Order A-17 has shipped.");
    expect(steps[1]?.finishReason).toBe("stop");
    expect(await result.text).toBe("Here is what I found: Order A-17 has shipped.");
  });

  it("generateText: the same conversation, non-streaming, with usage counted", async () => {
    const result = await generateText({ model: scriptedModel(script), prompt: "Where is ORDER b-2?", tools, stopWhen: isStepCount(3) });
    expect(result.steps.map((s) => s.text)).toEqual(["Let me look that up.", "Here is what I found: Order b-2 has shipped."]);
    expect(result.steps[0]?.toolCalls[0]?.input).toEqual({ orderId: "b-2" });
    expect(result.steps[0]?.toolCalls[0]?.toolCallId).toMatch(/\S/);
    expect(result.totalUsage.inputTokens).toBeGreaterThan(0);
    expect(result.totalUsage.outputTokens).toBeGreaterThan(0);
  });

  it("answers with the fallback when nothing matches, and the default fallback when the script has none", async () => {
    const custom = await generateText({ model: scriptedModel(script), prompt: "what's the meaning of life?", tools, stopWhen: isStepCount(3) });
    expect(custom.text).toBe("Sorry, I can only help with orders in this demo.");
    expect(custom.steps).toHaveLength(1);
    expect(custom.toolCalls).toEqual([]);

    const plain = await generateText({ model: scriptedModel({ rules: [] }), prompt: "anything" });
    expect(plain.text).toBe(DEFAULT_FALLBACK);
    expect(DEFAULT_FALLBACK).toMatch(/offline/i);
  });

  it("greets on the greeting rule, case-insensitively, and stops", async () => {
    const result = await generateText({ model: scriptedModel(script), prompt: "HELLO there", tools, stopWhen: isStepCount(3) });
    expect(result.text).toBe("Hello! How can I help?");
    expect(result.finishReason).toBe("stop");
    expect(result.steps).toHaveLength(1);
  });

  it("makes several tool calls in one step and joins their results with a space", async () => {
    const result = await generateText({ model: scriptedModel(script), prompt: "what's the weather in Paris", tools, stopWhen: isStepCount(3) });
    const first = result.steps[0];
    expect(first?.text).toBe("");
    expect(first?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ["weather", { city: "Paris" }],
      ["time", {}],
    ]);
    expect(new Set(first?.toolCalls.map((c) => c.toolCallId)).size).toBe(2);
    expect(result.text).toBe('{"city":"Paris","sky":"sunny"} It is noon.');
  });

  it('never calls a tool under toolChoice "none"', async () => {
    const said = await generateText({ model: scriptedModel(script), prompt: "where is order A-17", tools, toolChoice: "none", stopWhen: isStepCount(3) });
    expect(said.toolCalls).toEqual([]);
    expect(said.text).toBe("Let me look that up.");

    // A rule without `say` falls back instead of staying silent.
    const silent = await generateText({ model: scriptedModel(script), prompt: "weather in Oslo", tools, toolChoice: "none", stopWhen: isStepCount(3) });
    expect(silent.toolCalls).toEqual([]);
    expect(silent.text).toBe("Sorry, I can only help with orders in this demo.");
  });

  it("forces the final step with prepareStep: the step after the tools has no calls and says `then`", async () => {
    const result = await generateText({
      model: scriptedModel(script),
      prompt: "where is order A-17",
      tools,
      stopWhen: isStepCount(3),
      prepareStep: ({ stepNumber }) => (stepNumber === 1 ? { toolChoice: "none" } : {}),
    });
    expect(result.steps.map((s) => s.toolCalls.length)).toEqual([1, 0]);
    expect(result.text).toBe("Here is what I found: Order A-17 has shipped.");
  });

  it("makes no call for a tool that is not offered: says `say` (or the fallback) and warns", async () => {
    const quiet = globalThis as { AI_SDK_LOG_WARNINGS?: boolean };
    quiet.AI_SDK_LOG_WARNINGS = false;
    try {
      const { lookup_order: _omitted, ...others } = tools;
      const result = await generateText({ model: scriptedModel(script), prompt: "where is order A-17", tools: others, stopWhen: isStepCount(3) });
      expect(result.toolCalls).toEqual([]);
      expect(result.text).toBe("Let me look that up.");
      expect(result.finishReason).toBe("stop");
      expect(JSON.stringify(result.warnings)).toContain("lookup_order");

      // All of a rule's calls go out, or none: `time` is missing, so `weather` is not called either.
      const partial = await generateText({ model: scriptedModel(script), prompt: "weather in Rome", tools: { weather: tools.weather }, stopWhen: isStepCount(3) });
      expect(partial.toolCalls).toEqual([]);
      expect(partial.text).toBe("Sorry, I can only help with orders in this demo.");
    } finally {
      delete quiet.AI_SDK_LOG_WARNINGS;
    }
  });

  it("streams word chunks that concatenate to exactly the text", async () => {
    const spaced = scriptedModel({ rules: [{ when: "x", say: "  Hello,   world!\nHow are  you? " }] });
    const { stream } = await spaced.doStream(call(user("x")));
    const parts = await collect(stream);
    const chunks = deltas(parts);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join("")).toBe("  Hello,   world!\nHow are  you? ");
    expect(parts.map((p) => p.type)).toEqual(["stream-start", "response-metadata", "text-start", ...chunks.map(() => "text-delta"), "text-end", "finish"]);

    const viaAi = streamText({ model: scriptedModel(script), prompt: "hi" });
    const seen: string[] = [];
    for await (const delta of viaAi.textStream) seen.push(delta);
    expect(seen.join("")).toBe("Hello! How can I help?");
  });

  it("streams tool calls as input-start/delta/end then tool-call, and finishes with tool-calls", async () => {
    const { stream } = await scriptedModel(script).doStream(call(user("order Z9"), { tools: offered("lookup_order") }));
    const parts = await collect(stream);
    const toolParts = parts.filter((p) => p.type.startsWith("tool-"));
    expect(toolParts).toEqual([
      { type: "tool-input-start", id: expect.any(String), toolName: "lookup_order" },
      { type: "tool-input-delta", id: expect.any(String), delta: '{"orderId":"Z9"}' },
      { type: "tool-input-end", id: expect.any(String) },
      { type: "tool-call", toolCallId: expect.any(String), toolName: "lookup_order", input: '{"orderId":"Z9"}' },
    ]);
    const finish = parts.at(-1);
    expect(finish?.type === "finish" ? finish.finishReason : undefined).toEqual({ unified: "tool-calls", raw: "tool-calls" });
    expect(finish?.type === "finish" ? finish.usage.inputTokens.total : undefined).toBe(2);
  });

  it("waits delayMs between text chunks (the rule's value beats the script's)", async () => {
    const waits: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      waits.push(ms);
      return Promise.resolve();
    };
    const model = scriptedModel({ delayMs: 5, rules: [{ when: "fast", say: "one two three", delayMs: 1 }, { when: "slow", say: "one two three" }] }, { sleep });
    await collect((await model.doStream(call(user("fast")))).stream);
    expect(waits).toEqual([1, 1]);
    waits.length = 0;
    const parts = await collect((await model.doStream(call(user("slow")))).stream);
    expect(waits).toEqual([5, 5]);
    expect(deltas(parts).join("")).toBe("one two three");
  });

  it("stops streaming on abort and errors the stream with an AbortError", async () => {
    const controller = new AbortController();
    let wake: () => void = () => undefined;
    const sleep = (_ms: number, signal?: AbortSignal): Promise<void> =>
      new Promise((resolve, reject) => {
        wake = resolve;
        signal?.addEventListener("abort", () => reject(new Error("sleep aborted")), { once: true });
      });
    const model = scriptedModel({ delayMs: 50, rules: [{ when: "story", say: "once upon a time there was a model" }] }, { sleep });
    const { stream } = await model.doStream(call(user("tell me a story"), { abortSignal: controller.signal }));
    const reader = stream.getReader();
    const got: string[] = [];
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") {
        got.push(value.delta);
        break;
      }
    }
    const pending = reader.read();
    controller.abort();
    wake();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(got).toEqual(["once "]);

    const already = new AbortController();
    already.abort();
    const late = await model.doStream(call(user("story"), { abortSignal: already.signal }));
    await expect(collect(late.stream)).rejects.toMatchObject({ name: "AbortError" });
    await expect(model.doGenerate(call(user("story"), { abortSignal: already.signal }))).rejects.toMatchObject({ name: "AbortError" });
  });

  it("aborts a real streamText run without finishing the text", async () => {
    const controller = new AbortController();
    const model = scriptedModel({ delayMs: 20, rules: [{ when: "long", say: "a b c d e f g h i j k l m n o p" }] });
    const result = streamText({ model, prompt: "long please", abortSignal: controller.signal, onError: () => undefined });
    let text = "";
    for await (const delta of result.textStream) {
      text += delta;
      if (text.length > 2) controller.abort();
    }
    expect(text.length).toBeLessThan("a b c d e f g h i j k l m n o p".length);
    expect(text.startsWith("a b")).toBe(true);
  });

  it("is deterministic: the same input gives the same output twice", async () => {
    const run = async () => {
      const result = await generateText({ model: scriptedModel(script), prompt: "where is order Q-1", tools, stopWhen: isStepCount(3) });
      return result.steps.map((s) => ({ text: s.text, calls: s.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]), finish: s.finishReason }));
    };
    const first = await run();
    expect(first.length).toBe(2);
    expect(await run()).toEqual(first);

    const model = scriptedModel(script);
    const streamOnce = async () => collect((await model.doStream(call(user("weather in Lima"), { tools: offered("weather", "time") }))).stream);
    expect(await streamOnce()).toEqual(await streamOnce());
  });
});

describe("scriptedModel reading the prompt", () => {
  const model = scriptedModel(script);
  const textOf = async (options: LanguageModelV4CallOptions): Promise<string> =>
    (await model.doGenerate(options)).content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");

  it("reports itself as a v4 model named scripted", () => {
    expect(model).toMatchObject({ specificationVersion: "v4", provider: "scripted", modelId: "scripted", supportedUrls: {} });
    expect(scriptedModel(script, { modelId: "demo-brain" }).modelId).toBe("demo-brain");
  });

  it("ignores system messages and falls back on an empty or missing user message", async () => {
    expect(await textOf(call([{ role: "system", content: "say hello to order X1" }, ...user("thanks")]))).toBe(script.fallback);
    expect(await textOf(call(user("   ")))).toBe(script.fallback);
    expect(await textOf(call([{ role: "system", content: "hello" }]))).toBe(script.fallback);
  });

  it("turns every kind of tool output into readable text", async () => {
    const afterTools = (outputs: LanguageModelV4ToolResultOutput[]): LanguageModelV4Prompt => [
      ...user("weather in Oslo"),
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Oslo" } },
          { type: "tool-call", toolCallId: "c2", toolName: "time", input: {} },
        ],
      },
      toolMessage(outputs[0]!, "c1", "weather"),
      toolMessage(outputs[1]!, "c2", "time"),
    ];
    expect(await textOf(call(afterTools([{ type: "json", value: { t: 3 } }, { type: "text", value: "Noon." }])))).toBe('{"t":3} Noon.');
    expect(await textOf(call(afterTools([{ type: "error-text", value: "Offline." }, { type: "error-json", value: { code: 7 } }])))).toBe(
      'Offline. {"code":7}',
    );
    expect(await textOf(call(afterTools([{ type: "execution-denied", reason: "user said no" }, { type: "execution-denied" }])))).toBe(
      "The tool call was denied: user said no The tool call was denied.",
    );
    expect(
      await textOf(call(afterTools([{ type: "content", value: [{ type: "text", text: "Cloudy." }] }, { type: "json", value: "twelve" }]))),
    ).toBe("Cloudy. twelve");
  });

  it("after the tools, picks the rule that made the calls and refills its groups from the last user message", async () => {
    const twoRules = scriptedModel({
      rules: [
        { when: "track (?<id>\\w+)", call: { tool: "lookup_order", args: { orderId: "{id}" } }, then: "Tracking {id}: {result}" },
        { when: "cancel (?<id>\\w+)", call: { tool: "lookup_order", args: { orderId: "{id}" } }, then: "Cancelled {id}: {result}" },
      ],
    });
    const prompt: LanguageModelV4Prompt = [
      ...user("please cancel X7"),
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: { orderId: "X7" } }] },
      toolMessage({ type: "text", value: "done" }, "c1", "lookup_order"),
    ];
    const result = await twoRules.doGenerate(call(prompt, { tools: offered("lookup_order") }));
    expect(result.content).toEqual([{ type: "text", text: "Cancelled X7: done" }]);
    expect(result.finishReason.unified).toBe("stop");
  });

  it("keeps tool call ids unique across a conversation", async () => {
    const prompt: LanguageModelV4Prompt = [
      ...user("order A1"),
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "scripted_call_1", toolName: "lookup_order", input: { orderId: "A1" } }] },
      toolMessage({ type: "text", value: "ok" }, "scripted_call_1", "lookup_order"),
      { role: "assistant", content: [{ type: "text", text: "Here is what I found: ok" }] },
      ...user("and order A2"),
    ];
    const result = await model.doGenerate(call(prompt, { tools: offered("lookup_order") }));
    const ids = result.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : []));
    expect(ids).toHaveLength(1);
    expect(ids[0]).not.toBe("scripted_call_1");
  });
});

describe("script validation", () => {
  it("accepts the documented format and rejects bad regular expressions, naming the field", () => {
    expect(ScriptSchema.safeParse(script).success).toBe(true);
    const message = thrown(() => scriptedModel({ rules: [{ when: "order (?<id>", say: "x" }] }));
    expect(message).toMatch(/rules\[0\]\.when: not a valid regular expression \(.*\)/);
    expect(message).toMatch(/escape/);
  });

  it("rejects a call without a tool name, in object and list form", () => {
    expect(thrown(() => scriptedModel({ rules: [{ when: "a", call: { args: {} } }] }))).toMatch(/rules\[0\]\.call\.tool: is required: the name of a tool/);
    expect(thrown(() => scriptedModel({ rules: [{ when: "a", say: "b" }, { when: "c", call: [{ tool: "t" }, { tool: "" }] }] }))).toMatch(
      /rules\[1\]\.call\[1\]\.tool: must not be empty/,
    );
    expect(thrown(() => scriptedModel({ rules: [{ when: "a", call: "lookup" }] }))).toMatch(/rules\[0\]\.call: must be a tool call/);
  });

  it("rejects unknown fields with a suggestion, placeholders without a source, and rules that do nothing", () => {
    expect(thrown(() => scriptedModel({ rules: [{ wen: "a", say: "b" }] }))).toMatch(/rules\[0\]\.wen: is not a field here .*Did you mean `when`\?/);
    expect(thrown(() => scriptedModel({ rules: [{ when: "order (?<id>\\w+)", say: "Looking up {orderId}" }] }))).toMatch(
      /rules\[0\]\.say: unknown placeholder \{orderId\}.*known: \{id\}/,
    );
    expect(thrown(() => scriptedModel({ rules: [{ when: "x", call: { tool: "t", args: { a: ["{nope}"] } } }] }))).toMatch(/rules\[0\]\.call\.args\.a\[0\]: unknown placeholder \{nope\}/);
    expect(thrown(() => scriptedModel({ rules: [{ when: "x" }] }))).toMatch(/rules\[0\]: does nothing/);
    expect(thrown(() => scriptedModel({ rules: [{ when: "x", say: "y", then: "z" }] }))).toMatch(/rules\[0\]\.then: is only said after a tool call/);
    expect(thrown(() => scriptedModel({ delayMs: -1 }))).toMatch(/delayMs: must be ≥ 0 ms/);
    expect(thrown(() => scriptedModel("rules"))).toMatch(/script: /);
  });

  it("lists every problem at once", () => {
    const message = thrown(() => scriptedModel({ rules: [{ when: "(", say: "a" }, { when: "[", say: "b" }] }));
    expect(message).toMatch(/2 problems/);
    expect(message).toMatch(/rules\[0\]\.when/);
    expect(message).toMatch(/rules\[1\]\.when/);
  });
});

function toolMessage(output: LanguageModelV4ToolResultOutput, toolCallId: string, toolName: string): LanguageModelV4Prompt[number] {
  return { role: "tool", content: [{ type: "tool-result", toolCallId, toolName, output }] };
}
