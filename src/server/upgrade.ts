import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type ServerOptions, type WebSocket } from "ws";
import { readFramesWhole } from "../providers/frame-reader.js";

/**
 * How long a close handshake may take before the socket is destroyed (ms). ws waits 30 s by
 * default: a peer that stopped reading (closed at the backlog limit) never sees our close frame,
 * and its session held its provider links that long.
 */
export const CLOSE_HANDSHAKE_MS = 5_000;

/**
 * The gateway's WebSocket servers (browser, carrier, Realtime): upgrades routed by hand, no
 * compression. `handleProtocols` picks the handshake's subprotocol (ws's default echoes the first
 * offered, which a Realtime browser client may fill with its key).
 */
export function gatewaySocketServer(maxPayload: number, handleProtocols?: (offered: Set<string>) => string | false): WebSocketServer {
  // `closeTimeout` is a ws ≥ 8.19 server option that @types/ws does not declare yet.
  const options: ServerOptions & { closeTimeout: number } = {
    noServer: true,
    maxPayload,
    perMessageDeflate: false,
    closeTimeout: CLOSE_HANDSHAKE_MS,
    ...(handleProtocols === undefined ? {} : { handleProtocols }),
  };
  return new WebSocketServer(options);
}

/**
 * Complete an upgrade on one of the gateway's servers: the socket's data frames are read whole
 * (providers/frame-reader.ts; a client's frames are masked) before `accepted` listens.
 */
export function acceptUpgrade(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, accepted: (ws: WebSocket) => void): void {
  wss.handleUpgrade(req, socket, head, (ws) => {
    readFramesWhole(ws, socket, true, wss.options.maxPayload ?? 0);
    accepted(ws);
  });
}

/** Refuse a WebSocket upgrade with an HTTP status and, when given, a one-line reason as the body. */
export function refuseUpgrade(socket: Duplex, status: number, message: string, reason = ""): void {
  const body = reason === "" ? "" : `${reason}\n`;
  // Destroyed once the response is flushed (as ws's own abortHandshake does), not before.
  socket.once("finish", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${message}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
