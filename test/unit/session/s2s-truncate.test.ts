import { describe, expect, it } from "vitest";
import { agent, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";

/** An s2s session greeted, under virtual time. */
async function greeted() {
  const def = agent({ name: "shop", greeting: "Welcome.", s2s: { kind: "openai-realtime", options: {} } }) as ResolvedAgentDef;
  const { clock, link, fake } = await s2sSession(def, { transport: "realtime" });
  const greeting = fake.start(true);
  fake.speak(greeting, "Welcome.", 200);
  fake.done(greeting, "completed", true);
  await clock.advance(300);
  return { clock, link, fake };
}

const truncates = (calls: readonly { kind: string }[]) => calls.flatMap((c) => (c.kind === "truncate" ? [c as { kind: "truncate"; itemId: string; audioEndMs: number }] : []));

describe("an s2s session told where the listener stopped playing (truncate_heard)", () => {
  it("cuts the service's memory shorter than the barge-in's estimate, never longer", async () => {
    const { clock, link, fake } = await greeted();
    const reply = fake.start();
    fake.speak(reply, "Your order ships on Friday and arrives on Tuesday.", 3000);
    fake.done(reply);
    await clock.advance(1200);
    fake.events.speechStarted();
    expect(truncates(fake.calls).map((c) => c.itemId)).toEqual([`item_${reply}`]);
    // The listener says it stopped at 500 ms: the service hears of it; 2 s says nothing new.
    link.send({ type: "truncate_heard", audioMs: 500 });
    link.send({ type: "truncate_heard", audioMs: 2000 });
    expect(truncates(fake.calls).slice(1)).toEqual([{ kind: "truncate", itemId: `item_${reply}`, audioEndMs: 500 }]);
  });

  it("cuts a reply heard whole too", async () => {
    const { clock, link, fake } = await greeted();
    const reply = fake.start();
    fake.speak(reply, "It shipped.", 800);
    fake.done(reply);
    await clock.advance(1000);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome.", "It shipped."]);
    link.send({ type: "truncate_heard", audioMs: 800 });
    expect(truncates(fake.calls)).toEqual([]);
    link.send({ type: "truncate_heard", audioMs: 300 });
    expect(truncates(fake.calls)).toEqual([{ kind: "truncate", itemId: `item_${reply}`, audioEndMs: 300 }]);
  });
});
