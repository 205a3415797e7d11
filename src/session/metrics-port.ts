import type { ErrorCode } from "../errors.js";
import type { EventBody } from "../events.js";
import type { SessionMode } from "../manifest/index.js";
import type { SettledInfo } from "../turn/ledger.js";
import type { ToolStatus } from "./tool-runner.js";

/** Events counted for metrics. */
export type MetricCount = "barge_in" | "false_interruption_resume" | "acknowledgement" | "provider_reconnect" | "provider_error";

/** What a session reports for metrics; the server implements it with prom-client. */
export interface SessionMetrics {
  sessionStarted(mode: SessionMode, transport: string): void;
  sessionEnded(mode: SessionMode, transport: string): void;
  turn(mode: SessionMode): void;
  error(code: ErrorCode): void;
  toolCall(status: ToolStatus): void;
  /** A provider stage's latency (ms), e.g. ("openai", "llm_first_token"). */
  providerLatency(provider: string, stage: string, ms: number): void;
  /** Every event the session emits (turn stage latencies come from `metrics.turn`). */
  event(mode: SessionMode, transport: string, event: EventBody): void;
  /** A barge-in, a falsely interrupted reply resumed, an acknowledgement not taken as a turn, a provider socket replaced. */
  count(mode: SessionMode, what: MetricCount): void;
  /** Caller audio a provider link dropped by its backlog policy (bytes), reported when the session ends. */
  audioDropped(where: "stt" | "s2s", bytes: number): void;
}

/** Metrics that go nowhere (library default, tests). */
export const noMetrics: SessionMetrics = {
  sessionStarted: () => {},
  sessionEnded: () => {},
  turn: () => {},
  error: () => {},
  toolCall: () => {},
  providerLatency: () => {},
  event: () => {},
  count: () => {},
  audioDropped: () => {},
};

/** A settled reply: a turn (a greeting or notice only spoken is not one), the LLM's first-token latency, an LLM failure. */
export function countReply(metrics: SessionMetrics, mode: SessionMode, llm: string, info: SettledInfo): void {
  if (info.status !== "spoken") metrics.turn(mode);
  if (info.llmFirstTokenMs !== undefined) metrics.providerLatency(llm, "llm_first_token", info.llmFirstTokenMs);
  if (info.status === "failed") metrics.error("llm");
}
