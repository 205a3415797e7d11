import { describe, expect, it } from "vitest";
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from "../../../src/audio/g711.js";

const ALL_CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

function at<T>(values: ArrayLike<T>, i: number): T {
  const v = values[i];
  if (v === undefined) throw new Error(`index ${i} out of range`);
  return v;
}

function one(decode: (b: Uint8Array) => Int16Array, code: number): number {
  return at(decode(Uint8Array.of(code)), 0);
}

function enc(encode: (p: Int16Array) => Uint8Array, sample: number): number {
  return at(encode(Int16Array.of(sample)), 0);
}

/** G.711 μ-law output value from the table definition: ±4·((2m + 33)·2^e − 33), bits inverted. */
function mulawFormula(code: number): number {
  const u = ~code & 0xff;
  const magnitude = 4 * (((2 * (u & 0x0f) + 33) << ((u >> 4) & 7)) - 33);
  return u & 0x80 ? 0 - magnitude : magnitude; // 0 − 0 is +0, not −0 (Int16Array has no −0)
}

/** G.711 A-law output value: segment 0 → 8·(2m + 1), segment s ≥ 1 → 8·(2m + 33)·2^(s−1); XOR 0x55. */
function alawFormula(code: number): number {
  const a = code ^ 0x55;
  const m = a & 0x0f;
  const s = (a >> 4) & 7;
  const magnitude = s === 0 ? 8 * (2 * m + 1) : 8 * ((2 * m + 33) << (s - 1));
  return a & 0x80 ? magnitude : -magnitude;
}

function sineSnrDb(encode: (p: Int16Array) => Uint8Array, decode: (b: Uint8Array) => Int16Array): number {
  const n = 8000;
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) pcm[i] = Math.round(32767 * Math.sin((2 * Math.PI * 1013 * i) / 8000));
  const out = decode(encode(pcm));
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < n; i++) {
    const x = at(pcm, i);
    const e = x - at(out, i);
    signal += x * x;
    noise += e * e;
  }
  return 10 * Math.log10(signal / noise);
}

describe("G.711 μ-law", () => {
  it("decodes known codes", () => {
    expect(one(decodeMulaw, 0xff)).toBe(0);
    expect(one(decodeMulaw, 0x7f)).toBe(0);
    expect(one(decodeMulaw, 0x00)).toBe(-32124);
    expect(one(decodeMulaw, 0x80)).toBe(32124);
    expect(one(decodeMulaw, 0xfe)).toBe(8);
    expect(one(decodeMulaw, 0x7e)).toBe(-8);
  });

  it("encodes known samples, clipping at full scale", () => {
    expect(enc(encodeMulaw, 0)).toBe(0xff);
    expect(enc(encodeMulaw, -1)).toBe(0x7f);
    expect(enc(encodeMulaw, 8)).toBe(0xfe);
    expect(enc(encodeMulaw, 32767)).toBe(0x80);
    expect(enc(encodeMulaw, -32768)).toBe(0x00);
  });

  it("decode table matches the G.711 output-value formula for all 256 codes", () => {
    const decoded = decodeMulaw(ALL_CODES);
    for (let c = 0; c < 256; c++) expect(at(decoded, c)).toBe(mulawFormula(c));
  });

  it("encode(decode(b)) === b for all codes except negative zero 0x7F (→ 0xFF)", () => {
    const back = encodeMulaw(decodeMulaw(ALL_CODES));
    for (let c = 0; c < 256; c++) expect(at(back, c)).toBe(c === 0x7f ? 0xff : c);
  });

  it("decode is strictly monotonic in the sign-magnitude code order", () => {
    // Inverted code u = ~b: u = k is +magnitude k (b = ~k | 0x80), u = k | 0x80 is −magnitude k (b = ~k & 0x7F).
    const decoded = decodeMulaw(ALL_CODES);
    for (let k = 1; k < 128; k++) {
      expect(at(decoded, (~k & 0x7f) | 0x80)).toBeGreaterThan(at(decoded, (~(k - 1) & 0x7f) | 0x80));
      expect(at(decoded, ~k & 0x7f)).toBeLessThan(at(decoded, ~(k - 1) & 0x7f));
    }
  });

  it("encode is monotonic over every 16-bit sample", () => {
    const pcm = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const decoded = decodeMulaw(encodeMulaw(pcm));
    let drops = 0;
    for (let i = 1; i < decoded.length; i++) if (at(decoded, i) < at(decoded, i - 1)) drops++;
    expect(drops).toBe(0);
  });

  it("round-trips a full-scale sine with SNR > 35 dB", () => {
    expect(sineSnrDb(encodeMulaw, decodeMulaw)).toBeGreaterThan(35);
  });

  it("handles empty input", () => {
    expect(encodeMulaw(new Int16Array(0))).toEqual(new Uint8Array(0));
    expect(decodeMulaw(new Uint8Array(0))).toEqual(new Int16Array(0));
  });
});

describe("G.711 A-law", () => {
  it("decodes known codes", () => {
    expect(one(decodeAlaw, 0xd5)).toBe(8);
    expect(one(decodeAlaw, 0x55)).toBe(-8);
    expect(one(decodeAlaw, 0xaa)).toBe(32256);
    expect(one(decodeAlaw, 0x2a)).toBe(-32256);
    expect(one(decodeAlaw, 0xd4)).toBe(24);
  });

  it("encodes known samples, clipping at full scale", () => {
    expect(enc(encodeAlaw, 0)).toBe(0xd5);
    expect(enc(encodeAlaw, -1)).toBe(0x55);
    expect(enc(encodeAlaw, 32767)).toBe(0xaa);
    expect(enc(encodeAlaw, -32768)).toBe(0x2a);
  });

  it("decode table matches the G.711 output-value formula for all 256 codes", () => {
    const decoded = decodeAlaw(ALL_CODES);
    for (let c = 0; c < 256; c++) expect(at(decoded, c)).toBe(alawFormula(c));
  });

  it("encode(decode(b)) === b for all 256 codes", () => {
    expect(encodeAlaw(decodeAlaw(ALL_CODES))).toEqual(ALL_CODES);
  });

  it("decode is strictly monotonic in the sign-magnitude code order", () => {
    // After XOR 0x55, bit 7 is the sign (1 = positive) and bits 0..6 the magnitude index.
    const decoded = decodeAlaw(ALL_CODES);
    for (let k = 1; k < 128; k++) {
      expect(at(decoded, (k | 0x80) ^ 0x55)).toBeGreaterThan(at(decoded, ((k - 1) | 0x80) ^ 0x55));
      expect(at(decoded, k ^ 0x55)).toBeLessThan(at(decoded, (k - 1) ^ 0x55));
    }
  });

  it("encode is monotonic over every 16-bit sample", () => {
    const pcm = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const decoded = decodeAlaw(encodeAlaw(pcm));
    let drops = 0;
    for (let i = 1; i < decoded.length; i++) if (at(decoded, i) < at(decoded, i - 1)) drops++;
    expect(drops).toBe(0);
  });

  it("round-trips a full-scale sine with SNR > 35 dB", () => {
    expect(sineSnrDb(encodeAlaw, decodeAlaw)).toBeGreaterThan(35);
  });

  it("handles empty input", () => {
    expect(encodeAlaw(new Int16Array(0))).toEqual(new Uint8Array(0));
    expect(decodeAlaw(new Uint8Array(0))).toEqual(new Int16Array(0));
  });
});
