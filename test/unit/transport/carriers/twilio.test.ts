import { describe, expect, it } from "vitest";
import { twilioCodec as codec } from "../../../../src/transport/carriers/twilio.js";
import { b64, fuzzCodec } from "./fuzz-helpers.js";

const SID = "MZ18ad3ab5a668481ce02b83e7395059f0";
const AUDIO = new Uint8Array(160).map((_, i) => (i * 7) & 0xff);

const frames = {
  connected: '{"event":"connected","protocol":"Call","version":"1.0.0"}',
  start: JSON.stringify({
    event: "start",
    sequenceNumber: "1",
    streamSid: SID,
    start: {
      accountSid: "AC123",
      streamSid: SID,
      callSid: "CA456",
      tracks: ["inbound"],
      customParameters: { tenant: "acme", agent: "sales" },
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
    },
  }),
  media: JSON.stringify({
    event: "media",
    sequenceNumber: "2",
    streamSid: SID,
    media: { track: "inbound", chunk: "1", timestamp: "52", payload: b64(AUDIO) },
  }),
  outboundMedia: JSON.stringify({
    event: "media",
    sequenceNumber: "3",
    streamSid: SID,
    media: { track: "outbound", chunk: "1", timestamp: "52", payload: b64(AUDIO) },
  }),
  dtmf: JSON.stringify({ event: "dtmf", sequenceNumber: "9", streamSid: SID, dtmf: { track: "inbound_track", digit: "5" } }),
  mark: JSON.stringify({ event: "mark", sequenceNumber: "103", streamSid: SID, mark: { name: "turn-7-end" } }),
  stop: JSON.stringify({ event: "stop", sequenceNumber: "200", streamSid: SID, stop: { accountSid: "AC123", callSid: "CA456" } }),
};

describe("twilio codec: decode", () => {
  it("decodes the real event sequence", () => {
    expect(codec.decode(frames.connected, false).kind).toBe("ignored");
    expect(codec.decode(frames.start, false)).toEqual({
      kind: "start",
      streamId: SID,
      callId: "CA456",
      customParameters: { tenant: "acme", agent: "sales" },
      encoding: "mulaw",
      sampleRate: 8000,
    });
    expect(codec.decode(frames.media, false)).toEqual({ kind: "media", payload: AUDIO, timestampMs: 52, chunk: 1 });
    expect(codec.decode(frames.dtmf, false)).toEqual({ kind: "dtmf", digit: "5" });
    expect(codec.decode(frames.mark, false)).toEqual({ kind: "mark", name: "turn-7-end" });
    expect(codec.decode(frames.stop, false)).toEqual({ kind: "stop" });
  });

  it("accepts text frames delivered as bytes", () => {
    expect(codec.decode(new TextEncoder().encode(frames.stop), false)).toEqual({ kind: "stop" });
  });

  it("keeps only the caller's track", () => {
    expect(codec.decode(frames.outboundMedia, false)).toMatchObject({ kind: "ignored" });
    const outboundDtmf = frames.dtmf.replace("inbound_track", "outbound_track");
    expect(codec.decode(outboundDtmf, false)).toMatchObject({ kind: "ignored" });
  });

  it("ignores unknown events, binary frames and non-string custom parameters", () => {
    expect(codec.decode('{"event":"somethingNew","streamSid":"MZ1"}', false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(new TextEncoder().encode(frames.stop), true)).toMatchObject({ kind: "ignored" });
    const start = JSON.parse(frames.start);
    start.start.customParameters = { ok: "yes", n: 5, o: {} };
    expect(codec.decode(JSON.stringify(start), false)).toMatchObject({ customParameters: { ok: "yes" } });
  });

  it("never throws on malformed input", () => {
    const tried = fuzzCodec(codec, Object.values(frames), (payload) =>
      JSON.stringify({ event: "media", streamSid: SID, media: { track: "inbound", payload } }),
    );
    expect(tried).toBeGreaterThan(1000);
  });
});

describe("twilio codec: encode", () => {
  it("echoes streamSid on media, mark and clear", () => {
    expect(JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "mulaw", sampleRate: 8000 }) as string)).toEqual({
      event: "media",
      streamSid: SID,
      media: { payload: b64(AUDIO) },
    });
    expect(JSON.parse(codec.encodeMark(SID, "turn-7-end")!)).toEqual({ event: "mark", streamSid: SID, mark: { name: "turn-7-end" } });
    expect(JSON.parse(codec.encodeClear(SID)!)).toEqual({ event: "clear", streamSid: SID });
  });

  it("round-trips outbound audio bytes", () => {
    const frame = JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "mulaw", sampleRate: 8000 }) as string) as { media: { payload: string } };
    expect(new Uint8Array(Buffer.from(frame.media.payload, "base64"))).toEqual(AUDIO);
  });
});
