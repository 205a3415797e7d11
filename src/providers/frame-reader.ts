/**
 * WebSocket data frames read whole: a text or binary frame that arrives whole in one socket read
 * is unmasked (a text frame checked as UTF-8) and handed to the `ws` WebSocket's `message`
 * listeners here, as ws's receiver would hand it (a Buffer over the read; `isBinary` false for
 * text, true for binary while the socket's `binaryType` is ws's default, "nodebuffer"); every other
 * byte goes to ws's own reader in order: control frames, fragmented messages, a frame split across
 * reads, a binary frame for another `binaryType`, anything the RFC forbids (ws closes with its
 * status code), and everything once a close frame has come.
 *
 * Why: ws's receiver is a `Writable` stream; a frame through it passes the stream's write
 * bookkeeping, a state loop that slices header, length and key into buffers of their own, and an
 * emitter hop. A call reads a frame each way every 20 ms: text from a JSON carrier and an s2s
 * service (the caller's `media`, the service's audio delta), binary from a browser or device, from
 * Vonage and from a TTS that streams raw audio. The read side was the largest share of the
 * gateway's CPU over the floor's (docs/benchmarks.md, "Every text frame read whole"); a binary frame
 * left to ws paid this scanner's reading on top of ws's ("Binary frames read whole").
 *
 * Sound because ws's reader only ever gets whole frames from a frame boundary, or the rest of the
 * stream: the scanner below reads every frame's header (§5.2) and so knows where each ends, and a
 * frame it leaves to ws goes to ws whole, across reads if need be. ws keeps the state it owns (a
 * fragmented message, a frame split across reads, the close handshake); the scanner keeps the
 * byte count of a frame ws is part-way through and a copy of a header split across reads
 * (≤ 14 bytes).
 */
import { isUtf8 } from "node:buffer";
import type { Duplex } from "node:stream";
import { WebSocket } from "ws";
import { LENGTH_16, MASK_BIT, xorWithKey } from "./text-frame.js";

/** §5.2, first byte: FIN, the three RSV bits, the opcode. */
const FIN = 0x80;
const RSV = 0x70;
const OPCODE = 0x0f;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_PING = 0x9;
const OP_PONG = 0xa;
/** §5.5: a control frame's payload is at most 125 bytes. */
const MAX_CONTROL_PAYLOAD = 125;
/** §5.2, second byte: MASK (text-frame.ts's `MASK_BIT`), then the 7-bit length (`LENGTH_16`: a 16-bit length follows, 127: a 64-bit one). */
const LENGTH_BITS = 0x7f;
/** The longest header: 2 bytes, a 64-bit length, a mask key. */
const MAX_HEADER_BYTES = 14;

/** A frame's header as read: its size and its payload's. */
interface Header {
  readonly bytes: number;
  readonly payload: number;
}

/** The header of the frame at `at`, or undefined if `buffer` ends inside it. */
function header(buffer: Buffer, at: number): Header | undefined {
  const available = buffer.length - at;
  if (available < 2) return undefined;
  const second = buffer[at + 1] as number;
  const length7 = second & LENGTH_BITS;
  const keyBytes = (second & MASK_BIT) === 0 ? 0 : 4;
  if (length7 < LENGTH_16) return available < 2 + keyBytes ? undefined : { bytes: 2 + keyBytes, payload: length7 };
  if (length7 === LENGTH_16) return available < 4 + keyBytes ? undefined : { bytes: 4 + keyBytes, payload: buffer.readUInt16BE(at + 2) };
  // §5.2: the 64-bit length's top bit is 0. ws refuses lengths past 2^53 − 1; this one only needs to know where the frame ends.
  if (available < 10 + keyBytes) return undefined;
  return { bytes: 10 + keyBytes, payload: buffer.readUInt32BE(at + 2) * 0x1_0000_0000 + buffer.readUInt32BE(at + 6) };
}

/** Hands bytes to ws's own reader (its socket `data` listener). */
type Pass = (bytes: Buffer) => void;
/** Hands a whole, unmasked payload to the WebSocket's `message` listeners: valid UTF-8 text, or binary. */
type Deliver = (payload: Buffer, isBinary: boolean) => void;

