import type { LanguageModelV4CallOptions, LanguageModelV4Prompt, LanguageModelV4StreamPart, LanguageModelV4StreamResult } from "@ai-sdk/provider";
import { APICallError, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { ReplyLoop, type ReplySettings } from "../../../src/pipeline/reply-loop.js";
import type { ToolAnswer, ToolInvocation } from "../../../src/pipeline/tool-port.js";
import { streamingModel } from "../../../src/testing/streaming-model.js";

const USAGE = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const finish = (unified: "stop" | "tool-calls" = "stop"): LanguageModelV4StreamPart => ({ type: "finish", finishReason: { unified, raw: unified }, usage: USAGE });
const text = (id: string, ...deltas: string[]): LanguageModelV4StreamPart[] => [{ type: "text-start", id }, ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id, delta })), { type: "text-end", id }];

/** A provider stream that gives `parts` one at a time, each after the reader asked (as a socket would). */
function streamOf(parts: readonly LanguageModelV4StreamPart[], hold?: Promise<void>): LanguageModelV4StreamResult {
  let i = 0;
  return {
    stream: new ReadableStream<LanguageModelV4StreamPart>({
      async pull(controller) {
        if (i === parts.length - 1 && hold !== undefined) await hold;
        const part = parts[i++];
        if (part === undefined) controller.close();
        else controller.enqueue(part);
      },
    }),
  };
}

/** A model that answers call n with `steps[n]` and records each call's prompt and tool choice. */
function scriptedSteps(steps: readonly (() => LanguageModelV4StreamResult | Promise<LanguageModelV4StreamResult>)[]) {
  const calls: LanguageModelV4CallOptions[] = [];
  const model = streamingModel("steps", async (call) => {
    calls.push(call);
    const step = steps[calls.length - 1];
    if (step === undefined) throw new Error(`no step ${calls.length}`);
    return step();
  });
  return { model, calls };
}

const SETTINGS: ReplySettings = { maxSteps: 3, toolChoice: "auto", resetToolChoice: false, maxRetries: 0 };
const TOOLS = [{ name: "lookup_order", description: "Look up an order.", parameters: { type: "object" as const, properties: { id: { type: "string" as const } } } }];
const HISTORY: ModelMessage[] = [{ role: "user", content: "Where is order 42?" }];

function loopOn(model: ReturnType<typeof streamingModel>, invoke: (call: ToolInvocation) => Promise<ToolAnswer>, settings: Partial<ReplySettings> = {}) {
  const clock = virtualClock();
  const loop = new ReplyLoop({ model, tools: TOOLS, invoke, settings: { ...SETTINGS, ...settings }, clock, instructions: () => "Be brief." });
  return { loop, clock };
}

const assistantParts = (prompt: LanguageModelV4Prompt) => prompt.filter((m) => m.role === "assistant").flatMap((m) => m.content);

