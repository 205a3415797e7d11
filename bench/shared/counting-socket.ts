import { EventEmitter } from "node:events";

/**
 * The part of a ws socket a gateway link uses, for benches that host a link in process: it takes
 * every frame and counts what it was sent (characters of text, bytes of binary), answers pings,
 * and reads as closed once closed. Pausing and resuming (the input budget's) do nothing.
 */
export class CountingSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  bytes = 0;
  send(data: string | Uint8Array): void {
    this.bytes += typeof data === "string" ? data.length : data.byteLength;
  }
  close(): void {
    this.readyState = 3;
  }
  terminate(): void {
    this.readyState = 3;
  }
  ping(): void {
    queueMicrotask(() => this.emit("pong"));
  }
  pause(): void {}
  resume(): void {}
}
