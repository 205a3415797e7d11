// The gateway side of a carrier's WebSocket, for CarrierBridge tests: what the bridge sends is
// recorded (JSON frames parsed; a carrier that sends binary frames is read off its codec instead),
// a close is echoed as the socket's close event, pings are answered, and the test plays the carrier.
import { EventEmitter } from "node:events";

export class FakeCarrierSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  /** No extension negotiated: the bridge writes text frames whole onto `socket`. */
  readonly extensions = "";
  bufferedAmount = 0;
  /** The JSON frames the bridge sent, parsed (binary frames are not JSON: not recorded). */
  readonly sent: Record<string, unknown>[] = [];
  closedWith: { code: number; reason: string } | undefined;
  /** Writes on the TCP socket under it: each send alone, or one per corked batch of sends. */
  writes = 0;
  /** For each frame in `sent`, the write it left in (0-based). */
  readonly writeOf: number[] = [];
  #corks = 0;
  #pending = false;
  /**
   * The TCP socket under it (the bridge's `socket` option): writes between `cork` and the last
   * `uncork` leave in one write, as Node's `Writable.cork` nests. A write is one whole text frame
   * from the server (RFC 6455 §5.2, unmasked), read back and recorded as a send.
   */
  readonly socket = {
    write: (chunk: Uint8Array): boolean => {
      this.send(unframe(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
      return true;
    },
    cork: (): void => {
      this.#corks += 1;
    },
    uncork: (): void => {
      if (this.#corks === 0) return;
      this.#corks -= 1;
      if (this.#corks === 0 && this.#pending) {
        this.#pending = false;
        this.writes += 1;
      }
    },
  };

  /** The socket is corked now (a batch is open). */
  get corked(): boolean {
    return this.#corks > 0;
  }

  send(data: string | Uint8Array): void {
    const write = this.writes;
    if (this.#corks > 0) this.#pending = true;
    else this.writes += 1;
    const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8");
    try {
      this.sent.push(JSON.parse(text) as Record<string, unknown>);
      this.writeOf.push(write);
    } catch {
      // A binary media frame (Vonage L16): the test reads it off the codec.
    }
  }

  close(code: number, reason: string): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = { code, reason };
    this.readyState = 3;
    queueMicrotask(() => this.emit("close", code, Buffer.from(reason)));
  }

  terminate(): void {
    this.close(1006, "");
  }

  ping(): void {
    queueMicrotask(() => this.emit("pong"));
  }

  /** The carrier sends a JSON frame. */
  frame(frame: unknown): void {
    this.emit("message", Buffer.from(JSON.stringify(frame)), false);
  }

  /** The frames sent of one `event` kind. */
  of(event: string): Record<string, unknown>[] {
    return this.sent.filter((f) => f.event === event);
  }
}

/** The text of one whole, unmasked text frame (what the bridge writes onto the socket). */
function unframe(frame: Buffer): string {
  if (frame[0] !== 0x81) throw new Error(`not a final text frame: first byte ${frame[0]}`);
  const second = frame[1] ?? 0;
  if ((second & 0x80) !== 0) throw new Error("a server's frame is never masked");
  const short = second & 0x7f;
  const [length, at] = short === 126 ? [frame.readUInt16BE(2), 4] : short === 127 ? [Number(frame.readBigUInt64BE(2)), 10] : [short, 2];
  if (frame.byteLength !== at + length) throw new Error(`frame of ${frame.byteLength} bytes says ${length} of payload after ${at}`);
  return frame.toString("utf8", at);
}
