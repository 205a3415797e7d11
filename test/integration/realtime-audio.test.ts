// WS /v1/realtime's audio and turns in front of a pipeline agent on the vendor fakes (OpenAI-compatible
// LLM, Deepgram STT, Cartesia TTS), driven by the `openai` package's Realtime client: G.711 each way
// (A-law in reaching the STT at its rate, μ-law out the client decodes), push-to-talk with a manual
// agent (turn_detection null, append, commit → transcription and response), and the agent's waiting
// sounds as part of the response's audio.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, onTestFinished } from "vitest";
import { decodeMulaw, encodeAlaw } from "../../src/audio/g711.js";
import { bytesToSamples } from "../../src/audio/pcm.js";
import { agent, withTools } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";
import { sampleKind, slowLookup, SOUNDS, WAITING_AUDIO } from "../helpers/waiting-sounds.js";

/** A gateway serving `define`'s agent on the fakes, and the openai client on it; both closed when the test ends. */
async function open(define: Parameters<typeof startPipelineGateway>[0], options?: Parameters<typeof startPipelineGateway>[1]): Promise<{ served: PipelineGateway; client: RealtimeTestClient }> {
  const served = await startPipelineGateway(define, options);
  const client = new RealtimeTestClient(served.port, "k");
  onTestFinished(async () => {
    client.close();
    await served.close();
  });
  return { served, client };
}

/** 20 ms of an 8 kHz tone in A-law (160 bytes), base64. */
function alawFrame(): string {
  const samples = new Int16Array(160);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 8000));
  return Buffer.from(encodeAlaw(samples)).toString("base64");
}

/** 20 ms of a 24 kHz PCM16 tone, base64. */
function pcmFrame(): string {
  const samples = new Int16Array(480);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 24_000));
  return Buffer.from(samples.buffer).toString("base64");
}

/** Append `ms` of `frame` (20 ms each), in real time. */
async function appendFor(rt: RealtimeTestClient, ms: number, frame: () => string): Promise<void> {
  for (let t = 0; t < ms; t += 20) {
    rt.rt.send({ type: "input_audio_buffer.append", audio: frame() });
    await sleep(20);
  }
}

/** The decoded bytes of every `response.output_audio.delta` of response `id`. */
function audioOf(rt: RealtimeTestClient, id: string): Buffer {
  return Buffer.concat(rt.of("response.output_audio.delta").flatMap((e) => (e.response_id === id ? [Buffer.from(e.delta, "base64")] : [])));
}

describe("/v1/realtime audio formats: audio/pcma in, audio/pcmu out", () => {
  it("hears A-law at the STT's own rate and answers in μ-law the client decodes", async () => {
    const { served, client } = await open((f) => agent({ name: "phone", greeting: "Hi.", ...f.providers }));
    const { stt, llm } = served.fakes;
    await client.next("session.created");
    // The greeting's response is in 24 kHz PCM: the output format changes between responses.
    await client.next("response.done");
    client.rt.send({ type: "session.update", session: { type: "realtime", audio: { input: { format: { type: "audio/pcma" } }, output: { format: { type: "audio/pcmu" } } } } });
    const updated = await client.next("session.updated");
    expect(updated.session).toMatchObject({ audio: { input: { format: { type: "audio/pcma" } }, output: { format: { type: "audio/pcmu" } } } });

    llm.enqueue({ text: "Your order shipped." });
    const after = client.events.length;
    const heardBefore = stt.latest.audioMs;
    stt.speechStarted();
    await appendFor(client, 400, alawFrame);
    // 400 ms of 8 kHz A-law reached the STT as 400 ms at its own rate (16 kHz PCM16), less the resampler's few samples of delay.
    await sleep(100);
    expect(stt.latest.query.get("sample_rate")).toBe("16000");
    expect(stt.latest.audioMs - heardBefore).toBeGreaterThan(380);
    expect(stt.latest.audioMs - heardBefore).toBeLessThanOrEqual(400);
    const started = await client.next("input_audio_buffer.speech_started", after);
    const stopped = client.next("input_audio_buffer.speech_stopped", after);
    stt.final("where is my order", { speechFinal: true });
    expect((await stopped).audio_end_ms - started.audio_start_ms).toBeGreaterThan(300); // the clock counts A-law's 8 bytes a ms

    const done = await client.next("response.done", after);
    expect(done.response.audio?.output?.format).toEqual({ type: "audio/pcmu" });
    const transcript = client.of("response.output_audio_transcript.done").at(-1)?.transcript ?? "";
    expect(transcript).toBe("Your order shipped.");
    const ulaw = audioOf(client, done.response.id ?? "");
    // 8 kHz μ-law: 8 bytes a ms, the fake TTS's 20 ms a character.
    expect(Math.abs(ulaw.byteLength - transcript.length * 20 * 8)).toBeLessThan(20 * 8);
    // Decoded: the fake TTS's samples are character codes (32–126); μ-law keeps them within its step near zero.
    const samples = [...decodeMulaw(new Uint8Array(ulaw))];
    const inside = samples.filter((s) => s >= 24 && s <= 136).length;
    expect(inside / samples.length).toBeGreaterThan(0.9);
    expect(client.errors).toEqual([]);
  }, 30_000);
});

