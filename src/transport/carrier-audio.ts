/**
 * Audio at the carrier edge, both directions (docs/telephony.md "What happens on a call"): the
 * carrier's payload (G.711 μ-law or A-law at 8 kHz, or L16 LE at 8/16/24 kHz) ↔ the session's PCM16 LE
 * at the rates its mode declared (`use`; the protocol's 16 kHz in / 24 kHz out until then),
 * resampled with state kept across frames (band-limited on the way down, see audio/resample.ts):
 * the only conversion on the call's path each way. When the session speaks the carrier's own
 * G.711 the bytes cross untouched: no decode, no resample, no copy.
 *
 * Outbound audio is cut into frames the carrier accepts (its `OutboundFraming`: whole samples at
 * least, Telnyx ≥ 20 ms, Exotel 3.2–100 KB in multiples of 320 bytes, Vonage exactly 20 ms), and —
 * for carriers that echo marks — a frame ends at each mark boundary (every `markEveryMs` of audio,
 * or the first size the carrier allows past it), so the bridge can put a mark right there.
 */
import { bytesOf, type AudioPayload } from "../audio/audio-payload.js";
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from "../audio/g711.js";
import { bytesToSamples, samplesToBytes } from "../audio/pcm.js";
import { DEFAULT_SESSION_AUDIO, G711_SAMPLE_RATE, MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, type G711Format, type SessionAudio } from "../audio/rates.js";
import { RESAMPLER_RATES, resamplerBetween, type Resampler, type ResamplerRate } from "../audio/resample.js";
import type { CarrierEncoding, OutboundFraming } from "./carriers/carrier.js";

/** One outbound frame; `markAfter`: it ends at a mark boundary. */
export interface OutboundFrame {
  readonly bytes: Uint8Array;
  readonly markAfter: boolean;
}

/** Silence in each encoding: μ-law 0xFF, A-law 0xD5 (ITU-T G.711 codes for +0), L16 zero. */
const SILENCE: Readonly<Record<CarrierEncoding, number>> = { mulaw: 0xff, alaw: 0xd5, l16: 0 };

function isResamplerRate(rate: number): rate is ResamplerRate {
  return (RESAMPLER_RATES as readonly number[]).includes(rate);
}

/** The carrier's format, checked: a clear reason when the gateway cannot carry it. */
export function carrierFormatProblem(encoding: CarrierEncoding, sampleRate: number): string | undefined {
  if (encoding !== "l16" && sampleRate !== G711_SAMPLE_RATE) return `G.711 at ${sampleRate} Hz is not telephony audio (${G711_SAMPLE_RATE} Hz expected)`;
  if (!isResamplerRate(sampleRate)) return `sample rate ${sampleRate} Hz is not supported (use ${G711_SAMPLE_RATE}, ${MIC_SAMPLE_RATE} or ${PLAYBACK_SAMPLE_RATE})`;
  return undefined;
}

export class CarrierAudio {
  readonly encoding: CarrierEncoding;
  readonly sampleRate: ResamplerRate;
  readonly bytesPerMs: number;
  #passthrough = false;
  #toSession: Resampler | undefined;
  #toCarrier: Resampler | undefined;
  readonly #framing: OutboundFraming;
  /** Carrier bytes between mark boundaries (Infinity: no marks). */
  readonly #markBytes: number;
  /** Outbound bytes waiting for a whole frame. */
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** Outbound bytes framed since the last mark boundary (or segment end, or clear). */
  #sinceMark = 0;

