import type { Duplex } from "node:stream";

/** Refuse a WebSocket upgrade with an HTTP status and, when given, a one-line reason as the body. */
export function refuseUpgrade(socket: Duplex, status: number, message: string, reason = ""): void {
  const body = reason === "" ? "" : `${reason}\n`;
  // Destroyed once the response is flushed (as ws's own abortHandshake does), not before.
  socket.once("finish", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${message}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