describe("ReplyLoop (one model call per step, tools run by the loop)", () => {
  it("streams a reply's text to the observer and records it with its usage", async () => {
    const { model, calls } = scriptedSteps([() => streamOf([{ type: "stream-start", warnings: [] }, ...text("t", "It ships ", "today."), finish()])]);
    const { loop } = loopOn(model, () => Promise.reject(new Error("no tools")));
    const deltas: string[] = [];
    const result = await loop.run(HISTORY, new AbortController().signal, { text: (d) => deltas.push(d) });
    expect(deltas).toEqual(["It ships ", "today."]);
    expect(result).toMatchObject({ status: "completed", text: "It ships today.", usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, steps: 1 } });
    expect(result.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "It ships today." }] }]);
    expect(calls[0]?.prompt[0]).toEqual({ role: "system", content: "Be brief." });
  });

  it("runs a tool as its call arrives, then prompts the next step with the step as the provider sent it", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const { model, calls } = scriptedSteps([
      () =>
        streamOf(
          [
            { type: "reasoning-start", id: "r", providerMetadata: { test: { signature: "sig-r" } } },
            { type: "reasoning-delta", id: "r", delta: "Need the order." },
            { type: "reasoning-end", id: "r" },
            ...text("t", "Let me check."),
            { type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: '{"id":"42"}', providerMetadata: { test: { thoughtSignature: "sig-c1" } } },
            finish("tool-calls"),
          ],
          held,
        ),
      () => streamOf([...text("t2", "It ships today."), finish()]),
    ]);
    const { loop } = loopOn(model, (call) => {
      started.push(`${call.toolName} ${JSON.stringify(call.args)}`);
      release();
      return Promise.resolve({ modelText: "shipped", isError: false });
    });
    const spoken: string[] = [];
    const result = await loop.run(HISTORY, new AbortController().signal, { text: (d) => spoken.push(d) });
    // The tool ran before the provider finished its stream (the stream waited for it).
    expect(started).toEqual(['lookup_order {"id":"42"}']);
    expect(spoken).toEqual(["Let me check.", " It ships today."]);
    const second = calls[1]?.prompt ?? [];
    expect(assistantParts(second)).toEqual([
      { type: "reasoning", text: "Need the order.", providerOptions: { test: { signature: "sig-r" } } },
      { type: "text", text: "Let me check." },
      { type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: { id: "42" }, providerOptions: { test: { thoughtSignature: "sig-c1" } } },
    ]);
    expect(second.at(-1)).toEqual({ role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup_order", output: { type: "text", value: "shipped" } }] });
    // History keeps the spoken text and the answered call, without provider metadata (as before).
    expect(result.messages).toEqual([
      { role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: { id: "42" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup_order", output: { type: "text", value: "shipped" } }] },
      { role: "assistant", content: [{ type: "text", text: "It ships today." }] },
    ]);
    expect(result.usage.steps).toBe(2);
  });

  it("answers a call to an undeclared tool with an error the model reads, without running anything", async () => {
    const invoked: string[] = [];
    const { model, calls } = scriptedSteps([
      () => streamOf([{ type: "tool-call", toolCallId: "c1", toolName: "delete_everything", input: "{}" }, finish("tool-calls")]),
      () => streamOf([...text("t", "I can't do that."), finish()]),
    ]);
    const { loop } = loopOn(model, (call) => {
      invoked.push(call.toolName);
      return Promise.resolve({ modelText: "ran", isError: false });
    });
    const result = await loop.run(HISTORY, new AbortController().signal);
    expect(invoked).toEqual([]);
    const toolMessage = calls[1]?.prompt.at(-1);
    expect(toolMessage?.role).toBe("tool");
    expect(JSON.stringify(toolMessage)).toMatch(/error-text.*delete_everything/);
    expect(result.text).toBe("I can't do that.");
  });

  it("forces the step after maxSteps to speak (toolChoice none)", async () => {
    const toolStep = (id: string) => () => streamOf([{ type: "tool-call", toolCallId: id, toolName: "lookup_order", input: "{}" }, finish("tool-calls")]);
    const { model, calls } = scriptedSteps([toolStep("a"), toolStep("b"), () => streamOf([...text("t", "Done."), finish()])]);
    const { loop } = loopOn(model, () => Promise.resolve({ modelText: "ok", isError: false }), { maxSteps: 2 });
    const result = await loop.run(HISTORY, new AbortController().signal);
    expect(calls.map((c) => c.toolChoice?.type)).toEqual(["auto", "auto", "none"]);
    expect(result).toMatchObject({ status: "completed", text: "Done." });
  });

  it("ends the reply on a verbatim tool line without calling the model again", async () => {
    const { model, calls } = scriptedSteps([() => streamOf([{ type: "tool-call", toolCallId: "c1", toolName: "lookup_order", input: "{}" }, finish("tool-calls")])]);
    const { loop } = loopOn(model, () => Promise.resolve({ modelText: "ok", isError: false, verbatim: "Your order is on its way." }));
    const spoken: string[] = [];
    const result = await loop.run(HISTORY, new AbortController().signal, { text: (d) => spoken.push(d) });
    expect(calls).toHaveLength(1);
    expect(spoken).toEqual(["Your order is on its way."]);
    expect(result.text).toBe("Your order is on its way.");
  });

  it("retries a retryable API error on the clock (2 s, then 4 s) and fails at once on another", async () => {
    const busy = () => new APICallError({ message: "overloaded", url: "http://llm.test", requestBodyValues: {}, statusCode: 529, isRetryable: true });
    const { model, calls } = scriptedSteps([() => Promise.reject(busy()), () => Promise.reject(busy()), () => streamOf([...text("t", "Back."), finish()])]);
    const { loop, clock } = loopOn(model, () => Promise.reject(new Error("no tools")), { maxRetries: 2 });
    const reply = loop.run(HISTORY, new AbortController().signal);
    await clock.advance(1999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    await clock.advance(4000);
    expect(await reply).toMatchObject({ status: "completed", text: "Back." });
    expect(calls).toHaveLength(3);

    const refused = new APICallError({ message: "bad request", url: "http://llm.test", requestBodyValues: {}, statusCode: 400, isRetryable: false });
    const second = scriptedSteps([() => Promise.reject(refused)]);
    const failed = await loopOn(second.model, () => Promise.reject(new Error("no tools")), { maxRetries: 2 }).loop.run(HISTORY, new AbortController().signal);
    expect(failed).toMatchObject({ status: "failed", error: refused });
    expect(second.calls).toHaveLength(1);
  });

  it("reports a cancelled reply's unfinished text as partial, not history", async () => {
    const abort = new AbortController();
    const { model } = scriptedSteps([
      () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of text("t", "It ships ", "to")) controller.enqueue(part);
            abort.signal.addEventListener("abort", () => controller.error(abort.signal.reason));
          },
        }),
      }),
    ]);
    const { loop } = loopOn(model, () => Promise.reject(new Error("no tools")));
    const result = await loop.run(HISTORY, abort.signal, { text: () => abort.abort() });
    expect(result).toMatchObject({ status: "cancelled", messages: [] });
    expect(result.partialText?.startsWith("It ships ")).toBe(true);
  });
});
