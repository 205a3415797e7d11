import { describe, expect, it } from "vitest";
import { GA_CLIENT_EVENT_TYPES, ITEM_DELETE_REFUSAL, MAX_APPEND_AUDIO_BYTES, MAX_REALTIME_FRAME_BYTES, decodeAudio, parseClientEvent, type ParsedClientEvent } from "../../src/realtime/client-events.js";
import type { RealtimeClientEvent as OpenAiClientEvent } from "openai/resources/realtime/realtime";

const refusal = (parsed: ParsedClientEvent) => (parsed.kind === "refused" ? parsed.error : undefined);
const parse = (value: unknown) => parseClientEvent(JSON.stringify(value));

describe("parseClientEvent: what a stranger's frame can be", () => {
  it("refuses bad JSON, non-objects and missing types, never throwing", () => {
    expect(refusal(parseClientEvent("{nope"))?.code).toBe("invalid_json");
    expect(refusal(parseClientEvent("[]"))?.code).toBe("invalid_event");
    expect(refusal(parseClientEvent("null"))?.code).toBe("invalid_event");
    expect(refusal(parse({ type: 7 }))?.code).toBe("invalid_event");
  });

  it("refuses a frame over the limit by its bytes, before parsing it", () => {
    const big = JSON.stringify({ type: "input_audio_buffer.append", audio: "A".repeat(MAX_REALTIME_FRAME_BYTES) });
    expect(refusal(parseClientEvent(big))).toMatchObject({ code: "frame_too_large" });
  });

  it("names an unknown type, and refuses every GA event this slice does not serve as not supported yet", () => {
    expect(refusal(parse({ type: "session.explode", event_id: "e1" }))).toMatchObject({ code: "invalid_event", param: "type", event_id: "e1" });
    const served = ["session.update", "input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear", "conversation.item.create", "conversation.item.retrieve", "conversation.item.truncate", "response.create", "response.cancel"];
    // conversation.item.delete is refused for good, with its reason (below).
    for (const type of GA_CLIENT_EVENT_TYPES.filter((t) => !served.includes(t) && t !== "conversation.item.delete")) {
      const error = refusal(parse({ type, event_id: "e2" }));
      expect(error, type).toMatchObject({ code: "unsupported_event", event_id: "e2" });
      expect(error?.message).toContain(`${type} is not supported yet`);
    }
  });

  it("lists every client event type of the openai package's GA union", () => {
    // A type the package declares and the list misses fails to compile here.
    const covered: Record<OpenAiClientEvent["type"], true> = Object.fromEntries(GA_CLIENT_EVENT_TYPES.map((t) => [t, true])) as Record<OpenAiClientEvent["type"], true>;
    expect(Object.keys(covered).sort()).toEqual([...GA_CLIENT_EVENT_TYPES].sort());
  });

  it("decodes audio appends: strict base64, bounded per append (whole samples are the binding's: it knows the format)", () => {
    const ok = parse({ type: "input_audio_buffer.append", audio: Buffer.from([1, 2, 3, 4]).toString("base64") });
    expect(ok.kind === "event" && ok.event.type === "input_audio_buffer.append" ? [...ok.event.audio] : undefined).toEqual([1, 2, 3, 4]);
    expect(refusal(parse({ type: "input_audio_buffer.append", audio: "not base64!" }))).toMatchObject({ param: "audio", message: "input_audio_buffer.append: audio: not valid base64" });
    expect(parse({ type: "input_audio_buffer.append", audio: Buffer.from([1, 2, 3]).toString("base64") })).toMatchObject({ kind: "event" });
    expect(refusal(parse({ type: "input_audio_buffer.append" }))).toMatchObject({ code: "invalid_value", param: "audio" });
    expect(decodeAudio(Buffer.alloc(MAX_APPEND_AUDIO_BYTES + 2).toString("base64"), MAX_APPEND_AUDIO_BYTES)).toMatchObject({ problem: expect.stringContaining(`at most ${MAX_APPEND_AUDIO_BYTES} bytes`) });
    expect(decodeAudio(Buffer.alloc(MAX_APPEND_AUDIO_BYTES).toString("base64"), MAX_APPEND_AUDIO_BYTES)).toBeInstanceOf(Uint8Array);
  });

  it("reads a typed user message; refuses other items and parts by name", () => {
    const item = (value: unknown) => parse({ type: "conversation.item.create", item: value });
    const read = item({ id: "item_1", type: "message", role: "user", content: [{ type: "input_text", text: " hi " }] });
    expect(read).toEqual({ kind: "event", event: { type: "conversation.item.create", itemId: "item_1", text: "hi" } });
    expect(refusal(item({ type: "function_call", call_id: "c", name: "f", arguments: "{}" }))).toMatchObject({ code: "unsupported_value", param: "item.type" });
    expect(refusal(item({ type: "message", role: "system", content: [{ type: "input_text", text: "x" }] }))).toMatchObject({ param: "item.role" });
    expect(refusal(item({ type: "message", role: "user", content: [{ type: "input_audio", audio: "" }] }))).toMatchObject({ param: "item.content.0.type" });
    expect(refusal(item({ type: "message", role: "user", content: [{ type: "input_text", text: "   " }] }))?.message).toContain("empty");
    expect(refusal(item({ type: "message", role: "user", content: [{ type: "input_text", text: "x".repeat(20_001) }] }))?.message).toContain("at most 20000");
  });

  it("applies session formats and modalities, ignores what the agent owns, refuses the rest by field", () => {
    const update = (session: unknown) => parse({ type: "session.update", session });
    const applied = update({ type: "realtime", instructions: "x", output_modalities: ["audio"], tools: [], audio: { input: { format: { type: "audio/pcm", rate: 24000 }, turn_detection: { type: "semantic_vad" } }, output: { voice: "alloy" } } });
    expect(applied).toMatchObject({ kind: "event", event: { update: { outputModalities: ["audio"], inputFormat: { type: "audio/pcm", rate: 24000 }, turnDetection: "semantic_vad" } } });
    expect(applied.kind === "event" && applied.event.type === "session.update" ? applied.event.update.ignored : []).toEqual([
      "session.instructions",
      "session.audio.output.voice",
    ]);
    expect(refusal(update({ audio: { input: { format: { type: "audio/pcm", rate: 16000 } } } }))).toMatchObject({ param: "session.audio.input.format.rate" });
    expect(refusal(update({ tools: [{ type: "mcp", server_label: "f" }] }))).toMatchObject({ param: "session.tools.0.type" });
    expect(refusal(update({ output_modalities: ["audio", "text"] }))).toMatchObject({ param: "session.output_modalities" });
    expect(refusal(update({ temperature: 0.2 }))).toMatchObject({ code: "unknown_parameter", param: "session.temperature" });
    expect(refusal(update({ type: "transcription" }))).toMatchObject({ param: "session.type" });
  });

  it("answers response.create with the agent's default response, parameters only out of band", () => {
    expect(parse({ type: "response.create" })).toEqual({ kind: "event", event: { type: "response.create" } });
    expect(parse({ type: "response.create", response: { conversation: "none" } })).toEqual({ kind: "event", event: { type: "response.create", outOfBand: {} } });
    expect(refusal(parse({ type: "response.create", response: { conversation: "auto", instructions: "x" } }))).toMatchObject({ code: "unsupported_value", param: "response.conversation" });
    expect(parse({ type: "response.cancel", event_id: "e" })).toEqual({ kind: "event", event: { type: "response.cancel", eventId: "e" } });
  });
});

