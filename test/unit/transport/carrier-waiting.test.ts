import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { decodeMulaw, encodeMulaw } from "../../../src/audio/g711.js";
import { g711, pcm16 } from "../../../src/audio/rates.js";
import { decodeWaitingSound } from "../../../src/audio/waiting-sound.js";
import { CarrierBridge } from "../../../src/transport/carrier-bridge.js";
import type { CarrierCodec, CarrierEncoding } from "../../../src/transport/carriers/carrier.js";
import { exotelCodec } from "../../../src/transport/carriers/exotel.js";
import { plivoCodec } from "../../../src/transport/carriers/plivo.js";
import { telnyxCodec } from "../../../src/transport/carriers/telnyx.js";
import { twilioCodec } from "../../../src/transport/carriers/twilio.js";
import { vonageCodec } from "../../../src/transport/carriers/vonage.js";
import { constantWav, toneWav } from "../../helpers/tone.js";
import { FakeCarrierSocket } from "../../helpers/carrier-socket.js";

/** A bridge on `codec`'s real framing and encoders; `start` is a synthetic start frame of `encoding` at `rate`. */
async function call(codec: CarrierCodec, encoding: CarrierEncoding, sampleRate: number) {
  const clock = virtualClock();
  const ws = new FakeCarrierSocket();
  const payloads: Uint8Array[] = [];
  const marks: string[] = [];
  const wrapped: CarrierCodec = {
    ...codec,
    decode: (frame, isBinary) =>
      Buffer.from(frame).toString() === "START" ? { kind: "start", streamId: "S1", customParameters: {}, encoding, sampleRate } : codec.decode(frame, isBinary),
    mediaEncoder: (streamId, format) => {
      const encoder = codec.mediaEncoder(streamId, format);
      return {
        encode: (payload) => {
          payloads.push(payload.slice());
          return encoder.encode(payload);
        },
      };
    },
    encodeMark: (streamId, name) => {
      const frame = codec.encodeMark(streamId, name);
      if (frame !== undefined) marks.push(name);
      return frame;
    },
  };
  const bridge = new CarrierBridge(ws as unknown as WebSocket, { codec: wrapped, clock, log: silentLogger, leadMs: 500 });
  ws.emit("message", Buffer.from("START"), false);
  await bridge.ready;
  const reports: number[] = [];
  bridge.attach({ command: () => {}, playback: (ms) => reports.push(ms), audio: () => {}, closed: () => {} });
  return { clock, ws, bridge, payloads, marks, reports };
}

const bed = (rate = 16000) => ({ ambience: { sound: decodeWaitingSound(toneWav({ ms: 700, rate, hz: 300 })), gain: 0.2 } });
const thinking = { thinking: { sound: decodeWaitingSound(toneWav({ ms: 300, hz: 900 })), gain: 0.5, afterMs: 200 } };

