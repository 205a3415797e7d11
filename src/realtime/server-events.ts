/**
 * Server events of the OpenAI Realtime API (GA event names) as `WS /v1/realtime` sends them: pure
 * builders, one per event, shaped as the `openai` package's `RealtimeServerEvent` declares them
 * (the Agents SDK's own schemas parse every one: test/integration/realtime-agents-sdk.test.ts).
 * Ids are made by the caller.
 */
import type { ShownServerVad } from "./session-settings.js";
import { PCM24, type RealtimeAudioFormat } from "./audio-format.js";
import type { RealtimeErrorBody } from "./client-events.js";
import { realtimeUsage, tokenRateLimits, type ReplyUsage } from "./usage.js";

/** What the Realtime client sees of the agent's output: text for a text agent, audio for a voice agent. */
export type Modality = "text" | "audio";

/** The session as `session.created` / `session.updated` describe it. */
export interface RealtimeSessionView {
  readonly id: string;
  /** The agent's name: there is no model to choose (docs/realtime.md). */
  readonly model: string;
  readonly modality: Modality;
  /** The client tools the client declared, as the agent declares them (its description and parameters stand). */
  readonly tools?: readonly RealtimeToolView[];
  /** The client's audio each way (default: 24 kHz PCM16). */
  readonly input?: RealtimeAudioFormat;
  readonly output?: RealtimeAudioFormat;
  /** What stands for turn detection (session-settings.ts `shownTurnDetection`); default: server VAD for a voice agent. */
  readonly turnDetection?: ShownServerVad | null;
}

/** A declared client tool as `session.updated` shows it. */
export interface RealtimeToolView {
  readonly name: string;
  readonly description: string;
  /** The agent's JSON Schema of the arguments. */
  readonly parameters: unknown;
}

/** One message item of the conversation, as events carry it. */
export interface MessageItem {
  readonly id: string;
  readonly role: "user" | "assistant";
  readonly status: "in_progress" | "completed" | "incomplete";
  /** User: `input_text` (typed) or `input_audio` (spoken, with its transcript); assistant: the modality's part. */
  readonly content: readonly ContentPart[];
}

/** A call of a client tool the client declared (docs/realtime.md "Client tools"): `callId` is the session's `toolCallId`, `arguments` the args as JSON. */
export interface FunctionCallItem {
  readonly type: "function_call";
  readonly id: string;
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly status: "in_progress" | "completed";
}

/** The client's answer to a call (`conversation.item.create` with a `function_call_output`). */
export interface FunctionCallOutputItem {
  readonly type: "function_call_output";
  readonly id: string;
  readonly callId: string;
  readonly output: string;
}

/** Any item of the conversation, as events carry it. */
export type ConversationItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

export type ContentPart =
  | { readonly type: "input_text"; readonly text: string }
  | { readonly type: "input_audio"; readonly transcript: string | null }
  | { readonly type: "output_text"; readonly text: string }
  | { readonly type: "output_audio"; readonly transcript: string };

/** A response's end (`response.done`). */
export type ResponseStatus = "in_progress" | "completed" | "cancelled" | "failed";
export type StatusDetails =
  | { readonly type: "cancelled"; readonly reason: "turn_detected" | "client_cancelled" }
  | { readonly type: "failed"; readonly error: { readonly type: string; readonly code: string } };

export interface ResponseView {
  readonly id: string;
  readonly status: ResponseStatus;
  readonly modality: Modality;
  readonly output: readonly ConversationItem[];
  readonly statusDetails?: StatusDetails;
  /** The reply's model tokens, when the session reported them (`usage` is left out otherwise). */
  readonly usage?: ReplyUsage;
  /** An out-of-band response (`conversation: "none"`): no conversation, the client's metadata echoed. */
  readonly outOfBand?: { readonly metadata: Readonly<Record<string, string>> | null };
  /** The response's audio format (default: 24 kHz PCM16). */
  readonly format?: RealtimeAudioFormat;
}

/** Every event carries its own id (`event_…`), made by the caller's counter. */
type Stamped<T> = T & { readonly event_id: string };

