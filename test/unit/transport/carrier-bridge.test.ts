import { Base64Audio, bytesOf } from "../../../src/audio/audio-payload.js";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock, type VirtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { encodeMulaw } from "../../../src/audio/g711.js";
import { samplesToBytes } from "../../../src/audio/pcm.js";
import { g711, pcm16 } from "../../../src/audio/rates.js";
import { CarrierBridge, IGNORED_REASONS, OTHER_REASONS } from "../../../src/transport/carrier-bridge.js";
import { MARK_EVERY_MS } from "../../../src/transport/carrier-playout.js";
import { DEFAULT_LIMITS } from "../../../src/transport/protocol.js";
import { twilioCodec } from "../../../src/transport/carriers/twilio.js";
import { FakeCarrierSocket } from "../../helpers/carrier-socket.js";

const SID = "MZ0001";
const START = {
  event: "start",
  sequenceNumber: "1",
  streamSid: SID,
  start: { streamSid: SID, callSid: "CA0001", customParameters: { agent: "a" }, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } },
};
const media = (bytes: Uint8Array): object => ({ event: "media", streamSid: SID, media: { track: "inbound", payload: Buffer.from(bytes).toString("base64") } });
const mark = (name: string): object => ({ event: "mark", streamSid: SID, mark: { name } });

interface Harness {
  clock: VirtualClock;
  ws: FakeCarrierSocket;
  bridge: CarrierBridge;
  /** Playback reports through the link's port (`ConnectionHandler.playback`), ms still unplayed. */
  playback: number[];
  audio: Uint8Array[];
  digits: string[];
  closed: { code: number; reason: string }[];
  /** Hang-ups asked of the carrier (the gateway binds the answered call into the closure). */
  hangUps: number;
  /** Agent audio: `ms` of 24 kHz PCM16 silence. */
  speak(ms: number): void;
  reports(): number[];
}

async function harness(options: { attach?: boolean; start?: boolean; socket?: boolean } = {}): Promise<Harness> {
  const clock = virtualClock();
  const ws = new FakeCarrierSocket();
  let hangUps = 0;
  const bridge = new CarrierBridge(ws as unknown as WebSocket, {
    codec: twilioCodec,
    clock,
    log: silentLogger,
    leadMs: 500,
    ...(options.socket === true ? { socket: ws.socket } : {}),
    hangUp: () => {
      hangUps += 1;
      return Promise.resolve();
    },
  });
  const h: Harness = {
    clock,
    ws,
    bridge,
    playback: [],
    audio: [],
    digits: [],
    closed: [],
    get hangUps() {
      return hangUps;
    },
    speak: (ms) => bridge.audio(new Uint8Array(ms * 48), ms),
    reports: () => h.playback,
  };
  if (options.start !== false) {
    ws.frame({ event: "connected", protocol: "Call", version: "1.0.0" });
    ws.frame(START);
    await bridge.ready;
  }
  if (options.attach !== false) {
    bridge.attach({
      command: () => {},
      playback: (bufferedMs) => h.playback.push(bufferedMs),
      audio: (chunk) => h.audio.push(bytesOf(chunk)),
      closed: (code, reason) => h.closed.push({ code, reason }),
      dtmf: (digit) => h.digits.push(digit),
    });
  }
  return h;
}

