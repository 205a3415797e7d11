/**
 * What the gateway's two socket links share (docs/architecture.md "Client links"): the browser's
 * protocol v1 (`ClientConnection`) and the Realtime front door (`realtime/connection.ts`). One
 * owner for the socket plumbing (`PeerSocket`), the `AudioEdge` (one conversion each way), the
 * `Pacer` (the 1.5 s lead and the after-audio ordering) and the agent's waiting sounds mixed into
 * the agent's audio (transport/waiting-mix.ts). A subclass keeps only its wire format: how frames
 * parse, how events and paced audio are written.
 */
import type { Writable } from "node:stream";
import type { WebSocket } from "ws";
import type { SessionAudio } from "../audio/rates.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import { AudioEdge, type AnnouncedFormat, type ClientAudioFormat } from "./audio-edge.js";
import type { ClientLink, ConnectionHandler } from "./client-connection.js";
import { Pacer } from "./pacer.js";
import type { InputBudgetLimits } from "./input-budget.js";
import { PeerSocket } from "./peer-socket.js";
import type { EventBody, Limits, ServerEvent } from "./protocol.js";
import { WaitingMix, waitingFeed, type WaitingCues } from "./waiting-mix.js";

export interface SocketLinkOptions {
  readonly clock: Clock;
  readonly log: Logger;
  /** The pacer's lead (ms; transport/pacer.ts `DEFAULT_LEAD_MS` when absent). */
  readonly leadMs?: number | undefined;
  /** The client's audio at the edge. */
  readonly format: ClientAudioFormat;
  readonly limits: Limits;
  /** The peer's input budget (transport/input-budget.ts). */
  readonly budget: InputBudgetLimits;
  /**
   * The socket under ws, as the upgrade handed it over: text frames are written onto it whole
   * (`providers/text-frame.ts`). Absent: through ws's `send`.
   */
  readonly socket?: Pick<Writable, "write"> | undefined;
}

/**
 * The shared link; a subclass supplies its wire format through the hooks below (each called only
 * after construction: by the socket, the pacer or the session).
 */
export abstract class SocketLink<T> implements ClientLink {
  protected readonly clock: Clock;
  protected readonly log: Logger;
  protected readonly pacer: Pacer;
  protected readonly peer: PeerSocket<T>;
  #edge: AudioEdge | undefined;
  /** The agent's waiting sounds, once the mode asked for them. */
  protected waiting: WaitingMix | undefined;
  readonly ready: Promise<AnnouncedFormat>;
  readonly hungUp: Promise<void>;

  protected constructor(ws: WebSocket, options: SocketLinkOptions) {
    this.clock = options.clock;
    this.log = options.log;
    this.pacer = new Pacer(
      { sendText: (text) => this.sendText(text), sendAudio: (chunk) => this.sendAudio(chunk), sendFiller: (chunk) => this.sendFiller(chunk) },
      options.clock,
      options.leadMs === undefined ? {} : { leadMs: options.leadMs },
    );
    this.ready = AudioEdge.create(options.format).then((edge) => {
      this.#edge = edge;
      return edge.announced;
    });
    // A failure is the session's to report (it awaits `ready`); never an unhandled rejection.
    this.ready.catch(() => {});
    this.peer = new PeerSocket<T>(ws, {
      clock: options.clock,
      log: options.log,
      limits: options.limits,
      budget: options.budget,
      socket: options.socket,
      receive: (data, isBinary) => this.receive(data, isBinary),
      dropped: (count) => this.dropped(count),
      audioBytesOf: (item) => this.audioBytesOf(item),
      overflow: () => this.overflow(),
      hand: (handler, item) => this.hand(handler, item),
      stopped: () => {
        this.pacer.close();
        this.stopped();
      },
    });
    this.hungUp = this.peer.hungUp;
  }

  /** One frame, once the budget lets it in (`PeerSocketOptions.receive`). */
  protected abstract receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void;
  /** Frames dropped over the budget: tell the peer. */
  protected abstract dropped(count: number): void;
  /** Audio bytes an input holds before the session attaches (undefined: a command). */
  protected abstract audioBytesOf(item: T): number | undefined;
  /** Input past the pre-attach limits was dropped: tell the peer. */
  protected abstract overflow(): void;
  /** Hand one input to the session. */
  protected abstract hand(handler: ConnectionHandler, item: T): void;
  /** A paced event's text (`Pacer.event`). */
  protected abstract sendText(text: string): void;
  /** Paced audio, as the edge framed it. */
  protected abstract sendAudio(chunk: Uint8Array): void;
  /** Paced waiting sounds (transport/waiting-mix.ts): as agent audio unless the wire tells them apart. */
  protected sendFiller(chunk: Uint8Array): void {
    this.sendAudio(chunk);
  }

  /** The link is done sending (the pacer has stopped): anything else of the subclass's to stop. */
  protected stopped(): void {}

  /** Emit an event now (see `ClientLink.emit`): undefined when the link sends it to no one. */
  abstract emit(body: EventBody): ServerEvent | undefined;

  get open(): boolean {
    return this.peer.open;
  }

  /** The edge once `ready` has resolved (undefined before). */
  protected get edge(): AudioEdge | undefined {
    return this.#edge;
  }

  /** Agent audio through the edge, the waiting bed mixed under it, into the pacer. */
  audio(chunk: Uint8Array, durationMs: number): void {
    const edge = this.#edge;
    if (edge === undefined) return;
    const mix = this.waiting;
    const frames = mix === undefined ? edge.outbound(chunk, durationMs) : edge.outbound(chunk, durationMs, (samples, rate) => mix.under(samples, rate));
    for (const frame of frames) this.pacer.audio(frame.data, frame.ms);
  }

  playWaiting(sounds: WaitingSounds): WaitingCues {
    const edge = this.readyEdge();
    const mix = new WaitingMix(sounds, () => this.clock.now(), () => this.pacer.wake());
    this.waiting?.stop();
    this.waiting = mix;
    this.pacer.feed(waitingFeed(mix, () => edge.playbackRate, (samples) => edge.filler(samples)));
    return mix;
  }

  get playbackRate(): number {
    return this.readyEdge().playbackRate;
  }

  useAudio(audio: SessionAudio): void {
    this.readyEdge().use(audio);
  }

  protected readyEdge(): AudioEdge {
    if (this.#edge === undefined) throw new RangeError("the audio edge is not ready");
    return this.#edge;
  }

  attach(handler: ConnectionHandler): void {
    this.peer.attach(handler);
  }

  close(code: number, reason: string): void {
    this.peer.close(code, reason);
  }

  /** Client audio through the edge (decode, resample) to the session. */
  protected audioIn(handler: ConnectionHandler, frame: Uint8Array): void {
    const edge = this.#edge;
    if (edge === undefined) return;
    const pcm = edge.inbound(frame);
    if (pcm.byteLength > 0) handler.audio(pcm);
  }
}
