import { bytesToSamples, FrameSplitter, samplesToBytes } from "../audio/pcm.js";
import { OPUS_FRAME_MS, OPUS_FULL_BAND_RATE, isOpusRate, loadOpus, type OpusCodec, type OpusCodecs, type OpusSampleRate } from "../audio/opus.js";
import { DEFAULT_SESSION_AUDIO, MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, type SessionAudio } from "../audio/rates.js";
import { RESAMPLER_RATES, resamplePcm, resamplerBetween, type Resampler } from "../audio/resample.js";
import { GatewayError } from "../errors.js";

/** What a client declared on connect (`?codec=`, `?sampleRate=`). */
export interface ClientAudioFormat {
  readonly codec: "pcm16" | "opus";
  /** The mic rate the client sends (Hz). */
  readonly sampleRate: number;
}

/** What `session.configured` announces. */
export interface AnnouncedFormat {
  readonly audioFormat: "pcm16" | "opus";
  readonly sampleRate: number;
  readonly ttsSampleRate: number;
}

/** Parse `?codec=` and `?sampleRate=`: a clear error naming the parameter, or the format. */
export function parseClientFormat(codec: string | null, sampleRate: string | null): ClientAudioFormat | { readonly error: string } {
  const chosen = codec ?? "pcm16";
  if (chosen !== "pcm16" && chosen !== "opus") return { error: `codec must be pcm16 or opus (got ${JSON.stringify(chosen)})` };
  const rate = sampleRate === null ? MIC_SAMPLE_RATE : Number(sampleRate);
  // Opus: the mic default or Opus's full band (RFC 6716 §2).
  const allowed: readonly number[] = chosen === "opus" ? [MIC_SAMPLE_RATE, OPUS_FULL_BAND_RATE] : RESAMPLER_RATES;
  if (!allowed.includes(rate)) return { error: `sampleRate must be one of ${allowed.join(", ")} for ${chosen} (got ${sampleRate ?? ""})` };
  return { codec: chosen, sampleRate: rate };
}

/** Where a session rate is not one libopus codes at, Opus runs at its full band (48 kHz, RFC 6716 §2) and the edge resamples once. */
function opusRateFor(rate: number): OpusSampleRate {
  return isOpusRate(rate) ? rate : OPUS_FULL_BAND_RATE;
}

/** Opus at the edge: one codec decodes the client's packets, one encodes playback, each at a session rate. */
interface OpusPath {
  readonly decoder: OpusCodec;
  readonly encoder: OpusCodec;
  /** Playback cut into 20 ms frames at the encoder's rate. */
  readonly frames: FrameSplitter;
}

/**
 * Audio at the socket edge, both directions, and the only conversion on the path: client audio →
 * PCM16 at the rate the session's mode declared (`use`; the protocol's 16 kHz until then), session
 * PCM16 at its declared output rate → the client's playback. Each direction is resampled at most
 * once, with state kept across frames, and not at all where the rates match.
 * - PCM16: the client's `?sampleRate` → the session's input rate; the session's output rate →
 *   24 kHz (docs/protocol.md `ttsSampleRate`): a 24 kHz client talking to a 24 kHz service crosses untouched.
 * - Opus (one packet per 20 ms): libopus decodes and encodes at 8, 12, 16, 24 or 48 kHz whatever
 *   rate the packets carry (RFC 6716; it converts internally), so the decoder runs at the session's
 *   input rate and the encoder at its output rate and the edge resamples nothing; a session rate
 *   libopus does not take (44.1 kHz) is coded at 48 kHz with one resample.
 */
export class AudioEdge {
  readonly format: ClientAudioFormat;
  /** Opus: the loaded addon, to make codecs when the session declares its rates. */
  readonly #codecs: OpusCodecs | undefined;
  #opus: OpusPath | undefined;
  #toSession: Resampler | undefined;
  #toClient: Resampler | undefined;
  /** Opus packets that decoded to nothing (corrupt); counted, never fatal. */
  corruptPackets = 0;

  private constructor(format: ClientAudioFormat, codecs: OpusCodecs | undefined) {
    this.format = format;
    this.#codecs = codecs;
    this.use(DEFAULT_SESSION_AUDIO);
  }

  /** Opus needs its native codec: loading it may fail (then the client should use pcm16). */
  static async create(format: ClientAudioFormat): Promise<AudioEdge> {
    if (format.codec === "pcm16") return new AudioEdge(format, undefined);
    try {
      return new AudioEdge(format, await loadOpus());
    } catch (cause) {
      throw new GatewayError("audio", "opus is not available on this gateway: connect with codec=pcm16", { fatal: true, cause });
    }
  }

