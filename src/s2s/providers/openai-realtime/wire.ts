/** OpenAI Realtime: the client messages we build and the server fields we read (docs/vendors.md (OpenAI Realtime)). */
import { GatewayError } from "../../../errors.js";
import { isKeyRefused, isRetryableStatus } from "../../../providers/key-refusal.js";
import { isTransientClose } from "../../../providers/close-codes.js";
import { recordAt, stringAt } from "../../../providers/ws-frames.js";
import type { S2sAudioFormat, S2sHistoryItem, S2sSegment, S2sSetup } from "../../s2s-port.js";
import { VENDOR, wireFormat, type RealtimeConfig } from "./config.js";
import { spread } from "../../../spread.js";

/** Tags our out-of-band responses (docs/vendors.md (OpenAI Realtime), "Out of band": `metadata`, up to 16 string pairs). */
export const OOB_METADATA = { switchboard: "oob" } as const;

/** The one `session.update` of a socket (docs/vendors.md (OpenAI Realtime), `session.update`). */
export function sessionUpdate(config: RealtimeConfig, setup: S2sSetup, format: S2sAudioFormat): object {
  const wire = wireFormat(format).json;
  const transcription =
    config.transcription === false
      ? undefined
      : { model: config.transcription, ...(setup.transcriptionPrompt === undefined ? {} : { prompt: setup.transcriptionPrompt }) };
  return {
    type: "session.update",
    session: {
      type: "realtime",
      model: config.model,
      output_modalities: ["audio"],
      audio: {
        input: {
          format: wire,
          ...(transcription === undefined ? {} : { transcription }),
          // The port has no commit: the service's VAD ends turns and starts responses.
          turn_detection: spread(config.turnDetection, { create_response: true, interrupt_response: setup.interruptResponse }),
        },
        output: { format: wire, voice: config.voice },
      },
      ...agentFields(setup),
    },
  };
}

/** The session fields that are the agent's: its instructions, tools and tool choice. */
function agentFields(segment: S2sSegment): { instructions: string; tools: object[]; tool_choice: unknown } {
  return {
    instructions: segment.instructions,
    // Function tools are flat objects (GA), not `{type, function:{…}}`.
    tools: segment.tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters })),
    tool_choice: typeof segment.toolChoice === "string" ? segment.toolChoice : { type: "function", name: segment.toolChoice.toolName },
  };
}

/**
 * A hand-off's `session.update` (docs/vendors.md (OpenAI Realtime), "Hand-off"): the new agent's
 * instructions, tools and tool choice, and nothing of the call — formats, voice, turn detection,
 * transcription are left out, so none of them changes (the voice could not, once the model has
 * spoken).
 */
export function segmentUpdate(segment: S2sSegment): object {
  return { type: "session.update", session: { type: "realtime", ...agentFields(segment) } };
}

/** A committed line as a conversation item: user `input_text`, assistant `output_text` (docs/vendors.md (OpenAI Realtime), "Conversation items"). */
export function historyItem(item: S2sHistoryItem): object {
  const part = item.role === "user" ? { type: "input_text", text: item.text } : { type: "output_text", text: item.text };
  return { type: "conversation.item.create", item: { type: "message", role: item.role, content: [part] } };
}

/** A note for the model (a workflow's outcome): a `system` message item (docs/vendors.md (OpenAI Realtime), "Conversation items"). */
export function noteItem(text: string): object {
  return { type: "conversation.item.create", item: { type: "message", role: "system", content: [{ type: "input_text", text }] } };
}

/** Ours carry our metadata; any response with `conversation_id: null` is out of band (docs/vendors.md (OpenAI Realtime)). */
export function isOutOfBand(response: Record<string, unknown> | undefined): boolean {
  return response?.conversation_id === null || stringAt(recordAt(response, "metadata"), "switchboard") === OOB_METADATA.switchboard;
}

export function readStatus(status: unknown): "completed" | "cancelled" | "failed" | "incomplete" {
  return status === "completed" || status === "cancelled" || status === "incomplete" ? status : "failed";
}

export function readUsage(usage: Record<string, unknown> | undefined): { inputTokens: number; outputTokens: number; totalTokens: number } | undefined {
  if (usage === undefined) return undefined;
  const count = (key: string): number => {
    const value = usage[key];
    return typeof value === "number" ? value : 0;
  };
  const inputTokens = count("input_tokens");
  const outputTokens = count("output_tokens");
  return { inputTokens, outputTokens, totalTokens: typeof usage.total_tokens === "number" ? usage.total_tokens : inputTokens + outputTokens };
}

/** Arguments are a JSON string (docs/vendors.md (OpenAI Realtime)); the raw string when they are not JSON. */
export function parseArgs(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** `error {type, code, message}` as one line. */
export function errorText(message: Record<string, unknown>): string {
  const error = recordAt(message, "error");
  const text = stringAt(error, "message") ?? "unknown error";
  const code = stringAt(error, "code") ?? stringAt(error, "type");
  return code === undefined ? text : `${text} (${code})`;
}

/** An HTTP answer at upgrade: 401/403 is the key (fatal, naming the variable; the body is left out, it may echo the key). */
export function upgradeRefusal(status: number, keyVariable: string): GatewayError {
  if (isKeyRefused(status)) return new GatewayError("s2s", `${VENDOR} refused the API key (HTTP ${status}): check ${keyVariable}.`, { fatal: true });
  return new GatewayError("s2s", `${VENDOR} refused the connection (HTTP ${status}).`, { fatal: !isRetryableStatus(status) });
}

/** A close before `session.updated` that was not an HTTP refusal: fatal unless the close-code table says transient. */
export function handshakeClose(code: number, reason: string, socketError: Error | undefined): GatewayError {
  const detail = socketError?.message ?? `closed (${code}${reason === "" ? "" : ` ${reason}`})`;
  return new GatewayError("s2s", `${VENDOR} connection failed: ${detail}`, { fatal: !isTransientClose(code), ...(socketError === undefined ? {} : { cause: socketError }) });
}
