import { describe, expect, it } from "vitest";
import { createOpusCodec, opusAvailable } from "../../../src/audio/opus.js";
import { bytesToSamples } from "../../../src/audio/pcm.js";
import { pcm16 } from "../../../src/audio/rates.js";
import { Resampler } from "../../../src/audio/resample.js";
import { AudioEdge, parseClientFormat } from "../../../src/transport/audio-edge.js";

const sine = (hz: number, rate: number, ms: number): Int16Array =>
  Int16Array.from({ length: (rate * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)));
const bytes = (samples: Int16Array): Uint8Array => new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);

describe("client audio formats", () => {
  it("parses codec and sampleRate, naming the parameter on a bad value", () => {
    expect(parseClientFormat(null, null)).toEqual({ codec: "pcm16", sampleRate: 16000 });
    expect(parseClientFormat("opus", "48000")).toEqual({ codec: "opus", sampleRate: 48000 });
    expect(parseClientFormat("mp3", null)).toEqual({ error: 'codec must be pcm16 or opus (got "mp3")' });
    expect(parseClientFormat("pcm16", "11025")).toMatchObject({ error: expect.stringContaining("sampleRate must be one of") as string });
  });

  it("passes 16 kHz PCM through and resamples other rates to 16 kHz with state across frames", async () => {
    const same = await AudioEdge.create({ codec: "pcm16", sampleRate: 16000 });
    const frame = bytes(sine(440, 16000, 20));
    expect(same.inbound(frame)).toBe(frame);
    expect(same.announced).toEqual({ audioFormat: "pcm16", sampleRate: 16000, ttsSampleRate: 24000 });
    const fromEight = await AudioEdge.create({ codec: "pcm16", sampleRate: 8000 });
    let total = 0;
    for (let i = 0; i < 50; i++) total += fromEight.inbound(bytes(sine(440, 8000, 20))).byteLength;
    // The resampler holds back its lookahead (≤ 4.5 ms) until the stream ends.
    expect(16000 - total / 2).toBeGreaterThanOrEqual(0);
    expect(16000 - total / 2).toBeLessThan(80);
    const out = same.outbound(bytes(sine(440, 24000, 100)), 100);
    expect(out).toHaveLength(1);
    expect(same.playbackRate).toBe(24000);
  });
});

describe("the one conversion at the edge", () => {
  it("a 24 kHz client talking to a 24 kHz service: bytes cross untouched both ways", async () => {
    const edge = await AudioEdge.create({ codec: "pcm16", sampleRate: 24000 });
    edge.use({ input: pcm16(24000), output: pcm16(24000) });
    const mic = bytes(sine(440, 24000, 20));
    expect(edge.inbound(mic)).toBe(mic);
    const reply = bytes(sine(440, 24000, 20));
    expect(edge.outbound(reply, 20)).toEqual([{ data: reply, ms: 20 }]);
  });

  it("resamples straight from the client's rate to the session's, and from the session's to playback, once each", async () => {
    const edge = await AudioEdge.create({ codec: "pcm16", sampleRate: 48000 });
    edge.use({ input: pcm16(24000), output: pcm16(16000) });
    const mic = sine(440, 48000, 20);
    expect(edge.inbound(bytes(mic))).toEqual(bytes(new Resampler(48000, 24000).process(mic)));
    const reply = sine(440, 16000, 20);
    expect(edge.outbound(bytes(reply), 20)).toEqual([{ data: bytes(new Resampler(16000, 24000).process(reply)), ms: 20 }]);
  });

  it("refuses G.711: a browser socket carries PCM16", async () => {
    const edge = await AudioEdge.create({ codec: "pcm16", sampleRate: 16000 });
    expect(() => edge.use({ input: { encoding: "pcmu", sampleRate: 8000 }, output: pcm16(24000) })).toThrow(/carries PCM16/);
  });
});

describe.skipIf(!(await opusAvailable()))("opus at the edge", () => {
  it("decodes client packets to 16 kHz PCM and encodes playback into 20 ms packets", async () => {
    const edge = await AudioEdge.create({ codec: "opus", sampleRate: 48000 });
    expect(edge.announced).toEqual({ audioFormat: "opus", sampleRate: 48000, ttsSampleRate: 24000 });
    const client = await createOpusCodec({ sampleRate: 48000, channels: 1 });
    const pcm = edge.inbound(client.encode(sine(440, 48000, 20)));
    expect(pcm.byteLength).toBe(640);
    const packets = edge.outbound(bytes(sine(440, 24000, 100)), 100);
    expect(packets.map((p) => p.ms)).toEqual([20, 20, 20, 20, 20]);
    const player = await createOpusCodec({ sampleRate: 24000, channels: 1 });
    expect(player.decode(packets[0]?.data ?? new Uint8Array()).byteLength).toBe(960);
    expect(edge.inbound(new Uint8Array([0x03])).byteLength).toBe(0);
    expect(edge.corruptPackets).toBe(1);
  });

  it("decodes at the session's input rate and encodes at its output rate: libopus converts, the edge resamples nothing", async () => {
    const edge = await AudioEdge.create({ codec: "opus", sampleRate: 48000 });
    expect(edge.playbackRate).toBe(24000);
    // An s2s service hearing 24 kHz; a TTS speaking 16 kHz.
    edge.use({ input: pcm16(24000), output: pcm16(16000) });
    expect(edge.playbackRate).toBe(16000);
    const client = await createOpusCodec({ sampleRate: 48000, channels: 1 });
    const packet = client.encode(sine(440, 48000, 20));
    const at24 = await createOpusCodec({ sampleRate: 24000, channels: 1 });
    // Byte for byte what a 24 kHz decoder gives: no resampler after it.
    expect(edge.inbound(packet)).toEqual(at24.decode(packet));
    const reply = sine(440, 16000, 100);
    const at16 = await createOpusCodec({ sampleRate: 16000, channels: 1 });
    const expected = Array.from({ length: 5 }, (_, i) => at16.encode(reply.subarray(i * 320, (i + 1) * 320)));
    expect(edge.outbound(bytes(reply), 100)).toEqual(expected.map((data) => ({ data, ms: 20 })));
    // The packets are the same stream whatever rate the client decodes at.
    expect(client.decode(expected[0] ?? new Uint8Array()).byteLength).toBe(1920);
  });

  it("a session rate libopus does not code at (44.1 kHz) goes through 48 kHz with one resample each way", async () => {
    const edge = await AudioEdge.create({ codec: "opus", sampleRate: 16000 });
    edge.use({ input: pcm16(44100), output: pcm16(44100) });
    expect(edge.playbackRate).toBe(48000);
    const client = await createOpusCodec({ sampleRate: 16000, channels: 1 });
    const packet = client.encode(sine(440, 16000, 20));
    const at48 = await createOpusCodec({ sampleRate: 48000, channels: 1 });
    expect(edge.inbound(packet)).toEqual(bytes(new Resampler(48000, 44100).process(bytesToSamples(at48.decode(packet)))));
    const reply = sine(440, 44100, 100);
    const up = new Resampler(44100, 48000).process(reply);
    const encoder48 = await createOpusCodec({ sampleRate: 48000, channels: 1 });
    const whole = Math.floor(up.length / 960);
    const expected = Array.from({ length: whole }, (_, i) => ({ data: encoder48.encode(up.subarray(i * 960, (i + 1) * 960)), ms: 20 }));
    expect(edge.outbound(bytes(reply), 100)).toEqual(expected);
  });
});
