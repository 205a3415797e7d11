import { describe, expect, it } from "vitest";
import { ConnectionRateLimit } from "../../../src/server/rate-limit.js";

describe("ConnectionRateLimit", () => {
  it("lets a burst up to the limit through, then refills evenly, per address", () => {
    let now = 0;
    const limit = new ConnectionRateLimit(3, () => now);
    expect([limit.take("a"), limit.take("a"), limit.take("a"), limit.take("a")]).toEqual([true, true, true, false]);
    expect(limit.take("b")).toBe(true);
    now += 20_000; // one token back (3 a minute)
    expect([limit.take("a"), limit.take("a")]).toEqual([true, false]);
    now += 60_000;
    expect([limit.take("a"), limit.take("a"), limit.take("a"), limit.take("a")]).toEqual([true, true, true, false]);
  });
});
