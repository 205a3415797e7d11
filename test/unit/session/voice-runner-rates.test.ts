import { describe, expect, it } from "vitest";
import { G711_SAMPLE_RATE, MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, pcm16 } from "../../../src/audio/rates.js";
import { agent, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

const def = agent({ name: "rates", greeting: "Hi there." }) as ResolvedAgentDef;

/** PCM16 bytes a millisecond at `rate` Hz. */
const bytesPerMs = (rate: number): number => (rate * 2) / 1000;

describe("the pipeline asks its TTS for the rate the link plays", () => {
  it("a phone line (8 kHz): the TTS is asked for 8 kHz and the link is told the session speaks it, so the edge only encodes", async () => {
    const { tts, link, clock, started } = voiceSession(def, { playbackRate: G711_SAMPLE_RATE });
    await started;
    await clock.advance(2000);
    expect(tts.requestedRates).toEqual([G711_SAMPLE_RATE]);
    expect(link.sessionAudio).toEqual({ input: pcm16(MIC_SAMPLE_RATE), output: pcm16(G711_SAMPLE_RATE) });
    // The greeting reaches the link as 8 kHz PCM16: 16 bytes a millisecond.
    expect(link.audioOut.length).toBeGreaterThan(0);
    for (const chunk of link.audioOut) expect(chunk.bytes).toBeCloseTo(chunk.ms * bytesPerMs(G711_SAMPLE_RATE), 0);
  });

  it("a browser (24 kHz PCM16): the TTS is asked for 24 kHz", async () => {
    const { tts, link, started } = voiceSession(def);
    await started;
    expect(tts.requestedRates).toEqual([PLAYBACK_SAMPLE_RATE]);
    expect(link.sessionAudio.output).toEqual(pcm16(PLAYBACK_SAMPLE_RATE));
  });

  it("a TTS that offers only its own rate: the link is told that rate and converts it, once", async () => {
    const { tts, link, started } = voiceSession(def, { playbackRate: G711_SAMPLE_RATE, ttsSampleRate: PLAYBACK_SAMPLE_RATE });
    await started;
    expect(tts.requestedRates).toEqual([G711_SAMPLE_RATE]);
    expect(link.sessionAudio.output).toEqual(pcm16(PLAYBACK_SAMPLE_RATE));
  });
});
