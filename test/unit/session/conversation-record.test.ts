// One conversation record in every mode (issue 16 item 5): a tool call settled in a speech-to-speech
// session reaches the record the resume restores, as it does in pipeline and text sessions.
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { agent, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { MemorySessionStore, type SessionRecord, type SessionStore } from "../../../src/session/store.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";
import { virtualClock } from "../../../src/clock.js";

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  execute: ({ orderId }) => `Order ${orderId} shipped on Friday.`,
});

describe("the conversation record", () => {
  it("holds an s2s session's tool calls: a resumed session restores them", async () => {
    const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }), { lookup }) as ResolvedAgentDef;
    const store = new MemorySessionStore(virtualClock(0));
    const first = await s2sSession(def, { store });
    first.fake.events.speechStarted();
    first.fake.events.speechStopped();
    first.fake.events.userTranscript("where is order A17", { final: true });
    const step = first.fake.start();
    first.fake.events.toolCall({ callId: "call_1", name: "lookup", args: { orderId: "A17" }, responseId: step });
    first.fake.done(step);
    await first.clock.advance(100);
    const answer = first.fake.start();
    first.fake.speak(answer, "It shipped on Friday.", 500);
    first.fake.done(answer);
    await first.clock.advance(2000);
    expect(first.link.of("tool.completed")).toHaveLength(1);
    await first.session.end();

    const second = await s2sSession(def, { store, resumeId: first.session.id });
    const restored = second.link.of("history.restored")[0];
    expect(restored?.toolCalls).toEqual([{ toolCallId: "call_1", toolName: "lookup", args: { orderId: "A17" }, result: "Order A17 shipped on Friday." }]);
    await second.session.end();
  });

  it("gives a store of the user's own plain records, which it may clone (the in-process store takes snapshots)", async () => {
    const def = agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }) as ResolvedAgentDef;
    const records = new Map<string, SessionRecord>();
    const store: SessionStore = {
      load: (id) => Promise.resolve(records.get(id)),
      save: (record) => {
        records.set(record.sessionId, structuredClone(record));
        return Promise.resolve();
      },
      delete: (id) => Promise.resolve(void records.delete(id)),
    };
    const first = await s2sSession(def, { store });
    first.fake.events.userTranscript("where is order A17", { final: true });
    const answer = first.fake.start();
    first.fake.speak(answer, "It shipped on Friday.", 500);
    first.fake.done(answer);
    await first.clock.advance(2000);
    expect(records.get(first.session.id)?.transcript.map((line) => line.text)).toEqual(["where is order A17", "It shipped on Friday."]);
    await first.session.end();

    const second = await s2sSession(def, { store, resumeId: first.session.id });
    expect(second.link.of("history.restored")[0]?.messages.map((line) => line.text)).toEqual(["where is order A17", "It shipped on Friday."]);
    await second.session.end();
    expect(new MemorySessionStore(virtualClock(0)).takesSnapshots).toBe(true);
  });
});
