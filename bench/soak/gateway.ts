/**
 * The soak's gateway process, forked by bench/soak/run.ts: three gateways in this one process, each
 * `createGateway` on 127.0.0.1:0 — a text agent, a pipeline agent on the bench's zero-latency STT
 * and TTS (bench/shared/providers.ts) and an `openai-realtime` s2s agent (also mounted for Twilio) on the
 * soak's loopback Realtime fake, whose URL is argv[2]. All three share one logger (info, as
 * deployed, formatted into a sink; warnings and errors go to stderr, which the runner counts),
 * the order tool and the soak model, which answers each turn by its intent (bench/soak/protocol.ts):
 * the reply line, a tool call first, or a long reply streamed 5 ms per word.
 *
 * IPC: the runner asks for STT finals (`final`), samples (`sample`: RSS and heap after a full GC,
 * active resources, event-loop delay and CPU since the last sample) and the end (`stop`).
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import type { LanguageModelV4, LanguageModelV4StreamPart, LanguageModelV4Usage } from "@ai-sdk/provider";
import { Type } from "@sinclair/typebox";
import { createLogger } from "../../src/log.js";
import { agent, tool, withTools } from "../../src/manifest/index.js";
import { lastUserText, timedStream, type TimedPart } from "../../src/pipeline/providers/llm/scripted.js";
import { streamingModel } from "../../src/testing/streaming-model.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { BenchVoice, Recorder } from "../shared/providers.js";
import { parseUserLine, replyLine, send } from "../shared/protocol.js";
import { intentOf, LONG_WORD_DELAY_MS, LONG_WORDS, type FromGateway, type GatewaySample, type SoakUrls, type ToGateway } from "./protocol.js";
import { ProcessMeter } from "../shared/stats.js";

const realtimeUrl = process.argv[2];
const resumeGraceMs = Number(process.argv[3] ?? 120_000);
if (realtimeUrl === undefined) throw new Error("soak-gateway: the Realtime fake's URL is argv[2]");

// ── the model ───────────────────────────────────────────────────────────────────────────

const usage = (words: number): LanguageModelV4Usage => ({
  inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: words, text: words, reasoning: undefined },
});

/** A text reply in word-sized deltas, `delayMs` apart after the first. */
function textParts(text: string, delayMs: number): TimedPart[] {
  const now = (part: LanguageModelV4StreamPart): TimedPart => ({ part, delayMs: 0 });
  const words = text.match(/\S+\s*/g) ?? [text];
  const id = "text_0";
  return [
    now({ type: "stream-start", warnings: [] }),
    now({ type: "response-metadata", modelId: "soak" }),
    now({ type: "text-start", id }),
    ...words.map((delta, i): TimedPart => ({ part: { type: "text-delta", id, delta }, delayMs: i === 0 ? 0 : delayMs })),
    now({ type: "text-end", id }),
    now({ type: "finish", usage: usage(words.length), finishReason: { unified: "stop", raw: "stop" } }),
  ];
}

function toolParts(id: string): TimedPart[] {
  const now = (part: LanguageModelV4StreamPart): TimedPart => ({ part, delayMs: 0 });
  const input = JSON.stringify({ orderId: "A17" });
  return [
    now({ type: "stream-start", warnings: [] }),
    now({ type: "response-metadata", modelId: "soak" }),
    now({ type: "tool-input-start", id, toolName: "lookup_order" }),
    now({ type: "tool-input-delta", id, delta: input }),
    now({ type: "tool-input-end", id }),
    now({ type: "tool-call", toolCallId: id, toolName: "lookup_order", input }),
    now({ type: "finish", usage: usage(5), finishReason: { unified: "tool-calls", raw: "tool-calls" } }),
  ];
}


const sleep = (ms: number, signal?: AbortSignal): Promise<void> => sleepFor(ms, undefined, signal === undefined ? {} : { signal });

/** The soak's LLM: the caller's tagged line in, its reply line out (after a tool call, or at length, by the turn's intent). */
function soakModel(): LanguageModelV4 {
  let calls = 0;
  return streamingModel("soak", (call) => {
    const tag = parseUserLine(lastUserText(call.prompt));
    let parts: TimedPart[];
    if (tag === undefined) parts = textParts("Okay.", 0);
    else if (call.prompt.at(-1)?.role === "tool") parts = textParts(replyLine(tag.client, tag.turn), 0);
    else {
      const intent = intentOf(tag.client, tag.turn);
      const line = replyLine(tag.client, tag.turn);
      if (intent === "tool") parts = toolParts(`call_${++calls}`);
      else if (intent === "long") parts = textParts(`${line} ${Array.from({ length: LONG_WORDS / 5 }, () => "and there is more news").join(", ")}.`, LONG_WORD_DELAY_MS);
      else parts = textParts(line, 0);
    }
    return Promise.resolve({ stream: timedStream(parts, call.abortSignal, sleep) });
  });
}

