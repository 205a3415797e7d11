import { describe, expect, it } from "vitest";
import {
  DEFAULT_SESSION_AUDIO,
  G711_SAMPLE_RATE,
  MIC_SAMPLE_RATE,
  PLAYBACK_SAMPLE_RATE,
  bytesPerSample,
  formatDurationMs,
  g711,
  pcm16,
  sameFormat,
} from "../../../src/audio/rates.js";

describe("audio rates", () => {
  it("holds the protocol's defaults and G.711's rate (docs/protocol.md session.configured)", () => {
    expect(MIC_SAMPLE_RATE).toBe(16_000);
    expect(PLAYBACK_SAMPLE_RATE).toBe(24_000);
    expect(G711_SAMPLE_RATE).toBe(8_000);
    expect(DEFAULT_SESSION_AUDIO).toEqual({ input: { encoding: "pcm16", sampleRate: 16_000 }, output: { encoding: "pcm16", sampleRate: 24_000 } });
  });

  it("times audio by its format: PCM16 two bytes a sample, G.711 one at 8 kHz", () => {
    expect(bytesPerSample(pcm16(24_000))).toBe(2);
    expect(bytesPerSample(g711("pcmu"))).toBe(1);
    expect(formatDurationMs(960, pcm16(24_000))).toBe(20);
    expect(formatDurationMs(640, pcm16(16_000))).toBe(20);
    expect(formatDurationMs(160, g711("pcma"))).toBe(20);
  });

  it("tells formats that cross untouched", () => {
    expect(sameFormat(pcm16(24_000), pcm16(24_000))).toBe(true);
    expect(sameFormat(pcm16(24_000), pcm16(16_000))).toBe(false);
    expect(sameFormat(g711("pcmu"), g711("pcma"))).toBe(false);
    expect(sameFormat(g711("pcmu"), pcm16(G711_SAMPLE_RATE))).toBe(false);
  });
});
