import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { readWav } from "../../../../src/audio/wav.js";
import { agent, withTools, type RecordOutcome, type ResolvedAgentDef } from "../../../../src/manifest/index.js";
import { s2sSession } from "../../../../src/testing/s2s-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("recording a speech-to-speech session", () => {
  it("the service's 24 kHz both ways lands at 16 kHz on one timeline; a barge-in cuts the agent's line where playback was flushed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rec-s2s-"));
    dirs.push(dir);
    const outcomes: RecordOutcome[] = [];
    const def = withTools(
      agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} }, recording: { destination: { dir } }, onSessionEnd: ({ record }) => void (record && outcomes.push(record)) }),
      {},
    ) as ResolvedAgentDef;
    const { session, link, fake, clock } = await s2sSession(def);
    await clock.advance(500);
    // 200 ms of caller audio at the service's 24 kHz, arriving at 0.5 s.
    link.sendAudio(new Uint8Array(new Int16Array(4800).fill(1200).buffer));
    const reply = fake.start();
    fake.speak(reply, "Your order shipped on Friday and arrives Tuesday.", 3000);
    await clock.advance(1200);
    fake.events.speechStarted();
    expect(link.of("reply.cancelled")).toHaveLength(1);
    fake.done(reply, "cancelled");
    await clock.advance(1000);
    await session.end();

    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    const folder = fileURLToPath(outcome.location);
    const record = JSON.parse(readFileSync(join(folder, "record.json"), "utf8")) as { mode: string; audio: { sampleRate: number; durationMs: number }; transcript: { speaker: string; text: string; startMs: number; endMs: number; interrupted?: boolean }[] };
    expect(record.mode).toBe("s2s");
    expect(record.audio.sampleRate).toBe(16_000);
    expect(record.transcript).toEqual([expect.objectContaining({ speaker: "agent", text: "Your order shipped on Friday and arrives Tuesday.", startMs: 500, endMs: 1700, interrupted: true })]);
    const wav = readWav(readFileSync(join(folder, "audio.wav")));
    // The caller's 200 ms end at 0.5 s, resampled to 16 kHz.
    const left = (ms: number): number => wav.samples[Math.round((ms / 1000) * 16_000) * 2] ?? 0;
    expect(left(400)).toBeGreaterThan(1000);
    expect(left(200)).toBe(0);
    expect(left(600)).toBe(0);
    // The file runs to the cut (the agent's last heard sample), not to the 3 s the service sent.
    expect(record.audio.durationMs).toBeCloseTo(1700, -1);
  });
});
