import { createRequire } from "node:module";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { EventBody } from "../events.js";
import type { MetricCount, SessionMetrics } from "../session/metrics-port.js";
import { EventLoopLag, PROM_CLIENT_EVENT_LOOP_LAG } from "./event-loop-lag.js";

/** Every metric's name starts with it. */
const PREFIX = "switchboard_";

/** One of prom-client's default metrics: registers its gauges (and their collect) in `registry`. */
type DefaultMetric = (registry: Registry, config: { readonly prefix: string }) => void;

const require = createRequire(import.meta.url);

/**
 * prom-client's default process metrics (`collectDefaultMetrics`), each but the event-loop lag,
 * whose gauges are ours (event-loop-lag.ts). Each default metric is the module of its name in
 * `collectDefaultMetrics.metricsList` under `prom-client/lib/metrics/`, as `collectDefaultMetrics`
 * itself loads them (prom-client 15; the package has no exports map).
 */
function registerProcessMetrics(registry: Registry): void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === PROM_CLIENT_EVENT_LOOP_LAG) continue;
    (require(`prom-client/lib/metrics/${name}`) as DefaultMetric)(registry, { prefix: PREFIX });
  }
}

/** `metrics.turn` fields (ms) → the `stage` label. */
const STAGES = [
  ["endpointMs", "endpoint"],
  ["sttFinalMs", "stt_final"],
  ["llmFirstTokenMs", "llm_first_token"],
  ["ttsFirstAudioMs", "tts_first_audio"],
  ["voiceToVoiceMs", "voice_to_voice"],
] as const;

/** Prometheus metrics of one gateway, in its own registry (several gateways can share a process). */
export class GatewayMetrics implements SessionMetrics {
  readonly registry = new Registry();
  readonly #sessions = new Counter({ name: "switchboard_sessions_total", help: "Sessions started, by mode and transport.", labelNames: ["mode", "transport"], registers: [this.registry] });
  readonly #active = new Gauge({ name: "switchboard_sessions_active", help: "Live sessions, by mode and transport.", labelNames: ["mode", "transport"], registers: [this.registry] });
  readonly #turns = new Counter({ name: "switchboard_turns_total", help: "User turns, by mode.", labelNames: ["mode"], registers: [this.registry] });
  readonly #errors = new Counter({ name: "switchboard_errors_total", help: "Errors reported to clients, by code.", labelNames: ["code"], registers: [this.registry] });
  readonly #tools = new Counter({ name: "switchboard_tool_calls_total", help: "Tool calls, by outcome.", labelNames: ["outcome"], registers: [this.registry] });
  readonly #latency = new Histogram({
    name: "switchboard_provider_latency_seconds",
    help: "Provider latency by provider and stage.",
    labelNames: ["provider", "stage"],
    buckets: [0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly #stages = new Histogram({
    name: "switchboard_turn_stage_seconds",
    help: "Turn latency by stage, from metrics.turn: endpoint, stt_final, llm_first_token, tts_first_audio, voice_to_voice (at the client or carrier).",
    labelNames: ["mode", "stage"],
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
    registers: [this.registry],
  });
  readonly #cancelled = new Counter({ name: "switchboard_replies_cancelled_total", help: "Replies cancelled (barge-ins, client cancels, resets), by mode and transport.", labelNames: ["mode", "transport"], registers: [this.registry] });
  readonly #bargeIns = new Counter({ name: "switchboard_barge_ins_total", help: "Barge-ins: the caller spoke over an audible reply.", labelNames: ["mode"], registers: [this.registry] });
  readonly #resumes = new Counter({ name: "switchboard_false_interruption_resumes_total", help: "Replies resumed after a barge-in that produced no words.", labelNames: ["mode"], registers: [this.registry] });
  readonly #acknowledgements = new Counter({ name: "switchboard_acknowledgements_total", help: "Acknowledgements (interruption.acknowledgementPhrases) said over an audible reply: neither a barge-in nor a turn.", labelNames: ["mode"], registers: [this.registry] });
  readonly #reconnects = new Counter({ name: "switchboard_provider_reconnects_total", help: "Provider sockets replaced after a drop (STT, speech-to-speech), by mode.", labelNames: ["mode"], registers: [this.registry] });
  readonly #providerErrors = new Counter({ name: "switchboard_provider_errors_total", help: "Non-fatal provider errors (STT, speech-to-speech), by mode; fatal ones end the session and count in switchboard_errors_total.", labelNames: ["mode"], registers: [this.registry] });
  readonly #dropped = new Counter({ name: "switchboard_audio_dropped_bytes_total", help: "Caller audio dropped by a provider link's backlog policy, by link.", labelNames: ["link"], registers: [this.registry] });

  /** The event-loop lag gauges, with process metrics on. */
  readonly #lag: EventLoopLag | undefined;

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    if (options.processMetrics !== true) return;
    registerProcessMetrics(this.registry);
    this.#lag = new EventLoopLag(this.registry, PREFIX);
  }

  sessionStarted(mode: string, transport: string): void {
    this.#sessions.inc({ mode, transport });
    this.#active.inc({ mode, transport });
    this.#lag?.sessionStarted();
  }

  sessionEnded(mode: string, transport: string): void {
    this.#active.dec({ mode, transport });
    this.#lag?.sessionEnded();
  }

  turn(mode: string): void {
    this.#turns.inc({ mode });
  }

  error(code: string): void {
    this.#errors.inc({ code });
  }

  toolCall(outcome: string): void {
    this.#tools.inc({ outcome });
  }

  providerLatency(provider: string, stage: string, ms: number): void {
    this.#latency.observe({ provider, stage }, ms / 1000);
  }

  event(mode: string, transport: string, event: EventBody): void {
    if (event.type === "metrics.turn") {
      for (const [field, stage] of STAGES) {
        const ms = event[field];
        if (typeof ms === "number") this.#stages.observe({ mode, stage }, ms / 1000);
      }
    } else if (event.type === "reply.cancelled") {
      this.#cancelled.inc({ mode, transport });
    }
  }

  count(mode: string, what: MetricCount): void {
    const counters = { barge_in: this.#bargeIns, false_interruption_resume: this.#resumes, acknowledgement: this.#acknowledgements, provider_reconnect: this.#reconnects, provider_error: this.#providerErrors };
    counters[what].inc({ mode });
  }

  audioDropped(where: "stt" | "s2s", bytes: number): void {
    if (bytes > 0) this.#dropped.inc({ link: where }, bytes);
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