  get announced(): AnnouncedFormat {
    return { audioFormat: this.format.codec, sampleRate: this.format.sampleRate, ttsSampleRate: PLAYBACK_SAMPLE_RATE };
  }

  /** The rate (Hz) agent audio reaches the client at with no resample here: PCM16, the protocol's 24 kHz; Opus, its encoder's. */
  get playbackRate(): number {
    return this.#opus?.encoder.sampleRate ?? PLAYBACK_SAMPLE_RATE;
  }

  /**
   * What the session hears and speaks (PCM16 only: G.711 is a carrier's), declared by its mode
   * before any audio crosses. Throws (GatewayError "audio") for a rate the resampler does not take.
   */
  use(audio: SessionAudio): void {
    const { input, output } = audio;
    if (input.encoding !== "pcm16" || output.encoding !== "pcm16") throw new RangeError(`a browser socket carries PCM16, not ${input.encoding}/${output.encoding}`);
    const codecs = this.#codecs;
    if (codecs === undefined) {
      this.#toSession = resamplerBetween(this.format.sampleRate, input.sampleRate);
      this.#toClient = resamplerBetween(output.sampleRate, PLAYBACK_SAMPLE_RATE);
      return;
    }
    const current = this.#opus;
    const at = (codec: OpusCodec | undefined, rate: OpusSampleRate): OpusCodec => (codec?.sampleRate === rate ? codec : codecs.create({ sampleRate: rate, channels: 1 }));
    const decoder = at(current?.decoder, opusRateFor(input.sampleRate));
    const encoder = at(current?.encoder, opusRateFor(output.sampleRate));
    const frames = current !== undefined && encoder === current.encoder ? current.frames : new FrameSplitter(encoder.sampleRate, OPUS_FRAME_MS);
    this.#opus = { decoder, encoder, frames };
    this.#toSession = resamplerBetween(decoder.sampleRate, input.sampleRate);
    this.#toClient = resamplerBetween(output.sampleRate, encoder.sampleRate);
  }

  /** One client binary frame → PCM16 LE at the session's input rate (empty for a corrupt packet). */
  inbound(frame: Uint8Array): Uint8Array {
    let pcm = frame;
    if (this.#opus !== undefined) {
      pcm = this.#opus.decoder.decode(frame);
      if (pcm.byteLength === 0) {
        this.corruptPackets += 1;
        return pcm;
      }
    }
    return resamplePcm(this.#toSession, pcm);
  }

  /**
   * Session PCM16 at its output rate → frames for the client, each with its duration (ms).
   * `under`: the link's waiting audio, mixed in at the playback rate (transport/waiting-mix.ts).
   */
  outbound(pcm: Uint8Array, durationMs: number, under?: (samples: Int16Array, rate: number) => Int16Array): { readonly data: Uint8Array; readonly ms: number }[] {
    let playback = resamplePcm(this.#toClient, pcm);
    if (under !== undefined) playback = samplesToBytes(under(bytesToSamples(playback), this.playbackRate));
    return this.#frames(playback, durationMs);
  }

  /** Filler PCM16 already at `playbackRate` (the waiting sounds) → frames for the client, after any agent audio before it. */
  filler(samples: Int16Array): { readonly data: Uint8Array; readonly ms: number }[] {
    return this.#frames(samplesToBytes(samples), (samples.length / this.playbackRate) * 1000);
  }

  #frames(playback: Uint8Array, durationMs: number): { readonly data: Uint8Array; readonly ms: number }[] {
    const opus = this.#opus;
    if (opus === undefined) return [{ data: playback, ms: durationMs }];
    return opus.frames.push(playback).map((frame) => ({ data: opus.encoder.encode(frame), ms: OPUS_FRAME_MS }));
  }

  /** Samples (at `playbackRate`) the last partial Opus frame lacks: what a waiting bed fills instead of silence (0 for PCM16). */
  get outboundShortSamples(): number {
    const opus = this.#opus;
    return opus === undefined || opus.frames.pendingBytes === 0 ? 0 : (opus.frames.frameBytes - opus.frames.pendingBytes) / 2;
  }

  /** The end of a reply's audio: the last partial Opus frame, padded with silence to 20 ms. */
  flushOutbound(): { readonly data: Uint8Array; readonly ms: number }[] {
    const opus = this.#opus;
    if (opus === undefined || opus.frames.pendingBytes === 0) return [];
    const padded = new Uint8Array(opus.frames.frameBytes);
    padded.set(opus.frames.flush());
    return [{ data: opus.encoder.encode(padded), ms: OPUS_FRAME_MS }];
  }

  /** Playback was flushed (reply.cancelled, session.reset): drop the partial frame. */
  resetOutbound(): void {
    this.#opus?.frames.reset();
  }
}
