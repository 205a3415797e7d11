/**
 * The two sides `bench:carrier-path` and `bench:carrier-counts` run a call's frames through: the
 * gateway's carrier edge (a started, attached `CarrierBridge` per call, from a given build) and the
 * floor's own work on the same frames (bench/telephony/relay.ts), each direction a `Side` whose
 * run is `reset()` then `round(i)` for every frame `i` of a call, the calls round-robin (`reset(n)`:
 * the frames of n runs at once, rounds 0 … n × `frames` − 1).
 */
import type * as FrameModule from "../../src/audio/base64-frame.js";
import type { Clock, Timer } from "../../src/clock.js";
import type * as LogModule from "../../src/log.js";
import type * as BridgeModule from "../../src/transport/carrier-bridge.js";
import type * as TwilioModule from "../../src/transport/carriers/twilio.js";
import { CountingSocket } from "../shared/counting-socket.js";

/** Frames per run, whatever the calls: 50 calls × 1000 frames (20 s of each call), or 1000 × 50. */
export const FRAMES_PER_RUN = 50_000;
const SID = `MZ${"0".repeat(32)}`;
const MARK_EVERY_MS = 250;
/** 20 ms of 8 kHz μ-law. */
const FRAME_BYTES = 160;

export async function load(root: URL) {
  const at = (path: string): string => new URL(path, root).href;
  const [bridge, twilio, log, frame] = await Promise.all([
    import(at("transport/carrier-bridge.js")) as Promise<typeof BridgeModule>,
    import(at("transport/carriers/twilio.js")) as Promise<typeof TwilioModule>,
    import(at("log.js")) as Promise<typeof LogModule>,
    import(at("audio/base64-frame.js")) as Promise<typeof FrameModule>,
  ]);
  return { CarrierBridge: bridge.CarrierBridge, twilioCodec: twilio.twilioCodec, silentLogger: log.silentLogger, Base64Frame: frame.Base64Frame, base64Of: frame.base64Of };
}
export type Modules = Awaited<ReturnType<typeof load>>;

/**
 * The caller's audio as the service's base64, as the build's s2s adapter makes it: the carrier's
 * own text where the build kept it (a `Base64Audio` payload; in builds before it, a second
 * argument), else the bytes encoded. Either build can be the other side of a `--vs`.
 */
function serviceText(m: Modules, chunk: unknown, older: unknown): string {
  const text = (chunk as { readonly base64?: unknown }).base64;
  if (typeof text === "string") return text;
  return typeof older === "string" ? older : m.base64Of(chunk as Uint8Array);
}

/** Time moves only when the bench says: 20 ms a round. */
export class BenchClock implements Clock {
  at = 1_700_000_000_000;
  now(): number {
    return this.at;
  }
  setTimeout(): Timer {
    return { cancel: () => {} };
  }
  sleep(): Promise<void> {
    return new Promise(() => {});
  }
}

const payloadOf = (stream: number, frame: number): string => Buffer.alloc(FRAME_BYTES, (stream * 7 + frame) & 0xff).toString("base64");

/** Call `stream`'s Twilio `start` frame. */
export const startFrame = (stream: number): Buffer =>
  Buffer.from(JSON.stringify({ event: "start", sequenceNumber: "1", streamSid: SID, start: { streamSid: SID, callSid: `CA${stream}`, customParameters: {}, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } } }));

/** `count` Twilio `media` frames as ws hands them over (Buffers), numbered from `first`. */
function callerFrames(stream: number, first: number, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    const n = first + i;
    return Buffer.from(JSON.stringify({ event: "media", sequenceNumber: String(n + 1), media: { track: "inbound", chunk: String(n), timestamp: String(n * 20), payload: payloadOf(stream, n) }, streamSid: SID }));
  });
}

/** Each call's Twilio frames for the next run: numbered on from the last run's, as a call's chunks are. */
export class CallerFeed {
  readonly frames: Buffer[][];
  /** Frames of each call in one run. */
  readonly perCall: number;
  #next = 0;

  constructor(calls: number) {
    this.frames = Array.from({ length: calls }, () => []);
    this.perCall = FRAMES_PER_RUN / calls;
  }

