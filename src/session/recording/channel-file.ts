import { open, type FileHandle } from "node:fs/promises";

/** Samples gathered before a write (1 MiB of PCM16): few, large writes. */
const BLOCK_SAMPLES = 512 * 1024;
/** Bytes waiting for the disk at most; past it new audio is dropped (and counted) rather than held (8 MiB). */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * One mono PCM16 channel of a recording, streamed to a temp file as it comes: the process holds
 * at most one block being gathered plus `MAX_QUEUED_BYTES` waiting for the disk, however long the
 * call. Audio is placed at a sample offset from the session's start; offsets only grow (a gap
 * stays a hole in the file, which reads back as silence). Writes are serialized on one chain.
 */
export class ChannelFile {
  readonly path: string;
  #file: Promise<FileHandle>;
  #chain: Promise<void> = Promise.resolve();
  #block = new Int16Array(BLOCK_SAMPLES);
  /** Sample offset of `#block[0]`, and how many samples it holds. */
  #blockAt = 0;
  #blockLength = 0;
  #queuedBytes = 0;
  #failure: Error | undefined;
  /** Samples dropped because the disk fell behind or failed. */
  dropped = 0;
  /** One past the last sample placed. */
  end = 0;

  constructor(path: string) {
    this.path = path;
    this.#file = open(path, "w");
    this.#file.catch((error: unknown) => {
      this.#failure = error as Error;
    });
  }

  /** Places `samples` at `offset` (≥ `end`; an earlier offset is moved up to `end`). */
  write(offset: number, samples: Int16Array): void {
    const at = Math.max(offset, this.end);
    if (this.#blockLength > 0 && at !== this.#blockAt + this.#blockLength) this.#flushBlock();
    if (this.#blockLength === 0) this.#blockAt = at;
    let from = 0;
    while (from < samples.length) {
      const n = Math.min(samples.length - from, this.#block.length - this.#blockLength);
      this.#block.set(samples.subarray(from, from + n), this.#blockLength);
      this.#blockLength += n;
      from += n;
      if (this.#blockLength === this.#block.length) this.#flushBlock();
    }
    this.end = at + samples.length;
  }

  /** Everything placed is on disk (or counted as dropped). Rejects only if the file could not be opened. */
  async close(): Promise<void> {
    this.#flushBlock();
    await this.#chain;
    const file = await this.#file;
    await file.close();
  }

  #flushBlock(): void {
    if (this.#blockLength === 0) return;
    const bytes = Buffer.from(this.#block.buffer, 0, this.#blockLength * 2);
    const position = this.#blockAt * 2;
    const samples = this.#blockLength;
    this.#block = new Int16Array(BLOCK_SAMPLES);
    this.#blockLength = 0;
    if (this.#failure !== undefined || this.#queuedBytes + bytes.byteLength > MAX_QUEUED_BYTES) {
      this.dropped += samples;
      return;
    }
    this.#queuedBytes += bytes.byteLength;
    this.#chain = this.#chain.then(async () => {
      try {
        const file = await this.#file;
        await file.write(bytes, 0, bytes.byteLength, position);
      } catch (error) {
        this.#failure ??= error as Error;
        this.dropped += samples;
      } finally {
        this.#queuedBytes -= bytes.byteLength;
      }
    });
  }
}
