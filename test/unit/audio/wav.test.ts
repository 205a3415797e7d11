import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readWav, writeWav } from "../../../src/audio/wav.js";
import { GatewayError } from "../../../src/errors.js";

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(fileURLToPath(new URL(`../../../fixtures/audio/${name}`, import.meta.url))));

/** A WAV header with the given fmt fields followed by `dataBytes` zero bytes. */
function header(fields: { tag?: number; channels?: number; sampleRate?: number; bits?: number; dataBytes?: number }): Uint8Array {
  const { tag = 1, channels = 1, sampleRate = 16000, bits = 16, dataBytes = 4 } = fields;
  const out = new Uint8Array(44 + dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (o: number, s: string): void => [...s].forEach((c, i) => view.setUint8(o + i, c.charCodeAt(0)));
  ascii(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, tag, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, (sampleRate * channels * bits) / 8, true);
  view.setUint16(32, (channels * bits) / 8, true);
  view.setUint16(34, bits, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  return out;
}

describe("writeWav / readWav", () => {
  it("round-trips samples, rate and channels", () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234, -4321, 7]);
    const bytes = writeWav(samples, 16000);
    expect(bytes.byteLength).toBe(44 + samples.length * 2);
    const wav = readWav(bytes);
    expect(wav.sampleRate).toBe(16000);
    expect(wav.channels).toBe(1);
    expect(Array.from(wav.samples)).toEqual(Array.from(samples));
  });

  it("round-trips stereo and an odd-offset view", () => {
    const bytes = writeWav(Int16Array.from([1, 2, 3, 4]), 48000, 2);
    const padded = new Uint8Array(bytes.byteLength + 1);
    padded.set(bytes, 1);
    const wav = readWav(padded.subarray(1));
    expect(wav).toMatchObject({ sampleRate: 48000, channels: 2 });
    expect(Array.from(wav.samples)).toEqual([1, 2, 3, 4]);
  });

  it("writes a canonical 44-byte header", () => {
    const bytes = writeWav(new Int16Array(10), 8000);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("RIFF");
    expect(new TextDecoder().decode(bytes.subarray(8, 16))).toBe("WAVEfmt ");
    expect(new TextDecoder().decode(bytes.subarray(36, 40))).toBe("data");
  });

  it("skips chunks it does not know (e.g. LIST before data)", () => {
    const plain = writeWav(Int16Array.from([5, -5]), 16000);
    const list = new Uint8Array([0x4c, 0x49, 0x53, 0x54, 3, 0, 0, 0, 0x61, 0x62, 0x63, 0]); // "LIST", size 3 + pad byte
    const bytes = new Uint8Array(plain.byteLength + list.byteLength);
    bytes.set(plain.subarray(0, 36));
    bytes.set(list, 36);
    bytes.set(plain.subarray(36), 36 + list.byteLength);
    expect(Array.from(readWav(bytes).samples)).toEqual([5, -5]);
  });

  it("gives clear errors for non-PCM16 and malformed input", () => {
    expect(() => readWav(new Uint8Array(4))).toThrow(/too short/);
    expect(() => readWav(new TextEncoder().encode("OggS0000WAVEfmt "))).toThrow(/not a RIFF file/);
    expect(() => readWav(header({ tag: 3, bits: 32 }))).toThrow(/0x0003 \(IEEE float\).*only PCM16/);
    expect(() => readWav(header({ tag: 7, bits: 8 }))).toThrow(/µ-law/);
    expect(() => readWav(header({ bits: 8 }))).toThrow(/bit depth 8/);
    expect(() => readWav(header({ bits: 24, dataBytes: 6 }))).toThrow(/bit depth 24/);
    expect(() => readWav(header({}).subarray(0, 36))).toThrow(/no data chunk/);
    expect(() => readWav(header({ tag: 3 }))).toThrow(GatewayError);
  });

  it("rejects nonsense arguments to writeWav", () => {
    expect(() => writeWav(new Int16Array(3), 16000, 2)).toThrow(/whole number/);
    expect(() => writeWav(new Int16Array(2), 0)).toThrow(/sample rate/);
  });
});

describe("fixtures/audio", () => {
  // Durations measured from the files made by scripts/make-fixtures.ts (flite, cmu_us_slt voice).
  const expected: Array<[file: string, seconds: number]> = [
    ["hello.wav", 1.01],
    ["order-status.wav", 2.59],
    ["pin.wav", 2.235],
    ["stop.wav", 1.725],
    ["cough.wav", 0.2],
  ];

  it.each(expected)("%s is 16 kHz mono PCM16 of about %f s, under 200 KB", (file, seconds) => {
    const bytes = fixture(file);
    expect(bytes.byteLength).toBeLessThan(200 * 1024);
    const wav = readWav(bytes);
    expect(wav.sampleRate).toBe(16000);
    expect(wav.channels).toBe(1);
    expect(wav.samples.length / wav.sampleRate).toBeCloseTo(seconds, 1);
    // Not silence: some sample is loud.
    expect(wav.samples.reduce((max, s) => Math.max(max, Math.abs(s)), 0)).toBeGreaterThan(3000);
  });
});
