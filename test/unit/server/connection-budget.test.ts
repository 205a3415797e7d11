// The per-address connection budget on its own: off unless set, the coordinator's answer, and a
// coordinator that cannot answer letting the connection through. test/integration/gateway-text.test.ts
// drives it through a gateway (429 on an upgrade).
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log.js";
import { ConnectionBudget } from "../../../src/server/connection-budget.js";
import { MemoryCoordinator, type Coordinator } from "../../../src/server/coordination.js";

function logLines(): { log: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }) });
  return { log, lines };
}

/** A coordinator whose `admit` is the given function (the rest is never asked). */
function admitting(admit: Coordinator["admit"]): Coordinator {
  return { admit, hold: () => Promise.reject(new Error("not asked")), take: () => Promise.reject(new Error("not asked")) };
}

describe("ConnectionBudget", () => {
  it("takes one connection per call from the address's bucket; over it, refused with one throttled warning and the reason", async () => {
    const { log, lines } = logLines();
    const now = 0;
    const budget = new ConnectionBudget(new MemoryCoordinator(() => now), 2, log, () => now);
    expect([await budget.admit("10.0.0.1"), await budget.admit("10.0.0.1"), await budget.admit("10.0.0.1"), await budget.admit("10.0.0.1")]).toEqual([true, true, false, false]);
    expect(await budget.admit("10.0.0.2")).toBe(true); // each address its own bucket
    expect(lines.map((l) => [l.msg, l.remote, l.perMinute])).toEqual([["connection rate limit", "10.0.0.1", 2]]);
    expect(budget.refusal).toBe("more than 2 connections a minute from this address; retry later");
  });

  it("off at 0, a negative or a non-number: every connection passes and the coordinator is not asked", async () => {
    for (const perMinute of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const budget = new ConnectionBudget(admitting(() => Promise.reject(new Error("asked"))), perMinute, logLines().log, () => 0);
      expect(await budget.admit("10.0.0.1")).toBe(true);
    }
  });

  it("a coordinator that cannot answer lets the connection through, with a warning", async () => {
    const { log, lines } = logLines();
    const budget = new ConnectionBudget(admitting(() => Promise.reject(new Error("redis down"))), 5, log, () => 0);
    expect(await budget.admit(undefined)).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual(["connection budget unavailable; connection let through"]);
  });

  it("asks for the socket's address, or 'unknown' when the socket has none", async () => {
    const asked: string[] = [];
    const budget = new ConnectionBudget(admitting((address) => (asked.push(address), Promise.resolve(true))), 5, logLines().log, () => 0);
    await budget.admit("::1");
    await budget.admit(undefined);
    expect(asked).toEqual(["::1", "unknown"]);
  });
});
