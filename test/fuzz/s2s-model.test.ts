import fc from "fast-check";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { agent, tool, withTools, type ResolvedAgentDef } from "../../src/manifest/index.js";
import { s2sSession } from "../../src/testing/s2s-session.js";
import { isClientStep, playClientStep, type ClientStep } from "./client-steps.js";
import { report, runs, SEED } from "./figures.js";

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "One moment." },
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

/** What the service or the client does next. */
type Step =
  | { readonly kind: "respond" }
  | { readonly kind: "speak"; readonly ms: number }
  | { readonly kind: "call" }
  | { readonly kind: "done"; readonly status: "completed" | "cancelled" }
  | { readonly kind: "speech" }
  | { readonly kind: "silence" }
  | { readonly kind: "said"; readonly text: string }
  | ClientStep
  | { readonly kind: "fatal" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "respond" as const }) },
  { weight: 5, arbitrary: fc.integer({ min: 20, max: 2000 }).map((ms) => ({ kind: "speak" as const, ms })) },
  { weight: 4, arbitrary: fc.constant({ kind: "call" as const }) },
  { weight: 3, arbitrary: fc.constantFrom("completed" as const, "cancelled" as const).map((status) => ({ kind: "done" as const, status })) },
  { weight: 3, arbitrary: fc.constant({ kind: "speech" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "silence" as const }) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 20 }).map((text) => ({ kind: "said" as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: "cancel" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 3000 }).map((ms) => ({ kind: "wait" as const, ms })) },
  { weight: 1, arbitrary: fc.constant({ kind: "fatal" as const }) },
);

describe("the s2s session, driven by random service and client events", () => {
  it("answers every tool call exactly once, reports at most one fatal error and closes after it, whatever the order", async () => {
    const n = runs(150);
    let steps = 0;
    /** Runs that reached a barge-in while a tool call was in flight (a coverage floor below). */
    let bargeInsideTool = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40, size: "max" }), async (sequence) => {
        const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} } }), { lookup }) as ResolvedAgentDef;
        const { session, link, fake, clock } = await s2sSession(def);
        const open: string[] = [];
        const calls: string[] = [];
        let fatal = false;
        let nextCall = 0;
        let reached = false;
        const answered = (): Map<string, number> => {
          const counts = new Map<string, number>();
          for (const c of fake.calls) if (c.kind === "results") for (const r of c.results) counts.set(r.callId, (counts.get(r.callId) ?? 0) + 1);
          return counts;
        };
        for (const s of sequence) {
          steps += 1;
          if (fatal) break;
          const active = open.at(-1);
          if (isClientStep(s)) await playClientStep(s, link, clock);
          else {
            switch (s.kind) {
              case "respond":
                open.push(fake.start());
                break;
              case "speak":
                if (active !== undefined) fake.speak(active, "Some words here.", s.ms);
                break;
              case "call":
                if (active !== undefined) {
                  const callId = `call_${++nextCall}`;
                  calls.push(callId);
                  fake.events.toolCall({ callId, name: "lookup", args: { orderId: "A1" }, responseId: active });
                }
                break;
              case "done":
                if (active !== undefined) fake.done(open.pop() ?? active, s.status);
                break;
              case "speech": {
                const cancelled = link.of("reply.cancelled").length;
                fake.events.speechStarted();
                if (calls.length > 0 && answered().size < calls.length && link.of("reply.cancelled").length > cancelled) reached = true;
                break;
              }
              case "silence":
                fake.events.speechStopped();
                break;
              case "said":
                fake.events.userTranscript(s.text, { final: true });
                break;
              case "fatal":
                fatal = true;
                fake.events.error(new Error("the service went away"), { fatal: true });
                break;
            }
          }
          await clock.advance(0);
          // After every step: no call answered twice.
          for (const [callId, count] of answered()) expect(count, callId).toBe(1);
        }
        // Let everything in flight finish: open responses end, tools settle, playback drains.
        for (const id of open.splice(0).reverse()) if (!fatal) fake.done(id, "cancelled");
        await clock.advance(60_000);
        const counts = answered();
        for (const callId of calls) expect(counts.get(callId) ?? 0, callId).toBe(fatal ? Math.min(1, counts.get(callId) ?? 0) : 1);
        const fatals = link.of("error.reported").filter((e) => e.fatal);
        expect(fatals.length).toBe(fatal ? 1 : 0);
        if (fatal) expect(link.closed).toBeDefined();
        if (reached) bargeInsideTool += 1;
        await session.end();
      }),
      { seed: SEED, numRuns: n },
    );
    // The generator must keep reaching the hard case, or the property proves little.
    expect(bargeInsideTool / n).toBeGreaterThan(0.03);
    report({ property: "s2s command model: service and client events", runs: n, inputs: steps, unit: `steps (${bargeInsideTool} runs with a barge-in during a tool call)` });
  }, 120_000);
});