describe("waiting audio on a phone call", () => {
  const CASES: [CarrierCodec, CarrierEncoding, number][] = [
    [twilioCodec, "mulaw", 8000],
    [telnyxCodec, "mulaw", 8000],
    [plivoCodec, "l16", 16000],
    [exotelCodec, "l16", 8000],
    [vonageCodec, "l16", 16000],
  ];
  for (const [codec, encoding, rate] of CASES) {
    it(`${codec.carrier}: every mixed and filler frame obeys the carrier's frame rules`, async () => {
      const c = await call(codec, encoding, rate);
      c.bridge.useAudio({ input: pcm16(16000), output: pcm16(24000) });
      const cues = c.bridge.playWaiting({ ...bed(), ...thinking });
      await c.clock.advance(300);
      cues.thinking(true);
      await c.clock.advance(700);
      // Agent speech in odd-sized pieces, mixed with the bed; then silence with the bed.
      for (const ms of [33, 170, 7, 290]) c.bridge.audio(new Uint8Array(Math.round(ms * 24) * 2).fill(3), ms);
      c.bridge.emit({ type: "audio.completed" });
      await c.clock.advance(2000);
      const framing = codec.framing?.(encoding, rate) ?? { multipleOf: encoding === "l16" ? 2 : 1, minBytes: 1, maxBytes: Infinity };
      expect(c.payloads.length).toBeGreaterThan(10);
      for (const payload of c.payloads) {
        expect(payload.byteLength % framing.multipleOf).toBe(0);
        expect(payload.byteLength).toBeGreaterThanOrEqual(framing.minBytes);
        expect(payload.byteLength).toBeLessThanOrEqual(framing.maxBytes);
      }
      // Audio went out continuously: about the elapsed time, plus the lead.
      const sentMs = c.payloads.reduce((sum, p) => sum + p.byteLength, 0) / c.bridge.playbackRate / (encoding === "l16" ? 2 : 1) * 1000;
      expect(sentMs).toBeGreaterThanOrEqual(3000 - 40);
    });
  }

  it("completes a reply's last frame with the bed, not silence (Exotel pads to 3.2 KB, 200 ms at 8 kHz)", async () => {
    const c = await call(exotelCodec, "l16", 8000);
    c.bridge.useAudio({ input: pcm16(16000), output: pcm16(8000) });
    c.bridge.playWaiting({ ambience: { sound: decodeWaitingSound(constantWav({ ms: 100, value: 1000 })), gain: 1 } });
    await c.clock.advance(300);
    c.bridge.audio(new Uint8Array(new Int16Array(8 * 230).fill(3).buffer), 230);
    c.bridge.emit({ type: "audio.completed" });
    await c.clock.advance(1000);
    const samples = c.payloads.flatMap((p) => [...new Int16Array(p.buffer, p.byteOffset, p.byteLength / 2)]);
    expect(samples.filter((s) => s === 1003).length).toBe(8 * 230);
    expect(samples.every((s) => s === 1000 || s === 1003)).toBe(true);
  });

  it("places no marks on the bed, and reports only the agent's audio as unplayed", async () => {
    const c = await call(twilioCodec, "mulaw", 8000);
    c.bridge.useAudio({ input: pcm16(16000), output: pcm16(8000) });
    c.bridge.playWaiting(bed(8000));
    await c.clock.advance(2000);
    expect(c.payloads.length).toBeGreaterThan(0);
    expect(c.marks).toEqual([]);
    expect(c.reports).toEqual([]);
    // The agent says 600 ms: marks follow its audio; each echo reports what of it is left.
    c.bridge.audio(new Uint8Array(600 * 16), 600);
    c.bridge.emit({ type: "audio.completed" });
    await c.clock.advance(50);
    expect(c.marks.length).toBeGreaterThan(0);
    const placed = c.marks.length;
    await c.clock.advance(1500);
    expect(c.marks.length).toBe(placed);
    // The carrier echoes the last mark late: the bed sent since is not the agent's.
    c.ws.emit("message", Buffer.from(JSON.stringify({ event: "mark", streamSid: "S1", mark: { name: c.marks.at(-1) } })), false);
    expect(c.reports.at(-1)).toBe(0);
    expect(c.bridge.agentUnplayedMs).toBe(0);
    expect(c.bridge.unplayedMs).toBeGreaterThan(0);
  });

  it("mixes the bed into G.711 passthrough audio, and leaves it untouched without one", async () => {
    const plain = await call(twilioCodec, "mulaw", 8000);
    plain.bridge.useAudio({ input: g711("pcmu"), output: g711("pcmu") });
    const speech = encodeMulaw(new Int16Array(1600).fill(2000));
    plain.bridge.audio(speech, 200);
    expect(plain.payloads[0]).toEqual(speech.subarray(0, plain.payloads[0]?.byteLength));

    const mixed = await call(twilioCodec, "mulaw", 8000);
    mixed.bridge.useAudio({ input: g711("pcmu"), output: g711("pcmu") });
    mixed.bridge.playWaiting({ ambience: { sound: decodeWaitingSound(constantWav({ ms: 100, value: 1000 })), gain: 1 } });
    const before = mixed.payloads.length;
    mixed.bridge.audio(speech, 200);
    const voice = decodeMulaw(mixed.payloads[before] ?? new Uint8Array(0));
    expect(voice.length).toBeGreaterThan(0);
    // μ-law is logarithmic: 2000 + 1000 comes back within its step there.
    for (const sample of voice) expect(Math.abs(sample - 3000)).toBeLessThan(100);
  });

  it("stops the bed when the call is closing, and closes once the goodbye's last mark echoes (the bed keeps nothing open)", async () => {
    const c = await call(twilioCodec, "mulaw", 8000);
    c.bridge.playWaiting(bed());
    await c.clock.advance(500);
    c.bridge.audio(new Uint8Array(300 * 48), 300);
    c.bridge.emit({ type: "audio.completed" });
    c.bridge.close(1000, "end_call");
    const n = c.payloads.length;
    await c.clock.advance(400);
    expect(c.payloads.length).toBe(n);
    expect(c.ws.readyState).toBe(1);
    for (const name of c.marks) c.ws.emit("message", Buffer.from(JSON.stringify({ event: "mark", streamSid: "S1", mark: { name } })), false);
    expect(c.ws.readyState).toBe(3);
  });
});
