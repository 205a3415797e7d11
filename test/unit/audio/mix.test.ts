import { describe, expect, it } from "vitest";
import { addInto, LoopingSource, mixUnder } from "../../../src/audio/mix.js";
import { decodeWaitingSound, MAX_WAITING_SOUND_BYTES } from "../../../src/audio/waiting-sound.js";
import { writeWav } from "../../../src/audio/wav.js";
import { toneWav } from "../../helpers/tone.js";

describe("mixUnder / addInto", () => {
  it("adds the bed at its gain into a new array, leaving the voice as it was", () => {
    const voice = new Int16Array([1000, -1000, 0, 5]);
    const mixed = mixUnder(voice, new Int16Array([100, 100, 100, 100]), 0.5);
    expect([...mixed]).toEqual([1050, -950, 50, 55]);
    expect([...voice]).toEqual([1000, -1000, 0, 5]);
  });

  it("saturates at full scale instead of wrapping around", () => {
    const mixed = mixUnder(new Int16Array([32000, -32000]), new Int16Array([32000, -32000]), 1);
    expect([...mixed]).toEqual([32767, -32768]);
    const target = new Int16Array([30000, -30000]);
    addInto(target, new Int16Array([10000, -10000]), 1);
    expect([...target]).toEqual([32767, -32768]);
  });

  it("a bed shorter than the voice leaves the rest untouched", () => {
    expect([...mixUnder(new Int16Array([1, 2, 3]), new Int16Array([10]), 1)]).toEqual([11, 2, 3]);
  });
});

describe("LoopingSource", () => {
  it("continues where the last read stopped and wraps to the start", () => {
    const loop = new LoopingSource(new Int16Array([1, 2, 3]));
    expect([...loop.read(2)]).toEqual([1, 2]);
    expect([...loop.read(5)]).toEqual([3, 1, 2, 3, 1]);
    loop.rewind();
    expect([...loop.read(1)]).toEqual([1]);
  });

  it("refuses an empty sound", () => {
    expect(() => new LoopingSource(new Int16Array(0))).toThrow(RangeError);
  });
});

describe("decodeWaitingSound", () => {
  it("decodes mono PCM16 and resamples it once per link rate", () => {
    const sound = decodeWaitingSound(toneWav({ ms: 500, rate: 16000 }));
    expect(sound.sampleRate).toBe(16000);
    expect(sound.ms).toBe(500);
    const at8k = sound.at(8000);
    expect(Math.abs(at8k.length - 4000)).toBeLessThanOrEqual(16);
    expect(sound.at(8000)).toBe(at8k);
    expect(sound.at(16000)).toBe(sound.samples);
  });

  it("averages stereo to mono", () => {
    const samples = new Int16Array([100, 300, -200, 0, 50, 50]);
    const sound = decodeWaitingSound(writeWav(new Int16Array(Array.from({ length: 800 }, (_, i) => samples[i % 6] ?? 0)), 8000, 2));
    expect([...sound.samples.subarray(0, 3)]).toEqual([200, -100, 50]);
  });

  it("refuses what it cannot play, saying how to fix it", () => {
    expect(() => decodeWaitingSound(toneWav({ ms: 500, rate: 22050 }))).toThrow(/22050 Hz; convert it to one of 8000, 16000, 24000, 44100, 48000 Hz/);
    expect(() => decodeWaitingSound(toneWav({ ms: 100, rate: 8000, channels: 3 }))).toThrow(/3 channels; use a mono or stereo WAV/);
    expect(() => decodeWaitingSound(toneWav({ ms: 5, rate: 8000 }))).toThrow(/shorter than 20 ms/);
    expect(() => decodeWaitingSound(new Uint8Array(MAX_WAITING_SOUND_BYTES + 1))).toThrow(/at most 8388608 bytes/);
    expect(() => decodeWaitingSound(new TextEncoder().encode("ID3 not a wav at all"))).toThrow(/not a RIFF file/);
  });
});
