/** The gateway's JSON answers: every HTTP route of its own (and each refusal of an agent route) answers this way. */
import type { ServerResponse } from "node:http";

/** Answer `status` with `body` as JSON (`content-length` set), plus `headers`. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** 429 for a client address over its connection budget (`ConnectionBudget.refusal` says why). */
export function tooMany(res: ServerResponse, refusal: string): void {
  json(res, 429, { error: refusal }, { "retry-after": "60" });
}
