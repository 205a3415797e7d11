import { describe, expect, it } from "vitest";
import { telnyxCodec as codec } from "../../../../src/transport/carriers/telnyx.js";
import { b64, fuzzCodec } from "./fuzz-helpers.js";

const SID = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC";
const AUDIO = new Uint8Array(160).map((_, i) => (i * 3) & 0xff);

const frames = {
  connected: '{"event":"connected","version":"1.0.0"}',
  start: JSON.stringify({
    event: "start",
    sequence_number: "1",
    stream_id: SID,
    start: {
      user_id: "u1",
      call_control_id: "v2:abc",
      call_session_id: "s1",
      from: "+13125550100",
      to: "+13125550111",
      tags: [],
      client_state: "aGk=",
      custom_parameters: { tenant: "acme" },
      media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 },
    },
  }),
  media: JSON.stringify({ event: "media", sequence_number: "4", stream_id: SID, media: { track: "inbound", chunk: "2", timestamp: "5", payload: b64(AUDIO) } }),
  dtmf: JSON.stringify({ event: "dtmf", sequence_number: "5", stream_id: SID, occurred_at: "2025-06-05T08:54:19.698408Z", dtmf: { digit: "1" } }),
  mark: JSON.stringify({ event: "mark", sequence_number: "5", stream_id: SID, mark: { name: "turn-7-end" } }),
  error: JSON.stringify({ event: "error", stream_id: SID, payload: { code: 100003, title: "malformed_frame", detail: "x" } }),
  stop: JSON.stringify({ event: "stop", sequence_number: "5", stream_id: SID, stop: { user_id: "u1", call_control_id: "v2:abc" } }),
};

describe("telnyx codec", () => {
  it("decodes the real event sequence", () => {
    expect(codec.decode(frames.connected, false).kind).toBe("ignored");
    expect(codec.decode(frames.start, false)).toEqual({
      kind: "start",
      streamId: SID,
      callId: "v2:abc",
      customParameters: { tenant: "acme" },
      encoding: "mulaw",
      sampleRate: 8000,
    });
    expect(codec.decode(frames.media, false)).toEqual({ kind: "media", payload: AUDIO, timestampMs: 5, chunk: 2 });
    expect(codec.decode(frames.dtmf, false)).toEqual({ kind: "dtmf", digit: "1" });
    expect(codec.decode(frames.mark, false)).toEqual({ kind: "mark", name: "turn-7-end" });
    expect(codec.decode(frames.error, false)).toEqual({ kind: "ignored", reason: "carrier error malformed_frame" });
    expect(codec.decode(frames.stop, false)).toEqual({ kind: "stop" });
  });

  it("accepts both encoding spellings, L16 and PCMA; rejects codecs it cannot carry", () => {
    const withEncoding = (encoding: string, sample_rate?: number) =>
      JSON.stringify({ event: "start", stream_id: SID, start: { media_format: sample_rate === undefined ? { encoding } : { encoding, sample_rate } } });
    expect(codec.decode(withEncoding("audio/x-mulaw", 8000), false)).toMatchObject({ encoding: "mulaw", sampleRate: 8000 });
    expect(codec.decode(withEncoding("PCMA", 8000), false)).toMatchObject({ encoding: "alaw" });
    expect(codec.decode(withEncoding("L16"), false)).toMatchObject({ encoding: "l16", sampleRate: 16000 });
    expect(codec.decode(withEncoding("OPUS", 48000), false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(withEncoding("toString", 8000), false)).toMatchObject({ kind: "ignored" });
  });

  it("keeps only the caller's track and ignores unknown events", () => {
    expect(codec.decode(frames.media.replace('"inbound"', '"outbound"'), false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode('{"event":"future_thing"}', false)).toMatchObject({ kind: "ignored" });
  });

  it("never throws on malformed input", () => {
    const tried = fuzzCodec(codec, Object.values(frames), (payload) =>
      JSON.stringify({ event: "media", stream_id: SID, media: { track: "inbound", payload } }),
    );
    expect(tried).toBeGreaterThan(1000);
  });

  it("encodes media, mark and clear in the documented shapes (no stream id)", () => {
    expect(JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "mulaw", sampleRate: 8000 }) as string)).toEqual({ event: "media", media: { payload: b64(AUDIO) } });
    expect(JSON.parse(codec.encodeMark(SID, "turn-7-end")!)).toEqual({ event: "mark", mark: { name: "turn-7-end" } });
    expect(JSON.parse(codec.encodeClear(SID)!)).toEqual({ event: "clear" });
  });
});
