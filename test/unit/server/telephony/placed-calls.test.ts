// The calls the gateway placed (placed-calls.ts) and their carriers' verdicts on their way to the
// session (amd-verdicts.ts): a placement redeemed once and bound to its call; a verdict delivered
// at once to a session of this process, or kept for one watching from another process.
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../../src/clock.js";
import { silentLogger } from "../../../../src/log.js";
import { MemoryCoordinator } from "../../../../src/server/coordination.js";
import { CarrierVerdicts, VERDICT_POLL_MS, VERDICT_TTL_MS } from "../../../../src/server/telephony/amd-verdicts.js";
import { PLACEMENT_TTL_MS, PlacedCalls } from "../../../../src/server/telephony/placed-calls.js";
import type { CarrierVerdict } from "../../../../src/voicemail/answered-by.js";
import { carrierVerdict } from "../../../../src/voicemail/answered-by.js";

describe("PlacedCalls", () => {
  it("redeems a placement once, for its carrier, and binds its AMD callback to the call the webhook named", async () => {
    const clock = virtualClock();
    const placements = new PlacedCalls(new MemoryCoordinator(() => clock.now()));
    const ticket = (await placements.open({ carrier: "twilio", carrierDetection: true })) ?? "";
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await placements.answered(ticket, "telnyx", "CA1", 60_000)).toBeUndefined();
    // A wrong carrier took it: placements are single-use whatever the outcome.
    const second = (await placements.open({ carrier: "twilio", carrierDetection: true })) ?? "";
    expect(await placements.answered(second, "twilio", "CA2", 60_000)).toEqual({ carrier: "twilio", carrierDetection: true });
    expect(await placements.answered(second, "twilio", "CA2", 60_000)).toBeUndefined();
    expect(await placements.amdFor(second, "CA-other", 60_000)).toBe("another call");
    expect(await placements.amdFor(second, "CA2", 60_000)).toBe("ok");
    expect(await placements.amdFor(second, "CA2", 60_000)).toBe("unknown");
    expect(await placements.amdFor("not a ticket", "CA2", 60_000)).toBe("unknown");
  });

  it("takes one greeting end after a machine verdict, for the same call, and one as a first verdict", async () => {
    const clock = virtualClock();
    const placements = new PlacedCalls(new MemoryCoordinator(() => clock.now()));
    const ticket = (await placements.open({ carrier: "vonage", carrierDetection: true })) ?? "";
    await placements.answered(ticket, "vonage", "v-1", 60_000);
    expect(await placements.amdFor(ticket, "v-1", 60_000)).toBe("ok");
    // Nothing more is bound until the machine verdict asks for its greeting's end.
    expect(await placements.amdFor(ticket, "v-1", 60_000, true)).toBe("unknown");
    expect(await placements.expectGreetingEnd(ticket, "v-1", 60_000)).toBe(true);
    expect(await placements.amdFor(ticket, "v-1", 60_000)).toBe("unknown");
    expect(await placements.amdFor(ticket, "v-other", 60_000, true)).toBe("another call");
    expect(await placements.amdFor(ticket, "v-1", 60_000, true)).toBe("ok");
    expect(await placements.amdFor(ticket, "v-1", 60_000, true)).toBe("unknown");
    // A beep reported first is the verdict itself.
    const first = (await placements.open({ carrier: "vonage", carrierDetection: true })) ?? "";
    await placements.answered(first, "vonage", "v-2", 60_000);
    expect(await placements.amdFor(first, "v-2", 60_000, true)).toBe("ok");
    // The greeting-end binding lives as long as the call may.
    await placements.expectGreetingEnd(first, "v-2", 60_000);
    await clock.advance(60_000);
    expect(await placements.amdFor(first, "v-2", 60_000, true)).toBe("unknown");
  });

  it("forgets a placement nobody answered within PLACEMENT_TTL_MS, and one the carrier refused", async () => {
    const clock = virtualClock();
    const placements = new PlacedCalls(new MemoryCoordinator(() => clock.now()));
    const late = (await placements.open({ carrier: "twilio", carrierDetection: false })) ?? "";
    await clock.advance(PLACEMENT_TTL_MS);
    expect(await placements.answered(late, "twilio", "CA1", 60_000)).toBeUndefined();
    const refused = (await placements.open({ carrier: "twilio", carrierDetection: false })) ?? "";
    await placements.cancel(refused);
    expect(await placements.answered(refused, "twilio", "CA1", 60_000)).toBeUndefined();
    // No detection asked: nothing is bound for a callback.
    const plain = (await placements.open({ carrier: "telnyx", carrierDetection: false })) ?? "";
    expect(await placements.answered(plain, "telnyx", "v3:1", 60_000)).toEqual({ carrier: "telnyx", carrierDetection: false });
    expect(await placements.amdFor(plain, "v3:1", 60_000)).toBe("unknown");
  });
});

