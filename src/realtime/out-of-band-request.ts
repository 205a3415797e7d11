/**
 * The parameters of an out-of-band `response.create` (`response.conversation: "none"`) as
 * `/v1/realtime` reads them (docs/realtime.md "Out-of-band responses"): pure, bounded, never
 * throws. Served: `instructions`, `input` (messages with text parts), `output_modalities`
 * (`["text"]`), `metadata`, `max_output_tokens`. Anything else is refused by name.
 */
import { MAX_USER_TEXT_CHARS, type OutOfBandMessage } from "../transport/protocol.js";

/** What an out-of-band response asks for, validated. */
export interface OutOfBandRequest {
  readonly instructions?: string;
  readonly input?: readonly OutOfBandMessage[];
  readonly maxOutputTokens?: number;
  /** Echoed on `response.created` and `response.done` (the API's own bounds: 16 pairs, keys ≤ 64, values ≤ 512 characters). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Messages one out-of-band response's `input` may hold (as many as typed messages may wait for `response.create`). */
export const MAX_INPUT_ITEMS = 8;

/** The most tokens a client may ask one out-of-band response to write (`max_output_tokens`; `"inf"`: the agent's own setting). */
export const MAX_OUT_OF_BAND_TOKENS = 4096;

type Problem = { readonly problem: string; readonly param: string; readonly code: "invalid_value" | "unsupported_value" };

const invalid = (problem: string, param: string): Problem => ({ problem, param, code: "invalid_value" });
const unsupported = (problem: string, param: string): Problem => ({ problem, param, code: "unsupported_value" });

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Text part types an input message may hold, by role (the API's `RealtimeConversationItem*Message` content). */
const TEXT_PARTS: Readonly<Record<OutOfBandMessage["role"], readonly string[]>> = { system: ["input_text"], user: ["input_text"], assistant: ["output_text"] };

function inputMessages(value: unknown): readonly OutOfBandMessage[] | Problem {
  if (!Array.isArray(value)) return invalid("response.input must be an array of message items", "response.input");
  if (value.length > MAX_INPUT_ITEMS) return invalid(`response.input: at most ${MAX_INPUT_ITEMS} items`, "response.input");
  const messages: OutOfBandMessage[] = [];
  for (const [index, item] of value.entries()) {
    const param = `response.input.${index}`;
    if (!isRecord(item)) return invalid(`${param} must be an item object`, param);
    if (item.type !== "message") return unsupported(`${param}: items of type ${JSON.stringify(item.type)} are not supported: give the messages themselves (type "message")`, `${param}.type`);
    const role = item.role;
    if (role !== "user" && role !== "assistant" && role !== "system") return invalid(`${param}.role must be "user", "assistant" or "system"`, `${param}.role`);
    if (!Array.isArray(item.content) || item.content.length === 0) return invalid(`${param}.content must hold at least one text part`, `${param}.content`);
    const texts: string[] = [];
    for (const [at, part] of (item.content as unknown[]).entries()) {
      if (!isRecord(part) || !TEXT_PARTS[role].includes(String(part.type)) || typeof part.text !== "string") {
        return unsupported(`${param}.content.${at}: a ${role} message takes ${TEXT_PARTS[role].join(" or ")} parts with text (audio and images are not supported)`, `${param}.content.${at}`);
      }
      texts.push(part.text);
    }
    messages.push({ role, text: texts.join("\n") });
  }
  return messages;
}

function metadataOf(value: unknown): Readonly<Record<string, string>> | Problem {
  if (!isRecord(value)) return invalid("response.metadata must be an object of strings", "response.metadata");
  const entries = Object.entries(value);
  if (entries.length > 16) return invalid("response.metadata: at most 16 pairs", "response.metadata");
  for (const [key, text] of entries) {
    if (key.length > 64 || typeof text !== "string" || text.length > 512) return invalid("response.metadata: keys of at most 64 characters, string values of at most 512", `response.metadata.${key.slice(0, 64)}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/** Read `response` (its `conversation` is "none"): the request, or the first problem. */
export function outOfBandRequest(response: Readonly<Record<string, unknown>>): OutOfBandRequest | Problem {
  const request: { instructions?: string; input?: readonly OutOfBandMessage[]; maxOutputTokens?: number; metadata?: Readonly<Record<string, string>> } = {};
  for (const [field, value] of Object.entries(response)) {
    const param = `response.${field}`;
    switch (field) {
      case "conversation":
        continue;
      case "instructions":
        if (typeof value !== "string") return invalid("response.instructions must be a string", param);
        if (value.length > MAX_USER_TEXT_CHARS) return invalid(`response.instructions: at most ${MAX_USER_TEXT_CHARS} characters`, param);
        request.instructions = value;
        continue;
      case "input": {
        const input = inputMessages(value);
        if ("problem" in input) return input;
        request.input = input;
        continue;
      }
      case "output_modalities":
        if (!Array.isArray(value) || value.length !== 1 || value[0] !== "text") {
          return unsupported('response.output_modalities: an out-of-band response answers in text: send ["text"] (or leave it out)', param);
        }
        continue;
      case "metadata": {
        if (value === null) continue;
        const metadata = metadataOf(value);
        if ("problem" in metadata) return metadata;
        request.metadata = metadata;
        continue;
      }
      case "max_output_tokens":
        if (value === "inf") continue;
        if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_OUT_OF_BAND_TOKENS) {
          return invalid(`response.max_output_tokens must be an integer from 1 to ${MAX_OUT_OF_BAND_TOKENS}, or "inf"`, param);
        }
        request.maxOutputTokens = value;
        continue;
      default:
        return unsupported(`${param} is not supported for out-of-band responses (served: instructions, input, output_modalities ["text"], metadata, max_output_tokens; the agent's tools are not offered)`, param);
    }
  }
  const chars = (request.instructions?.length ?? 0) + (request.input ?? []).reduce((sum, message) => sum + message.text.length, 0);
  if (chars > MAX_USER_TEXT_CHARS) return invalid(`response: instructions and input hold at most ${MAX_USER_TEXT_CHARS} characters together`, "response.input");
  return request;
}
