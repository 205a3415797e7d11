/**
 * Client events of the OpenAI Realtime API (GA event names) as `WS /v1/realtime` reads them:
 * parsing and validation only, pure, never throws (docs/realtime.md). Every frame becomes either
 * one event the binding acts on, or a refusal — a Realtime `error` body naming the event type and,
 * where one field is at fault, its `param`. Nothing here knows the session.
 */
import { z } from "zod";
import { CommandSchemas, MAX_USER_TEXT_CHARS } from "../transport/protocol.js";
import { strictBase64 } from "../audio/strict-base64.js";
import { outOfBandRequest, type OutOfBandRequest } from "./out-of-band-request.js";
import { parseRealtimeAudioFormat, type RealtimeAudioFormat } from "./audio-format.js";
import { MAX_APPEND_AUDIO_BYTES, MAX_REALTIME_FRAME_BYTES } from "./frame-limits.js";
import { spread } from "../spread.js";

export { MAX_APPEND_AUDIO_BYTES, MAX_REALTIME_FRAME_BYTES };

/** Every client event type of the GA Realtime API (the `openai` package's `RealtimeClientEvent`). */
export const GA_CLIENT_EVENT_TYPES = [
  "session.update",
  "input_audio_buffer.append",
  "input_audio_buffer.commit",
  "input_audio_buffer.clear",
  "output_audio_buffer.clear",
  "conversation.item.create",
  "conversation.item.retrieve",
  "conversation.item.truncate",
  "conversation.item.delete",
  "response.create",
  "response.cancel",
] as const;

/** The body of a Realtime `error` event (`RealtimeError`). */
export interface RealtimeErrorBody {
  readonly type: "invalid_request_error" | "server_error";
  readonly code: string;
  readonly message: string;
  readonly param?: string;
  /** The client's `event_id` of the event refused, when it sent one. */
  readonly event_id?: string;
}

/** At most this many tools in one `session.update` (the Realtime API takes 128 function tools). */
export const MAX_DECLARED_TOOLS = 128;

/** What a `session.update` asks for, after validation: only the fields the gateway applies. */
export interface SessionUpdate {
  readonly outputModalities?: readonly ("text" | "audio")[];
  /** The client tools the client declares it runs, by name (its description and parameters are not read: the agent's stand). */
  readonly tools?: readonly string[];
  readonly inputFormat?: RealtimeAudioFormat;
  readonly outputFormat?: RealtimeAudioFormat;
  /** `audio.input.turn_detection`, when named: `null` is push-to-talk (the client commits turns). */
  readonly turnDetection?: "server_vad" | "semantic_vad" | null;
  /** Fields read and ignored: the agent owns them (docs/realtime.md "session.update"). */
  readonly ignored: readonly string[];
}

/** The client events the binding acts on. */
export type RealtimeClientEvent =
  | { readonly type: "session.update"; readonly eventId?: string; readonly update: SessionUpdate }
  | { readonly type: "input_audio_buffer.append"; readonly eventId?: string; readonly audio: Uint8Array }
  | { readonly type: "input_audio_buffer.commit" | "input_audio_buffer.clear"; readonly eventId?: string }
  | { readonly type: "conversation.item.create"; readonly eventId?: string; readonly itemId?: string; readonly text: string }
  /** `conversation.item.create` with a `function_call_output` item: the client's answer to a call. */
  | { readonly type: "function_call_output"; readonly eventId?: string; readonly itemId?: string; readonly callId: string; readonly output: string }
  | { readonly type: "conversation.item.retrieve"; readonly eventId?: string; readonly itemId: string }
  | { readonly type: "conversation.item.truncate"; readonly eventId?: string; readonly itemId: string; readonly contentIndex: number; readonly audioEndMs: number }
  | { readonly type: "response.create"; readonly eventId?: string; readonly outOfBand?: OutOfBandRequest }
  | { readonly type: "response.cancel"; readonly eventId?: string; readonly responseId?: string };

/** One frame read: an event, or the `error` to answer it with. */
export type ParsedClientEvent = { readonly kind: "event"; readonly event: RealtimeClientEvent } | { readonly kind: "refused"; readonly error: RealtimeErrorBody };

const refuse = (code: string, message: string, extra: { param?: string; eventId?: string | undefined } = {}): ParsedClientEvent => ({
  kind: "refused",
  error: {
    type: "invalid_request_error",
    code,
    message,
    ...(extra.param === undefined ? {} : { param: extra.param }),
    ...(extra.eventId === undefined ? {} : { event_id: extra.eventId }),
  },
});

