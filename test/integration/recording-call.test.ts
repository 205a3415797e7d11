import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { encodeMulaw } from "../../src/audio/g711.js";
import { Resampler } from "../../src/audio/resample.js";
import { readWav } from "../../src/audio/wav.js";
import { agent, type RecordOutcome } from "../../src/manifest/index.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { startPipelineGateway } from "../helpers/pipeline-fakes.js";
import { closeAfterEach } from "../helpers/cleanups.js";

// A phone call through the whole gateway (Twilio media stream from a fake carrier that plays
// agent audio late and echoes marks, fake Deepgram/OpenAI/Cartesia), recorded to a directory:
// the record's agent lines and the WAV's agent channel follow what the carrier played, and a
// barge-in's clear shows as the agent channel stopping.

const closing = closeAfterEach();

/** The caller's voice: the flite fixture as 8 kHz μ-law, as a phone line carries it. */
function callerVoice(): Buffer {
  const wav = readWav(new Uint8Array(readFileSync(new URL("../../fixtures/audio/order-status.wav", import.meta.url))));
  const down = new Resampler(16000, 8000);
  return Buffer.from(encodeMulaw(Int16Array.from([...down.process(wav.samples), ...down.flush()])));
}

/** Mean |sample| of one channel over [fromMs, toMs) (the fake TTS's samples are character codes, 32–122). */
function level(samples: Int16Array, rate: number, channel: 0 | 1, fromMs: number, toMs: number): number {
  let sum = 0;
  let n = 0;
  for (let frame = Math.max(0, Math.round((fromMs / 1000) * rate)); frame < Math.round((toMs / 1000) * rate) && frame * 2 < samples.length; frame++) {
    sum += Math.abs(samples[frame * 2 + channel] ?? 0);
    n += 1;
  }
  return n === 0 ? 0 : sum / n;
}

interface Line {
  speaker: string;
  text: string;
  startMs: number;
  endMs: number;
  interrupted?: boolean;
  heardText?: string;
}

describe("recording a phone call through the gateway", () => {
  it("writes the call at 8 kHz: the caller left, the agent right where the carrier played it, cut at the barge-in's clear", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-call-"));
    closing(() => rmSync(dir, { recursive: true, force: true }));
    const outcomes: RecordOutcome[] = [];
    const served = await startPipelineGateway((f) =>
      agent({
        name: "phone",
        greeting: "Thanks for calling the shop.",
        ...f.providers,
        telephony: true,
        recording: { destination: { dir } },
        onSessionEnd: ({ record }) => void (record && outcomes.push(record)),
      }),
    );
    closing(() => served.close());
    const { fakes, port } = served;
    const carrier = await FakeCarrier.dial({ url: `ws://127.0.0.1:${port}/telephony/twilio`, playbackDelayMs: 300 });
    closing(() => carrier.close());
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0, "the greeting played");

    fakes.llm.enqueue({ text: "Your order shipped on Friday, it is on the truck now, and it should reach you by Tuesday afternoon at the latest." });
    fakes.stt.final("where is my order", { speechFinal: true });
    await carrier.until(() => carrier.playedMs > 1200, "part of the reply played", 15_000);
    fakes.stt.speechStarted();
    fakes.stt.partial("wait");
    carrier.say(callerVoice().subarray(0, 8000));
    fakes.stt.final("wait a moment", { speechFinal: true });
    await carrier.until(() => carrier.clears > 0, "clear");
    await carrier.said();
    carrier.hangUp();
    const deadline = Date.now() + 15_000;
    while (outcomes.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    const folder = fileURLToPath(outcome.location);
    const record = JSON.parse(readFileSync(join(folder, "record.json"), "utf8")) as { transport: string; audio: { sampleRate: number }; transcript: Line[] };
    expect(record.transport).toBe("twilio");
    expect(record.audio.sampleRate).toBe(8000);
    const agentLines = record.transcript.filter((line) => line.speaker === "agent");
    const greeting = agentLines[0];
    const cut = agentLines.find((line) => line.text.startsWith("Your order shipped"));
    if (greeting === undefined || cut === undefined) throw new Error(JSON.stringify(record.transcript));
    expect(greeting.text).toBe("Thanks for calling the shop.");
    expect(cut.interrupted).toBe(true);
    expect(cut.heardText !== undefined && cut.text.startsWith(cut.heardText.replace(/[.,]$/, "")) && cut.heardText.length < cut.text.length).toBe(true);
    // Cut short of the whole reply (113 characters at the fake TTS's 20 ms each).
    expect(cut.endMs - cut.startMs).toBeLessThan(113 * 20 - 500);

    const wav = readWav(readFileSync(join(folder, "audio.wav")));
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(8000);
    // The greeting on the agent's side where it played, the caller silent then.
    expect(level(wav.samples, 8000, 1, greeting.startMs + 50, greeting.endMs - 50)).toBeGreaterThan(20);
    expect(level(wav.samples, 8000, 0, greeting.startMs + 50, greeting.endMs - 50)).toBe(0);
    // The reply plays up to the cut; after it the agent's channel is silent until the next line.
    expect(level(wav.samples, 8000, 1, cut.startMs + 50, cut.endMs - 50)).toBeGreaterThan(20);
    const next = agentLines[agentLines.indexOf(cut) + 1];
    const quietUntil = Math.min(next?.startMs ?? Infinity, cut.endMs + 1000);
    expect(level(wav.samples, 8000, 1, cut.endMs + 20, quietUntil - 20)).toBe(0);
    // The caller's voice is on the left, around the cut it caused.
    expect(level(wav.samples, 8000, 0, cut.endMs - 1500, cut.endMs + 1500)).toBeGreaterThan(20);
  }, 40_000);
});
