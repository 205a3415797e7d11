/**
 * The agent's side of a carrier stream: its audio cut into frames the carrier accepts, paced
 * (`Pacer`), marked every MARK_EVERY_MS and after a reply segment's last audio, with the agent's
 * waiting sounds mixed in where it is encoded (`WaitingMix`); cleared on a barge-in. What was sent and
 * has played is `CarrierPlayout`'s (docs/telephony.md "What happens on a call").
 */
import type { WebSocket } from "ws";
import type { Clock } from "../clock.js";
import type { WholeTextFrames } from "../providers/text-frame.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { CarrierAudio, OutboundFrame } from "./carrier-audio.js";
import { CarrierPlayout } from "./carrier-playout.js";
import type { CarrierCodec, MediaEncoder, MediaFormat } from "./carriers/carrier.js";
import { Pacer, type PacerSink } from "./pacer.js";
import { WaitingMix, waitingFeed, type WaitingCues } from "./waiting-mix.js";

export interface CarrierOutboundOptions {
  readonly clock: Clock;
  readonly codec: CarrierCodec;
  /** How far ahead of real time audio is sent (ms; the pacer's default when absent). */
  readonly leadMs?: number | undefined;
  /** The stream's socket: every frame is sent on it from here. */
  readonly ws: Pick<WebSocket, "send" | "readyState" | "OPEN" | "bufferedAmount">;
  /** Bytes the socket may hold unsent: past them the carrier has stopped reading, and `overflow` is told how many it holds. */
  readonly maxBacklogBytes: number;
  readonly overflow: (backlogBytes: number) => void;
  /**
   * Runs `send`, whose writes leave the socket together, in one syscall (the bridge corks the
   * stream's socket around it); absent: each write is its own. Used where one chunk is several
   * frames: a frame cut at a mark boundary, its mark and the rest of the chunk.
   */
  readonly batch?: ((send: () => void) => void) | undefined;
  /** Text frames written whole onto the stream's socket; absent: through `ws.send`. */
  readonly frames?: WholeTextFrames | undefined;
}

/** The stream as its `start` described it: its id and audio. */
type Stream = MediaFormat & { readonly streamId: string };

/**
 * Every 20 ms frame goes through here, and on a process running hundreds of calls a call's state
 * is out of the CPU's caches by its next frame: what a frame needs is in this object's fields
 * (the audio edge, the stream, its frame encoder), set once at `start`, rather than behind
 * closures into the bridge, the pacer sends through this object's own `sendAudio`, and the
 * frames go onto the socket from here.
 */
export class CarrierOutbound implements PacerSink {
  readonly #options: CarrierOutboundOptions;
  /** The call's audio edge, the stream and its media frame encoder, once `start` arrived. */
  #audio: CarrierAudio | undefined;
  #stream: Stream | undefined;
  #encoder: MediaEncoder | undefined;
  readonly #pacer: Pacer;
  /** What the carrier was sent and has played. */
  readonly playout: CarrierPlayout;
  /** The agent's waiting sounds, once the mode asked for them. */
  #waiting: WaitingMix | undefined;
  readonly #ws: CarrierOutboundOptions["ws"];
  readonly #frames: WholeTextFrames | undefined;
  readonly #maxBacklogBytes: number;
  #closed = false;

  constructor(options: CarrierOutboundOptions) {
    this.#options = options;
    this.#ws = options.ws;
    this.#frames = options.frames;
    this.#maxBacklogBytes = options.maxBacklogBytes;
    this.playout = new CarrierPlayout(options.clock, options.codec.marks);
    this.#pacer = new Pacer(this, options.clock, options.leadMs === undefined ? {} : { leadMs: options.leadMs });
  }

  /** The stream started: its audio edge, and its id and format for the frames. */
  start(audio: CarrierAudio, stream: Stream): void {
    this.#audio = audio;
    this.#stream = stream;
    this.#encoder = this.#options.codec.mediaEncoder(stream.streamId, stream);
  }

  /** Ms of audio sent to the carrier and not yet played (marks, else real time), plus what the pacer holds. */
  get unplayedMs(): number {
    return this.playout.unplayedMs + this.#pacer.heldMs;
  }

  /** Ms until the agent's own audio has played: waiting sounds sent after its last audio left out. */
  get agentUnplayedMs(): number {
    return this.#pacer.agentBacklogMs(this.playout.unplayedMs);
  }

  /** Audio the pacer still holds (ms). */
  get heldMs(): number {
    return this.#pacer.heldMs;
  }