describe("parseClientEvent: conversation.item.delete", () => {
  it("is refused with the reason: a Realtime item is not a piece of the agent's history", () => {
    expect(refusal(parse({ type: "conversation.item.delete", item_id: "item_1", event_id: "e3" }))).toEqual({ type: "invalid_request_error", code: "unsupported_event", message: ITEM_DELETE_REFUSAL, event_id: "e3" });
  });
});

describe("parseClientEvent: out-of-band response.create", () => {
  it("reads instructions, input messages, metadata and max_output_tokens, bounded", () => {
    const parsed = parse({
      type: "response.create",
      response: {
        conversation: "none",
        instructions: "Summarise.",
        output_modalities: ["text"],
        metadata: { a: "b" },
        max_output_tokens: 200,
        input: [
          { type: "message", role: "system", content: [{ type: "input_text", text: "Be brief." }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi." }] },
        ],
      },
    });
    expect(parsed).toEqual({
      kind: "event",
      event: { type: "response.create", outOfBand: { instructions: "Summarise.", metadata: { a: "b" }, maxOutputTokens: 200, input: [{ role: "system", text: "Be brief." }, { role: "assistant", text: "Hi." }] } },
    });
    const oob = (response: Record<string, unknown>) => refusal(parse({ type: "response.create", response: { conversation: "none", ...response } }));
    expect(oob({ input: [{ type: "item_reference", id: "x" }] })).toMatchObject({ param: "response.input.0.type" });
    expect(oob({ input: [{ type: "message", role: "user", content: [{ type: "input_audio", audio: "" }] }] })).toMatchObject({ param: "response.input.0.content.0" });
    expect(oob({ input: Array.from({ length: 9 }, () => ({ type: "message", role: "user", content: [{ type: "input_text", text: "x" }] })) })).toMatchObject({ param: "response.input" });
    expect(oob({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) })).toMatchObject({ param: "response.metadata" });
    expect(oob({ max_output_tokens: 5000 })).toMatchObject({ param: "response.max_output_tokens" });
    expect(oob({ instructions: "x".repeat(15_000), input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "y".repeat(6000) }] }] })).toMatchObject({ param: "response.input" });
    expect(oob({ prompt: { id: "p" } })).toMatchObject({ code: "unsupported_value", param: "response.prompt" });
  });
});
