// After an STT drop the gateway replays the audio the provider had not finalized. A final arrives
// after more audio was sent: what was sent after the finalized stretch ends must be replayed too,
// or the words in flight when the final came are lost (found by test/faults, "STT drop
// mid-utterance").
import { afterEach, describe, expect, it } from "vitest";
import { agent, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { deepgramStt } from "../../../src/pipeline/providers/stt/deepgram.js";
import type { SttSession } from "../../../src/pipeline/stt-port.js";
import { voiceSession } from "../../../src/testing/voice-session.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../../fakes/deepgram.js";
import { sttRecorder } from "../../helpers/stt-recorder.js";

/** `ms` of 16 kHz PCM16 (32 bytes a millisecond). */
const speech = (ms: number): Uint8Array => new Uint8Array(32 * ms).fill(1);

describe("the STT replay after a drop", () => {
  it("keeps the audio sent after the provider's finalized position, on every connection", async () => {
    const agentDef = withTools(agent({ name: "v", greeting: "" }), {}) as ResolvedAgentDef;
    const { link, stt, clock, started } = voiceSession(agentDef, { script: { rules: [{ when: ".", say: "Okay." }] } });
    await started;
    link.sendAudio(speech(200));
    link.sendAudio(speech(100)); // in flight when the final for the first 200 ms arrives
    stt.current.finalizedAudioMs = 200;
    stt.current.final("earlier words", false);
    link.sendAudio(speech(300));
    stt.current.drop();
    await clock.advance(10);
    expect(stt.sessions).toHaveLength(2);
    expect(stt.current.audioBytes).toBe(speech(400).byteLength);

    // The new connection's stream starts with the replay: its first 100 ms are the old in-flight audio.
    stt.current.finalizedAudioMs = 100;
    stt.current.final("more", false);
    stt.current.drop();
    await clock.advance(10);
    expect(stt.sessions).toHaveLength(3);
    expect(stt.current.audioBytes).toBe(speech(300).byteLength);
    stt.current.final("words", true);
    await clock.advance(2000);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["earlier words more words"]);
  });
});

describe("deepgramStt: where the finalized audio ends", () => {
  let fake: FakeDeepgram | undefined;
  let session: SttSession | undefined;
  afterEach(async () => {
    await session?.close();
    await fake?.close();
  });

  it("is the latest final's start + duration (ms), and unset before any final", async () => {
    fake = await startFakeDeepgram();
    const rec = sttRecorder();
    session = await deepgramStt({ kind: "deepgram", options: { url: fake.url } }, { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY }).open({ sampleRate: 16000, minSilenceMs: 300, maxSilenceMs: 1200 }, rec.events);
    const results = (start: number, duration: number, isFinal: boolean): string =>
      JSON.stringify({ type: "Results", start, duration, is_final: isFinal, speech_final: false, channel: { alternatives: [{ transcript: "hello there" }] } });
    fake.sendRaw(results(0, 2, false));
    await rec.waitFor("partial");
    expect(session.finalizedAudioMs).toBeUndefined();
    fake.sendRaw(results(1.5, 0.75, true));
    await rec.waitFor("final");
    expect(session.finalizedAudioMs).toBe(2250);
  });
});