/**
 * The scanner: splits a socket's reads into frames, delivers the data frames that are whole in
 * one read (binary ones while `binaryWhole()` says so) and passes the rest to ws. Pure over its two callbacks (the tests run it against ws's
 * own receiver at every split of a stream).
 *
 * ws fails a connection a tick after it reads the frame that fails it (Node's `Writable` reports
 * the error on the next tick), and delivers nothing after that frame. So nothing that could fail
 * it goes to ws while this scanner reads on: a frame the RFC forbids (reserved bits, an unknown
 * opcode, the wrong mask bit, a control frame fragmented or over 125 bytes), one past
 * `maxPayload`, a text frame that is not UTF-8, a close frame (after which ws reads nothing) and a
 * fragmented message (ws judges how its frames follow) are handed over with the rest of the
 * stream. The one frame ws judges that this scanner cannot is a text frame split across reads: in
 * the read that ends it, every later frame goes to ws too, and by the next read ws has failed the
 * connection (`stop`) or not.
 */
export class FrameScanner {
  readonly #masked: boolean;
  readonly #maxPayload: number;
  readonly #deliver: Deliver;
  readonly #pass: Pass;
  readonly #binaryWhole: () => boolean;
  /** Bytes of the frame ws is part-way through, still to come. */
  #owed = 0;
  /** That frame is a text frame (ws checks its UTF-8 as it ends). */
  #owedText = false;
  /** A header split across reads (already passed to ws, whose frame it is). */
  #split: Buffer | undefined;
  /** ws reads everything from now on. */
  #handedOver = false;
  /** ws failed the connection: it reads nothing more, and nothing more is delivered. */
  #stopped = false;

  /**
   * `masked`: frames from this peer carry a mask key (the peer is a client, §5.3); `maxPayload`:
   * the largest payload the socket's ws accepts; `binaryWhole`: a binary frame may be delivered
   * as a Buffer now (asked at each one; else ws reads it and makes what its `binaryType` asks).
   */
  constructor(masked: boolean, maxPayload: number, deliver: Deliver, pass: Pass, binaryWhole: () => boolean) {
    this.#masked = masked;
    this.#maxPayload = maxPayload;
    this.#deliver = deliver;
    this.#pass = pass;
    this.#binaryWhole = binaryWhole;
  }

  /** ws reads everything from now on (its socket is no longer open). */
  handOver(): void {
    this.#handedOver = true;
  }

  /** ws failed the connection (it stops reading): nothing more is read or delivered. */
  stop(): void {
    this.#stopped = true;
  }