/** The refusal of a GA event this build does not serve yet: named, never silent. */
export function notSupportedYet(type: string, eventId?: string): ParsedClientEvent {
  return refuse("unsupported_event", `${type} is not supported yet by this gateway (docs/realtime.md lists what is)`, { eventId });
}

/**
 * Why `conversation.item.delete` is refused (docs/realtime.md "Semantics"): the items a client sees
 * are this link's view, not the agent's history. A pipeline or text agent records a turn's prompt
 * with its reply, joins the typed messages of one `response.create` (and a continuation's speech)
 * into one user message, and keeps tool calls paired with their results and the history opening
 * with a user turn; an s2s agent's history is its service's, under the service's own item ids. No
 * item maps onto messages the session could remove alone, so none is removed.
 */
export const ITEM_DELETE_REFUSAL =
  "conversation.item.delete is not supported: the agent's history is the gateway's (a turn's prompt is recorded with its reply, typed messages are joined into one turn, tool calls stay paired with their results; an s2s service keeps its own), so a Realtime item cannot be removed from it alone";

const EventId = z.string().max(128).optional();
const ItemId = z.string().min(1).max(64).optional();
const TurnDetection = z.object({ type: z.enum(["server_vad", "semantic_vad"]) }).loose().nullable();

/**
 * Session fields applied (`output_modalities`, `audio.*.format`), and those the agent owns, read
 * and ignored. A field outside both lists is refused by name: the client learns it did nothing.
 */
const IGNORED_SESSION_FIELDS = [
  "type",
  "model",
  "instructions",
  "prompt",
  "tool_choice",
  "tracing",
  "include",
  "max_output_tokens",
  "truncation",
  "object",
  "id",
  "expires_at",
] as const;
const IGNORED_AUDIO_INPUT_FIELDS = ["transcription", "noise_reduction"] as const;
const IGNORED_AUDIO_OUTPUT_FIELDS = ["voice", "speed"] as const;

const SessionUpdateSchema = z.object({
  type: z.literal("session.update"),
  event_id: EventId,
  session: z.record(z.string(), z.unknown()),
});

const AppendSchema = z.object({ type: z.literal("input_audio_buffer.append"), event_id: EventId, audio: z.string() });

const ItemCreateSchema = z.object({
  type: z.literal("conversation.item.create"),
  event_id: EventId,
  previous_item_id: z.string().nullable().optional(),
  item: z
    .object({
      id: ItemId,
      type: z.string(),
      role: z.string().optional(),
      content: z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()).optional(),
    })
    .loose(),
});

/** A `function_call_output` item, bounded as `tool_result` is (transport/protocol.ts): the call id and the output. */
const FunctionCallOutputSchema = z.object({ id: ItemId, type: z.literal("function_call_output"), call_id: CommandSchemas.tool_result.shape.toolCallId, output: CommandSchemas.tool_result.shape.result }).loose();

/** A tool in `session.update`: a `function` tool (other kinds, such as `mcp`, are refused by name). */
const DeclaredToolSchema = z.object({ type: z.literal("function").optional(), name: z.string().min(1).max(64) }).loose();
const DeclaredToolsSchema = z.array(DeclaredToolSchema).max(MAX_DECLARED_TOOLS);

const ItemRetrieveSchema = z.object({ type: z.literal("conversation.item.retrieve"), event_id: EventId, item_id: z.string().min(1).max(64) });
/** `audio_end_ms`: an integer, ms of the item's audio (the API's own type); at most 24 h. */
const ItemTruncateSchema = z.object({
  type: z.literal("conversation.item.truncate"),
  event_id: EventId,
  item_id: z.string().min(1).max(64),
  content_index: z.number().int().min(0),
  audio_end_ms: z.number().int().min(0).max(86_400_000),
});
const ResponseCreateSchema = z.object({ type: z.literal("response.create"), event_id: EventId, response: z.record(z.string(), z.unknown()).optional() });
const BufferSchema = z.object({ type: z.enum(["input_audio_buffer.commit", "input_audio_buffer.clear"]), event_id: EventId });
const ResponseCancelSchema = z.object({ type: z.literal("response.cancel"), event_id: EventId, response_id: z.string().max(64).optional() });

