/**
 * WAV (RIFF/WAVE) reading and writing for PCM16 little-endian audio. Pure: no I/O, no Node APIs.
 *
 * `readWav` accepts only uncompressed 16-bit PCM (format tag 1, or WAVE_FORMAT_EXTENSIBLE whose
 * sub-format is PCM) and throws a GatewayError("audio") naming what it found otherwise. It walks
 * the chunk list, so extra chunks (LIST, fact, …) before or after `data` are skipped.
 * `writeWav` writes the canonical 44-byte header followed by the samples.
 */
import { GatewayError } from "../errors.js";

export interface WavAudio {
  readonly sampleRate: number;
  readonly channels: number;
  /** Interleaved PCM16 samples (frames × channels). */
  readonly samples: Int16Array;
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

const FORMAT_NAMES: Readonly<Record<number, string>> = {
  0x0002: "MS ADPCM",
  0x0003: "IEEE float",
  0x0006: "A-law",
  0x0007: "µ-law",
  0x0011: "IMA ADPCM",
  0x0055: "MP3",
};

function fail(message: string): never {
  throw new GatewayError("audio", `readWav: ${message}`);
}

function fourCC(view: DataView, offset: number): string {
  return String.fromCharCode(view.getUint8(offset), view.getUint8(offset + 1), view.getUint8(offset + 2), view.getUint8(offset + 3));
}

/** Parses a PCM16 WAV file. Throws GatewayError("audio") for anything else or a malformed file. */
export function readWav(bytes: Uint8Array): WavAudio {
  if (bytes.byteLength < 12) fail(`too short to be a WAV file (${bytes.byteLength} bytes)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const riff = fourCC(view, 0);
  if (riff === "RIFX") fail("big-endian RIFX files are not supported; only little-endian RIFF PCM16");
  if (riff !== "RIFF") fail(`not a RIFF file (starts with ${JSON.stringify(riff)})`);
  if (fourCC(view, 8) !== "WAVE") fail(`RIFF file is not WAVE (form type ${JSON.stringify(fourCC(view, 8))})`);

  let fmt: { sampleRate: number; channels: number } | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const id = fourCC(view, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.byteLength) fail(`fmt chunk too short (${size} bytes)`);
      let tag = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const blockAlign = view.getUint16(body + 12, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      if (tag === WAVE_FORMAT_EXTENSIBLE) {
        // cbSize(2) validBits(2) channelMask(4) then the sub-format GUID, whose first two bytes are the tag.
        if (size < 40 || body + 26 > bytes.byteLength) fail("WAVE_FORMAT_EXTENSIBLE fmt chunk too short");
        tag = view.getUint16(body + 24, true);
      }
      if (tag !== WAVE_FORMAT_PCM) {
        const name = FORMAT_NAMES[tag] ?? "unknown";
        fail(`unsupported format tag 0x${tag.toString(16).padStart(4, "0")} (${name}); only PCM16 is supported`);
      }
      if (bitsPerSample !== 16) fail(`unsupported PCM bit depth ${bitsPerSample}; only 16-bit is supported`);
      if (channels < 1) fail("fmt chunk declares 0 channels");
      if (sampleRate < 1) fail("fmt chunk declares a sample rate of 0");
      if (blockAlign !== channels * 2) fail(`block align ${blockAlign} does not match ${channels} channel(s) of 16-bit PCM`);
      fmt = { sampleRate, channels };
    } else if (id === "data") {
      if (fmt === undefined) fail("data chunk before fmt chunk");
      // A streaming writer may leave the size at 0 or 0xFFFFFFFF: take what is there.
      const available = bytes.byteLength - body;
      let length = size === 0 || size === 0xffffffff || size > available ? available : size;
      const frameBytes = fmt.channels * 2;
      length -= length % frameBytes;
      const samples = new Int16Array(length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(body + i * 2, true);
      return { sampleRate: fmt.sampleRate, channels: fmt.channels, samples };
    }
    // Chunks are padded to an even size.
    offset = body + size + (size % 2);
  }
  if (fmt === undefined) fail("no fmt chunk");
  return fail("no data chunk");
}

/** Writes interleaved PCM16 samples as a WAV file (44-byte header). */
export function writeWav(samples: Int16Array, sampleRate: number, channels = 1): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new GatewayError("audio", `writeWav: invalid sample rate ${sampleRate}`);
  if (!Number.isInteger(channels) || channels <= 0) throw new GatewayError("audio", `writeWav: invalid channel count ${channels}`);
  if (samples.length % channels !== 0) {
    throw new GatewayError("audio", `writeWav: ${samples.length} samples is not a whole number of ${channels}-channel frames`);
  }
  const dataBytes = samples.length * 2;
  const out = new Uint8Array(44 + dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i++) view.setUint8(offset + i, text.charCodeAt(i));
  };
  ascii(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, WAVE_FORMAT_PCM, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, samples[i] ?? 0, true);
  return out;
}