function sessionBody(view: RealtimeSessionView): Record<string, unknown> {
  return {
    type: "realtime",
    object: "realtime.session",
    id: view.id,
    model: view.model,
    output_modalities: [view.modality],
    audio: {
      // The agent's own turn-taking stands for server VAD; its STT for transcription.
      input: { format: view.input ?? PCM24, turn_detection: view.turnDetection !== undefined ? view.turnDetection : view.modality === "audio" ? { type: "server_vad" } : null, transcription: null, noise_reduction: null },
      output: { format: view.output ?? PCM24 },
    },
    tools: (view.tools ?? []).map((tool) => ({ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters })),
    tool_choice: "auto",
  };
}

export const sessionCreated = (eventId: string, view: RealtimeSessionView) => ({ type: "session.created", event_id: eventId, session: sessionBody(view) }) as const;
export const sessionUpdated = (eventId: string, view: RealtimeSessionView) => ({ type: "session.updated", event_id: eventId, session: sessionBody(view) }) as const;

export function errorEvent(eventId: string, error: RealtimeErrorBody): Stamped<{ type: "error"; error: RealtimeErrorBody }> {
  return { type: "error", event_id: eventId, error };
}

function itemBody(item: ConversationItem): Record<string, unknown> {
  if ("callId" in item) {
    return item.type === "function_call"
      ? { id: item.id, object: "realtime.item", type: "function_call", status: item.status, call_id: item.callId, name: item.name, arguments: item.arguments }
      : { id: item.id, object: "realtime.item", type: "function_call_output", status: "completed", call_id: item.callId, output: item.output };
  }
  return { id: item.id, object: "realtime.item", type: "message", role: item.role, status: item.status, content: item.content.map((part) => ({ ...part })) };
}

export const itemAdded = (eventId: string, item: ConversationItem, previousItemId: string | null) =>
  ({ type: "conversation.item.added", event_id: eventId, previous_item_id: previousItemId, item: itemBody(item) }) as const;
export const itemDone = (eventId: string, item: ConversationItem, previousItemId: string | null) =>
  ({ type: "conversation.item.done", event_id: eventId, previous_item_id: previousItemId, item: itemBody(item) }) as const;

/** An item the client asked for (`conversation.item.retrieve`): as last sent; spoken items carry their transcript, not their audio. */
export const itemRetrieved = (eventId: string, item: ConversationItem) => ({ type: "conversation.item.retrieved", event_id: eventId, item: itemBody(item) }) as const;

/** A truncate applied (`conversation.item.truncate`): the reply's record holds no more than was heard by `audioEndMs` of its audio. */
export const itemTruncated = (eventId: string, itemId: string, contentIndex: number, audioEndMs: number) =>
  ({ type: "conversation.item.truncated", event_id: eventId, item_id: itemId, content_index: contentIndex, audio_end_ms: audioEndMs }) as const;

export const speechStarted = (eventId: string, itemId: string, audioStartMs: number) =>
  ({ type: "input_audio_buffer.speech_started", event_id: eventId, item_id: itemId, audio_start_ms: Math.round(audioStartMs) }) as const;
export const speechStopped = (eventId: string, itemId: string, audioEndMs: number) =>
  ({ type: "input_audio_buffer.speech_stopped", event_id: eventId, item_id: itemId, audio_end_ms: Math.round(audioEndMs) }) as const;
export const audioCleared = (eventId: string) => ({ type: "input_audio_buffer.cleared", event_id: eventId }) as const;
export const audioCommitted = (eventId: string, itemId: string, previousItemId: string | null) =>
  ({ type: "input_audio_buffer.committed", event_id: eventId, item_id: itemId, previous_item_id: previousItemId }) as const;
/** What the agent's STT added to a spoken item's interim transcript (text-deltas.ts), while the user speaks. */
export const transcriptionDelta = (eventId: string, itemId: string, delta: string) =>
  ({ type: "conversation.item.input_audio_transcription.delta", event_id: eventId, item_id: itemId, content_index: 0, delta }) as const;
/** The agent's STT result for a spoken item; `seconds`: the audio it heard, as Realtime's duration usage. */
export const transcriptionCompleted = (eventId: string, itemId: string, transcript: string, seconds: number) =>
  ({
    type: "conversation.item.input_audio_transcription.completed",
    event_id: eventId,
    item_id: itemId,
    content_index: 0,
    transcript,
    usage: { type: "duration", seconds: Math.max(0, Math.round(seconds * 1000) / 1000) },
  }) as const;

