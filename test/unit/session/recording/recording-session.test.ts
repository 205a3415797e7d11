import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import { readWav } from "../../../../src/audio/wav.js";
import { virtualClock } from "../../../../src/clock.js";
import { FakeTts } from "../../../../src/testing/fake-speech.js";
import { agent, tool, withTools, type AgentOptions, type RecordOutcome, type ResolvedAgentDef } from "../../../../src/manifest/index.js";
import { textSession } from "../../../../src/testing/text-session.js";
import { voiceSession } from "../../../../src/testing/voice-session.js";

const script = {
  rules: [
    { when: "hello", say: "Hello! I can help you track an order, check a delivery date, or answer questions about returns." },
    { when: "card", say: "Thanks, I have noted it." },
  ],
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function recordingAgent(dir: string, outcomes: RecordOutcome[], extra: Partial<AgentOptions> = {}): ResolvedAgentDef {
  return withTools(
    agent({
      name: "voice",
      greeting: "Hi there.",
      interruption: { minWords: 2, minDurationMs: 300 },
      recording: { destination: { dir }, redact: ["card"] },
      onSessionEnd: ({ record }) => {
        if (record !== undefined) outcomes.push(record);
      },
      ...extra,
    }),
    {},
  );
}

/** PCM16 at 16 kHz of `ms`, every sample `level`. */
function tone(ms: number, level: number): Uint8Array {
  const samples = new Int16Array((16_000 * ms) / 1000).fill(level);
  return new Uint8Array(samples.buffer);
}

/** Mean |sample| of one channel of a stereo recording over [fromMs, toMs). */
function level(samples: Int16Array, rate: number, channel: 0 | 1, fromMs: number, toMs: number): number {
  let sum = 0;
  let n = 0;
  for (let frame = Math.round((fromMs / 1000) * rate); frame < Math.round((toMs / 1000) * rate); frame++) {
    sum += Math.abs(samples[frame * 2 + channel] ?? 0);
    n += 1;
  }
  return n === 0 ? 0 : sum / n;
}

describe("recording a pipeline session", () => {
  it("writes a stereo WAV (caller where sent, agent where played, cut at the barge-in) and the JSON record, redacted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-test-"));
    dirs.push(dir);
    const outcomes: RecordOutcome[] = [];
    const { link, stt, clock, started, session } = voiceSession(recordingAgent(dir, outcomes), { script, ttsLevel: 3000, ttsLatencyMs: 300 });
    const t0 = clock.now();
    await started;
    // The greeting ("Hi there.": 150 + 350 ms of audio at 50 ms a character) plays after the TTS's 300 ms.
    await clock.advance(2000);
    // The caller speaks 300 ms, arriving at 2.3 s: it was captured over [2.0, 2.3) s.
    await clock.advance(300);
    link.sendAudio(tone(300, 2000));
    stt.current.speechStarted();
    stt.current.final("hello", true);
    // The reply plays for 1.2 s, then the caller barges in.
    await clock.advance(1200);
    stt.current.speechStarted();
    stt.current.partial("wait");
    await clock.advance(400);
    stt.current.partial("wait stop");
    // The barge-in cut playback by now ("wait" alone may already have: an interrupt phrase).
    const latestCut = clock.now() - t0;
    expect(link.of("reply.cancelled").length).toBeGreaterThan(0);
    stt.current.final("wait stop", true);
    await clock.advance(6000);
    // A card number, read out as the recognizer writes it.
    const cardAt = clock.now() - t0;
    stt.current.speechStarted();
    link.sendAudio(tone(500, 1500));
    await clock.advance(500);
    stt.current.final("my card is four one one one one one one one one one one one one one one one", true);
    await clock.advance(5000);
    await session.end();

    expect(outcomes).toHaveLength(1);
    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    expect([...outcome.files].sort()).toEqual(["audio.wav", "record.json"]);
    const folder = fileURLToPath(outcome.location);
    expect(folder.startsWith(dir)).toBe(true);
    expect(readdirSync(folder).sort()).toEqual(["audio.wav", "record.json"]);

    const wav = readWav(readFileSync(join(folder, "audio.wav")));
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(16_000);
    const rate = wav.sampleRate;
    // Agent: the greeting over [300, 800) ms, silence around it.
    expect(level(wav.samples, rate, 1, 0, 280)).toBe(0);
    expect(level(wav.samples, rate, 1, 320, 780)).toBeGreaterThan(2000);
    expect(level(wav.samples, rate, 1, 900, 1900)).toBe(0);
    // Caller: its 300 ms where it was captured, nothing on the agent's side there.
    expect(level(wav.samples, rate, 0, 2020, 2280)).toBeCloseTo(2000, -1);
    expect(level(wav.samples, rate, 0, 1000, 1950)).toBe(0);
    const record = JSON.parse(readFileSync(join(folder, "record.json"), "utf8"));
    const lines = record.transcript as { speaker: string; text: string; startMs: number; endMs: number; interrupted?: boolean; heardText?: string; redacted?: string[] }[];
    const cutLine = lines.findIndex((line) => line.interrupted === true);
    const cutAt = lines[cutLine]?.endMs ?? NaN;
    // The reply plays from 2.6 s (the turn ended at 2.3 s, the TTS answers in 300 ms) up to the barge-in, and stops there: nothing the caller did not hear.
    expect(cutAt).toBeGreaterThan(3400);
    expect(cutAt).toBeLessThanOrEqual(latestCut);
    expect(level(wav.samples, rate, 1, cutAt - 600, cutAt - 10)).toBeGreaterThan(2000);
    const nextAgent = lines.slice(cutLine + 1).find((line) => line.speaker === "agent");
    expect(nextAgent?.startMs).toBeGreaterThanOrEqual(cutAt + 300);
    expect(level(wav.samples, rate, 1, cutAt + 10, nextAgent?.startMs ?? 0)).toBe(0);
    // The card's utterance is bleeped on the caller's channel: a 1 kHz tone, not the caller's constant 1500.
    const bleeped = wav.samples.filter((_, i) => i % 2 === 0 && i / 2 >= ((cardAt + 50) / 1000) * rate && i / 2 < ((cardAt + 450) / 1000) * rate);
    expect(bleeped.some((s) => s < -1000)).toBe(true);
    expect(bleeped.every((s) => s !== 1500)).toBe(true);

    expect(record).toMatchObject({ version: 1, sessionId: session.id, agent: "voice", mode: "pipeline", transport: "websocket", audio: { file: "audio.wav", sampleRate: 16_000, channels: ["caller", "agent"] } });
    expect(lines[0]).toMatchObject({ speaker: "agent", text: "Hi there.", startMs: 300, endMs: 800 });
    const cut = lines.find((line) => line.interrupted === true);
    expect(cut?.text).toMatch(/^Hello! I can help/);
    expect(cut?.heardText).toMatch(/^Hello!/);
    expect(cut?.heardText).not.toContain("returns");
    expect(cut?.startMs).toBeCloseTo(2600, -1);
    const card = lines.find((line) => line.redacted !== undefined);
    expect(card).toMatchObject({ speaker: "caller", text: "my card is [redacted card]", redacted: ["card"] });
    expect(JSON.stringify(record)).not.toContain("four one one one");
    expect(record.redaction).toEqual({ rules: ["card"], counts: { card: 1 } });
    expect(record.turns.length).toBeGreaterThan(0);
    expect(record.audio.bleeps).toEqual([expect.objectContaining({ channel: "caller" })]);
  });

  it("a text session records its transcript and tool calls, no audio", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-test-"));
    dirs.push(dir);
    const outcomes: RecordOutcome[] = [];
    const pay = tool({ description: "Take a payment", parameters: Type.Object({ card: Type.String() }), execute: ({ card }) => `charged card ${card}` });
    const def = withTools(
      agent({ name: "texter", recording: { destination: { dir }, redact: ["card", { name: "order", pattern: "ORD-\\d+" }] }, onSessionEnd: ({ record }) => void (record && outcomes.push(record)) }),
      { pay },
    );
    const harness = textSession(def, { script: { rules: [{ when: "pay", say: "Paying.", call: { tool: "pay", args: { card: "4111 1111 1111 1111" } }, then: "Done for ORD-42." }] } });
    await harness.say("pay with 4111111111111111 please");
    await harness.session.end();
    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    expect(outcome.files).toEqual(["record.json"]);
    const record = JSON.parse(readFileSync(join(fileURLToPath(outcome.location), "record.json"), "utf8")) as { audio: unknown; transcript: { speaker: string }[]; toolCalls: unknown[] };
    expect(record.audio).toBeNull();
    expect(record.transcript.find((line) => line.speaker === "caller")).toMatchObject({ speaker: "caller", text: "pay with [redacted card] please", redacted: ["card"] });
    expect(record.toolCalls).toEqual([expect.objectContaining({ name: "pay", args: { card: "[redacted card]" }, result: "charged card [redacted card]", redacted: ["card"], durationMs: expect.any(Number) })]);
    expect(JSON.stringify(record)).not.toMatch(/4111|ORD-42/);
  });
});

