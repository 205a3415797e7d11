/**
 * The loopback server every fake vendor runs on: HTTP on 127.0.0.1 at a free port, every TCP
 * socket tracked so `close()` ends them at once (a fake never waits for a client to hang up), and
 * for the WebSocket vendors their `WebSocketServer`, closed with it. A plain request to a WebSocket
 * vendor gets 426 Upgrade Required, as from the real services.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { Socket } from "node:net";
import { WebSocketServer, type ServerOptions } from "ws";

export interface Loopback {
  readonly http: Server;
  /**
   * The fake's WebSocket server: on `http` (its `path` and `verifyClient` as given), or with
   * `noServer` for a fake that answers `http`'s `upgrade` events itself. One per loopback.
   */
  webSockets(options: Pick<ServerOptions, "path" | "verifyClient" | "noServer">): WebSocketServer;
  /** Start listening on 127.0.0.1 at a free port; resolves with the port. */
  listen(): Promise<number>;
  /** Destroy every TCP socket, then close the WebSocket server (if any) and the HTTP server. */
  close(): Promise<void>;
}

const upgradeRequired: RequestListener = (_req, res) => {
  res.writeHead(426, { "content-type": "text/plain" }).end("upgrade required");
};

/** A loopback server; `handler` answers plain HTTP requests (default: 426 for a WebSocket vendor). */
export function loopbackServer(handler: RequestListener = upgradeRequired): Loopback {
  const http = createServer(handler);
  const sockets = new Set<Socket>();
  let wss: WebSocketServer | undefined;
  http.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    http,
    webSockets(options) {
      if (wss !== undefined) throw new Error("a loopback serves one WebSocket server");
      wss = options.noServer === true ? new WebSocketServer(options) : new WebSocketServer({ ...options, server: http });
      return wss;
    },
    async listen() {
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
      return (http.address() as { port: number }).port;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      const ws = wss;
      if (ws !== undefined) await new Promise<void>((resolve) => ws.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Refuse a WebSocket upgrade the way an HTTP server does: a JSON body with status `status`
 * (`statusText` its reason phrase), `headers` besides content-type and content-length, and the
 * socket closed after it.
 */
export function refuseUpgrade(socket: Socket, status: number, statusText: string, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(`HTTP/1.1 ${status} ${statusText}\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}
