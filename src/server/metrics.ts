import { createRequire } from "node:module";
import { Registry, collectDefaultMetrics } from "prom-client";
import type { EventBody } from "../events.js";
import type { MetricCount, SessionMetrics } from "../session/metrics-port.js";
import { EventLoopLag, PROM_CLIENT_EVENT_LOOP_LAG } from "./event-loop-lag.js";
import { TallyCounter, TallyGauge, TallyHistogram } from "./tallies.js";

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

/** Prometheus metrics of one gateway, in its own registry (several gateways can share a process). Tallied (tallies.ts): a session observes them every turn. */
export class GatewayMetrics implements SessionMetrics {
  readonly registry = new Registry();
  readonly #sessions = new TallyCounter(this.registry, "switchboard_sessions_total", "Sessions started, by mode and transport.", ["mode", "transport"]);
  readonly #active = new TallyGauge(this.registry, "switchboard_sessions_active", "Live sessions, by mode and transport.", ["mode", "transport"]);
  readonly #turns = new TallyCounter(this.registry, "switchboard_turns_total", "User turns, by mode.", ["mode"]);
  readonly #errors = new TallyCounter(this.registry, "switchboard_errors_total", "Errors reported to clients, by code.", ["code"]);
  readonly #tools = new TallyCounter(this.registry, "switchboard_tool_calls_total", "Tool calls, by outcome.", ["outcome"]);
  readonly #latency = new TallyHistogram(this.registry, "switchboard_provider_latency_seconds", "Provider latency by provider and stage.", ["provider", "stage"], [0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2.5, 5, 10]);
  readonly #stages = new TallyHistogram(
    this.registry,
    "switchboard_turn_stage_seconds",
    "Turn latency by stage, from metrics.turn: endpoint, stt_final, llm_first_token, tts_first_audio, voice_to_voice (at the client or carrier).",
    ["mode", "stage"],
    [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
  );
  readonly #cancelled = new TallyCounter(this.registry, "switchboard_replies_cancelled_total", "Replies cancelled (barge-ins, client cancels, resets), by mode and transport.", ["mode", "transport"]);
  /** `count()`'s counters, by what it counts. */
  readonly #counts: Readonly<Record<MetricCount, TallyCounter>> = {
    barge_in: new TallyCounter(this.registry, "switchboard_barge_ins_total", "Barge-ins: the caller spoke over an audible reply.", ["mode"]),
    false_interruption_resume: new TallyCounter(this.registry, "switchboard_false_interruption_resumes_total", "Replies resumed after a barge-in that produced no words.", ["mode"]),
    acknowledgement: new TallyCounter(this.registry, "switchboard_acknowledgements_total", "Acknowledgements (interruption.acknowledgementPhrases) said over an audible reply: neither a barge-in nor a turn.", ["mode"]),
    provider_reconnect: new TallyCounter(this.registry, "switchboard_provider_reconnects_total", "Provider sockets replaced after a drop (STT, speech-to-speech), by mode.", ["mode"]),
    provider_error: new TallyCounter(this.registry, "switchboard_provider_errors_total", "Non-fatal provider errors (STT, speech-to-speech), by mode; fatal ones end the session and count in switchboard_errors_total.", ["mode"]),
  };
  readonly #dropped = new TallyCounter(this.registry, "switchboard_audio_dropped_bytes_total", "Caller audio dropped by a provider link's backlog policy, by link.", ["link"]);

  /** The event-loop lag gauges, with process metrics on. */
  readonly #lag: EventLoopLag | undefined;

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    if (options.processMetrics !== true) return;
    registerProcessMetrics(this.registry);
    this.#lag = new EventLoopLag(this.registry, PREFIX);
  }

  sessionStarted(mode: string, transport: string): void {
    this.#sessions.inc(mode, transport);
    this.#active.inc(mode, transport);
    this.#lag?.sessionStarted();
  }

  sessionEnded(mode: string, transport: string): void {
    this.#active.dec(mode, transport);
    this.#lag?.sessionEnded();
  }

  turn(mode: string): void {
    this.#turns.inc(mode);
  }

  error(code: string): void {
    this.#errors.inc(code);
  }

  toolCall(outcome: string): void {
    this.#tools.inc(outcome);
  }

  providerLatency(provider: string, stage: string, ms: number): void {
    this.#latency.observe(ms / 1000, provider, stage);
  }

  event(mode: string, transport: string, event: EventBody): void {
    if (event.type === "metrics.turn") {
      for (const [field, stage] of STAGES) {
        const ms = event[field];
        if (typeof ms === "number") this.#stages.observe(ms / 1000, mode, stage);
      }
    } else if (event.type === "reply.cancelled") {
      this.#cancelled.inc(mode, transport);
    }
  }

  count(mode: string, what: MetricCount): void {
    this.#counts[what].inc(mode);
  }

  audioDropped(where: "stt" | "s2s", bytes: number): void {
    this.#dropped.add(bytes, where);
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
