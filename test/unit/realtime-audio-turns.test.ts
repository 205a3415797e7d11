import type { RealtimeServerEvent as OpenAiServerEvent } from "openai/resources/realtime/realtime";
import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeAlaw, encodeMulaw } from "../../src/audio/g711.js";
import { pcm16 } from "../../src/audio/rates.js";
import { PCM24, parseRealtimeAudioFormat, realtimeAudioMs, RealtimeAudioPath } from "../../src/realtime/audio-format.js";
import { RealtimeBinding, type SessionInput } from "../../src/realtime/binding.js";
import { parseClientEvent, type SessionUpdate } from "../../src/realtime/client-events.js";
import { realtimeBudget } from "../../src/realtime/connection.js";
import { MIN_COMMIT_MS } from "../../src/realtime/manual-turns.js";
import type { RealtimeServerEvent } from "../../src/realtime/server-events.js";
import { applySessionUpdate, initialSettings, type AgentTurns, type RealtimeSettings } from "../../src/realtime/session-settings.js";
import { InputBudget } from "../../src/transport/input-budget.js";
import { DEFAULT_LIMITS } from "../../src/transport/protocol.js";

function bind(turns: AgentTurns = "auto", modality: "audio" | "text" = "audio") {
  const sent: RealtimeServerEvent[] = [];
  const formats: RealtimeSettings[] = [];
  let n = 0;
  const binding = new RealtimeBinding({ modality, agent: "shop", turns, send: (event) => sent.push(event), id: (prefix) => `${prefix}_${++n}`, formats: (settings) => formats.push(settings) });
  binding.session({ type: "session.configured", audioFormat: "pcm16", sampleRate: 24000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "k", mode: modality === "text" ? "text" : "pipeline" });
  const client = (event: Record<string, unknown>): SessionInput[] => {
    const parsed = parseClientEvent(JSON.stringify(event));
    if (parsed.kind === "refused") throw new Error(`refused: ${parsed.error.message}`);
    return binding.client(parsed.event);
  };
  const append = (bytes: number): SessionInput[] => client({ type: "input_audio_buffer.append", audio: Buffer.alloc(bytes).toString("base64") });
  const of = <K extends OpenAiServerEvent["type"]>(type: K) => (sent as unknown as OpenAiServerEvent[]).filter((e): e is Extract<OpenAiServerEvent, { type: K }> => e.type === type);
  return { binding, sent, formats, client, append, of, types: () => sent.map((e) => e.type) };
}

const update = (fields: Partial<SessionUpdate>): SessionUpdate => ({ ignored: [], ...fields });
const commands = (inputs: SessionInput[]) => inputs.flatMap((input) => (input.kind === "command" ? [input.command.type] : ["audio"]));

