/**
 * `npm run bench:reply-loop`: the CPU one reply costs in the gateway's reply loop
 * (src/pipeline/reply-loop.ts, one AI SDK model call per step), against two others measured in
 * the same run on the same zero-latency model:
 * - the floor: the provider's own stream (`doStream`) read directly, as bench/pipeline's relay does;
 * - the AI SDK's `streamText` over the same steps, tools declared with `execute` (what the reply loop
 *   ran on before issue 23).
 * Two replies: a spoken one (20 text deltas), and a tool step (one call, one result) then a spoken
 * step. One process, no I/O but the report, about 40 s. CPU is `process.cpuUsage` (user + system)
 * per reply over REPLIES replies, the median of REPS runs, runs interleaved so noise spreads evenly.
 *
 * Options: --no-docs (print only). Results go to stdout and to docs/benchmarks.md between the
 * bench:reply-loop markers.
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { isStepCount, jsonSchema, streamText, type ModelMessage, type ToolSet } from "ai";
import { cpus } from "node:os";
import { systemClock } from "../../src/clock.js";
import { ReplyLoop } from "../../src/pipeline/reply-loop.js";
import type { ToolAnswer } from "../../src/pipeline/tool-port.js";
import { streamingModel } from "../../src/testing/streaming-model.js";
import { docSection, publishSection, runBench } from "../shared/common.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:reply-loop");
const REPLIES = 500;
const REPS = 5;
/** The spoken reply's deltas: a 20-word sentence, a word per delta, as providers stream. */
const WORDS = "Your order left the warehouse this morning and should reach you by Thursday, so there is nothing you need to do.".match(/\S+\s*/g) ?? [];
const USAGE = { inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 20, text: 20, reasoning: undefined } };

function textStep(): LanguageModelV4StreamPart[] {
  return [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", modelId: "bench" },
    { type: "text-start", id: "t" },
    ...WORDS.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t", delta })),
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
  ];
}

function toolStep(): LanguageModelV4StreamPart[] {
  return [
    { type: "stream-start", warnings: [] },
    { type: "tool-call", toolCallId: "call_1", toolName: "lookup_order", input: '{"id":"42"}' },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: USAGE },
  ];
}

/** A model whose reply is `steps` (a tool step is followed by the next): one stream per call. */
function benchModel(withTool: boolean): LanguageModelV4 {
  return streamingModel("bench", (call) => {
    const answered = call.prompt.some((m) => m.role === "tool");
    const parts = withTool && !answered ? toolStep() : textStep();
    return Promise.resolve({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    });
  });
}

const HISTORY: ModelMessage[] = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `Line ${i} of the conversation so far.` }));
const PARAMETERS = { type: "object" as const, properties: { id: { type: "string" as const } }, required: ["id"] };
const ANSWER: ToolAnswer = { modelText: "Shipped on Monday.", isError: false };

type Runner = (withTool: boolean) => () => Promise<number>;

/** The floor: each step's provider stream read as the relay reads it. */
const floor: Runner = (withTool) => {
  const model = benchModel(withTool);
  return async () => {
    let chars = 0;
    const prompt: Parameters<LanguageModelV4["doStream"]>[0]["prompt"] = [{ role: "user", content: [{ type: "text", text: "Where is my order?" }] }];
    for (let step = 0; step < (withTool ? 2 : 1); step++) {
      const { stream } = await model.doStream({ prompt: step === 0 ? prompt : [...prompt, { role: "tool", content: [] }] });
      const reader = stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === "text-delta") chars += value.delta.length;
      }
    }
    return chars;
  };
};

const ours: Runner = (withTool) => {
  const loop = new ReplyLoop({
    model: benchModel(withTool),
    tools: [{ name: "lookup_order", description: "Look up an order.", parameters: PARAMETERS }],
    invoke: () => Promise.resolve(ANSWER),
    settings: { maxSteps: 3, toolChoice: "auto", resetToolChoice: false, maxRetries: 0 },
    clock: systemClock,
    instructions: () => "You are a bench.",
  });
  return async () => {
    let chars = 0;
    const result = await loop.run(HISTORY, new AbortController().signal, { text: (delta) => (chars += delta.length) });
    if (result.status !== "completed") throw new Error(`reply ${result.status}`);
    return chars;
  };
};

const sdk: Runner = (withTool) => {
  const model = benchModel(withTool);
  const tools: ToolSet = { lookup_order: { description: "Look up an order.", inputSchema: jsonSchema(PARAMETERS), execute: () => Promise.resolve(ANSWER), toModelOutput: () => ({ type: "text" as const, value: ANSWER.modelText }) } };
  return async () => {
    let chars = 0;
    const result = streamText({ model, system: "You are a bench.", messages: HISTORY, tools, stopWhen: isStepCount(4), maxRetries: 0 });
    for await (const part of result.fullStream) if (part.type === "text-delta") chars += part.text.length;
    return chars;
  };
};

/** CPU ms per reply of `run`, over REPLIES replies. */
async function cpuPerReply(run: () => Promise<number>): Promise<number> {
  const before = process.cpuUsage();
  let chars = 0;
  for (let i = 0; i < REPLIES; i++) chars += await run();
  const used = process.cpuUsage(before);
  if (chars === 0) throw new Error("no text streamed");
  return (used.user + used.system) / 1000 / REPLIES;
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const RUNNERS = [
  { name: "floor: the provider's stream read directly", runner: floor },
  { name: "gateway: ReplyLoop.run (one model call per step)", runner: ours },
  { name: "AI SDK streamText (the loop before issue 23)", runner: sdk },
] as const;
const REPLY_KINDS = [
  { name: "spoken reply (20 deltas)", withTool: false },
  { name: "tool step + spoken step", withTool: true },
] as const;

async function main(): Promise<number> {
  const began = Date.now();
  const samples = REPLY_KINDS.map(() => RUNNERS.map(() => [] as number[]));
  const runs = REPLY_KINDS.map((kind) => RUNNERS.map((r) => r.runner(kind.withTool)));
  // Warm-up: one run of each, unmeasured (JIT, first-call module work).
  for (const row of runs) for (const run of row) await cpuPerReply(run);
  for (let rep = 0; rep < REPS; rep++) {
    for (const [k, row] of runs.entries()) for (const [r, run] of row.entries()) samples[k]?.[r]?.push(await cpuPerReply(run));
  }
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; ${REPLIES} replies per run, the median of ${REPS} interleaved runs, ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    "| reply | loop | CPU per reply (ms) | ÷ floor | ÷ gateway |",
    "|---|---|--:|--:|--:|",
  ];
  for (const [k, kind] of REPLY_KINDS.entries()) {
    const medians = RUNNERS.map((_, r) => median(samples[k]?.[r] ?? []));
    const [floorMs = Number.NaN, gatewayMs = Number.NaN] = medians;
    for (const [r, runner] of RUNNERS.entries()) {
      const ms = medians[r] ?? Number.NaN;
      lines.push(`| ${kind.name} | ${runner.name} | ${ms.toFixed(3)} | ${(ms / floorMs).toFixed(1)}× | ${(ms / gatewayMs).toFixed(2)}× |`);
    }
  }
  const body = lines.join("\n");
  publishSection("bench:reply-loop", SECTION, body);
  return 0;
}

runBench("bench:reply-loop", RUN_LIMIT_MS, main);
