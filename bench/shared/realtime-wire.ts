/**
 * The OpenAI Realtime server events of one spoken response (docs/vendors.md (OpenAI Realtime)),
 * as the bench fakes send them: pure builders, no socket. Shared by the telephony bench's fake
 * (bench/telephony/fake-realtime.ts) and the soak's (bench/soak/fake-realtime.ts).
 */

/** One response being spoken: `sentMs` of its `totalMs` of audio sent so far, on a real-time schedule from `startedAt`. */
export interface WireReply {
  readonly id: string;
  readonly itemId: string;
  readonly outOfBand: boolean;
  readonly metadata: unknown;
  readonly totalMs: number;
  readonly startedAt: number;
  sentMs: number;
  transcript: string;
  timer: NodeJS.Timeout | undefined;
}

type Event = Record<string, unknown>;

/** The `response` object of `response.created` (status `in_progress`) and `response.done`. */
export function responseOf(reply: WireReply, status: "in_progress" | "completed" | "cancelled", output: unknown[]): Event {
  return {
    id: reply.id,
    object: "realtime.response",
    status,
    status_details: status === "cancelled" ? { type: "cancelled", reason: "turn_detected" } : null,
    output,
    conversation_id: reply.outOfBand ? null : "conv_1",
    metadata: reply.metadata,
    usage: status === "in_progress" ? null : { total_tokens: 30, input_tokens: 20, output_tokens: 10 },
  };
}

/** `response.created` and the opened item and part; `conversationItems` adds `conversation.item.added` for an in-band reply. */
export function replyStarted(reply: WireReply, conversationItems: boolean): Event[] {
  const item = { id: reply.itemId, object: "realtime.item", type: "message", role: "assistant", status: "in_progress", content: [] };
  return [
    { type: "response.created", response: responseOf(reply, "in_progress", []) },
    { type: "response.output_item.added", response_id: reply.id, output_index: 0, item },
    ...(conversationItems && !reply.outOfBand ? [{ type: "conversation.item.added", previous_item_id: null, item }] : []),
    { type: "response.content_part.added", response_id: reply.id, item_id: reply.itemId, output_index: 0, content_index: 0, part: { type: "audio", transcript: "" } },
  ];
}

/** One 20 ms audio delta, and a transcript word every 100 ms of audio; advances `sentMs`. */
export function replyAudio(reply: WireReply, delta: string, frameMs: number): Event[] {
  const base = { response_id: reply.id, item_id: reply.itemId, output_index: 0, content_index: 0 };
  const events: Event[] = [{ type: "response.output_audio.delta", ...base, delta }];
  reply.sentMs += frameMs;
  if (reply.sentMs % 100 === frameMs) {
    reply.transcript += "word ";
    events.push({ type: "response.output_audio_transcript.delta", ...base, delta: "word " });
  }
  return events;
}

/** The closing events of a reply (a cancelled one closes its open parts too), then `response.done`. */
export function replyFinished(reply: WireReply, status: "completed" | "cancelled", conversationItems: boolean): Event[] {
  const base = { response_id: reply.id, item_id: reply.itemId, output_index: 0, content_index: 0 };
  const item = { id: reply.itemId, object: "realtime.item", type: "message", role: "assistant", status: status === "completed" ? "completed" : "incomplete", content: [{ type: "output_audio", transcript: reply.transcript }] };
  return [
    { type: "response.output_audio.done", ...base },
    { type: "response.output_audio_transcript.done", ...base, transcript: reply.transcript },
    { type: "response.content_part.done", ...base, part: { type: "audio", transcript: reply.transcript } },
    { type: "response.output_item.done", response_id: reply.id, output_index: 0, item },
    ...(conversationItems && !reply.outOfBand ? [{ type: "conversation.item.done", item }] : []),
    { type: "response.done", response: responseOf(reply, status, [item]) },
  ];
}
