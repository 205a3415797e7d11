import { describe, expect, it } from "vitest";
import { bearer, bearerAuthorized, keyMatches, mintToken, verifyToken } from "../../../src/server/auth.js";

describe("session tokens", () => {
  const now = 1_700_000_000_000;

  it("verify within their lifetime, for their agent", () => {
    const { token, expiresAt } = mintToken("key", "support", now, 60_000);
    expect(expiresAt).toBe(now + 60_000);
    expect(verifyToken("key", token, "support", now + 59_999)).toEqual({ ok: true });
  });

  it("are refused when expired, forged, signed with another key, bound to another agent or absent", () => {
    const { token } = mintToken("key", "support", now, 60_000);
    expect(verifyToken("key", token, "support", now + 60_000)).toMatchObject({ ok: false, reason: expect.stringContaining("expired") as string });
    expect(verifyToken("other", token, "support", now)).toMatchObject({ ok: false, reason: "the session token is not valid" });
    expect(verifyToken("key", token, "sales", now)).toMatchObject({ ok: false, reason: expect.stringContaining("another agent") as string });
    const [payload, signature] = token.split(".");
    const tampered = `${Buffer.from(JSON.stringify({ a: "support", e: now + 1e9, n: "x" })).toString("base64url")}.${signature ?? ""}`;
    expect(verifyToken("key", tampered, "support", now).ok).toBe(false);
    expect(verifyToken("key", `${payload ?? ""}.${signature ?? ""}.x`, "support", now).ok).toBe(false);
    expect(verifyToken("key", undefined, "support", now)).toMatchObject({ ok: false, reason: expect.stringContaining("POST /v1/sessions") as string });
    expect(verifyToken("key", "garbage", "support", now).ok).toBe(false);
  });

  it("two tokens minted in the same millisecond differ", () => {
    expect(mintToken("key", "a", now).token).not.toBe(mintToken("key", "a", now).token);
  });
});

describe("API keys", () => {
  it("compare exactly and read from a Bearer header", () => {
    expect(keyMatches("sk-1", "sk-1")).toBe(true);
    expect(keyMatches("sk-1", "sk-2")).toBe(false);
    expect(keyMatches("sk-1", undefined)).toBe(false);
    expect(bearer("Bearer sk-1")).toBe("sk-1");
    expect(bearer("bearer  sk-1 ")).toBe("sk-1");
    expect(bearer("Basic x")).toBeUndefined();
  });
});

describe("a plain HTTP request's credentials (an agent's routes)", () => {
  const now = 1_700_000_000_000;

  it("pass with the API key itself or a live session token for the agent; nothing else does", () => {
    const { token } = mintToken("key", "support", now, 60_000);
    expect(bearerAuthorized("key", "Bearer key", "support", now)).toBe(true);
    expect(bearerAuthorized("key", `Bearer ${token}`, "support", now)).toBe(true);
    expect(bearerAuthorized("key", `Bearer ${token}`, "support", now + 60_000)).toBe(false);
    expect(bearerAuthorized("key", `Bearer ${token}`, "sales", now)).toBe(false);
    expect(bearerAuthorized("key", "Bearer kex", "support", now)).toBe(false);
    expect(bearerAuthorized("key", "Basic a2V5", "support", now)).toBe(false);
    expect(bearerAuthorized("key", undefined, "support", now)).toBe(false);
  });
});
