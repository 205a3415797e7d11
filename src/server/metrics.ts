import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SessionMetrics } from "../session/metrics-port.js";

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

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry, prefix: "switchboard_" });
  }

  sessionStarted(mode: string, transport: string): void {
    this.#sessions.inc({ mode, transport });
    this.#active.inc({ mode, transport });
  }

  sessionEnded(mode: string, transport: string): void {
    this.#active.dec({ mode, transport });
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

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