function responseBody(view: ResponseView): Record<string, unknown> {
  return {
    id: view.id,
    object: "realtime.response",
    status: view.status,
    status_details: view.statusDetails ?? null,
    output: view.output.map(itemBody),
    conversation_id: view.outOfBand === undefined ? "conversation" : null,
    output_modalities: [view.modality],
    audio: { output: { format: view.format ?? PCM24 } },
    ...(view.usage === undefined ? {} : { usage: realtimeUsage(view.usage) }),
    ...(view.outOfBand === undefined ? {} : { metadata: view.outOfBand.metadata }),
  };
}

export const responseCreated = (eventId: string, view: ResponseView) => ({ type: "response.created", event_id: eventId, response: responseBody(view) }) as const;
export const responseDone = (eventId: string, view: ResponseView) => ({ type: "response.done", event_id: eventId, response: responseBody(view) }) as const;

/** Where in a response an event's part sits: the one message item (index 0) and its one part (index 0). */
interface At {
  readonly responseId: string;
  readonly itemId: string;
}
const place = (at: At) => ({ response_id: at.responseId, item_id: at.itemId, output_index: 0, content_index: 0 }) as const;

/** `outputIndex`: the item's place in the response's output (the message is first when there is one; function calls follow). */
export const outputItemAdded = (eventId: string, responseId: string, item: ConversationItem, outputIndex = 0) =>
  ({ type: "response.output_item.added", event_id: eventId, response_id: responseId, output_index: outputIndex, item: itemBody(item) }) as const;
export const outputItemDone = (eventId: string, responseId: string, item: ConversationItem, outputIndex = 0) =>
  ({ type: "response.output_item.done", event_id: eventId, response_id: responseId, output_index: outputIndex, item: itemBody(item) }) as const;

/** A call's arguments (JSON text): sent whole, as one delta, since the session hands the call over complete. */
export const argumentsDelta = (eventId: string, responseId: string, item: FunctionCallItem, outputIndex: number) =>
  ({ type: "response.function_call_arguments.delta", event_id: eventId, response_id: responseId, item_id: item.id, output_index: outputIndex, call_id: item.callId, delta: item.arguments }) as const;
export const argumentsDone = (eventId: string, responseId: string, item: FunctionCallItem, outputIndex: number) =>
  ({ type: "response.function_call_arguments.done", event_id: eventId, response_id: responseId, item_id: item.id, output_index: outputIndex, call_id: item.callId, name: item.name, arguments: item.arguments }) as const;

/** The content part of a response: `text` (with its text) or `audio` (with its transcript). */
const part = (modality: Modality, text: string) => (modality === "text" ? { type: "text", text } : { type: "audio", transcript: text });
export const contentPartAdded = (eventId: string, at: At, modality: Modality) => ({ type: "response.content_part.added", event_id: eventId, ...place(at), part: part(modality, "") }) as const;
export const contentPartDone = (eventId: string, at: At, modality: Modality, text: string) =>
  ({ type: "response.content_part.done", event_id: eventId, ...place(at), part: part(modality, text) }) as const;

export const textDelta = (eventId: string, at: At, delta: string) => ({ type: "response.output_text.delta", event_id: eventId, ...place(at), delta }) as const;
export const textDone = (eventId: string, at: At, text: string) => ({ type: "response.output_text.done", event_id: eventId, ...place(at), text }) as const;
/** `delta`: base64 of the response's audio format. */
export const audioDelta = (eventId: string, at: At, delta: string) => ({ type: "response.output_audio.delta", event_id: eventId, ...place(at), delta }) as const;
export const audioDone = (eventId: string, at: At) => ({ type: "response.output_audio.done", event_id: eventId, ...place(at) }) as const;
export const transcriptDelta = (eventId: string, at: At, delta: string) => ({ type: "response.output_audio_transcript.delta", event_id: eventId, ...place(at), delta }) as const;
export const transcriptDone = (eventId: string, at: At, transcript: string) =>
  ({ type: "response.output_audio_transcript.done", event_id: eventId, ...place(at), transcript }) as const;

/** The session's token budget (`usageLimits.totalTokens`) and what is left of it. */
export const rateLimitsUpdated = (eventId: string, limit: number, used: number) => ({ type: "rate_limits.updated", event_id: eventId, rate_limits: tokenRateLimits(limit, used) }) as const;

/** Any event a builder here makes. */
export type RealtimeServerEvent = { readonly type: string; readonly event_id: string };
