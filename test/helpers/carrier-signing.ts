/**
 * Requests signed as the carriers sign their webhooks, for tests that play the carrier:
 * Vonage's signed-webhook JWT (HS256 with the signature secret, `iat`, and the body's SHA-256 as
 * `payload_hash`), Plivo's V3 signature (over the URL, the POST parameters and a nonce) and
 * Telnyx's Ed25519 (over `timestamp|body`); and the stream URL a webhook's answer names.
 */
import { createHash, createHmac, randomUUID, sign, type KeyObject } from "node:crypto";
import { plivoSignatureV3 } from "../../src/server/telephony/signatures.js";

/** `Authorization: Bearer <JWT>` as Vonage signs a webhook with `body`, issued at `nowMs`. */
export function vonageAuthorization(secret: string, body: string, nowMs = Date.now()): string {
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  const head = `${part({ alg: "HS256", typ: "JWT" })}.${part({ iat: Math.floor(nowMs / 1000), jti: randomUUID(), iss: "Vonage", payload_hash: createHash("sha256").update(body).digest("hex") })}`;
  return `Bearer ${head}.${createHmac("sha256", secret).update(head).digest("base64url")}`;
}

/** POST `event` as JSON to `url`, signed as Vonage signs (`secret`). */
export function vonagePost(url: string, secret: string, event: object): Promise<Response> {
  const body = JSON.stringify(event);
  return fetch(url, { method: "POST", headers: { authorization: vonageAuthorization(secret, body), "content-type": "application/json" }, body });
}

/** POST `params` as a form to `fetchUrl`, signed as Plivo signs the public `signedUrl` (default: the same). */
export function plivoPost(fetchUrl: string, token: string, params: Record<string, string>, nonce: string, signedUrl = fetchUrl): Promise<Response> {
  return fetch(fetchUrl, {
    method: "POST",
    headers: { "x-plivo-signature-v3": plivoSignatureV3(token, "POST", signedUrl, Object.entries(params), nonce), "x-plivo-signature-v3-nonce": nonce, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
}

/** POST `params` as a form to `url`, signed as Telnyx signs its webhooks: Ed25519 over `timestamp|body`, now. */
export function telnyxPost(url: string, params: Record<string, string>, privateKey: KeyObject): Promise<Response> {
  const body = new URLSearchParams(params).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");
  return fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp }, body });
}

/** The stream URL a carrier's answer to its voice webhook names (TwiML/TeXML `<Stream url>`, Plivo's `<Stream>` text, Vonage's NCCO `connect`). */
export async function answeredStreamUrl(response: Response): Promise<string> {
  const text = await response.text();
  if (text.startsWith("[")) return (JSON.parse(text) as { endpoint?: { uri?: string }[] }[])[0]?.endpoint?.[0]?.uri ?? "";
  const url = /<Stream url="([^"]+)"/.exec(text)?.[1] ?? /<Stream[^>]*>([^<]+)<\/Stream>/.exec(text)?.[1] ?? "";
  return url.replace(/&amp;/g, "&");
}
