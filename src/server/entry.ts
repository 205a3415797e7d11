/**
 * Where a stranger's bytes first reach the gateway's code: the HTTP server's `request` and
 * `upgrade` events. Nothing here may throw out of an event handler — a throw there is an
 * uncaught exception that ends the process and every call in it. So the request target is read
 * without throwing, and each handler runs contained: a synchronous throw or a rejected promise is
 * logged and the peer is answered (or its socket destroyed), and the server goes on.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../log.js";
import { refuseUpgrade } from "./upgrade.js";

/** The base every origin-form target is read against; only its path and query are used. */
const BASE = "http://gateway";

/**
 * The request target as a URL (path and query), or undefined when it is not one a client of
 * this gateway sends. Origin-form (`/path?query`, RFC 9112 §3.2.1) is read as a path even when
 * it starts with `//` (the WHATWG parser would take `//x:99999` for a host and port and throw);
 * absolute-form (`http://host/path`, §3.2.2) is accepted for its path. Asterisk- and
 * authority-form, and anything that does not parse, are not targets here. Never throws.
 */
export function requestTarget(raw: string | undefined): URL | undefined {
  if (raw === undefined || raw === "") return undefined;
  try {
    if (raw.startsWith("/")) return new URL(BASE + raw);
    if (!/^https?:\/\//i.test(raw)) return undefined;
    const absolute = new URL(raw);
    return new URL(BASE + absolute.pathname + absolute.search);
  } catch {
    return undefined;
  }
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>;

function badRequest(res: ServerResponse): void {
  const body = "the request target is not a path this server serves\n";
  res.writeHead(400, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}

/**
 * Serve `handle` on `server`'s requests: a target that does not parse is answered 400; a handler
 * that throws or rejects is logged and answered 500 (if nothing was sent yet).
 */
export function serveRequests(server: Server, log: Logger, handle: RequestHandler): void {
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const failed = (err: unknown): void => {
      log.error({ err, method: req.method }, "request failed");
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(500, { "content-type": "application/json; charset=utf-8", connection: "close" });
        res.end('{"error":"internal error"}');
      }
    };
    try {
      const url = requestTarget(req.url);
      if (url === undefined) return badRequest(res);
      handle(req, res, url).catch(failed);
    } catch (err) {
      failed(err);
    }
  });
}

/**
 * Serve `handle` on `server`'s upgrades: a target that does not parse is refused 400 before any
 * other check; a handler that throws or rejects is logged and its socket destroyed (it may
 * already belong to a WebSocket, so no HTTP answer is written then).
 */
export function serveUpgrades(server: Server, log: Logger, handle: UpgradeHandler): void {
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", (err) => log.debug({ err }, "upgrade socket error"));
    const failed = (err: unknown): void => {
      log.error({ err }, "upgrade failed");
      socket.destroy();
    };
    try {
      const url = requestTarget(req.url);
      if (url === undefined) return refuseUpgrade(socket, 400, "Bad Request", "the request target is not a path this server serves");
      const result = handle(req, socket, head, url);
      if (result !== undefined) result.catch(failed);
    } catch (err) {
      failed(err);
    }
  });
}
