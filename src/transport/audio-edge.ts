import { FrameSplitter } from "../audio/pcm.js";
import { OPUS_FRAME_MS, createOpusCodec, type OpusCodec } from "../audio/opus.js";
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
  // Opus: the mic default or Opus's full band (48 kHz, RFC 6716 §2).
  const allowed: readonly number[] = chosen === "opus" ? [MIC_SAMPLE_RATE, 48_000] : RESAMPLER_RATES;
  if (!allowed.includes(rate)) return { error: `sampleRate must be one of ${allowed.join(", ")} for ${chosen} (got ${sampleRate ?? ""})` };
  return { codec: chosen, sampleRate: rate };
}

/**
 * Audio at the socket edge, both directions, and the only conversion on the path: client audio →
 * PCM16 at the rate the session's mode declared (`use`; the protocol's 16 kHz until then), session
 * PCM16 at its declared output rate → the client's playback, 24 kHz (docs/protocol.md
 * `ttsSampleRate`; Opus: one packet per 20 ms). Each direction is resampled at most once, with
 * state kept across frames, and not at all where the rates match: a 24 kHz client talking to a
 * 24 kHz service crosses untouched. Opus decodes at 16 kHz and encodes at 24 kHz (libopus converts
 * internally); a session at other rates gets one resample after decode and before encode.
 */
export class AudioEdge {
  readonly format: ClientAudioFormat;
  /** Opus: one codec decodes at the mic rate, one encodes at the playback rate. */
  readonly #opus: { readonly decoder: OpusCodec; readonly encoder: OpusCodec } | undefined;
  #toSession: Resampler | undefined;
  #toClient: Resampler | undefined;
  readonly #frames: FrameSplitter | undefined;
  /** Opus packets that decoded to nothing (corrupt); counted, never fatal. */
  corruptPackets = 0;

  private constructor(format: ClientAudioFormat, opus: { readonly decoder: OpusCodec; readonly encoder: OpusCodec } | undefined) {
    this.format = format;
    this.#opus = opus;
    this.use(DEFAULT_SESSION_AUDIO);
    this.#frames = opus === undefined ? undefined : new FrameSplitter(PLAYBACK_SAMPLE_RATE, OPUS_FRAME_MS);
  }

  /** Opus needs its native codec: loading it may fail (then the client should use pcm16). */
  static async create(format: ClientAudioFormat): Promise<AudioEdge> {
    if (format.codec === "pcm16") return new AudioEdge(format, undefined);
    try {
      // Opus decodes straight to the session's mic rate, whatever rate the client encoded at.
      const [decoder, encoder] = await Promise.all([
        createOpusCodec({ sampleRate: MIC_SAMPLE_RATE, channels: 1 }),
        createOpusCodec({ sampleRate: PLAYBACK_SAMPLE_RATE, channels: 1 }),
      ]);
      return new AudioEdge(format, { decoder, encoder });
    } catch (cause) {
      throw new GatewayError("audio", "opus is not available on this gateway: connect with codec=pcm16", { fatal: true, cause });
    }
  }

  get announced(): AnnouncedFormat {
    return { audioFormat: this.format.codec, sampleRate: this.format.sampleRate, ttsSampleRate: PLAYBACK_SAMPLE_RATE };
  }

  /**
   * What the session hears and speaks (PCM16 only: G.711 is a carrier's), declared by its mode
   * before any audio crosses. Throws (GatewayError "audio") for a rate the resampler does not take.
   */
  use(audio: SessionAudio): void {
    const { input, output } = audio;
    if (input.encoding !== "pcm16" || output.encoding !== "pcm16") throw new RangeError(`a browser socket carries PCM16, not ${input.encoding}/${output.encoding}`);
    // What reaches the edge from the client, and what must leave it: PCM at the client's rate, or Opus's fixed decode/encode rates.
    const fromClient = this.#opus === undefined ? this.format.sampleRate : MIC_SAMPLE_RATE;
    this.#toSession = resamplerBetween(fromClient, input.sampleRate);
    this.#toClient = resamplerBetween(output.sampleRate, PLAYBACK_SAMPLE_RATE);
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

  /** Session PCM16 at its output rate → frames for the client, each with its duration (ms). */
  outbound(pcm: Uint8Array, durationMs: number): { readonly data: Uint8Array; readonly ms: number }[] {
    const playback = resamplePcm(this.#toClient, pcm);
    const opus = this.#opus;
    const frames = this.#frames;
    if (opus === undefined || frames === undefined) return [{ data: playback, ms: durationMs }];
    return frames.push(playback).map((frame) => ({ data: opus.encoder.encode(frame), ms: OPUS_FRAME_MS }));
  }

  /** The end of a reply's audio: the last partial Opus frame, padded with silence to 20 ms. */
  flushOutbound(): { readonly data: Uint8Array; readonly ms: number }[] {
    const opus = this.#opus;
    const frames = this.#frames;
    if (opus === undefined || frames === undefined || frames.pendingBytes === 0) return [];
    const padded = new Uint8Array(frames.frameBytes);
    padded.set(frames.flush());
    return [{ data: opus.encoder.encode(padded), ms: OPUS_FRAME_MS }];
  }

  /** Playback was flushed (reply.cancelled, session.reset): drop the partial frame. */
  resetOutbound(): void {
    this.#frames?.reset();
  }
}

