/**
 * Webhook and stream signatures of the carriers (Twilio's `X-Twilio-Signature` and Telnyx's
 * Ed25519 signature as docs/vendors.md (Carriers), "Signatures" describes them; Plivo V3 after the
 * plivo-node and plivo-python SDKs; Vonage signed webhooks, developer.vonage.com "Signed
 * webhooks"). Pure: no I/O; every comparison in constant time; the `valid…` checks never throw,
 * whatever a stranger sent.
 */
import { createHash, createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from "node:crypto";
import { spread } from "../../spread.js";

/** Telnyx rejects timestamps further than this from now (s). */
export const TELNYX_TOLERANCE_S = 300;

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.byteLength === y.byteLength && timingSafeEqual(x, y);
}

/**
 * Twilio's signature: HMAC-SHA1 (key: the account Auth Token) over the full URL followed by every
 * POST parameter as name + value, sorted by name (a repeated name: each distinct value, sorted), base64.
 */
export function twilioSignature(authToken: string, url: string, params: readonly (readonly [string, string])[]): string {
  // Each distinct name + value pair once (twilio-node dedupes a repeated name's values), sorted by name, then value.
  const pairs = [...new Set(params.map(([name, value]) => JSON.stringify([name, value])))].map((p) => JSON.parse(p) as [string, string]);
  const sorted = pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  let data = url;
  for (const [name, value] of sorted) data += name + value;
  return createHmac("sha1", authToken).update(data, "utf8").digest("base64");
}

/** The URL as Twilio may have signed it: as given, and with the default port added or removed (twilio-node does the same). */
function urlVariants(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const defaultPort = parsed.protocol === "https:" || parsed.protocol === "wss:" ? "443" : "80";
  const withPort = new URL(url);
  const withoutPort = new URL(url);
  withoutPort.port = "";
  // URL drops a default port on assignment, so splice it in by hand.
  const portless = withoutPort.toString();
  const ported = withPort.port === "" ? portless.replace(`//${withoutPort.host}`, `//${withoutPort.hostname}:${defaultPort}`) : withPort.toString();
  return [...new Set([url, portless, ported])];
}

/**
 * Validate `X-Twilio-Signature` for a form POST (or, with no params, the stream upgrade). JSON
 * bodies carry `bodySHA256` in the URL: the signature is over the URL alone and the hash is
 * checked against the raw body.
 */
export function validTwilioSignature(
  authToken: string,
  header: string | undefined,
  url: string,
  params: readonly (readonly [string, string])[],
  rawBody?: string,
): boolean {
  if (header === undefined || header === "") return false;
  // The URL holds the request's Host header, a stranger's: one that does not parse fails the check.
  let bodyHash: string | null;
  try {
    bodyHash = new URL(url, "http://x").searchParams.get("bodySHA256");
  } catch {
    return false;
  }
  if (bodyHash !== null) {
    if (rawBody === undefined || !sameText(createHash("sha256").update(rawBody, "utf8").digest("hex"), bodyHash)) return false;
    params = [];
  }
  return urlVariants(url).some((variant) => sameText(twilioSignature(authToken, variant, params), header));
}

/** Ed25519 public key from Telnyx's base64 of 32 raw bytes (SPKI DER = fixed 12-byte prefix + key). */
export function telnyxPublicKey(base64: string): KeyObject {
  const raw = Buffer.from(base64, "base64");
  if (raw.byteLength !== 32) throw new RangeError("TELNYX_PUBLIC_KEY must be the base64 of a 32-byte Ed25519 public key (Mission Control → Keys & Credentials → Public Key)");
  const der = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]);
  return createPublicKey({ key: der, format: "der", type: "spki" });
}

/** Validate Telnyx's `telnyx-signature-ed25519` over `${timestamp}|${rawBody}`, within ±300 s of now. */
export function validTelnyxSignature(key: KeyObject, signature: string | undefined, timestamp: string | undefined, rawBody: string, nowMs: number): boolean {
  if (signature === undefined || timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TELNYX_TOLERANCE_S) return false;
  const sig = Buffer.from(signature, "base64");
  if (sig.byteLength !== 64) return false;
  try {
    return verify(null, Buffer.from(`${timestamp}|${rawBody}`, "utf8"), key, sig);
  } catch {
    return false;
  }
}

/**
 * Plivo's V3 signature (`X-Plivo-Signature-V3`, plivo-node `lib/utils/v3Security.js`): HMAC-SHA256
 * (key: the Auth Token), base64, over `<url>.<nonce>` where `<url>` is scheme://host[:port]/path,
 * then `?` + the URL's query sorted as `name=value` joined by `&` (GET, or when present), and for
 * a POST with parameters `?` [query `.`] + every parameter as name + value, sorted by name then value.
 */
export function plivoSignatureV3(authToken: string, method: string, url: string, params: readonly (readonly [string, string])[], nonce: string): string {
  const parsed = new URL(url);
  let base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  const byName = (a: readonly [string, string], b: readonly [string, string]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  const query = [...parsed.searchParams.entries()].sort(byName).map(([name, value]) => `${name}=${value}`).join("&");
  const posted = method === "POST" ? [...params].sort(byName) : [];
  if (query !== "" || posted.length > 0) base += `?${query}`;
  if (query !== "" && posted.length > 0) base += ".";
  for (const [name, value] of posted) base += name + value;
  return createHmac("sha256", authToken).update(`${base}.${nonce}`, "utf8").digest("base64");
}

/** Validate `X-Plivo-Signature-V3` (a comma-separated list while an Auth Token rotates: any may match). */
export function validPlivoSignature(
  authToken: string,
  header: string | undefined,
  nonce: string | undefined,
  method: string,
  url: string,
  params: readonly (readonly [string, string])[],
): boolean {
  if (header === undefined || header === "" || nonce === undefined || nonce === "") return false;
  let expected: string;
  try {
    expected = plivoSignatureV3(authToken, method, url, params, nonce);
  } catch {
    return false; // the URL (built on the request's Host header) does not parse
  }
  return header.split(",").some((candidate) => sameText(candidate.trim(), expected));
}

/** Vonage signed webhooks: an HS256 JWT whose `iat` is further than this from now is refused (s). */
export const VONAGE_TOLERANCE_S = 300;

/**
 * Validate Vonage's signed webhook: `Authorization: Bearer <JWT>`, HS256 with the account's
 * signature secret; `iat` within ±300 s of now; a request with a body must carry `payload_hash`,
 * the hex SHA-256 of the raw body.
 */
export function validVonageSignature(secret: string, authorization: string | undefined, rawBody: string, nowMs: number): boolean {
  const token = /^Bearer\s+([\w-]+\.[\w-]+\.[\w-]+)$/.exec(authorization?.trim() ?? "")?.[1];
  if (token === undefined) return false;
  const [header = "", payload = "", signature = ""] = token.split(".");
  const expected = createHmac("sha256", secret).update(`${header}.${payload}`).digest("base64url");
  if (!sameText(signature, expected)) return false;
  let claims: { alg?: unknown; iat?: unknown; payload_hash?: unknown };
  try {
    const head = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { alg?: unknown };
    claims = spread(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as object, { alg: head.alg });
  } catch {
    return false;
  }
  if (claims.alg !== "HS256" || typeof claims.iat !== "number" || Math.abs(nowMs / 1000 - claims.iat) > VONAGE_TOLERANCE_S) return false;
  if (rawBody === "") return true;
  return typeof claims.payload_hash === "string" && sameText(claims.payload_hash.toLowerCase(), createHash("sha256").update(rawBody, "utf8").digest("hex"));
}