describe("recording a phone call", () => {
  it("records at the line's 8 kHz, and the listener's playback reports (mark echoes) move agent audio later", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-test-"));
    dirs.push(dir);
    const outcomes: RecordOutcome[] = [];
    const { link, clock, started, session } = voiceSession(recordingAgent(dir, outcomes), { script, ttsLevel: 3000, playbackRate: 8000 });
    await started;
    // "Hi" (150 ms) is sent at once and plays from 0; "there." (350 ms) is sent at 150 ms.
    await clock.advance(100);
    // At 100 ms the line says 400 ms are still to play: it started later than estimated, so
    // everything not yet playing moves 350 ms later.
    link.send({ type: "playback_progress", bufferedMs: 400 });
    await clock.advance(2000);
    await session.end();
    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    const wav = readWav(readFileSync(join(fileURLToPath(outcome.location), "audio.wav")));
    expect(wav.sampleRate).toBe(8000);
    expect(level(wav.samples, 8000, 1, 0, 140)).toBeGreaterThan(2000);
    expect(level(wav.samples, 8000, 1, 160, 490)).toBe(0);
    expect(level(wav.samples, 8000, 1, 510, 840)).toBeGreaterThan(2000);
    expect(level(wav.samples, 8000, 1, 860, 1500)).toBe(0);
  });
});

