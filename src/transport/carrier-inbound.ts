/**
 * The caller's side of a carrier stream on its way to the session: media put back in `chunk`
 * order (Telnyx may deliver frames out of order), converted at the call's edge to what the
 * session hears, and keypad digits — held, bounded, until the session attaches, then delivered
 * in arrival order (docs/telephony.md "What happens on a call").
 */
import type { AudioPayload } from "../audio/audio-payload.js";
import type { Logger } from "../log.js";
import type { CarrierAudio } from "./carrier-audio.js";
import { ChunkOrder } from "./chunk-order.js";
import type { ConnectionHandler, DirectListener } from "./client-connection.js";
import { PreAttachBuffer, type PreAttachLimits } from "./pre-attach.js";

type Inbound = { readonly kind: "audio"; readonly payload: AudioPayload } | { readonly kind: "dtmf"; readonly digit: string };

export class CarrierInbound {
  /**
   * The call's audio edge, once `start` arrived: held in a field rather than asked of the bridge
   * through a closure, one object fewer touched per frame (on a process running hundreds of calls
   * each is a cache miss: docs/benchmarks.md, `bench:carrier-counts`).
   */
  #audio: CarrierAudio | undefined;
  readonly #pending: PreAttachBuffer<Inbound>;
  readonly #order = new ChunkOrder<AudioPayload>();
  #handler: ConnectionHandler | undefined;
  /** The session's mode, when it hears the caller directly (`ClientLink.hearDirectly`). */
  #direct: DirectListener | undefined;

  constructor(limits: PreAttachLimits, log: Logger) {
    this.#pending = new PreAttachBuffer<Inbound>(
      limits,
      (item) => (item.kind === "audio" ? item.payload.byteLength : undefined),
      (bytes) => log.warn({ bytes }, "carrier input before the session started dropped past the limit"),
    );
  }

  /** The session, once attached (the close goes to it too). */
  get handler(): ConnectionHandler | undefined {
    return this.#handler;
  }

  /** After `attach`: media and playback reports go to `listener` rather than the handler (undefined: the handler again). */
  hearDirectly(listener: DirectListener | undefined): void {
    this.#direct = this.#handler === undefined ? undefined : listener;
  }

  /** The caller still has `bufferedMs` of agent audio to play (dropped before the session attaches). */
  playback(bufferedMs: number): void {
    const direct = this.#direct;
    if (direct !== undefined) direct.playbackProgress(bufferedMs);
    else this.#handler?.playback(bufferedMs);
  }

  /** The stream started: its audio edge, which every media frame crosses (frames held until now cross it at `attach`). */
  start(audio: CarrierAudio): void {
    this.#audio = audio;
  }

  /** A media frame's payload (bytes, or the carrier's base64 text not yet decoded), numbered `chunk` where the carrier numbers them. */
  media(chunk: number | undefined, payload: AudioPayload): void {
    if (this.#order.due(chunk)) this.#audioIn(payload);
    else for (const inOrder of this.#order.push(chunk, payload)) this.#audioIn(inOrder);
  }

  dtmf(digit: string): void {
    this.#input({ kind: "dtmf", digit });
  }

  /** The session attaches: what was held is delivered first, in order. */
  attach(handler: ConnectionHandler): void {
    this.#handler = handler;
    for (const item of this.#pending.drain()) this.#deliver(item);
  }

  #input(item: Inbound): void {
    if (this.#handler !== undefined) this.#deliver(item);
    else this.#pending.hold(item);
  }

  #deliver(item: Inbound): void {
    if (item.kind === "audio") this.#audioIn(item.payload);
    else this.#handler?.dtmf?.(item.digit);
  }

  /** A frame's payload, in order: to the session (or its mode), or held until it attaches. */
  #audioIn(payload: AudioPayload): void {
    const handler = this.#handler;
    if (handler === undefined) {
      this.#pending.hold({ kind: "audio", payload });
      return;
    }
    const audio = this.#audio;
    if (audio === undefined) return;
    // In G.711 passthrough the payload crosses untouched, still the carrier's own text where it was one.
    const heard = audio.inbound(payload);
    if (heard.byteLength > 0) (this.#direct ?? handler).audio(heard);
  }
}
