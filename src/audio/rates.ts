/**
 * The gateway's audio rates and formats: the one place they are written. Vendors' own rates (a
 * provider's wire rate, a carrier's default) stay with their adapters; what the gateway itself
 * speaks — the protocol's defaults, telephony's G.711 — is here, and every other place imports it.
 * Pure: constants and arithmetic, no I/O.
 */

/** The client's default mic rate and what the pipeline's STT and VAD hear (Hz; docs/protocol.md "Connecting", `sampleRate`). */
export const MIC_SAMPLE_RATE = 16_000;
/** The rate agent audio reaches a browser client at (Hz; docs/protocol.md `session.configured`, `ttsSampleRate`). */
export const PLAYBACK_SAMPLE_RATE = 24_000;
/** G.711 μ-law and A-law: one byte a sample at 8 kHz (ITU-T G.711). */
export const G711_SAMPLE_RATE = 8_000;

/** G.711 a session may speak end to end (a phone call in μ-law or A-law to a service that takes it). */
export type G711Format = "pcmu" | "pcma";
/** How audio is coded: PCM16 little-endian mono, or G.711 (always at 8 kHz). */
export type AudioEncoding = "pcm16" | G711Format;

/** One direction's audio: its coding and rate (Hz). */
export interface AudioFormat {
  readonly encoding: AudioEncoding;
  readonly sampleRate: number;
}

/**
 * What a session hears and what it speaks, declared by its mode when it opens (docs/architecture.md
 * "Audio formats"): the link converts to `input` and from `output`, the only conversion each way.
 */
export interface SessionAudio {
  readonly input: AudioFormat;
  readonly output: AudioFormat;
}

/** PCM16 at `sampleRate` Hz. */
export function pcm16(sampleRate: number): AudioFormat {
  return { encoding: "pcm16", sampleRate };
}

/** G.711 at its 8 kHz. */
export function g711(format: G711Format): AudioFormat {
  return { encoding: format, sampleRate: G711_SAMPLE_RATE };
}

/** The protocol's defaults: the mic at 16 kHz in, playback at 24 kHz out (a session that declares nothing, e.g. text). */
export const DEFAULT_SESSION_AUDIO: SessionAudio = { input: pcm16(MIC_SAMPLE_RATE), output: pcm16(PLAYBACK_SAMPLE_RATE) };

/** Bytes of one sample: 2 for PCM16, 1 for G.711. */
export function bytesPerSample(format: AudioFormat): number {
  return format.encoding === "pcm16" ? 2 : 1;
}

/** Duration (ms) of `bytes` bytes of audio in `format`. */
export function formatDurationMs(bytes: number, format: AudioFormat): number {
  return (bytes / bytesPerSample(format) / format.sampleRate) * 1000;
}

/** The same coding at the same rate: audio crosses between them untouched. */
export function sameFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate;
}
