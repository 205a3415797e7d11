/**
 * WebSocket text frames written whole: each frame (RFC 6455 §5.2: FIN, opcode 0x1, the payload
 * length in 7, 7+16 or 7+64 bits, for a client the mask key of §5.3, then the UTF-8 payload) built
 * into one buffer and written onto the socket under a `ws` WebSocket in one call.
 *
 * Why: `ws.send` of a string builds an options object and a header buffer, for a client a second
 * buffer of the text to mask, and corks the socket around two writes that leave as a `writev`.
 * A call sends a text frame each way every 20 ms (the carrier's `media`, the service's
 * `input_audio_buffer.append`), and at 200 calls that path was some 5% of the gateway's CPU
 * (docs/benchmarks.md, "One write a frame").
 *
 * Frames written here and frames ws writes (pings, pongs, close, binary sends) interleave whole and
 * in call order: both write synchronously. That holds while ws writes every frame at once, which
 * it does unless it compresses (permessage-deflate: never negotiated on a socket that writes here)
 * or is reading a `Blob` to send (the gateway sends none).
 */
import { randomFillSync } from "node:crypto";
import { endianness } from "node:os";
import type { Writable } from "node:stream";

/** §5.2: FIN set, opcode 0x1 (a text frame, not fragmented). */
const FIN_TEXT = 0x81;
/** §5.2: the second byte's MASK bit (frame-reader.ts reads it too). */
export const MASK_BIT = 0x80;
/** §5.2: the 7-bit lengths that say a 16-bit or a 64-bit length follows (the reader reads the first). */
export const LENGTH_16 = 126;
const LENGTH_64 = 127;
/** The largest payload the 7-bit and the 16-bit length hold (bytes). */
const MAX_LENGTH_7 = 125;
const MAX_LENGTH_16 = 0xffff;
/** Below this payload (bytes) a 32-bit view costs more than it saves; and it reads the key as a little-endian word. */
const MIN_WORD_MASK_BYTES = 64;
const LITTLE_ENDIAN = endianness() === "LE";
/** Mask keys drawn at once from the CSPRNG: 4 bytes a frame, 2,048 frames a draw (ws draws the same). */
const KEY_POOL_BYTES = 8192;

/**
 * §5.3: a client masks each frame with a fresh key "derived from a strong source of entropy";
 * handed out 4 bytes at a time from a pool `randomFillSync` refills.
 */
class MaskKeys {
  readonly #pool = Buffer.alloc(KEY_POOL_BYTES);
  #next = KEY_POOL_BYTES;