describe("Realtime audio formats: audio/pcm, audio/pcmu, audio/pcma", () => {
  it("parses the GA shapes, each direction on its own, and refuses other types and rates by field", () => {
    expect(parseRealtimeAudioFormat({ type: "audio/pcmu" })).toEqual({ type: "audio/pcmu" });
    expect(parseRealtimeAudioFormat({ type: "audio/pcma", rate: 8000 })).toEqual({ type: "audio/pcma" });
    expect(parseRealtimeAudioFormat({ type: "audio/pcm" })).toEqual(PCM24);
    expect(parseRealtimeAudioFormat({ type: "audio/pcmu", rate: 16000 })).toMatchObject({ at: "rate" });
    expect(parseRealtimeAudioFormat({ type: "audio/opus" })).toMatchObject({ at: "type" });
    const parsed = parseClientEvent(JSON.stringify({ type: "session.update", session: { audio: { input: { format: { type: "audio/pcma" } }, output: { format: { type: "audio/pcmu" } } } } }));
    expect(parsed).toMatchObject({ kind: "event", event: { update: { inputFormat: { type: "audio/pcma" }, outputFormat: { type: "audio/pcmu" } } } });
    const bad = parseClientEvent(JSON.stringify({ type: "session.update", session: { audio: { output: { format: { type: "audio/pcmu", rate: 24000 } } } } }));
    expect(bad).toMatchObject({ kind: "refused", error: { code: "invalid_value", param: "session.audio.output.format.rate" } });
  });

  it("counts the clock and the budget in the format's own bytes", () => {
    expect(realtimeAudioMs(48, PCM24)).toBe(1);
    expect(realtimeAudioMs(8, { type: "audio/pcmu" })).toBe(1);
    expect(realtimeAudioMs(8000, { type: "audio/pcma" })).toBe(1000);
    const limits = { ...DEFAULT_LIMITS, maxAudioRealtime: 2 };
    expect(realtimeBudget(limits).audioBytesPerSecond).toBe(2 * 48_000);
    expect(realtimeBudget(limits, { type: "audio/pcmu" }).audioBytesPerSecond).toBe(2 * 8000);
    expect(realtimeBudget(limits, { type: "audio/pcmu" }).textBytesPerSecond).toBe(Math.ceil((2 * 8000 * 4) / 3) + 64 * 1024);
  });

  it("retunes an input budget: what was spent stays spent, the refill follows the new rate", () => {
    let now = 0;
    const budget = new InputBudget({ framesPerSecond: 1000, audioBytesPerSecond: 0, textBytesPerSecond: 48_000, burstSeconds: 1 }, { now: () => now });
    budget.spend("text", 48_000 + 8000);
    expect(budget.debtMs()).toBe(167); // 8000 bytes of debt at 48 000 a second
    budget.retune({ framesPerSecond: 1000, audioBytesPerSecond: 0, textBytesPerSecond: 8000, burstSeconds: 1 });
    expect(budget.debtMs()).toBe(1000); // the same debt at 8 000 a second
    now = 1000;
    expect(budget.debtMs()).toBe(0);
  });

  it("converts G.711 in to the session's PCM16 and the paced 24 kHz PCM16 out to G.711, as the carrier edge does", () => {
    const path = new RealtimeAudioPath({ input: pcm16(16_000), output: pcm16(24_000) });
    expect(path.inbound(new Uint8Array(160))).toBeUndefined(); // audio/pcm: the link's edge converts
    expect(path.outbound(new Uint8Array(480))).toHaveLength(480);
    path.set({ type: "audio/pcmu" }, { type: "audio/pcma" });
    // 20 ms of μ-law (160 bytes at 8 kHz) → 20 ms of 16 kHz PCM16 (640 bytes) once the resampler's delay is filled.
    const tone = encodeMulaw(new Int16Array(160).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))));
    expect(path.inbound(tone)?.byteLength).toBeLessThan(640);
    expect(path.inbound(tone)?.byteLength).toBe(640);
    // 20 ms of 24 kHz PCM16 (960 bytes) → 160 bytes of A-law, silence staying silence.
    path.outbound(new Uint8Array(960));
    const sent = path.outbound(new Uint8Array(960));
    expect(sent.byteLength).toBe(160);
    expect([...sent].every((code) => code === encodeAlaw(new Int16Array([0]))[0])).toBe(true);
    // μ-law out: decodable, the silence stays silence.
    path.set(PCM24, { type: "audio/pcmu" });
    expect([...decodeMulaw(path.outbound(new Uint8Array(960)))].every((sample) => Math.abs(sample) < 8)).toBe(true);
  });

  it("applies a session.update's formats (the link told), shows them, and the clock follows the input format", () => {
    const { client, append, binding, formats, of } = bind();
    client({ type: "session.update", session: { audio: { input: { format: { type: "audio/pcmu" } }, output: { format: { type: "audio/pcma" } } } } });
    expect(formats.at(-1)).toMatchObject({ input: { type: "audio/pcmu" }, output: { type: "audio/pcma" } });
    expect(of("session.updated").at(-1)?.session).toMatchObject({ audio: { input: { format: { type: "audio/pcmu" } }, output: { format: { type: "audio/pcma" } } } });
    expect(append(800)).toEqual([{ kind: "audio", chunk: expect.any(Uint8Array) }]); // 100 ms of G.711; an odd count is whole samples
    expect(append(1)).toHaveLength(1);
    binding.session({ type: "speech.started" });
    expect(of("input_audio_buffer.speech_started").at(-1)?.audio_start_ms).toBe(100);
    binding.agentAudio(new Uint8Array(80));
    expect(of("response.created").at(-1)?.response.audio?.output?.format).toEqual({ type: "audio/pcma" });
  });

  it("changes the output format only before a response's first audio or between responses; the input format at any time", () => {
    const settings = initialSettings("audio", "auto");
    expect(applySessionUpdate(update({ outputFormat: { type: "audio/pcmu" } }), settings, true)).toMatchObject({ code: "active_response", param: "session.audio.output.format" });
    expect(applySessionUpdate(update({ outputFormat: PCM24, inputFormat: { type: "audio/pcma" } }), settings, true)).toMatchObject({ input: { type: "audio/pcma" }, output: PCM24 });
    const { binding, client, of, formats } = bind();
    binding.session({ type: "agent-transcript.updated", text: "Hello" }); // a response open, no audio yet: the format may change
    client({ type: "session.update", session: { audio: { output: { format: { type: "audio/pcma" } } } } });
    expect(formats.at(-1)?.output).toEqual({ type: "audio/pcma" });
    binding.agentAudio(new Uint8Array(80));
    client({ type: "session.update", session: { audio: { output: { format: { type: "audio/pcmu" } } } } });
    expect(of("error").at(-1)?.error).toMatchObject({ code: "active_response" });
    expect(formats).toHaveLength(1);
    binding.session({ type: "reply.completed" });
    expect(of("response.done").at(-1)?.response.audio?.output?.format).toEqual({ type: "audio/pcma" });
  });
});

