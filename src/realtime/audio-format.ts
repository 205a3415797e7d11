/**
 * The audio formats of `WS /v1/realtime` (docs/realtime.md "Audio"): the Realtime API's GA
 * `audio/pcm` (PCM16 at 24 kHz), `audio/pcmu` and `audio/pcma` (G.711 μ-law and A-law at 8 kHz,
 * ITU-T G.711), each direction chosen on its own by `session.update`. `RealtimeAudioPath` converts
 * G.711 as the carriers' edge does (transport/carrier-audio.ts, the pure codecs of audio/g711.ts):
 * μ-law/A-law in → the session's PCM16 (one resample); the paced 24 kHz PCM16 out → 8 kHz G.711
 * (one resample). PCM at 24 kHz crosses the link's `AudioEdge` alone.
 */
import { G711_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, bytesPerSample, formatDurationMs, g711, pcm16, type AudioFormat, type SessionAudio } from "../audio/rates.js";
import { CarrierAudio } from "../transport/carrier-audio.js";

/** A Realtime audio format, as `session.update` names it and `session.updated` shows it (the `openai` package's `RealtimeAudioFormats`). */
export type RealtimeAudioFormat = { readonly type: "audio/pcm"; readonly rate: 24000 } | { readonly type: "audio/pcmu" } | { readonly type: "audio/pcma" };

/** The Realtime default, both ways. */
export const PCM24: RealtimeAudioFormat = { type: "audio/pcm", rate: 24000 };

/** The client's audio in one direction: the bytes it sends or is sent. */
export function audioFormatOf(format: RealtimeAudioFormat): AudioFormat {
  return format.type === "audio/pcm" ? pcm16(format.rate) : g711(format.type === "audio/pcmu" ? "pcmu" : "pcma");
}

/** Ms of audio in `bytes` of `format` (the input clock: `audio_start_ms`, `audio_end_ms`). */
export function realtimeAudioMs(bytes: number, format: RealtimeAudioFormat): number {
  return formatDurationMs(bytes, audioFormatOf(format));
}

/** Bytes a second of `format`: 48 000 for 24 kHz PCM16, 8 000 for G.711. */
export function realtimeBytesPerSecond(format: RealtimeAudioFormat): number {
  const audio = audioFormatOf(format);
  return bytesPerSample(audio) * audio.sampleRate;
}

/** A format `session.update` names, checked: the format, or the problem and the field at fault (below `param`). */
export function parseRealtimeAudioFormat(value: unknown): RealtimeAudioFormat | { readonly problem: string; readonly at?: "type" | "rate" } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: 'must be an object like {"type":"audio/pcm","rate":24000}' };
  const { type, rate } = value as { type?: unknown; rate?: unknown };
  if (type === "audio/pcmu" || type === "audio/pcma") {
    // G.711 has one rate; a rate named with it is the client's mistake, not an 8 kHz request.
    if (rate !== undefined && rate !== G711_SAMPLE_RATE) return { problem: `${type} is 8000 Hz (got ${JSON.stringify(rate)})`, at: "rate" };
    return { type };
  }
  if (type !== "audio/pcm" && type !== undefined) return { problem: `type must be "audio/pcm", "audio/pcmu" or "audio/pcma" (got ${JSON.stringify(type)})`, at: "type" };
  if (rate !== undefined && rate !== 24000) return { problem: `rate must be 24000 for audio/pcm (got ${JSON.stringify(rate)})`, at: "rate" };
  return PCM24;
}

const g711Carrier = (format: RealtimeAudioFormat): "mulaw" | "alaw" | undefined => (format.type === "audio/pcmu" ? "mulaw" : format.type === "audio/pcma" ? "alaw" : undefined);

/**
 * The G.711 legs of one Realtime link. Inbound: the client's G.711 → PCM16 at the session's input
 * rate (`inbound`; undefined for `audio/pcm`, which the link's edge converts). Outbound: the agent's
 * paced audio, 24 kHz PCM16 (the edge's `playbackRate`), → the client's format. A change of
 * format applies from the next bytes each way; its resampler starts afresh.
 */
export class RealtimeAudioPath {
  #session: SessionAudio;
  #in: CarrierAudio | undefined;
  #out: CarrierAudio | undefined;
  #input: RealtimeAudioFormat = PCM24;
  #output: RealtimeAudioFormat = PCM24;

  constructor(session: SessionAudio) {
    this.#session = session;
  }

  /** What the session hears and speaks (its mode's declaration): the G.711 legs convert to and from it. */
  use(session: SessionAudio): void {
    this.#session = session;
    this.set(this.#input, this.#output);
  }

  /** The client's formats from now on. */
  set(input: RealtimeAudioFormat, output: RealtimeAudioFormat): void {
    this.#input = input;
    this.#output = output;
    this.#in = this.#leg(input);
    this.#out = this.#leg(output);
  }

  /** A G.711 leg: the carrier edge with the session's input rate in and the paced 24 kHz PCM16 out. */
  #leg(format: RealtimeAudioFormat): CarrierAudio | undefined {
    const encoding = g711Carrier(format);
    if (encoding === undefined) return undefined;
    const leg = new CarrierAudio(encoding, G711_SAMPLE_RATE);
    leg.use({ input: this.#session.input, output: pcm16(PLAYBACK_SAMPLE_RATE) });
    return leg;
  }

  /** Client G.711 → the session's PCM16; undefined when the client sends `audio/pcm` (the edge's). */
  inbound(bytes: Uint8Array): Uint8Array | undefined {
    return this.#in?.inbound(bytes);
  }

  /** Paced 24 kHz PCM16 → the client's output format. */
  outbound(pcm: Uint8Array): Uint8Array {
    const out = this.#out;
    if (out === undefined) return pcm;
    const frames = out.outbound(pcm);
    if (frames.length === 1 && frames[0] !== undefined) return frames[0].bytes;
    return Buffer.concat(frames.map((frame) => frame.bytes));
  }
}
