// The binding's interim input transcription, response usage and rate limits (docs/realtime.md
// "Semantics"), read as the openai package's client reads them.
import type { RealtimeServerEvent as OpenAiServerEvent } from "openai/resources/realtime/realtime";
import { describe, expect, it } from "vitest";
import { RealtimeBinding } from "../../src/realtime/binding.js";
import type { RealtimeServerEvent } from "../../src/realtime/server-events.js";
import { appendedText } from "../../src/realtime/text-deltas.js";

function bound(modality: "text" | "audio", tokenLimit?: number) {
  const sent: RealtimeServerEvent[] = [];
  let n = 0;
  const binding = new RealtimeBinding({ modality, agent: "shop", send: (event) => sent.push(event), id: (prefix) => `${prefix}_${++n}`, ...(tokenLimit === undefined ? {} : { tokenLimit }) });
  binding.session({ type: "session.configured", audioFormat: "pcm16", sampleRate: 24000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "k", mode: modality === "text" ? "text" : "pipeline" });
  const events = (): OpenAiServerEvent[] => sent as unknown as OpenAiServerEvent[];
  return { binding, sent, events };
}

describe("appendedText: a replacing snapshot onto appending deltas", () => {
  it("gives what a snapshot adds, and nothing for one that rewrote what was sent", () => {
    expect(appendedText("", "where")).toBe("where");
    expect(appendedText("where", "where is")).toBe(" is");
    expect(appendedText("where is", "where is")).toBe("");
    expect(appendedText("where is", "wear is")).toBeUndefined();
  });
});

describe("RealtimeBinding: interim input transcription", () => {
  it("sends what each caption adds as a delta of the item speech_started named; a rewrite sends nothing, completed carries the whole", () => {
    const { binding, events } = bound("audio");
    binding.session({ type: "user-transcript.updated", text: "before any speech" });
    binding.session({ type: "speech.started" });
    for (const text of ["where", "where is my", "where is my", "wear is my order", "where is my order A17"]) binding.session({ type: "user-transcript.updated", text });
    binding.session({ type: "speech.stopped" });
    binding.session({ type: "user-transcript.committed", text: "where is my order A17" });
    const started = events().find((e) => e.type === "input_audio_buffer.speech_started");
    const deltas = events().flatMap((e) => (e.type === "conversation.item.input_audio_transcription.delta" ? [e] : []));
    expect(deltas.map((e) => e.delta)).toEqual(["where", " is my", " order A17"]);
    expect(deltas.every((e) => e.item_id === started?.item_id && e.content_index === 0)).toBe(true);
    const types = events().map((e) => e.type);
    expect(types.lastIndexOf("conversation.item.input_audio_transcription.delta")).toBeLessThan(types.indexOf("input_audio_buffer.committed"));
    expect(events().find((e) => e.type === "conversation.item.input_audio_transcription.completed")).toMatchObject({ item_id: started?.item_id, transcript: "where is my order A17" });
  });

  it("starts each utterance's deltas afresh", () => {
    const { binding, events } = bound("audio");
    for (const words of ["hello", "hello again"]) {
      binding.session({ type: "speech.started" });
      binding.session({ type: "user-transcript.updated", text: words });
      binding.session({ type: "user-transcript.committed", text: words });
    }
    expect(events().flatMap((e) => (e.type === "conversation.item.input_audio_transcription.delta" ? [e.delta] : []))).toEqual(["hello", "hello again"]);
  });
});

describe("RealtimeBinding: usage and rate limits", () => {
  it("puts the reply's usage in response.done, and leaves it out when the session did not report it", () => {
    const { binding, events } = bound("text");
    binding.session({ type: "agent-transcript.updated", text: "Hi." });
    binding.session({ type: "reply.completed", usage: { inputTokens: 812, outputTokens: 64, totalTokens: 876 } });
    binding.session({ type: "agent-transcript.updated", text: "Hello." });
    binding.session({ type: "reply.completed" });
    binding.session({ type: "agent-transcript.updated", text: "Cut" });
    binding.session({ type: "reply.cancelled" });
    const done = events().flatMap((e) => (e.type === "response.done" ? [e.response] : []));
    expect(done[0]?.usage).toEqual({ total_tokens: 876, input_tokens: 812, output_tokens: 64 });
    expect(done.slice(1).map((response) => "usage" in response)).toEqual([false, false]);
    expect(events().some((e) => e.type === "rate_limits.updated")).toBe(false);
  });

  it("sends the agent's token budget as rate_limits.updated: whole at the start, then what is left after each reply's accounting", () => {
    const { binding, events } = bound("audio", 1000);
    binding.session({ type: "usage.updated", inputTokens: 600, outputTokens: 50, totalTokens: 650, steps: 2 });
    binding.session({ type: "usage.updated", inputTokens: 1100, outputTokens: 90, totalTokens: 1190, steps: 4 });
    const limits = events().flatMap((e) => (e.type === "rate_limits.updated" ? [e.rate_limits] : []));
    expect(limits).toEqual([
      [{ name: "tokens", limit: 1000, remaining: 1000 }],
      [{ name: "tokens", limit: 1000, remaining: 350 }],
      [{ name: "tokens", limit: 1000, remaining: 0 }],
    ]);
    expect(events()[1]?.type).toBe("rate_limits.updated");
  });
});
