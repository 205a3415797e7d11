import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** How long a minted session token is valid by default (ms). */
export const TOKEN_TTL_MS = 5 * 60_000;

interface TokenPayload {
  /** The agent the token is bound to. */
  readonly a: string;
  /** Expiry, epoch ms. */
  readonly e: number;
  /** Nonce: two tokens minted in the same ms differ. */
  readonly n: string;
}

function sign(key: string, payload: string): string {
  return createHmac("sha256", key).update(payload).digest("base64url");
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A short-lived session token: base64url(payload) "." HMAC-SHA256(key, payload). */
export function mintToken(key: string, agent: string, now: number, ttlMs = TOKEN_TTL_MS): { token: string; expiresAt: number } {
  const payload: TokenPayload = { a: agent, e: now + ttlMs, n: randomBytes(9).toString("base64url") };
  const encoded = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return { token: `${encoded}.${sign(key, encoded)}`, expiresAt: payload.e };
}

export type TokenCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Verify a token's signature, expiry and agent binding. Never throws. */
export function verifyToken(key: string, token: string | undefined, agent: string, now: number): TokenCheck {
  if (token === undefined || token === "") return { ok: false, reason: "a session token is required: POST /v1/sessions with your API key, then connect with ?token=" };
  const [encoded, signature, extra] = token.split(".");
  if (encoded === undefined || signature === undefined || extra !== undefined || !equal(sign(key, encoded), signature)) {
    return { ok: false, reason: "the session token is not valid" };
  }
  let payload: Partial<TokenPayload>;
  try {
    payload = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8")) as Partial<TokenPayload>;
  } catch {
    return { ok: false, reason: "the session token is not valid" };
  }
  if (typeof payload.e !== "number" || payload.e <= now) return { ok: false, reason: "the session token has expired: mint a new one" };
  if (payload.a !== agent) return { ok: false, reason: "the session token was minted for another agent" };
  return { ok: true };
}

/** Compare a presented API key with the configured one in constant time. */
export function keyMatches(configured: string, presented: string | undefined): boolean {
  return presented !== undefined && equal(configured, presented);
}

/** `Authorization: Bearer <x>` → x. */
export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return match?.[1]?.trim();
}

/**
 * A plain HTTP request's credentials (an agent's routes): `Authorization: Bearer <x>` where x is
 * the API key itself (as `POST /v1/sessions` takes it) or a session token minted with it for
 * `agent` and not expired (as `/websocket` takes it). Constant-time; never throws.
 */
export function bearerAuthorized(key: string, authorization: string | undefined, agent: string, now: number): boolean {
  const presented = bearer(authorization);
  return keyMatches(key, presented) || verifyToken(key, presented, agent, now).ok;
}