  /**
   * Agent audio, cut into the carrier's frames; a frame ending at a mark boundary is followed by a
   * mark. A chunk that becomes more than one write (a frame cut at the boundary, the mark, the
   * rest) is batched: on a call with 20 ms deltas that is one write instead of three every 250 ms.
   */
  audio(chunk: Uint8Array): void {
    const audio = this.#audio;
    if (audio === undefined) return;
    const mix = this.#waiting;
    const frames = mix === undefined ? audio.outbound(chunk) : audio.outbound(chunk, (samples, rate) => mix.under(samples, rate));
    if (frames.length > 1 || frames[0]?.markAfter === true) this.#batch(() => this.#queue(audio, frames));
    else this.#queue(audio, frames);
  }

  #queue(audio: CarrierAudio, frames: readonly OutboundFrame[]): void {
    for (const frame of frames) {
      this.#pacer.audio(frame.bytes, audio.ms(frame.bytes.byteLength));
      if (frame.markAfter) this.#pacer.afterAudio(() => this.#mark());
    }
  }

  #batch(send: () => void): void {
    const batch = this.#options.batch;
    if (batch === undefined) send();
    else batch(send);
  }

  /** The end of a reply segment: the last partial frame, then a mark once the pacer has sent it (one batch: both leave together). */
  endSegment(): void {
    const audio = this.#audio;
    if (audio === undefined) return;
    this.#batch(() => {
      // With a bed, the segment's last frame is completed with the bed rather than silence (Exotel's minimum is 200 ms of it).
      const short = audio.shortSamples;
      const bed = short > 0 ? this.#waiting?.tail(short, audio.sampleRate) : undefined;
      if (bed !== undefined) for (const frame of audio.filler(bed)) this.#pacer.audio(frame.bytes, audio.ms(frame.bytes.byteLength));
      for (const frame of audio.flush()) this.#pacer.audio(frame.bytes, audio.ms(frame.bytes.byteLength));
      this.#pacer.afterAudio(() => {
        if (this.playout.markOwed) this.#mark();
        this.playout.segmentEnded();
      });
    });
  }

  /**
   * The agent's waiting sounds, encoded and framed like its speech. Filler frames carry no marks:
   * marks say where the agent's audio has played, and an outstanding one keeps the agent audible.
   */
  playWaiting(sounds: WaitingSounds): WaitingCues {
    const audio = this.#audio;
    if (audio === undefined) throw new RangeError("the carrier stream has not started");
    const mix = new WaitingMix(sounds, () => this.#options.clock.now(), () => this.#pacer.wake());
    this.#waiting?.stop();
    this.#waiting = mix;
    const encode = (samples: Int16Array) => audio.filler(samples).map((frame) => ({ data: frame.bytes, ms: audio.ms(frame.bytes.byteLength) }));
    this.#pacer.feed(waitingFeed(mix, () => audio.sampleRate, encode));
    return mix;
  }

  /** The call is ending: the waiting sounds stop; what the agent said still plays. */
  stopWaiting(): void {
    this.#waiting?.stop();
  }

  /** Barge-in or reset: the carrier drops its buffer; marks before the clear no longer count. */
  clear(): void {
    this.#pacer.clear();
    this.#audio?.reset();
    this.playout.cleared();
    const stream = this.#stream;
    if (stream === undefined) return;
    const frame = this.#options.codec.encodeClear(stream.streamId);
    if (frame !== undefined) this.#write(frame);
    // The bed goes on after the clear (docs/telephony.md "Audio while waiting").
    this.#pacer.wake();
  }

  /** The stream is closing: nothing more is written. */
  close(): void {
    this.#closed = true;
    this.#pacer.close();
  }

  /** The pacer's sink: a frame of agent audio (or waiting sounds) leaves now. */
  sendAudio(payload: Uint8Array): void {
    const audio = this.#audio;
    const encoder = this.#encoder;
    if (audio === undefined || encoder === undefined) return;
    this.#write(encoder.encode(payload));
    this.playout.sent(audio.ms(payload.byteLength));
  }

  /** The pacer's sink for events: a carrier stream takes none. */
  sendText(): void {}

  /** Send a mark after everything sent so far. */
  #mark(): void {
    const stream = this.#stream;
    if (stream === undefined) return;
    const name = this.playout.nextMark();
    const frame = this.#options.codec.encodeMark(stream.streamId, name);
    if (frame === undefined) return;
    this.playout.placed(name);
    this.#write(frame);
  }

  /** A frame onto the socket, unless the stream is closing; a carrier that stopped reading is reported. */
  #write(data: string | Uint8Array): void {
    const ws = this.#ws;
    if (this.#closed || ws.readyState !== ws.OPEN) return;
    const frames = this.#frames;
    if (frames !== undefined && typeof data === "string") frames.send(data);
    else ws.send(data);
    if (ws.bufferedAmount > this.#maxBacklogBytes) this.#options.overflow(ws.bufferedAmount);
  }
}
