/**
 * The caller's side of a carrier stream on its way to the session: media put back in `chunk`
 * order (Telnyx may deliver frames out of order), converted at the call's edge to what the
 * session hears, and keypad digits — held, bounded, until the session attaches, then delivered
 * in arrival order (docs/telephony.md "What happens on a call").
 */
import type { Logger } from "../log.js";
import type { CarrierAudio } from "./carrier-audio.js";
import { ChunkOrder } from "./chunk-order.js";
import type { ConnectionHandler } from "./client-connection.js";
import { PreAttachBuffer, type PreAttachLimits } from "./pre-attach.js";

type Inbound = { readonly kind: "audio"; readonly payload: Uint8Array } | { readonly kind: "dtmf"; readonly digit: string };

export class CarrierInbound {
  /** The call's audio edge, once `start` arrived. */
  readonly #audio: () => CarrierAudio | undefined;
  readonly #pending: PreAttachBuffer<Inbound>;
  readonly #order = new ChunkOrder<Uint8Array>();
  #handler: ConnectionHandler | undefined;

  constructor(limits: PreAttachLimits, log: Logger, audio: () => CarrierAudio | undefined) {
    this.#audio = audio;
    this.#pending = new PreAttachBuffer<Inbound>(
      limits,
      (item) => (item.kind === "audio" ? item.payload.byteLength : undefined),
      (bytes) => log.warn({ bytes }, "carrier input before the session started dropped past the limit"),
    );
  }

  /** The session, once attached (playback reports and the close go to it too). */
  get handler(): ConnectionHandler | undefined {
    return this.#handler;
  }

  /** A media frame, numbered `chunk` where the carrier numbers them. */
  media(chunk: number | undefined, payload: Uint8Array): void {
    for (const ordered of this.#order.push(chunk, payload)) this.#input({ kind: "audio", payload: ordered });
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
    const handler = this.#handler;
    if (handler === undefined) return;
    if (item.kind === "dtmf") {
      handler.dtmf?.(item.digit);
      return;
    }
    const audio = this.#audio();
    if (audio === undefined) return;
    const pcm = audio.inbound(item.payload);
    if (pcm.byteLength > 0) handler.audio(pcm);
  }
}
