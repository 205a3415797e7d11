import { describe, expect, it } from "vitest";
import { CallTickets } from "../../../../src/server/telephony/answered-calls.js";
import { lineNumber, MAX_SIP_URI_CHARS, webhookNumbers } from "../../../../src/server/telephony/caller-numbers.js";
import { MemoryCoordinator } from "../../../../src/server/coordination.js";

describe("a call's numbers as its carrier's webhook names them", () => {
  it("keeps E.164, normalizes Plivo's and Vonage's bare digits, keeps SIP URIs and Twilio client ids, drops the rest", () => {
    expect(lineNumber("twilio", "+14155550123")).toBe("+14155550123");
    expect(lineNumber("plivo", "14155550123")).toBe("+14155550123");
    expect(lineNumber("vonage", "447700900000")).toBe("+447700900000");
    // Twilio and Telnyx document the +: bare digits there are no number.
    expect(lineNumber("twilio", "14155550123")).toBeUndefined();
    expect(lineNumber("telnyx", "sip:alice@example.com")).toBe("sip:alice@example.com");
    expect(lineNumber("twilio", "client:alice_1")).toBe("client:alice_1");
    expect(lineNumber("telnyx", "client:alice")).toBeUndefined();
    for (const bad of ["Anonymous", "+0123456789", "+1 415 555 0123", "+1234567890123456", "sip:a b@x", "sip:<x>", `sip:${"a".repeat(MAX_SIP_URI_CHARS)}`, "client:a-b", ""]) {
      expect(lineNumber("twilio", bad), bad).toBeUndefined();
    }
  });

  it("reads each carrier's documented fields, the query only where the signature covers the URL, and never Exotel's", () => {
    const url = (query = ""): URL => new URL(`http://gw/telephony/x/voice${query}`);
    expect(webhookNumbers("twilio", url("?From=%2B14155550123"), "To=%2B14155550100")).toEqual({ from: "+14155550123", to: "+14155550100", dropped: [] });
    expect(webhookNumbers("telnyx", url("?From=%2B14155550123"), "To=%2B14155550100")).toEqual({ to: "+14155550100", dropped: [] });
    expect(webhookNumbers("vonage", url("?from=447700900000"), JSON.stringify({ to: "442079460000", from: "nobody" }))).toEqual({ to: "+442079460000", dropped: ["from"] });
    expect(webhookNumbers("exotel", url("?CallFrom=04412345678&From=%2B914412345678"), "")).toEqual({ dropped: [] });
  });

  it("a ticket carries them, and what is read back is checked again like any stored value", async () => {
    const coordinator = new MemoryCoordinator(() => 0);
    const tickets = new CallTickets(coordinator);
    const ticket = (await tickets.issue({ carrier: "twilio", callId: "CA1", phone: { direction: "inbound", from: "+14155550123", to: "bogus" } })) ?? "";
    expect((await tickets.redeem("twilio", ticket))?.phone).toEqual({ direction: "inbound", from: "+14155550123" });
    // A stored ticket whose numbers are not numbers (or whose direction is not one) gives none of them.
    await coordinator.hold("ticket:AAAAAAAAAAAAAAAAAAAAAAAA", JSON.stringify({ carrier: "twilio", phone: { direction: "inbound", from: "+1 415 555", to: 42 } }), 60_000);
    expect((await tickets.redeem("twilio", "AAAAAAAAAAAAAAAAAAAAAAAA"))?.phone).toEqual({ direction: "inbound" });
    await coordinator.hold("ticket:BBBBBBBBBBBBBBBBBBBBBBBB", JSON.stringify({ carrier: "twilio", phone: { direction: "sideways", from: "+14155550123" } }), 60_000);
    expect((await tickets.redeem("twilio", "BBBBBBBBBBBBBBBBBBBBBBBB"))?.phone).toBeUndefined();
  });
});
