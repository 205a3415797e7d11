import { open, type FileHandle } from "node:fs/promises";

/** Frames per read-interleave-write step (64 Ki frames: 256 KiB out). */
const STEP_FRAMES = 64 * 1024;
/** The bleep over redacted speech: 1 kHz, at −12 dBFS (peak 8192 of 32767). */
export const BLEEP_HZ = 1000;
const BLEEP_PEAK = 8192;

/** A stretch of one channel replaced by the bleep, in samples from the start. */
export interface BleepSpan {
  readonly channel: 0 | 1;
  readonly start: number;
  readonly end: number;
}

/** The canonical 44-byte header of a PCM16 WAV (RIFF/WAVE, format tag 1). */
export function wavHeader(frames: number, sampleRate: number, channels: number): Buffer {
  const dataBytes = frames * channels * 2;
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** Reads `frames` mono samples from `offset` (samples); past the file's end reads silence. */
async function readChannel(file: FileHandle, offset: number, frames: number): Promise<Int16Array> {
  const buffer = Buffer.alloc(frames * 2);
  let got = 0;
  while (got < buffer.byteLength) {
    const { bytesRead } = await file.read(buffer, got, buffer.byteLength - got, offset * 2 + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return new Int16Array(buffer.buffer, buffer.byteOffset, frames);
}

/**
 * Writes `out` as a stereo PCM16 WAV: left the caller channel's file, right the agent's (each a
 * mono PCM16 file from the session's start), `frames` long, with the bleep spans replaced by a
 * 1 kHz tone. Streams: memory is one step whatever the length.
 */
export async function writeStereoWav(options: {
  readonly out: string;
  readonly caller: string;
  readonly agent: string;
  readonly frames: number;
  readonly sampleRate: number;
  readonly bleeps: readonly BleepSpan[];
}): Promise<void> {
  const { frames, sampleRate, bleeps } = options;
  const [caller, agent, out] = await Promise.all([open(options.caller, "r"), open(options.agent, "r"), open(options.out, "w")]);
  try {
    await out.write(wavHeader(frames, sampleRate, 2), 0, 44, 0);
    for (let at = 0; at < frames; at += STEP_FRAMES) {
      const n = Math.min(STEP_FRAMES, frames - at);
      const channels = await Promise.all([readChannel(caller, at, n), readChannel(agent, at, n)]);
      for (const span of bleeps) {
        const samples = channels[span.channel];
        for (let i = Math.max(span.start, at); i < Math.min(span.end, at + n); i++) {
          samples[i - at] = Math.round(BLEEP_PEAK * Math.sin((2 * Math.PI * BLEEP_HZ * i) / sampleRate));
        }
      }
      const interleaved = Buffer.alloc(n * 4);
      const [left, right] = channels;
      for (let i = 0; i < n; i++) {
        interleaved.writeInt16LE(left[i] ?? 0, i * 4);
        interleaved.writeInt16LE(right[i] ?? 0, i * 4 + 2);
      }
      await out.write(interleaved, 0, interleaved.byteLength, 44 + at * 4);
    }
  } finally {
    await Promise.all([caller.close(), agent.close(), out.close()]);
  }
}
