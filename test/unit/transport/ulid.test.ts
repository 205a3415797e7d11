import { describe, expect, it } from "vitest";
import { stamp, ulid } from "../../../src/transport/protocol.js";

describe("event ids", () => {
  it("are 26-character Crockford ULIDs whose time part encodes the ms", () => {
    const id = ulid(1_700_000_000_000);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    // Reference value from the ulid package's encodeTime(1_700_000_000_000, 10).
    expect(id.slice(0, 10)).toBe("01HF7YAT00");
  });

  it("sort in emit order, within one millisecond and across them", () => {
    const ids = [...Array.from({ length: 2000 }, () => ulid(1_800_000_000_000)), ulid(1_800_000_000_001), ulid(1_800_000_000_001)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(stamp({ type: "reply.completed" }, 1_800_000_000_002).meta.id).toMatch(/^evt_/);
  });
});
