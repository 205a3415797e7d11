import { Type } from "@sinclair/typebox";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { toAiTool, toAiTools, ToolDefinitionError } from "../../../src/ai.js";
import { clientTool, tool } from "../../../src/manifest/index.js";

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function callThenSay(toolName: string, input: unknown, reply = "All done."): MockLanguageModelV4 {
  const steps: GenerateResult[] = [
    {
      content: [{ type: "tool-call", toolCallId: "call_1", toolName, input: JSON.stringify(input) }],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    },
    { content: [{ type: "text", text: reply }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
  ];
  return new MockLanguageModelV4({ doGenerate: steps });
}

/** What the model was sent for the tool result on its second call. */
function toolOutputSeen(model: MockLanguageModelV4): unknown {
  const prompt = model.doGenerateCalls[1]?.prompt ?? [];
  const toolMessage = prompt.find((m) => m.role === "tool");
  const part = toolMessage?.content[0];
  return part !== undefined && "output" in part ? part.output : undefined;
}

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String({ minLength: 3 }) }),
  execute: ({ orderId }) => ({ text: `Order ${orderId} has shipped.`, details: { orderId, status: "shipped", eta: "Friday" } }),
});

describe("toAiTool", () => {
  it("advertises the same JSON Schema every host sees", async () => {
    const aiTool = toAiTool(lookup);
    expect(aiTool.description).toBe("Look up an order");
    const model = callThenSay("lookup", { orderId: "A123" });
    await generateText({ model, prompt: "Where is my order?", tools: { lookup: aiTool }, stopWhen: isStepCount(2) });
    const advertised = model.doGenerateCalls[0]?.tools?.[0];
    expect(advertised).toMatchObject({ type: "function", name: "lookup", inputSchema: lookup.parameters.json });
  });

  it("round-trips through generateText: the program gets {...details, text}, the model reads the text alone", async () => {
    const model = callThenSay("lookup", { orderId: "A123" });
    const result = await generateText({ model, prompt: "Where is my order?", tools: { lookup: toAiTool(lookup) }, stopWhen: isStepCount(2) });
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({ orderId: "A123", status: "shipped", eta: "Friday", text: "Order A123 has shipped." });
    expect(toolOutputSeen(model)).toEqual({ type: "text", value: "Order A123 has shipped." });
    expect(result.text).toBe("All done.");
  });

  it("puts non-object details under `details`", async () => {
    const count = tool({ description: "Count", execute: () => ({ text: "Three items.", details: 3 }) });
    const model = callThenSay("count", {});
    const result = await generateText({ model, prompt: "How many?", tools: { count: toAiTool(count) }, stopWhen: isStepCount(2) });
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({ details: 3, text: "Three items." });
    expect(toolOutputSeen(model)).toEqual({ type: "text", value: "Three items." });
  });

  it("hands the model the whole object as JSON when there is no text", async () => {
    const raw = tool({ description: "Raw data", execute: () => ({ text: "ignored", extra: true, n: 2 }) });
    const model = callThenSay("raw", {});
    const result = await generateText({ model, prompt: "Data?", tools: { raw: toAiTool(raw) }, stopWhen: isStepCount(2) });
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({ text: "ignored", extra: true, n: 2 });
    expect(toolOutputSeen(model)).toEqual({ type: "json", value: { text: "ignored", extra: true, n: 2 } });
  });

  it("refuses a bad input with the validator's lines before execute runs", async () => {
    let ran = false;
    const guarded = tool({
      description: "Guarded",
      parameters: Type.Object({ orderId: Type.String({ minLength: 3 }) }),
      execute: () => {
        ran = true;
        return "ran";
      },
    });
    const model = callThenSay("guarded", { orderId: 7 });
    const result = await generateText({ model, prompt: "x", tools: { guarded: toAiTool(guarded) }, stopWhen: isStepCount(2) });
    expect(ran).toBe(false);
    const seen = JSON.stringify(toolOutputSeen(model));
    expect(seen).toContain("orderId: Expected string");
    expect(result.steps[0]?.content.some((part) => part.type === "tool-error")).toBe(true);
  });

  it("throws the text of an isError result, which the model reads as a tool error", async () => {
    const failing = tool({ description: "Failing", execute: () => ({ text: "The warehouse system is offline.", isError: true }) });
    const model = callThenSay("failing", {});
    const result = await generateText({ model, prompt: "x", tools: { failing: toAiTool(failing) }, stopWhen: isStepCount(2) });
    const error = result.steps[0]?.content.find((part) => part.type === "tool-error");
    expect(error && "error" in error ? String((error.error as Error).message) : "").toBe("The warehouse system is offline.");
    expect(JSON.stringify(toolOutputSeen(model))).toContain("The warehouse system is offline.");
  });

  it("throws ToolDefinitionError when details carry their own text", async () => {
    const clash = tool({ description: "Clash", execute: () => ({ text: "Summary.", details: { text: "full passage" } }) });
    const aiTool = toAiTool(clash);
    const options = { toolCallId: "c1", messages: [], context: {} };
    await expect(aiTool.execute?.({}, options)).rejects.toThrow(ToolDefinitionError);
    await expect(aiTool.execute?.({}, options)).rejects.toThrow(/Rename the field/);
  });

  it("passes no progress and no ask: there is nobody on the line", async () => {
    let seen: unknown[] = [];
    const probe = tool({
      description: "Probe",
      execute: (_args, ctx) => {
        seen = [ctx.progress, ctx.ask, ctx.toolCallId, ctx.signal.aborted];
        ctx.progress?.("50%");
        return "ok";
      },
    });
    await toAiTool(probe).execute?.({}, { toolCallId: "c9", messages: [], context: {} });
    expect(seen).toEqual([undefined, undefined, "c9", false]);
  });

  it("turns a clientTool into a tool the caller executes", () => {
    expect(toAiTool(clientTool({ description: "On the page" })).execute).toBeUndefined();
  });

  it("toAiTools refuses an array (plain JavaScript), which would name the tools \"0\", \"1\"", () => {
    expect(() => toAiTools([lookup] as never)).toThrow(ToolDefinitionError);
    expect(() => toAiTools([lookup] as never)).toThrow(
      "toAiTools(): got an array; pass a record keyed by tool name ({ lookup_order: lookupOrder }) — the key is the name the model calls.",
    );
  });

  it("toAiTool and toAiTools refuse a value that is not a tool, naming it", () => {
    expect(() => toAiTool({ description: "x" } as never)).toThrow(/^toAiTool\(\): got an object, not a tool; pass what tool\(\{ description, execute \}\) or clientTool\(\{ description \}\) returns\.$/);
    expect(() => toAiTools({ lookup, broken: "nope" } as never)).toThrow(/^toAiTools\(\): tools\.broken is a string, not a tool; /);
  });

  it("toAiTools keys every tool by name", () => {
    expect(Object.keys(toAiTools({ lookup, other: tool({ description: "Other", execute: () => "" }) }))).toEqual(["lookup", "other"]);
  });
});