  /**
   * `framing`: the carrier's frame rules (default: any whole number of samples). `markEveryMs`:
   * end a frame at every such stretch of audio (default: never).
   */
  constructor(encoding: CarrierEncoding, sampleRate: number, framing?: OutboundFraming, markEveryMs?: number) {
    const problem = carrierFormatProblem(encoding, sampleRate);
    if (problem !== undefined || !isResamplerRate(sampleRate)) throw new RangeError(problem ?? "unsupported rate");
    this.encoding = encoding;
    this.sampleRate = sampleRate;
    this.bytesPerMs = ((encoding === "l16" ? 2 : 1) * sampleRate) / 1000;
    this.use(DEFAULT_SESSION_AUDIO);
    const sample = encoding === "l16" ? 2 : 1;
    this.#framing = framing ?? { multipleOf: sample, minBytes: sample, maxBytes: Number.POSITIVE_INFINITY };
    this.#markBytes = markEveryMs === undefined ? Number.POSITIVE_INFINITY : markEveryMs * this.bytesPerMs;
  }

  /** The G.711 format the session could speak end to end, if the carrier sends G.711. */
  get g711(): G711Format | undefined {
    return this.encoding === "mulaw" ? "pcmu" : this.encoding === "alaw" ? "pcma" : undefined;
  }

  get passthrough(): boolean {
    return this.#passthrough;
  }

  /**
   * What the session hears and speaks, as its mode declared it: the carrier's own G.711 both ways
   * (bytes cross untouched), or PCM16 at any resampler rate (one resample each way, none where the
   * rates match). Before any audio crosses; a format the carrier cannot meet throws (a rate the
   * resampler does not take: GatewayError "audio").
   */
  use(audio: SessionAudio): void {
    const { input, output } = audio;
    if (input.encoding !== "pcm16" || output.encoding !== "pcm16") {
      if (input.encoding !== this.g711 || output.encoding !== this.g711) {
        throw new RangeError(`the carrier sends ${this.g711 ?? this.encoding}; the session asked for ${input.encoding} in, ${output.encoding} out`);
      }
      this.#passthrough = true;
      this.#toSession = undefined;
      this.#toCarrier = undefined;
      return;
    }
    this.#passthrough = false;
    this.#toSession = resamplerBetween(this.sampleRate, input.sampleRate);
    this.#toCarrier = resamplerBetween(output.sampleRate, this.sampleRate);
  }

  /** Ms of audio in `bytes` of carrier payload. */
  ms(bytes: number): number {
    return bytes / this.bytesPerMs;
  }

