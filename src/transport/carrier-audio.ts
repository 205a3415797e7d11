/**
 * Audio at the carrier edge, both directions (behaviour.md "Telephony edge"): the carrier's
 * payload (G.711 μ-law or A-law at 8 kHz, or L16 LE at 8/16/24 kHz) ↔ the session's PCM16 LE
 * (mic 16 kHz in, playback 24 kHz out), resampled with state kept across frames (band-limited
 * on the way down, see audio/resample.ts). In passthrough the session speaks the carrier's own
 * G.711 and the bytes cross untouched: no decode, no resample, no copy.
 */
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from "../audio/g711.js";
import { bytesToSamples, samplesToBytes } from "../audio/pcm.js";
import { Resampler, RESAMPLER_RATES, type ResamplerRate } from "../audio/resample.js";
import { SESSION_MIC_RATE, SESSION_PLAYBACK_RATE } from "./audio-edge.js";
import type { CarrierEncoding, OutboundFraming } from "./carriers/carrier.js";

/** G.711 the session may speak end to end instead of PCM16 (s2s providers that accept it). */
export type G711Format = "pcmu" | "pcma";

/** Silence in each encoding: μ-law 0xFF, A-law 0xD5 (ITU-T G.711 codes for +0), L16 zero. */
const SILENCE: Readonly<Record<CarrierEncoding, number>> = { mulaw: 0xff, alaw: 0xd5, l16: 0 };

function isResamplerRate(rate: number): rate is ResamplerRate {
  return (RESAMPLER_RATES as readonly number[]).includes(rate);
}

/** The carrier's format, checked: a clear reason when the gateway cannot carry it. */
export function carrierFormatProblem(encoding: CarrierEncoding, sampleRate: number): string | undefined {
  if (encoding !== "l16" && sampleRate !== 8000) return `G.711 at ${sampleRate} Hz is not telephony audio (8000 Hz expected)`;
  if (!isResamplerRate(sampleRate)) return `sample rate ${sampleRate} Hz is not supported (use 8000, 16000 or 24000)`;
  return undefined;
}

export class CarrierAudio {
  readonly encoding: CarrierEncoding;
  readonly sampleRate: number;
  readonly bytesPerMs: number;
  #passthrough = false;
  readonly #toSession: Resampler | undefined;
  readonly #toCarrier: Resampler | undefined;
  readonly #framing: OutboundFraming | undefined;
  /** Outbound bytes waiting for a whole frame (framed carriers only). */
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;

  constructor(encoding: CarrierEncoding, sampleRate: number, framing?: OutboundFraming) {
    const problem = carrierFormatProblem(encoding, sampleRate);
    if (problem !== undefined || !isResamplerRate(sampleRate)) throw new RangeError(problem ?? "unsupported rate");
    this.encoding = encoding;
    this.sampleRate = sampleRate;
    this.bytesPerMs = ((encoding === "l16" ? 2 : 1) * sampleRate) / 1000;
    this.#toSession = sampleRate === SESSION_MIC_RATE ? undefined : new Resampler(sampleRate, SESSION_MIC_RATE);
    this.#toCarrier = sampleRate === SESSION_PLAYBACK_RATE ? undefined : new Resampler(SESSION_PLAYBACK_RATE, sampleRate);
    this.#framing = framing;
  }

  /** The G.711 format the session could speak end to end, if the carrier sends G.711. */
  get g711(): G711Format | undefined {
    return this.encoding === "mulaw" ? "pcmu" : this.encoding === "alaw" ? "pcma" : undefined;
  }

  get passthrough(): boolean {
    return this.#passthrough;
  }

  /** From now on the session speaks the carrier's G.711: bytes cross untouched. */
  enablePassthrough(): void {
    if (this.g711 === undefined) throw new RangeError(`passthrough needs G.711; the carrier sends ${this.encoding}`);
    this.#passthrough = true;
  }

  /** Ms of audio in `bytes` of carrier payload. */
  ms(bytes: number): number {
    return bytes / this.bytesPerMs;
  }

  /** One carrier payload → what the session hears (PCM16 at 16 kHz, or the G.711 bytes in passthrough). */
  inbound(payload: Uint8Array): Uint8Array {
    if (this.#passthrough) return payload;
    const samples = this.encoding === "mulaw" ? decodeMulaw(payload) : this.encoding === "alaw" ? decodeAlaw(payload) : bytesToSamples(payload);
    return samplesToBytes(this.#toSession === undefined ? samples : this.#toSession.process(samples));
  }

  /** Session audio (PCM16 at 24 kHz, or G.711 in passthrough) → carrier payloads, framed as the carrier requires. */
  outbound(audio: Uint8Array): Uint8Array[] {
    const payload = this.#passthrough ? audio : this.#encode(audio);
    return this.#frame(payload);
  }

  /** The end of a segment: the last partial frame, padded with silence to the carrier's minimum. */
  flush(): Uint8Array[] {
    const framing = this.#framing;
    if (framing === undefined || this.#pendingBytes === 0) return [];
    const held = this.#take(this.#pendingBytes);
    const size = Math.max(framing.minBytes, Math.ceil(held.byteLength / framing.multipleOf) * framing.multipleOf);
    const padded = new Uint8Array(size).fill(SILENCE[this.encoding]);
    padded.set(held);
    return [padded];
  }

  /** Playback was cleared: drop the partial frame. */
  reset(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #encode(pcm: Uint8Array): Uint8Array {
    const samples = bytesToSamples(pcm);
    const resampled = this.#toCarrier === undefined ? samples : this.#toCarrier.process(samples);
    return this.encoding === "mulaw" ? encodeMulaw(resampled) : this.encoding === "alaw" ? encodeAlaw(resampled) : samplesToBytes(resampled);
  }

  #frame(payload: Uint8Array): Uint8Array[] {
    const framing = this.#framing;
    if (framing === undefined) return payload.byteLength === 0 ? [] : [payload];
    if (payload.byteLength > 0) {
      this.#pending.push(payload);
      this.#pendingBytes += payload.byteLength;
    }
    const frames: Uint8Array[] = [];
    while (this.#pendingBytes >= framing.minBytes) {
      const whole = Math.floor(Math.min(this.#pendingBytes, framing.maxBytes) / framing.multipleOf) * framing.multipleOf;
      frames.push(this.#take(whole));
    }
    return frames;
  }

  /** The first `n` pending bytes, as one array. */
  #take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const head = this.#pending[0];
      if (head === undefined) break;
      const part = Math.min(head.byteLength, n - filled);
      out.set(head.subarray(0, part), filled);
      filled += part;
      if (part === head.byteLength) this.#pending.shift();
      else this.#pending[0] = head.subarray(part);
    }
    this.#pendingBytes -= filled;
    return out;
  }
}