  read(chunk: Buffer): void {
    if (this.#stopped) return;
    if (this.#handedOver) return this.#pass(chunk);
    if (this.#split !== undefined && !this.#finishSplitHeader(chunk)) return this.#pass(chunk);
    let at = 0;
    /** False once ws has read the end of a text frame in this read: it may be failing the connection. */
    let delivering = true;
    if (this.#owed > 0) {
      at = Math.min(chunk.length, this.#owed);
      this.#owed -= at;
      delivering = this.#owed > 0 || !this.#owedText;
    }
    /** Where the bytes for ws not yet passed begin (their run ends where a delivered frame or the read starts). */
    let passFrom = 0;
    while (at < chunk.length) {
      const found = header(chunk, at);
      if (found === undefined) {
        this.#split = Buffer.from(chunk.subarray(at));
        break;
      }
      const first = chunk[at] as number;
      if (!this.#readable(first, chunk[at + 1] as number, found.payload)) {
        this.#handedOver = true;
        return this.#pass(chunk.subarray(passFrom));
      }
      const end = at + found.bytes + found.payload;
      if (end > chunk.length) {
        this.#owed = end - chunk.length;
        this.#owedText = (first & OPCODE) === OP_TEXT;
        break;
      }
      const opcode = first & OPCODE;
      if (delivering && (opcode === OP_TEXT || (opcode === OP_BINARY && this.#binaryWhole()))) {
        const payloadAt = at + found.bytes;
        if (this.#masked) xorWithKey(chunk, payloadAt, found.payload);
        const payload = chunk.subarray(payloadAt, end);
        const isBinary = opcode === OP_BINARY;
        if (!isBinary && !isUtf8(payload)) {
          // ws fails the connection with 1007. It unmasks, so it gets the bytes as they came (XOR again).
          if (this.#masked) xorWithKey(chunk, payloadAt, found.payload);
          this.#handedOver = true;
          return this.#pass(chunk.subarray(passFrom));
        }
        if (passFrom < at) this.#pass(chunk.subarray(passFrom, at));
        this.#deliver(payload, isBinary);
        passFrom = end;
      }
      at = end;
    }
    if (passFrom < chunk.length) this.#pass(chunk.subarray(passFrom));
  }

  /**
   * A frame ws reads without failing or ending the connection, and not part of a fragmented
   * message: whole (FIN), no reserved bits, text, binary, ping or pong, the peer's mask bit, its
   * payload within `maxPayload` (a control frame's within 125 bytes, §5.5).
   */
  #readable(first: number, second: number, payload: number): boolean {
    if ((first & (FIN | RSV)) !== FIN || (second & MASK_BIT) !== (this.#masked ? MASK_BIT : 0) || payload > this.#maxPayload) return false;
    const opcode = first & OPCODE;
    return opcode === OP_TEXT || opcode === OP_BINARY || ((opcode === OP_PING || opcode === OP_PONG) && payload <= MAX_CONTROL_PAYLOAD);
  }

  /**
   * The rest of a header split across reads (its bytes went to ws with its frame): true once the
   * frame's length is known (its remaining bytes are owed from this read's first byte), false
   * while the header is still incomplete or when ws is to read the rest of the stream.
   */
  #finishSplitHeader(chunk: Buffer): boolean {
    const split = this.#split as Buffer;
    const joined = Buffer.concat([split, chunk.subarray(0, MAX_HEADER_BYTES)]);
    const found = header(joined, 0);
    if (found === undefined) {
      this.#split = joined;
      return false;
    }
    this.#split = undefined;
    const first = joined[0] as number;
    if (!this.#readable(first, joined[1] as number, found.payload)) {
      this.#handedOver = true;
      return false;
    }
    this.#owed = found.bytes + found.payload - split.length;
    this.#owedText = (first & OPCODE) === OP_TEXT;
    return true;
  }
}

/**
 * Read `ws`'s data frames whole (above), in place of ws's reader for them: `socket` is the one
 * under `ws` (a server's upgrade request's, a client's `upgrade` response's), `masked` whether its
 * peer masks (a client does), `maxPayload` the ws's own limit (bytes; 0: none, as ws reads it).
 * Binary frames are delivered whole while `ws.binaryType` is "nodebuffer" (ws's default, and
 * every socket of the gateway's). Does nothing, and ws reads as before, unless ws is open,
 * negotiated no extension and reads the socket through exactly one `data` listener: the frames of
 * a compressed socket are not plain payloads.
 */
export function readFramesWhole(ws: WebSocket, socket: Duplex, masked: boolean, maxPayload: number): void {
  const listeners = socket.listeners("data");
  const wsReads = listeners[0] as ((this: Duplex, chunk: Buffer) => void) | undefined;
  if (ws.readyState !== WebSocket.OPEN || ws.extensions !== "" || listeners.length !== 1 || wsReads === undefined) return;
  const scanner = new FrameScanner(
    masked,
    maxPayload === 0 ? Infinity : maxPayload,
    (payload, isBinary) => ws.emit("message", payload, isBinary),
    (bytes) => wsReads.call(socket, bytes),
    () => ws.binaryType === "nodebuffer",
  );
  const read = (chunk: Buffer): void => {
    // Closing (a close frame sent or received): ws runs the handshake and reads the rest.
    if (ws.readyState !== WebSocket.OPEN) scanner.handOver();
    scanner.read(chunk);
  };
  socket.removeListener("data", wsReads);
  socket.on("data", read);
  // ws stops reading a socket after a read error (it removes its `data` listener): so does this.
  ws.once("error", () => {
    scanner.stop();
    socket.removeListener("data", read);
  });
}