  /** One carrier payload → what the session hears (PCM16 at its declared input rate, or the G.711 payload itself in passthrough, not decoded if it is still text). */
  inbound<P extends AudioPayload>(payload: P): P | Uint8Array {
    if (this.#passthrough) return payload;
    const samples = this.#decode(bytesOf(payload));
    return samplesToBytes(this.#toSession === undefined ? samples : this.#toSession.process(samples));
  }

  /** Carrier payload → PCM16 samples at the call's rate. */
  #decode(payload: Uint8Array): Int16Array {
    return this.encoding === "mulaw" ? decodeMulaw(payload) : this.encoding === "alaw" ? decodeAlaw(payload) : bytesToSamples(payload);
  }

  /**
   * Session audio (PCM16 at its declared output rate, or G.711 in passthrough) → carrier frames, cut as the carrier requires.
   * `under`: the link's waiting audio, mixed in at the call's rate (transport/waiting-mix.ts); in
   * passthrough the G.711 is then decoded and re-encoded around it, else it crosses untouched.
   */
  outbound(audio: Uint8Array, under?: (samples: Int16Array, rate: number) => Int16Array): OutboundFrame[] {
    if (under === undefined) return this.#frame(this.#passthrough ? audio : this.#encode(audio));
    return this.#frame(this.#encodeAtRate(under(this.#passthrough ? this.#decode(audio) : this.#resampled(audio), this.sampleRate)));
  }

  /** Filler PCM16 already at the call's rate (the waiting sounds) → carrier frames, after any audio before it. */
  filler(samples: Int16Array): OutboundFrame[] {
    return this.#frame(this.#encodeAtRate(samples));
  }

  /** Samples (at the call's rate) the last partial frame lacks to be one the carrier takes: what a waiting bed fills instead of silence. */
  get shortSamples(): number {
    if (this.#pendingBytes === 0) return 0;
    const { multipleOf, minBytes } = this.#framing;
    const size = Math.max(minBytes, Math.ceil(this.#pendingBytes / multipleOf) * multipleOf);
    return (size - this.#pendingBytes) / (this.encoding === "l16" ? 2 : 1);
  }

  /** The end of a segment: the last partial frame, padded with silence to the carrier's minimum. */
  flush(): OutboundFrame[] {
    this.#sinceMark = 0;
    if (this.#pendingBytes === 0) return [];
    const { multipleOf, minBytes } = this.#framing;
    const held = this.#take(this.#pendingBytes);
    const size = Math.max(minBytes, Math.ceil(held.byteLength / multipleOf) * multipleOf);
    if (size === held.byteLength) return [{ bytes: held, markAfter: false }];
    const padded = new Uint8Array(size).fill(SILENCE[this.encoding]);
    padded.set(held);
    return [{ bytes: padded, markAfter: false }];
  }

  /** Playback was cleared: drop the partial frame; mark boundaries count from here. */
  reset(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#sinceMark = 0;
  }

  #encode(pcm: Uint8Array): Uint8Array {
    return this.#encodeAtRate(this.#resampled(pcm));
  }

  /** Session PCM16 → samples at the call's rate. */
  #resampled(pcm: Uint8Array): Int16Array {
    const samples = bytesToSamples(pcm);
    return this.#toCarrier === undefined ? samples : this.#toCarrier.process(samples);
  }

  /** PCM16 samples at the call's rate → the carrier's payload. */
  #encodeAtRate(samples: Int16Array): Uint8Array {
    return this.encoding === "mulaw" ? encodeMulaw(samples) : this.encoding === "alaw" ? encodeAlaw(samples) : samplesToBytes(samples);
  }

  /**
   * Cut what is pending into frames the carrier accepts, as soon as there is one. A frame ends at
   * the next mark boundary when a legal frame can (exactly there, or the first legal size past
   * it). Before the boundary, a frame is sent only if a legal one can still end at the boundary
   * after it (else the audio waits a little for that one: Exotel's 3.2 KB minimum would otherwise
   * push every other mark a whole chunk late). What is left waits for more audio or `flush`.
   */
  #frame(payload: Uint8Array): OutboundFrame[] {
    if (payload.byteLength > 0) {
      this.#pending.push(payload);
      this.#pendingBytes += payload.byteLength;
    }
    const { multipleOf, minBytes, maxBytes } = this.#framing;
    const frames: OutboundFrame[] = [];
    while (this.#pendingBytes >= minBytes) {
      const room = Math.min(this.#pendingBytes, maxBytes);
      const toBoundary = this.#markBytes - this.#sinceMark;
      const atBoundary = Math.max(minBytes, Math.ceil(toBoundary / multipleOf) * multipleOf);
      let size: number;
      if (atBoundary <= room) size = atBoundary;
      else if (atBoundary > maxBytes) size = Math.floor(room / multipleOf) * multipleOf;
      else size = Math.floor(Math.min(room, toBoundary - minBytes) / multipleOf) * multipleOf;
      if (size < minBytes || size === 0) break;
      this.#sinceMark += size;
      const markAfter = this.#sinceMark >= this.#markBytes;
      if (markAfter) this.#sinceMark = 0;
      frames.push({ bytes: this.#take(size), markAfter });
    }
    return frames;
  }

  /** The first `n` pending bytes, as one array (a view, not a copy, when one pending piece holds them). */
  #take(n: number): Uint8Array {
    const first = this.#pending[0];
    if (first !== undefined && first.byteLength >= n) {
      this.#pendingBytes -= n;
      if (first.byteLength === n) {
        this.#pending.shift();
        return first;
      }
      this.#pending[0] = first.subarray(n);
      return first.subarray(0, n);
    }
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