// ── the gateways ────────────────────────────────────────────────────────────────────────

const lookupOrder = tool({
  description: "Look up an order by its id",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check that order.", delayed: [{ afterMs: 4000, content: "Still looking, one moment." }] },
  execute: async ({ orderId }) => {
    await sleepFor(Math.random() * 30);
    return `Order ${orderId} shipped on Friday.`;
  },
});

// Info, as deployed, formatted and dropped; warnings and errors to stderr, where the runner counts them.
const logger = createLogger({
  level: "info",
  destination: {
    write: (line: string) => {
      if (/"level":(?:[4-9]\d)/.test(line)) process.stderr.write(line);
      return true;
    },
  },
});
const recorder = new Recorder();
const voice = new BenchVoice(recorder);
const model = soakModel();
const llm = { kind: "openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1", model: "soak" } };
const greeting = "Welcome to the soak line.";
const tools = { lookup_order: lookupOrder };

const gateways = {
  text: createGateway({
    agent: withTools(agent({ name: "soak-text", mode: "text", llm, greeting, maxRetries: 0 }), tools),
    logger,
    env: {},
    resolveModel: () => model,
    resumeGraceMs,
  }),
  pipeline: createGateway({
    agent: withTools(
      agent({
        name: "soak-pipeline",
        // Descriptors only: `voice` and `resolveModel` replace what they would resolve to.
        stt: { kind: "deepgram", options: {} },
        tts: { kind: "cartesia", options: { voice: "bench" } },
        llm,
        interruption: { minWords: 1, minDurationMs: 300 },
        greeting,
        maxRetries: 0,
      }),
      tools,
    ),
    logger,
    env: { DEEPGRAM_API_KEY: "bench", CARTESIA_API_KEY: "bench" },
    voice,
    resolveModel: () => model,
    resumeGraceMs,
    // One Prometheus process collector per process, as deployed: the text gateway's.
    processMetrics: false,
  }),
  s2s: createGateway({
    agent: withTools(agent({ name: "soak-s2s", s2s: { kind: "openai-realtime", options: { url: realtimeUrl } }, telephony: ["twilio"], greeting }), tools),
    logger,
    env: { OPENAI_API_KEY: "test-key" },
    resumeGraceMs,
    processMetrics: false,
    carrierClient: { hangUp: () => Promise.resolve() },
  }),
} satisfies Record<string, Gateway>;

const ports = {
  text: (await gateways.text.listen(0, "127.0.0.1")).port,
  pipeline: (await gateways.pipeline.listen(0, "127.0.0.1")).port,
  s2s: (await gateways.s2s.listen(0, "127.0.0.1")).port,
};
const urls: SoakUrls = {
  text: `ws://127.0.0.1:${ports.text}/websocket`,
  pipeline: `ws://127.0.0.1:${ports.pipeline}/websocket`,
  s2s: `ws://127.0.0.1:${ports.s2s}/websocket`,
  phone: `ws://127.0.0.1:${ports.s2s}/telephony/twilio`,
};

// ── the runner's calls ──────────────────────────────────────────────────────────────────

const meter = new ProcessMeter();
meter.start();

function sample(): GatewaySample {
  const window = meter.stop();
  const { rss, heapUsed } = meter.memory();
  meter.start();
  // The bench's own marks (t0…t2 per turn) are not the gateway's: drop them.
  recorder.take();
  const resources = process.getActiveResourcesInfo();
  const handleTypes: Record<string, number> = {};
  for (const type of resources) handleTypes[type] = (handleTypes[type] ?? 0) + 1;
  return {
    rss,
    heapUsed,
    handles: resources.length,
    handleTypes,
    lagP99Ms: window.loopDelayP99Ms,
    lagMaxMs: window.loopDelayMaxMs,
    cpuMs: window.cpuMs,
    wallMs: window.wallMs,
    sessions: { text: gateways.text.sessions, pipeline: gateways.pipeline.sessions, s2s: gateways.s2s.sessions },
  };
}

/** The runner can ask for a final before the gateway has read that client's first mic frame. */
function final(client: number, turn: number, attempt = 0): void {
  if (!voice.final(client, turn) && attempt < 200) setTimeout(() => final(client, turn, attempt + 1), 5);
}

process.on("message", (message: ToGateway) => {
  if (message.type === "final") final(message.client, message.turn);
  else if (message.type === "sample") send<FromGateway>({ type: "sample", id: message.id, sample: sample() });
  else {
    void Promise.all(Object.values(gateways).map((gateway) => gateway.close())).then(() => {
      send<FromGateway>({ type: "stopped" });
      process.disconnect();
    });
  }
});
process.on("disconnect", () => process.exit(0));
send<FromGateway>({ type: "listening", urls });
