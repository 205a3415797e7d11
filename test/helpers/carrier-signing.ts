/**
 * Requests signed as the carriers sign their webhooks, for tests that play the carrier:
 * Vonage's signed-webhook JWT (HS256 with the signature secret, `iat`, and the body's SHA-256 as
 * `payload_hash`) and Plivo's V3 signature (over the URL, the POST parameters and a nonce).
 */
import { createHash, createHmac, randomUUID } from "node:crypto";
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