  /** Write the next key into `frame` at `at` (4 bytes). */
  writeInto(frame: Buffer, at: number): void {
    if (this.#next === KEY_POOL_BYTES) {
      randomFillSync(this.#pool);
      this.#next = 0;
    }
    const pool = this.#pool;
    const from = this.#next;
    frame[at] = pool[from] as number;
    frame[at + 1] = pool[from + 1] as number;
    frame[at + 2] = pool[from + 2] as number;
    frame[at + 3] = pool[from + 3] as number;
    this.#next = from + 4;
  }
}

const keys = new MaskKeys();

/**
 * One text frame of `text`: its header, then the UTF-8 of `text`, masked with a fresh key when
 * `masked` (every frame a client sends, §5.3; a server's never are).
 */
export function textFrame(text: string, masked: boolean): Buffer {
  const length = Buffer.byteLength(text, "utf8");
  const lengthBytes = length <= MAX_LENGTH_7 ? 0 : length <= MAX_LENGTH_16 ? 2 : 8;
  const payloadAt = 2 + lengthBytes + (masked ? 4 : 0);
  const frame = Buffer.allocUnsafe(payloadAt + length);
  frame[0] = FIN_TEXT;
  if (lengthBytes === 0) {
    frame[1] = length;
  } else if (lengthBytes === 2) {
    frame[1] = LENGTH_16;
    frame.writeUInt16BE(length, 2);
  } else {
    // A JavaScript string's UTF-8 is far below 2^53 bytes: the high 32 bits of the 64 come from the division.
    frame[1] = LENGTH_64;
    frame.writeUInt32BE(Math.floor(length / 0x1_0000_0000), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  // As many bytes as characters: all ASCII, whose UTF-8 is its Latin-1 (written without encoding; base64 in JSON, every 20 ms).
  frame.write(text, payloadAt, length, length === text.length ? "latin1" : "utf8");
  if (masked) mask(frame, payloadAt, length);
  return frame;
}

/** Set the MASK bit, write a fresh key just before the payload at `payloadAt`, and XOR the payload with it (§5.3). */
function mask(frame: Buffer, payloadAt: number, length: number): void {
  frame[1] = (frame[1] as number) | MASK_BIT;
  keys.writeInto(frame, payloadAt - 4);
  xorWithKey(frame, payloadAt, length);
}

/**
 * XOR the `length` bytes at `payloadAt` with the 4-byte mask key just before them (§5.3: byte i
 * with key byte i mod 4), in place: masking and unmasking are the same operation. A payload of
 * `MIN_WORD_MASK_BYTES` and more goes a 32-bit word at a time from its first 4-byte-aligned byte
 * (a socket's chunk puts the payload anywhere), the key rotated to that byte.
 */
export function xorWithKey(frame: Buffer, payloadAt: number, length: number): void {
  const keyAt = payloadAt - 4;
  const k0 = frame[keyAt] as number;
  const k1 = frame[keyAt + 1] as number;
  const k2 = frame[keyAt + 2] as number;
  const k3 = frame[keyAt + 3] as number;
  const end = payloadAt + length;
  let i = payloadAt;
  if (LITTLE_ENDIAN && length >= MIN_WORD_MASK_BYTES) {
    const lead = (4 - ((frame.byteOffset + payloadAt) & 3)) & 3;
    if (lead > 0) frame[i] = (frame[i] as number) ^ k0;
    if (lead > 1) frame[i + 1] = (frame[i + 1] as number) ^ k1;
    if (lead > 2) frame[i + 2] = (frame[i + 2] as number) ^ k2;
    i += lead;
    // The key as the word its bytes make in memory from the first aligned byte, which takes key byte `lead`.
    const shift = lead * 8;
    const word = k0 | (k1 << 8) | (k2 << 16) | (k3 << 24);
    const key = shift === 0 ? word : (word >>> shift) | (word << (32 - shift));
    const words = new Int32Array(frame.buffer, frame.byteOffset + i, (end - i) >>> 2);
    for (let w = 0; w < words.length; w++) words[w] = (words[w] as number) ^ key;
    const done = words.length * 4;
    // The tail continues the key where the words left it: the words covered a multiple of 4 bytes after `lead`.
    const tail = i + done;
    for (let t = tail, j = lead; t < end; t++, j++) frame[t] = (frame[t] as number) ^ (frame[keyAt + (j & 3)] as number);
    return;
  }
  for (; i + 4 <= end; i += 4) {
    frame[i] = (frame[i] as number) ^ k0;
    frame[i + 1] = (frame[i + 1] as number) ^ k1;
    frame[i + 2] = (frame[i + 2] as number) ^ k2;
    frame[i + 3] = (frame[i + 3] as number) ^ k3;
  }
  if (i < end) frame[i] = (frame[i] as number) ^ k0;
  if (i + 1 < end) frame[i + 1] = (frame[i + 1] as number) ^ k1;
  if (i + 2 < end) frame[i + 2] = (frame[i + 2] as number) ^ k2;
}

/** Text frames for one socket, each written whole onto it (the socket under its `ws`). */
export class WholeTextFrames {
  readonly #socket: Pick<Writable, "write">;
  readonly #masked: boolean;

  /** `masked`: the gateway is the client on this socket (a provider's); a server's frames are not. */
  constructor(socket: Pick<Writable, "write">, masked: boolean) {
    this.#socket = socket;
    this.#masked = masked;
  }

  send(text: string): void {
    this.#socket.write(textFrame(text, this.#masked));
  }
}
