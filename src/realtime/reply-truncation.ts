/**
 * `conversation.item.truncate` on `/v1/realtime` (docs/realtime.md "Semantics", "Truncating a
 * reply"): the client says where it stopped playing an assistant item's audio. The binding checks
 * the event against what it sent (the item, its one content part, the ms of audio sent for it)
 * and hands the session `truncate_heard`, which cuts the reply's record to what was heard
 * (turn/heard-correction.ts). Only the latest reply: the session keeps the heard map of that one
 * alone (an earlier reply's timeline is gone with the next reply's).
 */
import type { LinkCommand } from "../transport/protocol.js";
import type { ConversationItem } from "./server-events.js";


export interface TruncateRequest {
  readonly itemId: string;
  readonly contentIndex: number;
  readonly audioEndMs: number;
}

/** A truncate refused, in the API's terms: the `error`'s code, message and the field at fault. */
export interface TruncateRefusal {
  readonly code: string;
  readonly message: string;
  readonly param: string;
}

/** The latest reply's item and the audio sent for it: what a truncate may name. */
export class ReplyAudio {
  #latest: { readonly itemId: string; ms: number } | undefined;

  /** A reply's first audio went out: its item is the latest now (a reply not yet heard leaves the one before it the latest, as the session counts: pipeline/voice-loop.ts `truncateHeard`). */
  began(itemId: string): void {
    this.#latest = { itemId, ms: 0 };
  }

  /** Audio sent for `itemId` (ms, in whatever output format it was sent: audio-format.ts `realtimeAudioMs`). */
  sent(itemId: string, ms: number): void {
    if (this.#latest?.itemId === itemId) this.#latest.ms += ms;
  }

  /**
   * The session's command for a truncate of `item` (as last sent, when the binding remembers it),
   * or the refusal. `audio`: false for a text agent, whose replies carry no audio.
   */
  truncate(request: TruncateRequest, item: ConversationItem | undefined, audio: boolean): { readonly command: LinkCommand } | { readonly refusal: TruncateRefusal } {
    const what = "conversation.item.truncate";
    const { itemId, contentIndex, audioEndMs } = request;
    if (item === undefined) return refuse("item_not_found", `${what}: no item ${JSON.stringify(itemId)} (the gateway keeps the last items it sent)`, "item_id");
    if (!("role" in item) || item.role !== "assistant") return refuse("invalid_value", `${what}: item ${JSON.stringify(itemId)} is not an assistant message: only an assistant message's audio can be truncated`, "item_id");
    if (!audio) return refuse("invalid_value", `${what}: this agent answers in text: its messages have no audio to truncate`, "item_id");
    if (contentIndex !== 0) return refuse("invalid_value", `${what}: content_index ${contentIndex}: a reply has one content part (0)`, "content_index");
    const latest = this.#latest;
    if (latest?.itemId !== itemId) {
      return refuse("unsupported_value", `${what}: only the latest reply can be truncated: the record of an earlier one is settled`, "item_id");
    }
    const sentMs = Math.ceil(latest.ms);
    if (audioEndMs > sentMs) return refuse("invalid_value", `${what}: audio_end_ms ${audioEndMs} is beyond the item's audio (${sentMs} ms)`, "audio_end_ms");
    return { command: { type: "truncate_heard", audioMs: audioEndMs } };
  }
}

const refuse = (code: string, message: string, param: string): { readonly refusal: TruncateRefusal } => ({ refusal: { code, message, param } });
