// docs/realtime.md names every event of the GA Realtime API: each client and server event type the
// `openai` package declares is in its tables (supported, not sent, or refused).
import { readFileSync } from "node:fs";
import type { RealtimeServerEvent } from "openai/resources/realtime/realtime";
import { describe, expect, it } from "vitest";
import { GA_CLIENT_EVENT_TYPES } from "../../src/realtime/client-events.js";

/** Every server event type of the package's union: a type it adds and this misses fails to compile. */
const SERVER_EVENT_TYPES: Record<RealtimeServerEvent["type"], true> = {
  "conversation.created": true,
  "conversation.item.created": true,
  "conversation.item.deleted": true,
  "conversation.item.input_audio_transcription.completed": true,
  "conversation.item.input_audio_transcription.delta": true,
  "conversation.item.input_audio_transcription.failed": true,
  "conversation.item.retrieved": true,
  "conversation.item.truncated": true,
  error: true,
  "input_audio_buffer.cleared": true,
  "input_audio_buffer.committed": true,
  "input_audio_buffer.dtmf_event_received": true,
  "input_audio_buffer.speech_started": true,
  "input_audio_buffer.speech_stopped": true,
  "rate_limits.updated": true,
  "response.output_audio.delta": true,
  "response.output_audio.done": true,
  "response.output_audio_transcript.delta": true,
  "response.output_audio_transcript.done": true,
  "response.content_part.added": true,
  "response.content_part.done": true,
  "response.created": true,
  "response.done": true,
  "response.function_call_arguments.delta": true,
  "response.function_call_arguments.done": true,
  "response.output_item.added": true,
  "response.output_item.done": true,
  "response.output_text.delta": true,
  "response.output_text.done": true,
  "session.created": true,
  "session.updated": true,
  "output_audio_buffer.started": true,
  "output_audio_buffer.stopped": true,
  "output_audio_buffer.cleared": true,
  "conversation.item.added": true,
  "conversation.item.done": true,
  "input_audio_buffer.timeout_triggered": true,
  "conversation.item.input_audio_transcription.segment": true,
  "mcp_list_tools.in_progress": true,
  "mcp_list_tools.completed": true,
  "mcp_list_tools.failed": true,
  "response.mcp_call_arguments.delta": true,
  "response.mcp_call_arguments.done": true,
  "response.mcp_call.in_progress": true,
  "response.mcp_call.completed": true,
  "response.mcp_call.failed": true,
};

const doc = readFileSync(new URL("../../docs/realtime.md", import.meta.url), "utf8");
const section = (from: string, to: string): string => doc.slice(doc.indexOf(from), doc.indexOf(to));

describe("docs/realtime.md", () => {
  it("names every GA client event in its client table", () => {
    const table = section("## Compatibility: client events", "## Compatibility: server events");
    for (const type of GA_CLIENT_EVENT_TYPES) expect(table, type).toContain(`\`${type}\``);
  });

  it("names every GA server event in its server table", () => {
    const table = section("## Compatibility: server events", "## Example");
    for (const type of Object.keys(SERVER_EVENT_TYPES)) expect(table, type).toContain(`\`${type}\``);
  });
});
