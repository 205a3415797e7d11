/** The small HTTP pieces the carrier webhooks need: bounded bodies, replies, the public URL. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Webhook bodies are small forms; anything past this is refused (bytes). */
export const MAX_WEBHOOK_BYTES = 64 * 1024;

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A request body, or undefined when it is over `maxBytes` (default `MAX_WEBHOOK_BYTES`). */
export async function readBody(req: IncomingMessage, maxBytes = MAX_WEBHOOK_BYTES): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** `SWITCHBOARD_PUBLIC_URL`, checked once at start: the scheme and host carriers reach the gateway at. */
export function publicUrl(value: string | undefined): URL | undefined {
  if (value === undefined || value === "") return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`SWITCHBOARD_PUBLIC_URL: ${JSON.stringify(value)} is not a URL; set it to the https:// address carriers reach this gateway at`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`SWITCHBOARD_PUBLIC_URL: use an http(s):// address (got ${url.protocol})`);
  return url;
}

/** An environment value, undefined when unset or empty. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