describe("Realtime turns: turn_detection null, input_audio_buffer.commit and clear", () => {
  it("an auto agent refuses turn_detection null with the fix, and commit/clear (its turn-taking commits)", () => {
    const { client, of } = bind("auto");
    client({ type: "session.update", session: { audio: { input: { turn_detection: null } } } });
    expect(of("error").at(-1)?.error).toMatchObject({ param: "session.audio.input.turn_detection", message: expect.stringContaining('turnTaking.detection: "manual"') });
    expect(client({ type: "input_audio_buffer.commit" })).toEqual([]);
    expect(of("error").at(-1)?.error).toMatchObject({ code: "unsupported_event", message: expect.stringContaining("own turn-taking commits") });
    expect(client({ type: "input_audio_buffer.clear" })).toEqual([]);
    expect(of("input_audio_buffer.cleared")).toHaveLength(0);
  });

  it("a manual agent shows turn_detection null, takes null, and ignores a VAD the client names", () => {
    const { client, of, types } = bind("manual");
    expect(of("session.created")[0]?.session).toMatchObject({ audio: { input: { turn_detection: null } } });
    client({ type: "session.update", session: { audio: { input: { turn_detection: { type: "semantic_vad" } } } } });
    client({ type: "session.update", session: { audio: { input: { turn_detection: null } } } });
    expect(types()).not.toContain("error");
    expect(of("session.updated").map((e) => e.session)).toMatchObject([{ audio: { input: { turn_detection: null } } }, { audio: { input: { turn_detection: null } } }]);
  });

  it("push-to-talk: the first append opens the turn, commit commits it (committed now, the item with its transcript after), clear discards", () => {
    const { client, append, binding, of, types } = bind("manual");
    expect(commands(append(2400))).toEqual(["user_turn_start", "audio"]); // 50 ms
    expect(commands(append(2400))).toEqual(["audio"]);
    binding.session({ type: "speech.started" });
    expect(types()).not.toContain("input_audio_buffer.speech_started");
    expect(commands(client({ type: "input_audio_buffer.commit", event_id: "c1" }))).toEqual(["user_turn_commit"]);
    const committed = of("input_audio_buffer.committed");
    expect(committed).toHaveLength(1);
    expect(committed[0]).toMatchObject({ previous_item_id: null, item_id: expect.stringMatching(/^item_/) });
    binding.session({ type: "speech.stopped" });
    binding.session({ type: "user-transcript.updated", text: "hel" }); // a caption after the commit, before the final: the committed item's
    expect(of("conversation.item.input_audio_transcription.delta")).toMatchObject([{ item_id: committed[0]?.item_id, delta: "hel" }]);
    binding.session({ type: "user-transcript.committed", text: "hello" });
    expect(of("input_audio_buffer.committed")).toHaveLength(1);
    expect(of("conversation.item.input_audio_transcription.completed")[0]).toMatchObject({ item_id: committed[0]?.item_id, transcript: "hello", usage: { seconds: 0.1 } });
    expect(of("conversation.item.done").at(-1)).toMatchObject({ previous_item_id: null, item: { id: committed[0]?.item_id } });
    // The next append opens another turn; clear discards it.
    expect(commands(append(4800))).toEqual(["user_turn_start", "audio"]);
    expect(commands(client({ type: "input_audio_buffer.clear" }))).toEqual(["user_turn_clear"]);
    expect(types().at(-1)).toBe("input_audio_buffer.cleared");
    expect(commands(client({ type: "input_audio_buffer.clear" }))).toEqual([]); // nothing open: cleared all the same
    expect(types().at(-1)).toBe("input_audio_buffer.cleared");
  });

  it("refuses a commit of less than the API's minimum, as the Realtime API does, and keeps the buffer open", () => {
    const { client, append, of } = bind("manual");
    expect(client({ type: "input_audio_buffer.commit" })).toEqual([]);
    expect(of("error").at(-1)?.error).toMatchObject({ code: "input_audio_buffer_commit_empty", message: expect.stringContaining("buffer only has 0.00ms") });
    append(((MIN_COMMIT_MS - 10) * 48_000) / 1000);
    expect(client({ type: "input_audio_buffer.commit" })).toEqual([]);
    expect(of("error").at(-1)?.error.message).toContain("only has 90.00ms");
    expect(commands(append(480))).toEqual(["audio"]);
    expect(commands(client({ type: "input_audio_buffer.commit" }))).toEqual(["user_turn_commit"]);
  });

  it("a text agent refuses commit and clear: it takes no audio", () => {
    const { client, of } = bind("auto", "text");
    client({ type: "input_audio_buffer.commit" });
    expect(of("error").at(-1)?.error.message).toContain("a text agent takes no audio");
  });
});

describe("Realtime waiting sounds: part of the response's audio", () => {
  it("the thinking sound opens a response; the bed alone joins an open one and is not sent between responses", () => {
    const { binding, types, of } = bind();
    binding.agentAudio(new Uint8Array(480), { opens: false });
    expect(types()).not.toContain("response.created");
    binding.agentAudio(new Uint8Array(480), { opens: true });
    expect(types()).toContain("response.created");
    binding.agentAudio(new Uint8Array(480), { opens: false });
    expect(of("response.output_audio.delta")).toHaveLength(2);
  });
});