describe("/v1/realtime audio formats from the first event", () => {
  it("applies a session.update sent first to the greeting's audio (its response had sent none yet)", async () => {
    const { client } = await open((f) => agent({ name: "phone", greeting: "Hello there.", ...f.providers }));
    await client.opened;
    client.rt.send({ type: "session.update", session: { type: "realtime", audio: { output: { format: { type: "audio/pcma" } } } } });
    const greeting = await client.next("response.done");
    expect(greeting.response.audio?.output?.format).toEqual({ type: "audio/pcma" });
    // 8 kHz A-law: 8 bytes a ms of the fake TTS's 20 ms a character.
    expect(Math.abs(audioOf(client, greeting.response.id ?? "").byteLength - "Hello there.".length * 20 * 8)).toBeLessThan(20 * 8);
    expect(client.types().indexOf("session.updated")).toBeLessThan(client.types().indexOf("response.output_audio.delta"));
    expect(client.errors).toEqual([]);
  }, 30_000);
});

describe("/v1/realtime push-to-talk with a manual agent", () => {
  it("takes turn_detection null, and answers an appended, committed turn: committed, transcription, response", async () => {
    const { served, client } = await open((f) => agent({ name: "ptt", ...f.providers, turnTaking: { detection: "manual" } }));
    const { stt, llm } = served.fakes;
    const created = await client.next("session.created");
    expect(created.session).toMatchObject({ audio: { input: { turn_detection: null } } });
    await client.next("response.done"); // the greeting
    client.rt.send({ type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null } } } });
    await client.next("session.updated");

    // A commit before any audio: the Realtime API's own refusal.
    client.rt.send({ type: "input_audio_buffer.commit" });
    expect((await client.next("error")).error).toMatchObject({ code: "input_audio_buffer_commit_empty" });

    llm.enqueue({ text: "It shipped on Friday." });
    const after = client.events.length;
    await appendFor(client, 300, pcmFrame);
    client.rt.send({ type: "input_audio_buffer.commit" });
    const committed = await client.next("input_audio_buffer.committed", after);
    // The session asked the STT to finalize; its final commits the turn.
    await sleep(50);
    expect(stt.latest.messages.map((m) => m.type)).toContain("Finalize");
    stt.final("where is my order", { fromFinalize: true });
    const transcription = await client.next("conversation.item.input_audio_transcription.completed", after);
    expect(transcription).toMatchObject({ item_id: committed.item_id, transcript: "where is my order" });
    const done = await client.next("response.done", after);
    expect(done.response.status).toBe("completed");
    expect(client.of("response.output_audio_transcript.done").at(-1)?.transcript).toBe("It shipped on Friday.");
    // No VAD events: the client made the turn.
    expect(client.types().slice(after)).not.toContain("input_audio_buffer.speech_started");

    // A turn cleared: nothing committed, nothing answered.
    const cleared = client.events.length;
    await appendFor(client, 200, pcmFrame);
    client.rt.send({ type: "input_audio_buffer.clear" });
    await client.next("input_audio_buffer.cleared", cleared);
    await sleep(300);
    expect(client.types().slice(cleared)).not.toContain("input_audio_buffer.committed");
    expect(client.types().slice(cleared)).not.toContain("response.created");
    expect(client.of("error").map((e) => e.error.code)).toEqual(["input_audio_buffer_commit_empty"]); // the empty commit's, only
  }, 30_000);

  it("an auto agent refuses turn_detection null with the fix, and commit", async () => {
    const { client } = await open((f) => agent({ name: "auto", ...f.providers }));
    await client.next("session.created");
    client.rt.send({ type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null } } } });
    expect((await client.next("error")).error).toMatchObject({ param: "session.audio.input.turn_detection", message: expect.stringContaining('turnTaking.detection: "manual"') });
    const after = client.events.length;
    client.rt.send({ type: "input_audio_buffer.commit" });
    expect((await client.next("error", after)).error).toMatchObject({ code: "unsupported_event" });
  }, 30_000);
});

describe("/v1/realtime waiting sounds", () => {
  it("plays the thinking sound while a slow tool runs and the bed under speech, as the response's audio; no audio between responses", async () => {
    const { served, client } = await open(
      (f) =>
        withTools(agent({ name: "shop", ...f.providers, waitingAudio: WAITING_AUDIO }), {
          lookup_order: slowLookup,
        }),
      { waitingAudio: SOUNDS },
    );
    const { llm } = served.fakes;
    await client.next("session.created");
    const greeting = await client.next("response.done");
    const quiet = client.events.length;
    await sleep(400);
    // No response open: the bed alone is not sent (Realtime's audio belongs to responses).
    expect(client.types().slice(quiet)).not.toContain("response.output_audio.delta");

    llm.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "It shipped." });
    client.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "where is my order" }] } });
    client.rt.send({ type: "response.create" });
    const done = await client.next("response.done", quiet);
    expect(done.response.status).toBe("completed");
    const samples = [...bytesToSamples(new Uint8Array(audioOf(client, done.response.id ?? "")))];
    const kinds = samples.map(sampleKind);
    const folded = kinds.filter((kind, i) => kind !== kinds[i - 1]);
    expect(folded.filter((kind) => kind.startsWith("other"))).toEqual([]);
    expect(folded).toContain("thinking");
    // The thinking sound before the answer's speech, none after it starts; the speech carries the bed under it.
    expect(folded.indexOf("thinking")).toBeLessThan(folded.indexOf("speech"));
    expect(folded.slice(folded.indexOf("speech"))).not.toContain("thinking");
    // Every audio delta belongs to a response the client saw created.
    const created = new Set(client.of("response.created").map((e) => e.response.id));
    expect(client.of("response.output_audio.delta").every((e) => created.has(e.response_id))).toBe(true);
    await sleep(300);
    expect(client.of("response.output_audio.delta").every((e) => e.response_id === done.response.id || e.response_id === greeting.response.id)).toBe(true);
    expect(client.errors).toEqual([]);
  }, 30_000);
});