  refill(runs = 1): void {
    const count = this.perCall * runs;
    for (const [s, frames] of this.frames.entries()) frames.splice(0, frames.length, ...callerFrames(s, this.#next, count));
    this.#next += count;
  }
}

/** `count` OpenAI Realtime `response.output_audio.delta` events, 20 ms each, as ws hands them over (Buffers). */
export function serviceDeltas(stream: number, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(JSON.stringify({ type: "response.output_audio.delta", event_id: `event_${i}`, response_id: "resp_1", item_id: "item_1", output_index: 0, content_index: 0, delta: payloadOf(stream, i) })),
  );
}

/** A frame's text, as a relay reads it (an absent frame: empty). */
const textOf = (frame: Buffer | undefined): string => (frame === undefined ? "" : frame.toString("utf8"));

export interface Side {
  /** Frames of each call in a run. */
  readonly frames: number;
  /** One round: frame `i` of every call. */
  round(i: number): void;
  /** Before a run: fresh frames where they are numbered. */
  reset(runs?: number): void;
  written(): number;
}

/** The caller-frame side over `feed`'s frames: `round(i)` hands every call its frame `i`. */
function callerSide(feed: CallerFeed, round: (i: number) => void, written: () => number): Side {
  return { frames: feed.perCall, reset: (runs) => feed.refill(runs), round, written };
}

export async function gatewaySides(m: Modules, clock: BenchClock, count: number): Promise<{ inbound: Side; outbound: Side }> {
  const frames = FRAMES_PER_RUN / count;
  const append = new m.Base64Frame((audio) => ({ type: "input_audio_buffer.append", audio }));
  let appended = 0;
  const calls: { socket: CountingSocket; bridge: BridgeModule.CarrierBridge; deltas: Buffer[] }[] = [];
  for (let s = 0; s < count; s++) {
    const socket = new CountingSocket();
    const bridge = new m.CarrierBridge(socket as never, { codec: m.twilioCodec, clock, log: m.silentLogger, startTimeoutMs: 1e9 });
    socket.emit("message", startFrame(s), false);
    await bridge.ready;
    bridge.useAudio({ input: { encoding: "pcmu", sampleRate: 8000 }, output: { encoding: "pcmu", sampleRate: 8000 } });
    bridge.attach({ command: () => {}, playback: () => {}, closed: () => {}, audio: (chunk, ...older: unknown[]) => (appended += append.write(serviceText(m, chunk, older[0])).length) });
    calls.push({ socket, bridge, deltas: serviceDeltas(s, frames) });
  }
  const feed = new CallerFeed(count);
  return {
    inbound: callerSide(feed, (i) => {
      clock.at += 20;
      for (const [s, call] of calls.entries()) call.socket.emit("message", feed.frames[s]?.[i], false);
    }, () => appended),
    outbound: {
      frames,
      reset: () => {},
      round: (i) => {
        clock.at += 20;
        for (const call of calls) {
          const event = JSON.parse(textOf(call.deltas[i % frames])) as { delta: string };
          call.bridge.audio(Buffer.from(event.delta, "base64"));
        }
      },
      written: () => calls.reduce((n, call) => n + call.socket.bytes, 0),
    },
  };
}

export function floorSides(count: number): { inbound: Side; outbound: Side } {
  const frames = FRAMES_PER_RUN / count;
  let appended = 0;
  let written = 0;
  const calls = Array.from({ length: count }, (_, s) => ({ deltas: serviceDeltas(s, frames), sentMs: 0, markedMs: 0, marks: 0 }));
  const feed = new CallerFeed(count);
  return {
    inbound: callerSide(feed, (i) => {
      for (const frames of feed.frames) {
        const frame = JSON.parse(textOf(frames[i])) as { media?: { payload?: string } };
        appended += JSON.stringify({ type: "input_audio_buffer.append", audio: frame.media?.payload ?? "" }).length;
      }
    }, () => appended),
    outbound: {
      frames,
      reset: () => {},
      round: (i) => {
        for (const call of calls) {
          const event = JSON.parse(textOf(call.deltas[i % frames])) as { delta?: string };
          const payload = event.delta ?? "";
          written += JSON.stringify({ event: "media", streamSid: SID, media: { payload } }).length;
          call.sentMs += Buffer.byteLength(payload, "base64") / 8;
          if (call.sentMs - call.markedMs >= MARK_EVERY_MS) {
            call.markedMs = call.sentMs;
            written += JSON.stringify({ event: "mark", streamSid: SID, mark: { name: `m${++call.marks}` } }).length;
          }
        }
      },
      written: () => written,
    },
  };
}
