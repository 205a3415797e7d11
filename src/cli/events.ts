/** How the terminal commands (`call`, `console`) show protocol events to a person. */
import type { ServerEvent } from "../transport/protocol.js";

/** Where the text of a line starts (after "agent: "), for continuation lines. */
const INDENT = "       ";

/** One human line per event worth showing (`--json` prints them all). */
export function describeEvent(event: ServerEvent): string | undefined {
  switch (event.type) {
    case "user-transcript.committed":
      return `you:   ${event.text}`;
    case "agent-transcript.committed":
      return `agent: ${event.text}`;
    case "tool.called":
      return `tool:  ${event.toolName}(${JSON.stringify(event.args)})`;
    case "tool.message":
      return `tool:  (${event.kind}) "${event.text}"`;
    case "tool.completed":
      return `tool:  → ${event.result.replace(/\n/g, `\n${INDENT}`)}${event.isError === true ? " (error)" : ""}`;
    case "reply.cancelled":
      return "agent: [interrupted]";
    case "session.reset":
      return "agent: [conversation reset]";
    case "session.timed-out":
      return "agent: [the session timed out: nothing was said for the agent's idleTimeoutMs]";
    case "error.reported":
      return `error: ${event.code}: ${event.message}${event.fatal ? " (fatal)" : ""}`;
    default:
      return undefined;
  }
}

type TurnMetrics = Extract<ServerEvent, { type: "metrics.turn" }>;

/**
 * A turn's latency line: for a typed turn, the wall time from sending the line to the reply's first
 * text (`firstTextMs`), then the stages of the turn's `metrics.turn`. A typed turn has no
 * endpointing, and its voice-to-voice is the time to the reply's first audio.
 */
export function describeLatency(metrics: TurnMetrics, firstTextMs: number | undefined, spoken: boolean): string {
  const ms = (value: number): string => `${Math.round(value)} ms`;
  const parts: string[] = [];
  if (firstTextMs !== undefined) parts.push(`first text ${ms(firstTextMs)}`);
  if (spoken && metrics.endpointMs !== undefined) parts.push(`endpoint ${ms(metrics.endpointMs)}`);
  if (metrics.sttFinalMs !== undefined) parts.push(`stt final ${ms(metrics.sttFinalMs)}`);
  if (metrics.llmFirstTokenMs !== undefined) parts.push(`llm first token ${ms(metrics.llmFirstTokenMs)}`);
  if (metrics.ttsFirstAudioMs !== undefined) parts.push(`tts first audio ${ms(metrics.ttsFirstAudioMs)}`);
  if (metrics.voiceToVoiceMs !== undefined) parts.push(`${spoken ? "voice-to-voice" : "first audio"} ${ms(metrics.voiceToVoiceMs)}`);
  return `${INDENT}latency: ${parts.length === 0 ? "no stages reported" : parts.join(" · ")}`;
}
