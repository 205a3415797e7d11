import { describe, expect, it } from "vitest";
import { FrameSplitter, bytesForMs, bytesToSamples, concatBytes, concatSamples, durationMs, rms, samplesToBytes } from "../../../src/audio/pcm.js";

/** PCM16 LE bytes of `values`, written byte by byte (independent of the code under test). */
function le(values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 2);
  values.forEach((v, i) => {
    bytes[i * 2] = v & 0xff;
    bytes[i * 2 + 1] = (v >> 8) & 0xff;
  });
  return bytes;
}

describe("bytesToSamples / samplesToBytes", () => {
  it("decodes little-endian samples as a copy-free view when aligned", () => {
    const bytes = le([0, 1, -1, 32767, -32768, 258]);
    const samples = bytesToSamples(bytes);
    expect(Array.from(samples)).toEqual([0, 1, -1, 32767, -32768, 258]);
    expect(samples.buffer).toBe(bytes.buffer);
    bytes[0] = 5;
    expect(samples[0]).toBe(5);
  });

  it("copies when the bytes start on an odd offset", () => {
    const backing = new Uint8Array(9);
    backing.set(le([300, -2, 7, -12345]), 1);
    const bytes = backing.subarray(1);
    const samples = bytesToSamples(bytes);
    expect(Array.from(samples)).toEqual([300, -2, 7, -12345]);
    expect(samples.buffer).not.toBe(backing.buffer);
  });

  it("ignores an odd trailing byte", () => {
    const bytes = concatBytes([le([1000, -1000]), new Uint8Array([0x7f])]);
    expect(Array.from(bytesToSamples(bytes))).toEqual([1000, -1000]);
    expect(bytesToSamples(new Uint8Array(1)).length).toBe(0);
  });

  it("respects the byte offset of a subarray view", () => {
    const bytes = le([1, 2, 3, 4]).subarray(2, 6);
    expect(Array.from(bytesToSamples(bytes))).toEqual([2, 3]);
  });

  it("encodes samples as little-endian bytes and round-trips", () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 258]);
    const bytes = samplesToBytes(samples);
    expect(Array.from(bytes)).toEqual(Array.from(le([0, 1, -1, 32767, -32768, 258])));
    expect(Array.from(bytesToSamples(bytes))).toEqual(Array.from(samples));
    const part = samples.subarray(2, 4);
    expect(Array.from(samplesToBytes(part))).toEqual(Array.from(le([-1, 32767])));
  });
});

describe("durations", () => {
  it("durationMs converts bytes of PCM16 mono to ms", () => {
    expect(durationMs(32000, 16000)).toBe(1000);
    expect(durationMs(640, 16000)).toBe(20);
    expect(durationMs(960, 24000)).toBe(20);
    expect(durationMs(882, 44100)).toBeCloseTo(10, 10);
    expect(durationMs(0, 8000)).toBe(0);
  });

  it("bytesForMs gives whole samples (even byte counts)", () => {
    expect(bytesForMs(20, 16000)).toBe(640);
    expect(bytesForMs(20, 24000)).toBe(960);
    expect(bytesForMs(10, 44100)).toBe(882);
    expect(bytesForMs(30, 8000)).toBe(480);
    for (const ms of [1, 3, 7, 10.5, 33]) for (const rate of [8000, 11025, 22050, 44100]) expect(bytesForMs(ms, rate) % 2).toBe(0);
  });
});

describe("rms", () => {
  it("is 0 for silence and for an empty array", () => {
    expect(rms(new Int16Array(100))).toBe(0);
    expect(rms(new Int16Array(0))).toBe(0);
  });

  it("is 1 for a full-scale square wave and ≈ a/√2 for a sine", () => {
    const square = Int16Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? -32768 : 32767));
    expect(rms(square)).toBeCloseTo(1, 4);
    const a = 16384;
    const sine = Int16Array.from({ length: 16000 }, (_, i) => Math.round(a * Math.sin((2 * Math.PI * 440 * i) / 16000)));
    expect(rms(sine)).toBeCloseTo(a / 32768 / Math.SQRT2, 3);
  });
});

describe("concatBytes", () => {
  it("joins chunks in order, empty ones included", () => {
    const out = concatBytes([new Uint8Array([1, 2]), new Uint8Array(0), new Uint8Array([3]), new Uint8Array([4, 5, 6])]);
    expect(Array.from(out)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(concatBytes([]).byteLength).toBe(0);
  });
});

describe("concatSamples", () => {
  it("joins sample chunks in order, empty ones included, negative samples kept", () => {
    const out = concatSamples([Int16Array.of(1, -2), new Int16Array(0), Int16Array.of(-32768, 32767)]);
    expect(out).toBeInstanceOf(Int16Array);
    expect(Array.from(out)).toEqual([1, -2, -32768, 32767]);
    expect(concatSamples([]).length).toBe(0);
  });
});

describe("FrameSplitter", () => {
  const stream = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7 + 3) & 0xff);

  it("sizes frames in whole samples", () => {
    expect(new FrameSplitter(16000, 20).frameBytes).toBe(640);
    expect(new FrameSplitter(44100, 10).frameBytes).toBe(882);
    expect(new FrameSplitter(8000, 30).frameMs).toBe(30);
    expect(() => new FrameSplitter(16000, 0)).toThrow(RangeError);
    expect(() => new FrameSplitter(0, 20)).toThrow(RangeError);
  });

  it("turns arbitrary chunks (odd sizes included) into the same frames as slicing the whole stream", () => {
    const splitter = new FrameSplitter(16000, 10); // 320-byte frames
    const frames: Uint8Array[] = [];
    let offset = 0;
    const sizes = [1, 319, 320, 321, 7, 1000, 0, 3, 640, 999];
    for (let k = 0; offset < stream.length; k++) {
      const size = sizes[k % sizes.length]!;
      frames.push(...splitter.push(stream.subarray(offset, offset + size)));
      offset += size;
    }
    const whole = Math.floor(stream.length / 320);
    expect(frames.length).toBe(whole);
    frames.forEach((f, i) => expect(Array.from(f)).toEqual(Array.from(stream.subarray(i * 320, (i + 1) * 320))));
    expect(splitter.pendingBytes).toBe(stream.length - whole * 320);
    expect(Array.from(splitter.flush())).toEqual(Array.from(stream.subarray(whole * 320)));
    expect(splitter.pendingBytes).toBe(0);
    expect(splitter.flush().byteLength).toBe(0);
  });

  it("keeps the remainder across calls and returns frames the caller owns", () => {
    const splitter = new FrameSplitter(8000, 20); // 320-byte frames
    expect(splitter.push(stream.subarray(0, 300))).toEqual([]);
    expect(splitter.pendingBytes).toBe(300);
    const [frame, ...rest] = splitter.push(stream.subarray(300, 400));
    expect(rest).toEqual([]);
    expect(Array.from(frame!)).toEqual(Array.from(stream.subarray(0, 320)));
    expect(frame!.buffer).not.toBe(stream.buffer);
    expect(splitter.pendingBytes).toBe(400 - 320);
    splitter.reset();
    expect(splitter.pendingBytes).toBe(0);
    const [next] = splitter.push(stream.subarray(1000, 1320));
    expect(Array.from(next!)).toEqual(Array.from(stream.subarray(1000, 1320)));
  });
});
