import { describe, expect, it } from "vitest";
import { exotelCodec as codec } from "../../../../src/transport/carriers/exotel.js";
import { b64, fuzzCodec } from "./fuzz-helpers.js";

const SID = "MZ0c2d3e4f";
const AUDIO = new Uint8Array(1600).map((_, i) => i & 0xff);

const frames = {
  connected: '{"event":"connected"}',
  start: JSON.stringify({
    event: "start",
    sequence_number: "1",
    stream_sid: SID,
    start: {
      stream_sid: SID,
      call_sid: "CA99",
      account_sid: "AC1",
      from: "+919000000000",
      to: "+919000000001",
      custom_parameters: { key1: "value1" },
      media_format: { encoding: "audio/x-raw", sample_rate: "8000", bit_rate: "16" },
    },
  }),
  media: JSON.stringify({ event: "media", sequence_number: "3", stream_sid: SID, media: { chunk: "2", timestamp: "200", payload: b64(AUDIO) } }),
  dtmf: JSON.stringify({ event: "dtmf", sequence_number: "7", stream_sid: SID, dtmf: { digit: "5", duration: "100" } }),
  mark: JSON.stringify({ event: "mark", sequence_number: "15", stream_sid: SID, mark: { name: "turn-7-end" } }),
  stop: JSON.stringify({ event: "stop", sequence_number: "40", stream_sid: SID, stop: { call_sid: "CA99", account_sid: "AC1", reason: "callended" } }),
};

describe("exotel codec", () => {
  it("decodes the real event sequence", () => {
    expect(codec.decode(frames.connected, false).kind).toBe("ignored");
    expect(codec.decode(frames.start, false)).toEqual({
      kind: "start",
      streamId: SID,
      callId: "CA99",
      customParameters: { key1: "value1" },
      encoding: "l16",
      sampleRate: 8000,
    });
    expect(codec.decode(frames.media, false)).toEqual({ kind: "media", payload: AUDIO, timestampMs: 200, chunk: 2 });
    expect(codec.decode(frames.dtmf, false)).toEqual({ kind: "dtmf", digit: "5" });
    expect(codec.decode(frames.mark, false)).toEqual({ kind: "mark", name: "turn-7-end" });
    expect(codec.decode(frames.stop, false)).toEqual({ kind: "stop" });
  });

  it("reads the μ-law and 16 kHz variants; ignores unknown events", () => {
    const start = (encoding: string, sample_rate: string) =>
      JSON.stringify({ event: "start", stream_sid: SID, start: { media_format: { encoding, sample_rate } } });
    expect(codec.decode(start("audio/x-mulaw;rate=8000", "8000"), false)).toMatchObject({ encoding: "mulaw", sampleRate: 8000 });
    expect(codec.decode(start("audio/L16;rate=16000", "16000"), false)).toMatchObject({ encoding: "l16", sampleRate: 16000 });
    expect(codec.decode(start("audio/x-raw", "fast"), false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode('{"event":"new_thing","stream_sid":"MZ"}', false)).toMatchObject({ kind: "ignored" });
  });

  it("never throws on malformed input", () => {
    const tried = fuzzCodec(codec, Object.values(frames), (payload) =>
      JSON.stringify({ event: "media", stream_sid: SID, media: { payload } }),
    );
    expect(tried).toBeGreaterThan(1000);
  });

  it("encodes media, mark and clear echoing stream_sid", () => {
    expect(JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "l16", sampleRate: 8000 }) as string)).toEqual({ event: "media", stream_sid: SID, media: { payload: b64(AUDIO) } });
    expect(JSON.parse(codec.encodeMark(SID, "turn-7-end")!)).toEqual({ event: "mark", stream_sid: SID, mark: { name: "turn-7-end" } });
    expect(JSON.parse(codec.encodeClear(SID)!)).toEqual({ event: "clear", stream_sid: SID });
  });
});
