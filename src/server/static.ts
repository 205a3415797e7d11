// The demo page: the files under `public/` at the package root, served as they are (no build
// step). `GET /` is index.html. Only GET and HEAD, only regular files inside `public/`, with the
// right content type, an ETag, and `Cache-Control: no-cache` (the browser revalidates every time,
// so an edited page is never stale, and an unchanged one costs a 304).
import { createReadStream, statSync, type Stats } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** `public/` at the package root: `../../public` from both src/server and dist/server. */
export const PUBLIC_DIR = fileURLToPath(new URL("../../public/", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".wav": "audio/wav",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

/** The page talks only to its own origin (HTTP and the WebSocket). */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "connect-src 'self' ws: wss:",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The file under `root` that `pathname` names, or undefined when it does not name one: a path that
 * does not decode, holds a NUL or a backslash, climbs out of `root`, or names a dotfile.
 */
export function resolvePublicPath(pathname: string, root: string = PUBLIC_DIR): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return undefined;
  const relative = decoded === "/" || decoded === "" ? "index.html" : decoded.replace(/^\/+/, "");
  const segments = relative.split("/");
  if (segments.some((s) => s === ".." || s.startsWith("."))) return undefined;
  const base = resolve(root);
  const file = resolve(base, relative);
  if (!file.startsWith(base + sep)) return undefined;
  return file;
}

function regularFile(file: string): Stats | undefined {
  try {
    const stats = statSync(file);
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined;
  }
}

/** The file of `root` that a GET of `pathname` serves (`/` is index.html), or undefined when it serves none. */
export function publicFileAt(pathname: string, root: string = PUBLIC_DIR): string | undefined {
  const file = resolvePublicPath(pathname, root);
  return file !== undefined && regularFile(file) !== undefined ? file : undefined;
}

/**
 * Serve `req` from `public/` when `pathname` (its target's, as `requestTarget` read it) names a
 * file there (GET or HEAD; `/` is index.html).
 * Returns false, having written nothing, when it does not: the caller answers instead.
 */
export function serveStatic(req: IncomingMessage, res: ServerResponse, pathname: string, root: string = PUBLIC_DIR): boolean {
  const method = req.method ?? "GET";
  if (method !== "GET" && method !== "HEAD") return false;
  const file = resolvePublicPath(pathname, root);
  if (file === undefined) return false;
  const stats = regularFile(file);
  if (stats === undefined) return false;

  const etag = `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
  const headers: Record<string, string | number> = {
    "content-type": CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
    "cache-control": "no-cache",
    etag,
    "last-modified": stats.mtime.toUTCString(),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
  if (file.endsWith(".html")) headers["content-security-policy"] = CONTENT_SECURITY_POLICY;

  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  headers["content-length"] = stats.size;
  if (method === "HEAD") {
    res.writeHead(200, headers);
    res.end();
    return true;
  }
  const stream = createReadStream(file);
  stream.once("open", () => {
    res.writeHead(200, headers);
    stream.pipe(res);
  });
  stream.once("error", () => {
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end("could not read the file");
    } else {
      res.destroy();
    }
  });
  res.once("close", () => stream.destroy());
  return true;
}
