/**
 * The resume key (issue 14 item 6): a secret issued with `session.configured` that only the
 * session's owner holds. Resuming or taking over a session needs it as well as the session id —
 * the id alone shows up in logs and URLs, and a valid auth token is held by every client of the
 * deployment. Only its hash is kept (in the live session and the resume record), so a store dump
 * does not hand out keys.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A fresh key: 24 random bytes, base64url (32 characters, 192 bits). */
export function newResumeKey(): string {
  return randomBytes(24).toString("base64url");
}

/** What is stored of a key: SHA-256, base64url. */
export function resumeKeyHash(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("base64url");
}

/** Does `key` hash to `hash`? False when either is missing. Constant time in the hash. */
export function resumeKeyMatches(hash: string | undefined, key: string | undefined): boolean {
  if (hash === undefined || key === undefined || key === "" || key.length > 256) return false;
  const presented = Buffer.from(resumeKeyHash(key));
  const kept = Buffer.from(hash);
  return presented.byteLength === kept.byteLength && timingSafeEqual(presented, kept);
}
