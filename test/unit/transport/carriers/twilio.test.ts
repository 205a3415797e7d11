/** Twilio only; what every carrier codec does is test/conformance/carrier.test.ts. */
import { describe, expect, it } from "vitest";
import { base64Of } from "../../../../src/audio/base64-frame.js";
import { twilioCodec as codec } from "../../../../src/transport/carriers/twilio.js";

const SID = "MZ18ad3ab5a668481ce02b83e7395059f0";

describe("twilio codec", () => {
  it("counts only the caller's DTMF: a digit on the outbound track is ignored", () => {
    const dtmf = (track: string) => JSON.stringify({ event: "dtmf", sequenceNumber: "9", streamSid: SID, dtmf: { track, digit: "5" } });
    expect(codec.decode(dtmf("inbound_track"), false)).toEqual({ kind: "dtmf", digit: "5" });
    expect(codec.decode(dtmf("outbound_track"), false)).toMatchObject({ kind: "ignored" });
  });

  it("keeps only the string-valued custom parameters", () => {
    const start = { event: "start", streamSid: SID, start: { streamSid: SID, callSid: "CA456", customParameters: { ok: "yes", n: 5, o: {} }, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } } };
    expect(codec.decode(JSON.stringify(start), false)).toMatchObject({ kind: "start", customParameters: { ok: "yes" } });
  });
});

describe("a JSON-event carrier's media encoder", () => {
  it("echoes any stream id a carrier chose, escaped", () => {
    const audio = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
    for (const sid of ['MZ"}', "\u0001audio\u0001", "a\\b"]) {
      expect(JSON.parse(codec.mediaEncoder(sid, { encoding: "mulaw", sampleRate: 8000 }).encode(audio) as string)).toEqual({ event: "media", streamSid: sid, media: { payload: base64Of(audio) } });
    }
  });
});
