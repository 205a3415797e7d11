import { describe, expect, it, vi } from "vitest";
import { createOpusCodec, opusAvailable, type OpusSampleRate } from "../../../src/audio/opus.js";
import { GatewayError } from "../../../src/errors.js";

const available = await opusAvailable();

function sine(sampleRate: number, frequency: number, seconds: number, amplitude = 0.5): Int16Array {
  const out = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}

function pcmBytesToInt16(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(bytes.byteLength / 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Normalized cross-correlation of a[start..start+n) with b[start+lag..), best over lag ∈ [0, maxLag]. */
function bestCorrelation(a: Int16Array, b: Int16Array, start: number, n: number, maxLag: number): { lag: number; r: number } {
  let best = { lag: 0, r: -Infinity };
  for (let lag = 0; lag <= maxLag; lag++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = start; i < start + n; i++) {
      const x = a[i]!;
      const y = b[i + lag]!;
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    const r = ab / Math.sqrt(aa * bb || 1);
    if (r > best.r) best = { lag, r };
  }
  return best;
}

describe("createOpusCodec: argument checks (no addon needed)", () => {
  it("rejects an unsupported sample rate with an audio error", async () => {
    await expect(createOpusCodec({ sampleRate: 44100 as OpusSampleRate, channels: 1 })).rejects.toMatchObject({ code: "audio", fatal: true });
  });

  it("opusAvailable answers a boolean and never throws", async () => {
    expect(typeof (await opusAvailable())).toBe("boolean");
  });

  it("where the addon does not load: opusAvailable is false and createOpusCodec rejects with a clear fatal audio error", async () => {
    vi.resetModules();
    vi.doMock("@discordjs/opus", () => {
      throw new Error("Cannot find module 'opus.node'");
    });
    try {
      const fresh = await import("../../../src/audio/opus.js");
      expect(await fresh.opusAvailable()).toBe(false);
      const failure = fresh.createOpusCodec({ sampleRate: 16000, channels: 1 });
      await expect(failure).rejects.toMatchObject({ code: "audio", fatal: true });
      await expect(failure).rejects.toThrow(/Opus is not available.*use the pcm16 codec/);
    } finally {
      vi.doUnmock("@discordjs/opus");
      vi.resetModules();
    }
  });
});

describe.skipIf(!available)("createOpusCodec (native @discordjs/opus)", () => {
  it.each([16000, 48000] as const)("round-trips a 1 kHz sine at %i Hz with correlation > 0.9", async (sampleRate) => {
    const codec = await createOpusCodec({ sampleRate, channels: 1 });
    expect(codec.frameSamples).toBe(sampleRate / 50);
    const input = sine(sampleRate, 1000, 1);
    const frames = input.length / codec.frameSamples;
    const decoded: Int16Array[] = [];
    const pcmFrameBytes = codec.frameSamples * 2;
    for (let f = 0; f < frames; f++) {
      const packet = codec.encode(input.subarray(f * codec.frameSamples, (f + 1) * codec.frameSamples));
      expect(packet.byteLength).toBeGreaterThan(0);
      expect(packet.byteLength).toBeLessThan(pcmFrameBytes);
      const pcm = codec.decode(packet);
      expect(pcm.byteLength).toBe(pcmFrameBytes);
      decoded.push(pcmBytesToInt16(pcm));
    }
    const output = new Int16Array(input.length);
    decoded.forEach((frame, f) => output.set(frame, f * codec.frameSamples));

    // Skip the first 100 ms (encoder start-up), compare 600 ms, search the codec delay up to 10 ms.
    const maxLag = sampleRate / 100;
    const { lag, r } = bestCorrelation(input, output, sampleRate / 10, (sampleRate * 6) / 10, maxLag);
    expect(r).toBeGreaterThan(0.9);
    expect(lag).toBeLessThanOrEqual(maxLag);
  });

  it("accepts a frame as PCM16 LE bytes (Uint8Array) as well as Int16Array", async () => {
    const codec = await createOpusCodec({ sampleRate: 16000, channels: 1 });
    const frame = sine(16000, 1000, 0.02);
    const bytes = new Uint8Array(frame.buffer.slice(0));
    const packet = codec.encode(bytes);
    expect(packet).toBeInstanceOf(Uint8Array);
    expect(packet.byteLength).toBeLessThan(bytes.byteLength);
    expect(codec.decode(packet).byteLength).toBe(640);
  });

  it("decodes corrupt or empty packets to an empty result without throwing, and keeps working", async () => {
    const codec = await createOpusCodec({ sampleRate: 16000, channels: 1 });
    // RFC 6716 §3.4: a code-3 packet with a frame count of 0, and a code-1 packet of even length, are invalid.
    for (const garbage of [new Uint8Array([0xff, 0x00]), new Uint8Array([0x01, 0x00]), new Uint8Array([0x03]), new Uint8Array(0)]) {
      let out: Uint8Array | undefined;
      expect(() => (out = codec.decode(garbage))).not.toThrow();
      expect(out).toBeInstanceOf(Uint8Array);
      expect(out!.byteLength).toBe(0);
    }
    const packet = codec.encode(sine(16000, 1000, 0.02));
    expect(codec.decode(packet).byteLength).toBe(640);
  });

  it("throws an audio error for a frame that is not 20 ms", async () => {
    const codec = await createOpusCodec({ sampleRate: 16000, channels: 1 });
    expect(() => codec.encode(new Int16Array(319))).toThrow(GatewayError);
    expect(() => codec.encode(new Uint8Array(641))).toThrow(/320 samples/);
  });
});