/** Decode strict base64 of at most `maxBytes` bytes; the problem otherwise. Whole samples are the binding's to check: it knows the format. */
export function decodeAudio(text: string, maxBytes: number): Uint8Array | { readonly problem: string } {
  // Checked on the text before decoding: an oversize append costs no allocation.
  if (Math.floor((text.length * 3) / 4) > maxBytes + 2) return { problem: `at most ${maxBytes} bytes of audio per append (got about ${Math.floor((text.length * 3) / 4)})` };
  // Strict base64 (RFC 4648 §4, padded), as the Realtime API sends audio.
  const bytes = strictBase64(text);
  if (bytes === undefined) return { problem: "not valid base64" };
  if (bytes.byteLength > maxBytes) return { problem: `at most ${maxBytes} bytes of audio per append (got ${bytes.byteLength})` };
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The first schema problem as `param` (the field's path) and a message. */
function schemaProblem(type: string, error: z.ZodError, eventId: string | undefined, under?: string): ParsedClientEvent {
  const issue = error.issues[0];
  const path = [...(under === undefined ? [] : [under]), ...(issue?.path ?? [])];
  const param = path.length === 0 ? undefined : path.join(".");
  return refuse("invalid_value", `${type}: ${param === undefined ? "" : `${param}: `}${issue?.message ?? "invalid"}`, spread(param === undefined ? {} : { param }, { eventId }));
}

/** `audio/pcm` at 24 kHz, `audio/pcmu` or `audio/pcma` (audio-format.ts); anything else refused by name. */
function audioFormat(value: unknown, param: string, eventId: string | undefined): RealtimeAudioFormat | ParsedClientEvent {
  const format = parseRealtimeAudioFormat(value);
  if (!("problem" in format)) return format;
  const at = format.at === undefined ? param : `${param}.${format.at}`;
  return refuse("invalid_value", `session.update: ${at}: ${format.problem}`, { param: at, eventId });
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function sessionUpdate(session: Record<string, unknown>, eventId: string | undefined): ParsedClientEvent {
  const ignored: string[] = [];
  let outputModalities: ("text" | "audio")[] | undefined;
  let tools: string[] | undefined;
  let inputFormat: RealtimeAudioFormat | undefined;
  let outputFormat: RealtimeAudioFormat | undefined;
  let turnDetection: "server_vad" | "semantic_vad" | null | undefined;
  for (const [field, value] of Object.entries(session)) {
    if (field === "type") {
      if (value !== "realtime") return refuse("invalid_value", `session.update: session.type must be "realtime" (got ${JSON.stringify(value)})`, { param: "session.type", eventId });
      continue;
    }
    if ((IGNORED_SESSION_FIELDS as readonly string[]).includes(field)) {
      ignored.push(`session.${field}`);
      continue;
    }
    if (field === "tools") {
      const parsed = DeclaredToolsSchema.safeParse(value);
      if (!parsed.success) {
        const param = ["session.tools", ...(parsed.error.issues[0]?.path ?? [])].join(".");
        return refuse("invalid_value", `session.update: ${param}: tools are function tools ({"type":"function","name":…}), at most ${MAX_DECLARED_TOOLS}`, { param, eventId });
      }
      tools = parsed.data.map((tool) => tool.name);
      continue;
    }
    if (field === "output_modalities") {
      const parsed = z.array(z.enum(["text", "audio"])).min(1).max(1).safeParse(value);
      if (!parsed.success) return refuse("invalid_value", 'session.update: session.output_modalities must be ["text"] or ["audio"]', { param: "session.output_modalities", eventId });
      outputModalities = parsed.data;
      continue;
    }
    if (field === "audio") {
      if (!isRecord(value)) return refuse("invalid_value", "session.update: session.audio must be an object", { param: "session.audio", eventId });
      for (const [direction, settings] of Object.entries(value)) {
        if (direction !== "input" && direction !== "output") return refuse("unknown_parameter", `session.update: session.audio.${direction} is not a Realtime field`, { param: `session.audio.${direction}`, eventId });
        if (!isRecord(settings)) return refuse("invalid_value", `session.update: session.audio.${direction} must be an object`, { param: `session.audio.${direction}`, eventId });
        const owned: readonly string[] = direction === "input" ? IGNORED_AUDIO_INPUT_FIELDS : IGNORED_AUDIO_OUTPUT_FIELDS;
        for (const [key, setting] of Object.entries(settings)) {
          const param = `session.audio.${direction}.${key}`;
          if (key === "format") {
            const format = audioFormat(setting, param, eventId);
            if ("kind" in format) return format;
            if (direction === "input") inputFormat = format;
            else outputFormat = format;
          } else if (key === "turn_detection" && direction === "input") {
            const parsed = TurnDetection.safeParse(setting);
            if (!parsed.success) return refuse("invalid_value", `session.update: ${param} must be null, {"type":"server_vad"} or {"type":"semantic_vad"}`, { param, eventId });
            turnDetection = parsed.data === null ? null : parsed.data.type;
          } else if (owned.includes(key)) {
            ignored.push(param);
          } else {
            return refuse("unknown_parameter", `session.update: ${param} is not a Realtime field this gateway knows`, { param, eventId });
          }
        }
      }
      continue;
    }
    return refuse("unknown_parameter", `session.update: session.${field} is not a Realtime field this gateway knows`, { param: `session.${field}`, eventId });
  }
  const update: SessionUpdate = {
    ignored,
    ...(outputModalities === undefined ? {} : { outputModalities }),
    ...(tools === undefined ? {} : { tools }),
    ...(inputFormat === undefined ? {} : { inputFormat }),
    ...(outputFormat === undefined ? {} : { outputFormat }),
    ...(turnDetection === undefined ? {} : { turnDetection }),
  };
  return { kind: "event", event: { type: "session.update", ...(eventId === undefined ? {} : { eventId }), update } };
}

function itemCreate(data: z.output<typeof ItemCreateSchema>): ParsedClientEvent {
  const eventId = data.event_id;
  const { item } = data;
  if (item.type === "function_call_output") {
    const output = FunctionCallOutputSchema.safeParse(item);
    if (!output.success) return schemaProblem("conversation.item.create", output.error, eventId, "item");
    const { id, call_id: callId } = output.data;
    return { kind: "event", event: { type: "function_call_output", ...(eventId === undefined ? {} : { eventId }), ...(id === undefined ? {} : { itemId: id }), callId, output: output.data.output } };
  }
  if (item.type !== "message") {
    return refuse("unsupported_value", `conversation.item.create: items of type ${JSON.stringify(item.type)} are not supported: send a user message with input_text, or a function_call_output`, { param: "item.type", eventId });
  }
  if (item.role !== "user") {
    return refuse("unsupported_value", `conversation.item.create: only user messages are supported (got role ${JSON.stringify(item.role)}); the agent's own instructions are its system prompt`, { param: "item.role", eventId });
  }
  const parts = item.content ?? [];
  if (parts.length === 0) return refuse("invalid_value", "conversation.item.create: item.content must hold at least one input_text part", { param: "item.content", eventId });
  const texts: string[] = [];
  for (const [index, part] of parts.entries()) {
    if (part.type !== "input_text" || typeof part.text !== "string") {
      return refuse("unsupported_value", `conversation.item.create: content parts of type ${JSON.stringify(part.type)} are not supported yet: send input_text`, { param: `item.content.${index}.type`, eventId });
    }
    texts.push(part.text);
  }
  const text = texts.join("\n").trim();
  if (text === "") return refuse("invalid_value", "conversation.item.create: the message's text is empty", { param: "item.content", eventId });
  if (text.length > MAX_USER_TEXT_CHARS) return refuse("invalid_value", `conversation.item.create: too long: at most ${MAX_USER_TEXT_CHARS} characters`, { param: "item.content", eventId });
  return { kind: "event", event: { type: "conversation.item.create", ...(eventId === undefined ? {} : { eventId }), ...(item.id === undefined ? {} : { itemId: item.id }), text } };
}

/** `response.create`: the agent's own reply without parameters, or an out-of-band response (`conversation: "none"`, out-of-band-request.ts). */
function responseCreate(data: z.output<typeof ResponseCreateSchema>): ParsedClientEvent {
  const eventId = data.event_id;
  const response = data.response ?? {};
  const fields = Object.keys(response);
  if (response.conversation === "none") {
    const parsed = outOfBandRequest(response);
    if ("problem" in parsed) return refuse(parsed.code, `response.create: ${parsed.problem}`, { param: parsed.param, eventId });
    return { kind: "event", event: { type: "response.create", ...(eventId === undefined ? {} : { eventId }), outOfBand: parsed } };
  }
  if (fields.length > 0) {
    const param = `response.${fields[0] ?? ""}`;
    return refuse(
      "unsupported_value",
      `response.create: response parameters (${fields.join(", ")}) are served for out-of-band responses (conversation: "none") only: send response.create without "response" for the agent's own reply`,
      { param, eventId },
    );
  }
  return { kind: "event", event: { type: "response.create", ...(eventId === undefined ? {} : { eventId }) } };
}

/**
 * Read one text frame. Order of checks: size (bytes), JSON, an object with a string `type`, a
 * GA type this build serves (other GA types: "not supported yet"; anything else: unknown), then
 * the event's fields.
 */
export function parseClientEvent(text: string, maxFrameBytes = MAX_REALTIME_FRAME_BYTES, maxAudioBytes = MAX_APPEND_AUDIO_BYTES): ParsedClientEvent {
  const bytes = Buffer.byteLength(text);
  if (bytes > maxFrameBytes) return refuse("frame_too_large", `a frame of ${bytes} bytes exceeds ${maxFrameBytes}: send audio in smaller appends`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refuse("invalid_json", "the frame is not valid JSON");
  }
  if (!isRecord(value) || typeof value.type !== "string") return refuse("invalid_event", "a client event is a JSON object with a string type");
  const type = value.type;
  const rawId = value.event_id;
  const eventId = typeof rawId === "string" && rawId.length <= 128 ? rawId : undefined;
  switch (type) {
    case "session.update": {
      const parsed = SessionUpdateSchema.safeParse(value);
      return parsed.success ? sessionUpdate(parsed.data.session, eventId) : schemaProblem(type, parsed.error, eventId);
    }
    case "input_audio_buffer.append": {
      const parsed = AppendSchema.safeParse(value);
      if (!parsed.success) return schemaProblem(type, parsed.error, eventId);
      const audio = decodeAudio(parsed.data.audio, maxAudioBytes);
      if ("problem" in audio) return refuse("invalid_value", `input_audio_buffer.append: audio: ${audio.problem}`, { param: "audio", eventId });
      return { kind: "event", event: { type, ...(eventId === undefined ? {} : { eventId }), audio } };
    }
    case "input_audio_buffer.commit":
    case "input_audio_buffer.clear": {
      const parsed = BufferSchema.safeParse(value);
      return parsed.success ? { kind: "event", event: { type: parsed.data.type, ...(eventId === undefined ? {} : { eventId }) } } : schemaProblem(type, parsed.error, eventId);
    }
    case "conversation.item.create": {
      const parsed = ItemCreateSchema.safeParse(value);
      return parsed.success ? itemCreate(parsed.data) : schemaProblem(type, parsed.error, eventId);
    }
    case "conversation.item.retrieve": {
      const parsed = ItemRetrieveSchema.safeParse(value);
      return parsed.success ? { kind: "event", event: { type, ...(eventId === undefined ? {} : { eventId }), itemId: parsed.data.item_id } } : schemaProblem(type, parsed.error, eventId);
    }
    case "conversation.item.truncate": {
      const parsed = ItemTruncateSchema.safeParse(value);
      if (!parsed.success) return schemaProblem(type, parsed.error, eventId);
      const { item_id: itemId, content_index: contentIndex, audio_end_ms: audioEndMs } = parsed.data;
      return { kind: "event", event: { type, ...(eventId === undefined ? {} : { eventId }), itemId, contentIndex, audioEndMs } };
    }
    case "response.create": {
      const parsed = ResponseCreateSchema.safeParse(value);
      return parsed.success ? responseCreate(parsed.data) : schemaProblem(type, parsed.error, eventId);
    }
    case "response.cancel": {
      const parsed = ResponseCancelSchema.safeParse(value);
      if (!parsed.success) return schemaProblem(type, parsed.error, eventId);
      const responseId = parsed.data.response_id;
      return { kind: "event", event: { type, ...(eventId === undefined ? {} : { eventId }), ...(responseId === undefined ? {} : { responseId }) } };
    }
    case "conversation.item.delete":
      return refuse("unsupported_event", ITEM_DELETE_REFUSAL, { eventId });
    default:
      if ((GA_CLIENT_EVENT_TYPES as readonly string[]).includes(type)) return notSupportedYet(type, eventId);
      return refuse("invalid_event", `unknown client event type ${JSON.stringify(type.slice(0, 64))}`, { param: "type", eventId });
  }
}
