import { describe, expect, it } from "vitest";
import { exotelUrl, plivoXml, texml, twiml, vonageNcco } from "../../../../src/server/telephony/instructions.js";

const target = { url: "wss://gw.example.com/telephony/twilio", parameters: { agent: "support", token: "a.b&c" } };

describe("call instructions", () => {
  it("TwiML connects a bidirectional stream with the values as <Parameter>s (no query string, escaped)", () => {
    expect(twiml(target)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://gw.example.com/telephony/twilio">' +
        '<Parameter name="agent" value="support"/><Parameter name="token" value="a.b&amp;c"/></Stream></Connect></Response>',
    );
  });

  it("TeXML starts an RTP PCMU stream and holds the call for the call limit", () => {
    const doc = texml({ ...target, url: "wss://gw.example.com/telephony/telnyx" }, 3600);
    expect(doc).toContain('<Stream url="wss://gw.example.com/telephony/telnyx?agent=support&amp;token=a.b%26c"');
    expect(doc).toContain('bidirectionalMode="rtp" bidirectionalCodec="PCMU"');
    expect(doc).toContain('<Pause length="3600"/><Hangup/>');
  });

  it("Plivo XML streams μ-law both ways and keeps the call alive while the stream runs", () => {
    const doc = plivoXml({ ...target, url: "wss://gw.example.com/telephony/plivo" }, 60);
    expect(doc).toContain('bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000"');
    expect(doc).toContain(">wss://gw.example.com/telephony/plivo?agent=support&amp;token=a.b%26c</Stream>");
  });

  it("Vonage NCCO connects a websocket endpoint in L16 at 16 kHz; Exotel gets its wss URL at 8 kHz", () => {
    expect(vonageNcco({ ...target, url: "wss://gw.example.com/telephony/vonage" })).toEqual([
      {
        action: "connect",
        endpoint: [{ type: "websocket", uri: "wss://gw.example.com/telephony/vonage?agent=support&token=a.b%26c", "content-type": "audio/l16;rate=16000", headers: {} }],
      },
    ]);
    expect(exotelUrl({ ...target, url: "wss://gw.example.com/telephony/exotel" }).url).toBe(
      "wss://gw.example.com/telephony/exotel?sample-rate=8000&agent=support&token=a.b%26c",
    );
  });
});
