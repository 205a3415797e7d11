import { describe, expect, it } from "vitest";
import { MemoryCoordinator } from "../../../src/server/coordination.js";
import { CallTickets, firstUse, REPLAY_WINDOW_MS, webhookAccountId, webhookCallId, webhookLine } from "../../../src/server/telephony/answered-calls.js";

describe("MemoryCoordinator", () => {
  it("holds a key once until it expires, and hands a value out once", async () => {
    let now = 0;
    const c = new MemoryCoordinator(() => now);
    expect(await c.hold("k", "v", 1000)).toBe(true);
    expect(await c.hold("k", "w", 1000)).toBe(false);
    expect(await c.take("k")).toBe("v");
    expect(await c.take("k")).toBeUndefined();
    expect(await c.hold("e", "v", 1000)).toBe(true);
    now = 1000;
    expect(await c.take("e")).toBeUndefined();
    expect(await c.hold("e", "again", 1000)).toBe(true);
  });

  it("refuses new keys when full (it fails closed), and sweeps expired ones", async () => {
    let now = 0;
    const c = new MemoryCoordinator(() => now, 2000);
    for (let i = 0; i < 2000; i++) expect(await c.hold(`k${i}`, "v", 1000)).toBe(true);
    expect(await c.hold("one-more", "v", 1000)).toBe(false);
    now = 5000;
    expect(await c.hold("one-more", "v", 1000)).toBe(true);
    expect(c.size).toBe(1);
  });

  it("admits connections from an address against its own bucket per limit", async () => {
    const c = new MemoryCoordinator(() => 0);
    expect([await c.admit("a", 2), await c.admit("a", 2), await c.admit("a", 2), await c.admit("b", 2)]).toEqual([true, true, false, true]);
  });
});

describe("call tickets", () => {
  it("redeem once, for the carrier they were minted for, and carry the call the webhook named", async () => {
    const tickets = new CallTickets(new MemoryCoordinator(() => 0));
    const ticket = (await tickets.issue({ carrier: "twilio", callId: "CA1" })) ?? "";
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await tickets.redeem("telnyx", ticket)).toBeUndefined();
    const other = (await tickets.issue({ carrier: "twilio", callId: "CA2" })) ?? "";
    expect(await tickets.redeem("twilio", other)).toEqual({ carrier: "twilio", callId: "CA2" });
    expect(await tickets.redeem("twilio", other)).toBeUndefined();
    // A call id no carrier makes is not kept: that call is never acted on.
    const odd = (await tickets.issue({ carrier: "twilio", callId: "../../Accounts/AC2" })) ?? "";
    expect(await tickets.redeem("twilio", odd)).toEqual({ carrier: "twilio", callId: undefined });
    expect(await tickets.redeem("twilio", "not-a-ticket")).toBeUndefined();
  });

  it("carry Telnyx's AccountSid (its TeXML update-call endpoint is under it) and a warm transfer's way back to its session", async () => {
    const tickets = new CallTickets(new MemoryCoordinator(() => 0));
    const telnyx = (await tickets.issue({ carrier: "telnyx", callId: "v3:abc", accountId: "61bf923e-5e4d-4595-a110-56190ea18a1b" })) ?? "";
    expect(await tickets.redeem("telnyx", telnyx)).toEqual({ carrier: "telnyx", callId: "v3:abc", accountId: "61bf923e-5e4d-4595-a110-56190ea18a1b" });
    const back = (await tickets.issue({ carrier: "twilio", callId: "CA1", resume: { sessionId: "s-1", notice: "Nobody answered." } })) ?? "";
    expect(await tickets.redeem("twilio", back)).toEqual({ carrier: "twilio", callId: "CA1", resume: { sessionId: "s-1", notice: "Nobody answered." } });
    const odd = (await tickets.issue({ carrier: "telnyx", callId: "v3:x", accountId: "../other" })) ?? "";
    expect((await tickets.redeem("telnyx", odd))?.accountId).toBeUndefined();
    const url = new URL("http://gw/telephony/telnyx/voice");
    expect(webhookAccountId("telnyx", url, "CallSid=v3%3Aabc&AccountSid=acc-1")).toBe("acc-1");
    expect(webhookAccountId("twilio", url, "CallSid=CA1&AccountSid=AC1")).toBeUndefined();
  });

  it("a Telnyx ticket keeps the gateway's own number on the call (E.164 only): To when answered, From when placed", async () => {
    const tickets = new CallTickets(new MemoryCoordinator(() => 0));
    const ours = (await tickets.issue({ carrier: "telnyx", callId: "v3:abc", line: "+13125550199" })) ?? "";
    expect((await tickets.redeem("telnyx", ours))?.line).toBe("+13125550199");
    const odd = (await tickets.issue({ carrier: "telnyx", callId: "v3:abc", line: "sip:x@y" })) ?? "";
    expect((await tickets.redeem("telnyx", odd))?.line).toBeUndefined();
    const url = new URL("http://gw/telephony/telnyx/voice");
    const body = "CallSid=v3%3Aabc&From=%2B13125550100&To=%2B13125550199";
    expect(webhookLine("telnyx", url, body, false)).toBe("+13125550199");
    expect(webhookLine("telnyx", url, body, true)).toBe("+13125550100");
    expect(webhookLine("twilio", url, body, false)).toBeUndefined();
  });

  it("a signature is used once within its carrier's window", async () => {
    let now = 0;
    const c = new MemoryCoordinator(() => now);
    expect(await firstUse(c, "telnyx", "sig")).toBe(true);
    expect(await firstUse(c, "telnyx", "sig")).toBe(false);
    expect(await firstUse(c, "vonage", "sig")).toBe(true);
    now = REPLAY_WINDOW_MS.telnyx;
    expect(await firstUse(c, "telnyx", "sig")).toBe(true);
  });

  it("reads the call id each carrier's webhook names, from the query, a form or JSON", () => {
    const url = (q = ""): URL => new URL(`http://gw/telephony/x/voice${q}`);
    expect(webhookCallId("twilio", url(), "CallSid=CA1&From=%2B1")).toBe("CA1");
    expect(webhookCallId("telnyx", url(), "CallSid=v3%3Aabc")).toBe("v3:abc");
    expect(webhookCallId("plivo", url("?CallUUID=p1"), "")).toBe("p1");
    expect(webhookCallId("plivo", url(), "CallUUID=p2")).toBe("p2");
    expect(webhookCallId("vonage", url("?uuid=v1"), "")).toBe("v1");
    expect(webhookCallId("vonage", url(), '{"uuid":"v2","conversation_uuid":"c"}')).toBe("v2");
    expect(webhookCallId("vonage", url(), "{not json")).toBeUndefined();
    expect(webhookCallId("twilio", url(), "")).toBeUndefined();
  });
});
