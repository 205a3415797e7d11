import { describe, expect, it } from "vitest";
import { ALWAYS_SENT, parseEventSubscription, subscribed } from "../../../src/transport/event-subscription.js";
import { EVENT_TYPES } from "../../../src/transport/protocol.js";

describe("parseEventSubscription", () => {
  it("sends every event when the client names none", () => {
    const all = parseEventSubscription(null);
    expect(all).toBe("all");
    for (const type of EVENT_TYPES) expect(subscribed("all", type)).toBe(true);
  });

  it("keeps the named events and the ones always sent, trimming spaces and empty names", () => {
    const chosen = parseEventSubscription(" reply.completed, ,agent-transcript.committed,");
    if (chosen === "all" || "error" in chosen) throw new Error("expected a set");
    expect([...chosen].sort()).toEqual([...ALWAYS_SENT, "reply.completed", "agent-transcript.committed"].sort());
    expect(subscribed(chosen, "agent-transcript.updated")).toBe(false);
    expect(subscribed(chosen, "reply.cancelled")).toBe(true);
  });

  it("keeps only the events always sent for an empty list", () => {
    const none = parseEventSubscription("");
    if (none === "all" || "error" in none) throw new Error("expected a set");
    expect([...none].sort()).toEqual([...ALWAYS_SENT].sort());
  });

  it("refuses unknown names, showing at most three, each clipped", () => {
    expect(parseEventSubscription("a,b,c,d,e")).toEqual({ error: 'events: "a", "b", "c" and 2 more are not event types; name event types from docs/protocol.md "Events", comma-separated' });
    expect(parseEventSubscription("x".repeat(500))).toEqual({ error: `events: "${"x".repeat(64)}" is not an event type; name event types from docs/protocol.md "Events", comma-separated` });
  });

  it("always sends only event types that exist", () => {
    for (const type of ALWAYS_SENT) expect(EVENT_TYPES).toContain(type);
  });
});