describe("recording across a hand-off to a voice at another rate", () => {
  it("keeps one file and one timeline: the member's 16 kHz voice lands after the front desk's 24 kHz one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-test-"));
    dirs.push(dir);
    const outcomes: RecordOutcome[] = [];
    const clock = virtualClock();
    // The member's voice offers only 16 kHz: the session re-declares its output mid-call.
    const billingVoice = new FakeTts(clock, { sampleRate: 16_000, level: -3000 });
    const billing = agent({ name: "billing", greeting: "Billing here.", tts: { kind: "cartesia", options: { voice: "billing" } } });
    const def = recordingAgent(dir, outcomes, { roster: { billing } });
    const { stt, started, session } = voiceSession(def, {
      clock,
      ttsLevel: 3000,
      script: { rules: [{ when: "billing", call: { tool: "transfer_to_agent", args: { agent: "billing" } }, then: "Putting you through." }] },
      ttsFor: (descriptor) => (descriptor.options.voice === "billing" ? billingVoice : undefined),
    });
    await started;
    await clock.advance(2000);
    stt.current.final("billing please", true);
    await clock.advance(5000);
    await session.end();
    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    const folder = fileURLToPath(outcome.location);
    const record = JSON.parse(readFileSync(join(folder, "record.json"), "utf8")) as { handOffs: unknown[]; transcript: { speaker: string; text: string; startMs: number; endMs: number }[] };
    expect(record.handOffs).toEqual([expect.objectContaining({ agent: "billing", previous: "voice" })]);
    const greeting = record.transcript.find((line) => line.text === "Billing here.");
    const announce = record.transcript.find((line) => line.text === "Putting you through.");
    if (greeting === undefined || announce === undefined) throw new Error(JSON.stringify(record.transcript));
    expect(greeting.startMs).toBeGreaterThanOrEqual(announce.endMs);
    const wav = readWav(readFileSync(join(folder, "audio.wav")));
    // The front desk's voice (positive) then billing's (negative), each where it played.
    expect(level(wav.samples, 16_000, 1, announce.startMs + 20, announce.endMs - 20)).toBeGreaterThan(2000);
    const billingSamples = wav.samples.filter((_, i) => i % 2 === 1 && i / 2 >= ((greeting.startMs + 20) / 1000) * 16_000 && i / 2 < ((greeting.endMs - 20) / 1000) * 16_000);
    expect(billingSamples.length).toBeGreaterThan(0);
    expect(billingSamples.every((sample) => sample === -3000)).toBe(true);
  });
});
