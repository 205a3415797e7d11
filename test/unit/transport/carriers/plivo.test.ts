import { describe, expect, it } from "vitest";
import { plivoCodec as codec } from "../../../../src/transport/carriers/plivo.js";
import { b64, fuzzCodec } from "./fuzz-helpers.js";

const SID = "b7f6c5d4-0000-4000-8000-123456789abc";
const AUDIO = new Uint8Array(640).map((_, i) => (i * 5) & 0xff);

const frames = {
  start: JSON.stringify({
    event: "start",
    sequenceNumber: 1,
    start: {
      streamId: SID,
      callId: "call-1",
      accountId: "MA123",
      tracks: ["inbound"],
      mediaFormat: { encoding: "audio/x-l16", sampleRate: 16000 },
    },
    extra_headers: '{"tenant":"acme"}',
  }),
  media: JSON.stringify({ event: "media", sequenceNumber: 2, streamId: SID, media: { track: "inbound", timestamp: "40", chunk: 1, payload: b64(AUDIO) } }),
  dtmf: JSON.stringify({ event: "dtmf", streamId: SID, dtmf: { digit: "5" } }),
  played: JSON.stringify({ event: "playedStream", streamId: SID, name: "turn-7-end" }),
  cleared: JSON.stringify({ event: "clearedAudio", streamId: SID }),
  stop: JSON.stringify({ event: "stop", sequenceNumber: "9", streamId: SID }),
};

describe("plivo codec", () => {
  it("decodes the real event sequence", () => {
    expect(codec.decode(frames.start, false)).toEqual({
      kind: "start",
      streamId: SID,
      callId: "call-1",
      customParameters: { tenant: "acme" },
      encoding: "l16",
      sampleRate: 16000,
    });
    expect(codec.decode(frames.media, false)).toEqual({ kind: "media", payload: AUDIO, timestampMs: 40, chunk: 1 });
    expect(codec.decode(frames.dtmf, false)).toEqual({ kind: "dtmf", digit: "5" });
    expect(codec.decode(frames.played, false)).toEqual({ kind: "mark", name: "turn-7-end" });
    expect(codec.decode(frames.cleared, false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(frames.stop, false)).toEqual({ kind: "stop" });
  });

  it("tolerates bad extra_headers and reads μ-law", () => {
    const start = JSON.parse(frames.start);
    start.extra_headers = "{not json";
    start.start.mediaFormat = { encoding: "audio/x-mulaw", sampleRate: 8000 };
    expect(codec.decode(JSON.stringify(start), false)).toMatchObject({ kind: "start", customParameters: {}, encoding: "mulaw", sampleRate: 8000 });
  });

  it("keeps only the caller's track and ignores unknown events", () => {
    expect(codec.decode(frames.media.replace('"inbound"', '"outbound"'), false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode('{"event":"somethingElse"}', false)).toMatchObject({ kind: "ignored" });
  });

  it("never throws on malformed input", () => {
    const tried = fuzzCodec(codec, Object.values(frames), (payload) =>
      JSON.stringify({ event: "media", streamId: SID, media: { track: "inbound", payload } }),
    );
    expect(tried).toBeGreaterThan(1000);
  });

  it("encodes playAudio in the stream's negotiated format, checkpoint and clearAudio in the documented shapes", () => {
    expect(JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "l16", sampleRate: 16000 }) as string)).toEqual({
      event: "playAudio",
      media: { contentType: "audio/x-l16", sampleRate: 16000, payload: b64(AUDIO) },
    });
    // The answer XML negotiates μ-law at 8 kHz: declaring it L16 at 16 kHz would play it as noise at 4x speed.
    expect(JSON.parse(codec.encodeMedia(SID, AUDIO, { encoding: "mulaw", sampleRate: 8000 }) as string)).toMatchObject({ media: { contentType: "audio/x-mulaw", sampleRate: 8000 } });
    expect(JSON.parse(codec.encodeMark(SID, "turn-7-end")!)).toEqual({ event: "checkpoint", streamId: SID, name: "turn-7-end" });
    expect(JSON.parse(codec.encodeClear(SID)!)).toEqual({ event: "clearAudio", streamId: SID });
  });
});
