// The `events` field: keyed by client-protocol event type (or "*"), each value a function;
// anything else is refused at load with the field and the fix.
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../../src/events.js";
import { agent, ConfigError, OBSERVABLE_KEYS, toAgentConfig } from "../../../src/manifest/index.js";

function issuesOf(events: unknown): readonly { path: string; message: string }[] {
  try {
    toAgentConfig({ name: "shop", mode: "text", events }, { warn: () => {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe("agent events", () => {
  it("accept every client-protocol event type and '*', with no 'not honoured' warning", () => {
    const warnings: string[] = [];
    const events = Object.fromEntries([...EVENT_TYPES, "*"].map((key) => [key, () => {}]));
    toAgentConfig({ name: "shop", mode: "text", events }, { warn: (message) => warnings.push(message) });
    expect(warnings).toEqual([]);
    expect(OBSERVABLE_KEYS).toEqual([...EVENT_TYPES, "*"]);
  });

  it("refuse a key that is no event type, naming the field, the type meant and the valid names", () => {
    const [issue, ...rest] = issuesOf({ "reply.complete": () => {}, "tool.completed": () => {} });
    expect(rest).toEqual([]);
    expect(issue?.path).toBe('events["reply.complete"]');
    expect(issue?.message).toMatch(/^"reply\.complete" is not a client-protocol event type\. Did you mean `reply\.completed`\? Observable: session\.configured, .*, metrics\.turn, \* \(docs\/protocol\.md\)\.$/);
  });

  it("refuse an observer that is not a function, and an events field that is not a record", () => {
    expect(issuesOf({ "tool.completed": "log it" })).toEqual([{ path: 'events["tool.completed"]', message: "an observer is a function (event, { sessionId, mode }) => void (got a string)." }]);
    for (const [events, kind] of [[[() => {}], "an array"], [() => {}, "a function"], ["tool.completed", "a string"]] as const) {
      expect(issuesOf(events)).toEqual([{ path: "events", message: `is an object keyed by event type, e.g. { "tool.completed": (event, { sessionId }) => … } (got ${kind}).` }]);
    }
  });

  it("are typed by their key: the observer of a type reads its fields, and a misspelled key does not compile", () => {
    const results: string[] = [];
    agent({
      name: "shop",
      events: {
        "tool.completed": (event, { sessionId }) => void results.push(`${sessionId}:${event.result}:${event.meta.id}`),
        "*": (event) => {
          if (event.type === "user-transcript.committed") results.push(event.text);
        },
      },
    });
    // @ts-expect-error — not an event type
    agent({ name: "shop", events: { "reply.complete": () => {} } });
    expect(results).toEqual([]);
  });
});