describe("CarrierVerdicts", () => {
  it("hands a verdict to a session of this process at once", async () => {
    const clock = virtualClock();
    const verdicts = new CarrierVerdicts(new MemoryCoordinator(() => clock.now()), clock, silentLogger);
    const got: CarrierVerdict[] = [];
    const stop = verdicts.watch("CA1", (verdict) => got.push(verdict));
    expect(await verdicts.deliver("CA1", carrierVerdict("human"))).toBe("session");
    expect(got).toEqual([{ kind: "human", answeredBy: "human" }]);
    stop();
    expect(await verdicts.deliver("CA1", carrierVerdict("human"))).toBe("kept");
  });

  it("keeps a verdict for a session in another process (one coordinator, two gateways' verdict routers), which finds it on its next look", async () => {
    const clock = virtualClock();
    const coordinator = new MemoryCoordinator(() => clock.now());
    const callbackProcess = new CarrierVerdicts(coordinator, clock, silentLogger);
    const streamProcess = new CarrierVerdicts(coordinator, clock, silentLogger);
    const got: CarrierVerdict[] = [];
    const stop = streamProcess.watch("CA9", (verdict) => got.push(verdict));
    await clock.advance(0);
    expect(await callbackProcess.deliver("CA9", carrierVerdict("machine_start"))).toBe("kept");
    expect(got).toEqual([]);
    await clock.advance(VERDICT_POLL_MS);
    expect(got).toEqual([{ kind: "machine", answeredBy: "machine_start", greetingEnded: false }]);
    // Taken once.
    await clock.advance(VERDICT_POLL_MS * 4);
    expect(got).toHaveLength(1);
    stop();
    await clock.advance(VERDICT_POLL_MS * 4);
    expect(clock.pending()).toBe(0);
  });

  it("keeps a machine's greeting end in place of the machine verdict nobody has taken yet", async () => {
    const clock = virtualClock();
    const verdicts = new CarrierVerdicts(new MemoryCoordinator(() => clock.now()), clock, silentLogger);
    expect(await verdicts.deliver("v-1", carrierVerdict("machine_start"))).toBe("kept");
    expect(await verdicts.deliver("v-1", carrierVerdict("human"))).toBe("lost");
    expect(await verdicts.deliver("v-1", carrierVerdict("machine_end_beep"))).toBe("kept");
    const got: CarrierVerdict[] = [];
    const stop = verdicts.watch("v-1", (verdict) => got.push(verdict));
    await clock.advance(VERDICT_POLL_MS);
    expect(got).toEqual([{ kind: "machine", answeredBy: "machine_end_beep", greetingEnded: true }]);
    stop();
  });

  it("gives a session whose stream starts after the verdict came the kept verdict, within VERDICT_TTL_MS", async () => {
    const clock = virtualClock();
    const verdicts = new CarrierVerdicts(new MemoryCoordinator(() => clock.now()), clock, silentLogger);
    await verdicts.deliver("CA3", carrierVerdict("fax"));
    const got: CarrierVerdict[] = [];
    const stop = verdicts.watch("CA3", (verdict) => got.push(verdict));
    await clock.advance(0);
    expect(got).toEqual([{ kind: "fax", answeredBy: "fax" }]);
    stop();
    await verdicts.deliver("CA4", carrierVerdict("human"));
    await clock.advance(VERDICT_TTL_MS);
    const late: CarrierVerdict[] = [];
    const stopLate = verdicts.watch("CA4", (verdict) => late.push(verdict));
    await clock.advance(VERDICT_POLL_MS);
    expect(late).toEqual([]);
    stopLate();
  });
});