describe("CarrierBridge", () => {
  it("announces the session's formats on start and buffers the caller's audio until the session attaches, in order", async () => {
    const h = await harness({ attach: false });
    expect(await h.bridge.ready).toEqual({ audioFormat: "pcm16", sampleRate: 16000, ttsSampleRate: 24000 });
    expect(h.bridge.call).toMatchObject({ carrier: "twilio", streamId: SID, callId: "CA0001", customParameters: { agent: "a" }, encoding: "mulaw" });
    for (let i = 0; i < 5; i++) h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    h.ws.frame({ event: "dtmf", streamSid: SID, dtmf: { track: "inbound_track", digit: "7" } });
    const got: string[] = [];
    h.bridge.attach({ command: () => {}, playback: () => {}, audio: (c) => got.push(`audio:${c.byteLength}`), closed: () => {}, dtmf: (d) => got.push(`dtmf:${d}`) });
    expect(got.at(-1)).toBe("dtmf:7");
    expect(got.slice(0, -1).every((g) => g.startsWith("audio:"))).toBe(true);
    expect(got.length).toBe(6);
  });

  it("ignores malformed, unknown and outbound-track frames without throwing, and counts them", async () => {
    const h = await harness();
    const count = (): number => h.bridge.ignored.entries().reduce((a, [, b]) => a + b, 0);
    const before = count();
    h.ws.emit("message", Buffer.from("{not json"), false);
    h.ws.emit("message", Buffer.from([1, 2, 3]), true);
    h.ws.frame({ event: "media", streamSid: SID, media: { track: "outbound", payload: "//8=" } });
    h.ws.frame({ event: "media", streamSid: SID, media: { payload: "%%%" } });
    h.ws.frame({ event: "surprise" });
    expect(h.audio).toHaveLength(0);
    expect(count() - before).toBe(5);
    expect(h.ws.closedWith).toBeUndefined();
  });

  it("tells apart a bounded number of reasons for ignored frames, however many names a peer invents (300 frames, within the input budget's burst)", async () => {
    const h = await harness();
    const count = (): number => h.bridge.ignored.entries().reduce((a, [, b]) => a + b, 0);
    const before = count();
    for (let i = 0; i < 300; i++) h.ws.frame({ event: "media", streamSid: SID, media: { track: `track-${i}`, payload: "//8=" } });
    expect(count() - before).toBe(300);
    expect(h.bridge.ignored.size).toBe(IGNORED_REASONS + 1);
    expect(h.bridge.ignored.get(OTHER_REASONS)).toBeGreaterThan(250);
    expect(h.audio).toHaveLength(0);
    expect(h.ws.closedWith).toBeUndefined();
  });

  it("refuses a stream that sends no start in time, or a format it cannot carry (1008, the reason named)", async () => {
    const late = await harness({ start: false, attach: false });
    const refused = late.bridge.started.then(() => "started", (e: Error) => e.message);
    await late.clock.advance(10_000);
    expect(await refused).toMatch(/no start within 10000 ms/);
    expect(late.ws.closedWith?.code).toBe(1008);

    const odd = await harness({ start: false, attach: false });
    odd.ws.frame({ ...START, start: { ...START.start, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 16000 } } });
    await expect(odd.bridge.started).rejects.toThrow(/8000 Hz expected/);
    expect(odd.ws.closedWith?.code).toBe(1008);
  });

  it("stamps every outbound frame with the stream id and marks each segment end and every 250 ms of audio", async () => {
    const h = await harness();
    h.speak(600);
    h.bridge.emit({ type: "audio.completed" });
    await h.clock.advance(1000);
    const media = h.ws.of("media");
    expect(media.length).toBeGreaterThan(0);
    expect(h.ws.sent.every((f) => f.streamSid === SID)).toBe(true);
    const bytes = media.reduce((n, f) => n + Buffer.from(String((f.media as { payload: string }).payload), "base64").byteLength, 0);
    expect(bytes).toBeGreaterThan(4800 - 64);
    // One mark per 250 ms sent within the segment, and one at its end.
    expect(h.ws.of("mark").length).toBe(Math.floor(600 / MARK_EVERY_MS) + 1);
  });

  it("with its socket, sends a chunk cut at a mark boundary, its mark and the rest in one write — the same frames, in the same order", async () => {
    const play = async (socket: boolean): Promise<Harness> => {
      const h = await harness({ socket });
      // 1 s of 20 ms deltas in real time: 250 ms boundaries fall inside every 12th or 13th chunk.
      for (let i = 0; i < 50; i++) {
        h.speak(20);
        await h.clock.advance(20);
      }
      h.bridge.emit({ type: "audio.completed" });
      await h.clock.advance(1000);
      return h;
    };
    const plain = await play(false);
    const batched = await play(true);
    expect(batched.ws.sent).toEqual(plain.ws.sent);
    expect(plain.ws.writes).toBe(plain.ws.sent.length);
    const marks = batched.ws.sent.flatMap((f, i) => (f.event === "mark" ? [i] : []));
    // Three boundaries inside the second of audio, and the segment's end.
    expect(marks.length).toBe(4);
    const inside = marks.slice(0, -1);
    for (const i of inside) {
      expect(batched.ws.writeOf[i]).toBe(batched.ws.writeOf[i - 1]);
      expect(batched.ws.writeOf[i + 1]).toBe(batched.ws.writeOf[i]);
    }
    expect(batched.ws.writes).toBe(plain.ws.writes - 2 * inside.length);
    expect(batched.ws.corked).toBe(false);
  });

  it("holds playback open until the carrier echoes the marks: echoes report the unplayed rest, and each inbound frame keeps the agent audible", async () => {
    const h = await harness();
    h.speak(400);
    h.bridge.emit({ type: "audio.completed" });
    const marks = h.ws.of("mark").map((f) => (f.mark as { name: string }).name);
    expect(marks.length).toBe(2);
    // By real time all 400 ms would have played; the carrier has not echoed anything yet.
    await h.clock.advance(600);
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    // Never past the first unechoed mark (250 ms): ~146 ms of the 396 the resampler gave out are still unplayed.
    expect(h.reports().at(-1)).toBeGreaterThanOrEqual(140);
    // The first mark comes back: 250 ms played, the rest still to come.
    h.ws.frame(mark(marks[0]!));
    expect(h.reports().at(-1)).toBeCloseTo(146, -1);
    await h.clock.advance(300);
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    expect(h.reports().at(-1)).toBeGreaterThan(0);
    // The last echo: nothing is pending, and inbound frames stop reporting.
    h.ws.frame(mark(marks[1]!));
    expect(h.reports().at(-1)).toBe(0);
    const count = h.reports().length;
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    expect(h.reports().length).toBe(count);
  });

  it("on reply.cancelled sends clear, drops held audio and ignores the echoes of marks sent before it", async () => {
    const h = await harness();
    h.speak(2000);
    const before = h.ws.of("media").length;
    const marks = h.ws.of("mark").map((f) => (f.mark as { name: string }).name);
    h.bridge.emit({ type: "reply.cancelled" });
    expect(h.ws.sent.at(-1)).toEqual({ event: "clear", streamSid: SID });
    await h.clock.advance(3000);
    expect(h.ws.of("media").length).toBe(before);
    const reports = h.reports().length;
    for (const name of marks) h.ws.frame(mark(name));
    expect(h.reports().length).toBe(reports);
    expect(h.bridge.unplayedMs).toBe(0);
    // The cancelled reply's segment ends with nothing sent since the clear: no mark follows it.
    const sent = h.ws.sent.length;
    h.bridge.emit({ type: "audio.completed" });
    await h.clock.advance(100);
    expect(h.ws.sent.length).toBe(sent);
  });

  it("a normal close lets the goodbye play out — closing after the last echo — then hangs up through the carrier", async () => {
    const h = await harness();
    h.speak(300);
    h.bridge.emit({ type: "audio.completed" });
    h.bridge.close(1000, "call ended by the agent");
    expect(h.ws.closedWith).toBeUndefined();
    expect(h.bridge.open).toBe(false);
    for (const f of h.ws.of("mark")) h.ws.frame(mark((f.mark as { name: string }).name));
    expect(h.ws.closedWith).toEqual({ code: 1000, reason: "call ended by the agent" });
    await h.clock.advance(0);
    expect(h.hangUps).toBe(1);
  });

  it("a close with nothing playing is immediate; a carrier that never echoes is waited for only so long", async () => {
    const idle = await harness();
    idle.bridge.close(1000, "idle timeout");
    expect(idle.ws.closedWith?.code).toBe(1000);

    const deaf = await harness();
    deaf.speak(300);
    deaf.bridge.emit({ type: "audio.completed" });
    deaf.bridge.close(1000, "call ended by the agent");
    await deaf.clock.advance(4000);
    expect(deaf.ws.closedWith).toBeUndefined();
    await deaf.clock.advance(2000);
    expect(deaf.ws.closedWith?.code).toBe(1000);
  });

  it("a carrier stop ends the call cleanly: the session hears 1000 'carrier stop', and nothing is hung up", async () => {
    const h = await harness();
    h.ws.frame({ event: "stop", streamSid: SID, stop: { callSid: "CA0001" } });
    await h.clock.advance(0);
    expect(h.closed).toEqual([{ code: 1000, reason: "carrier stop" }]);
    expect(h.hangUps).toBe(0);
    await h.bridge.hungUp;
  });

  it("a stream its gateway refuses closes 1008 and asks the carrier for no hang-up; a fatal close of a live call does", async () => {
    const refused = await harness();
    refused.bridge.refuse("this stream is not the call its ticket was minted for");
    await refused.clock.advance(0);
    expect(refused.ws.closedWith).toEqual({ code: 1008, reason: "this stream is not the call its ticket was minted for" });
    expect(refused.hangUps).toBe(0);
    const failed = await harness();
    failed.bridge.close(1011, "the provider failed");
    await failed.clock.advance(0);
    expect(failed.hangUps).toBe(1);
  });

  it("puts out-of-order caller frames back in chunk order", async () => {
    const h = await harness();
    const frame = (chunk: number): object => ({ event: "media", streamSid: SID, media: { track: "inbound", chunk: String(chunk), payload: Buffer.alloc(160, chunk).toString("base64") } });
    for (const chunk of [1, 3, 2, 4]) h.ws.frame(frame(chunk));
    expect(h.audio).toHaveLength(4);
    const levels = h.audio.map((pcm) => Math.abs(Buffer.from(pcm).readInt16LE(pcm.byteLength - 2)));
    // μ-law codes 1 < 2 < 3 < 4 decode to descending magnitudes: in order, the last samples fall.
    expect(levels).toEqual([...levels].sort((a, b) => b - a));
  });

  it("counts the carrier's frames as liveness: a media server that never answers pings keeps its call until it goes quiet", async () => {
    const h = await harness();
    h.ws.ping = () => {};
    for (let t = 0; t < 60_000; t += 1000) {
      h.ws.frame(media(new Uint8Array(160).fill(0xff)));
      await h.clock.advance(1000);
    }
    expect(h.ws.closedWith).toBeUndefined();
    await h.clock.advance(60_000);
    expect(h.ws.closedWith).toBeDefined();
  });

  it("survives a session handler that throws: the error is contained and the next frames still arrive", async () => {
    const h = await harness({ attach: false });
    let delivered = 0;
    h.bridge.attach({
      command: () => {},
      playback: () => {},
      audio: () => {
        delivered += 1;
        if (delivered === 1) throw new Error("a bug downstream");
      },
      closed: () => {},
    });
    expect(() => h.ws.frame(media(new Uint8Array(160).fill(0xff)))).not.toThrow();
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    expect(delivered).toBe(2);
    expect(h.ws.closedWith).toBeUndefined();
  });

  it("closes 1008 'audio backlog exceeded' once the carrier stops reading, asks for no hang-up, and writes nothing after", async () => {
    const h = await harness();
    h.speak(100);
    const written = h.ws.sent.length;
    expect(written).toBeGreaterThan(0);
    // The carrier stopped reading: the socket holds more than the limit after the next write.
    h.ws.bufferedAmount = DEFAULT_LIMITS.maxBacklogBytes + 1;
    h.speak(100);
    await h.clock.advance(0);
    expect(h.ws.closedWith).toEqual({ code: 1008, reason: "audio backlog exceeded" });
    expect(h.closed).toEqual([{ code: 1008, reason: "audio backlog exceeded" }]);
    expect(h.hangUps).toBe(0);
    const after = h.ws.sent.length;
    h.speak(100);
    h.bridge.emit({ type: "reply.cancelled" });
    expect(h.ws.sent.length).toBe(after);
  });

  it("delivers keypad digits to the session", async () => {
    const h = await harness();
    h.ws.frame({ event: "dtmf", streamSid: SID, dtmf: { track: "inbound_track", digit: "5" } });
    h.ws.frame({ event: "dtmf", streamSid: SID, dtmf: { track: "outbound_track", digit: "9" } });
    expect(h.digits).toEqual(["5"]);
  });

  it("hands the caller's media and the playback reports straight to a listener the session names, digits and the close still to the session", async () => {
    const early = await harness({ attach: false });
    const ignored = { audio: [] as number[], reports: [] as number[] };
    // Before the session attaches there is nobody to hand over from: ignored.
    early.bridge.hearDirectly({ audio: (c) => ignored.audio.push(c.byteLength), playbackProgress: (ms) => ignored.reports.push(ms) });
    early.bridge.attach({ command: () => {}, playback: () => {}, audio: () => {}, closed: () => {} });
    early.ws.frame(media(new Uint8Array(160).fill(0xff)));
    expect(ignored.audio).toEqual([]);

    const h = await harness();
    const direct = { audio: [] as number[], reports: [] as number[] };
    h.bridge.hearDirectly({ audio: (c) => direct.audio.push(c.byteLength), playbackProgress: (ms) => direct.reports.push(ms) });
    h.speak(400);
    h.bridge.emit({ type: "audio.completed" });
    const marks = h.ws.of("mark").map((f) => (f.mark as { name: string }).name);
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    h.ws.frame(mark(marks[0]!));
    h.ws.frame({ event: "dtmf", streamSid: SID, dtmf: { track: "inbound_track", digit: "5" } });
    // The frame, resampled to the session's 16 kHz; a report for the frame and one for the echo.
    expect(direct.audio).toHaveLength(1);
    expect(direct.audio[0]).toBeGreaterThan(0);
    expect(direct.reports.length).toBe(2);
    expect(direct.reports.at(-1)).toBe(Math.round(h.bridge.agentUnplayedMs));
    expect({ audio: h.audio.length, reports: h.reports().length, digits: h.digits }).toEqual({ audio: 0, reports: 0, digits: ["5"] });
    // Undefined: through the session's handler again.
    h.bridge.hearDirectly(undefined);
    h.ws.frame(media(new Uint8Array(160).fill(0xff)));
    expect({ direct: direct.audio.length, session: h.audio.length, reports: h.reports().length }).toEqual({ direct: 1, session: 1, reports: 1 });
    h.ws.frame({ event: "stop", streamSid: SID, stop: { callSid: "CA0001" } });
    await h.clock.advance(0);
    expect(h.closed).toEqual([{ code: 1000, reason: "carrier stop" }]);
  });

  it("passes G.711 through untouched once the session speaks it", async () => {
    const h = await harness({ attach: false });
    expect(h.bridge.g711).toBe("pcmu");
    expect(() => h.bridge.useAudio({ input: g711("pcma"), output: g711("pcma") })).toThrow(/carrier sends pcmu/);
    h.bridge.useAudio({ input: g711("pcmu"), output: g711("pcmu") });
    const caller = Uint8Array.from({ length: 160 }, (_, i) => i);
    h.ws.frame(media(caller));
    const got: Uint8Array[] = [];
    h.bridge.attach({ command: () => {}, playback: () => {}, audio: (c) => got.push(bytesOf(c)), closed: () => {} });
    expect(Buffer.from(got[0]!)).toEqual(Buffer.from(caller));
    const agent = Uint8Array.from({ length: 800 }, (_, i) => (i * 3) % 256);
    h.bridge.audio(agent, 100);
    const out = Buffer.from(String((h.ws.of("media")[0]!.media as { payload: string }).payload), "base64");
    expect(out).toEqual(Buffer.from(agent));
  });

  it("hands on the carrier's canonical base64 undecoded with untouched G.711, and bytes once the audio is converted", async () => {
    const caller = Uint8Array.from({ length: 160 }, (_, i) => (i * 5) % 256);
    const text = Buffer.from(caller).toString("base64");
    // The same bytes with a padding bit set: decodes alike, but is not the text an encoder writes.
    const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const odd = `${text.slice(0, -3)}${letters[letters.indexOf(text.at(-3) ?? "") + 1] ?? ""}==`;
    expect(Buffer.from(odd, "base64")).toEqual(Buffer.from(caller));
    const heard = async (session: "pcmu" | "pcm16"): Promise<{ bytes: Uint8Array; base64: string | undefined }[]> => {
      const h = await harness({ attach: false });
      h.bridge.useAudio(session === "pcmu" ? { input: g711("pcmu"), output: g711("pcmu") } : { input: pcm16(16000), output: pcm16(8000) });
      const got: { bytes: Uint8Array; base64: string | undefined }[] = [];
      h.bridge.attach({ command: () => {}, playback: () => {}, audio: (chunk) => got.push({ bytes: bytesOf(chunk), base64: chunk instanceof Base64Audio ? chunk.base64 : undefined }), closed: () => {} });
      h.ws.frame(media(caller));
      h.ws.frame({ event: "media", streamSid: SID, media: { track: "inbound", payload: odd } });
      return got;
    };
    const passthrough = await heard("pcmu");
    expect(passthrough.map((g) => g.base64)).toEqual([text, undefined]);
    for (const g of passthrough) expect(Buffer.from(g.bytes)).toEqual(Buffer.from(caller));
    const converted = await heard("pcm16");
    expect(converted.map((g) => g.base64)).toEqual([undefined, undefined]);
  });

  it("plays at the call's rate: a session speaking 8 kHz PCM16 is only encoded to μ-law", async () => {
    const unstarted = await harness({ start: false, attach: false });
    expect(() => unstarted.bridge.playbackRate).toThrow(/not started/);
    const h = await harness({ attach: false });
    expect(h.bridge.playbackRate).toBe(8000);
    h.bridge.useAudio({ input: pcm16(16000), output: pcm16(h.bridge.playbackRate) });
    const reply = Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
    h.bridge.audio(samplesToBytes(reply), 100);
    const out = Buffer.concat(h.ws.of("media").map((f) => Buffer.from(String((f.media as { payload: string }).payload), "base64")));
    expect(out).toEqual(Buffer.from(encodeMulaw(reply)));
  });
});
