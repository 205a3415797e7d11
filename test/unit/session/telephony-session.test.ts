import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { DEFAULTS, agent, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { sayExactly } from "../../../src/session/s2s-lines.js";
import type { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";

const pins: string[] = [];
const enterPin = tool({
  description: "The caller keyed in their PIN",
  parameters: Type.Object({ digits: Type.String() }),
  execute: ({ digits }) => {
    pins.push(digits);
    return "PIN received.";
  },
});

/** An s2s session on a phone line, under virtual time. */
async function phoneSession(extra: Record<string, unknown> = {}, deps: { maxCallDurationMs?: number } = {}) {
  const def = withTools(agent({ name: "phone", greeting: "Welcome.", s2s: { kind: "openai-realtime", options: {} }, telephony: true, ...extra }), { enter_pin: enterPin }) as ResolvedAgentDef;
  const { clock, link, fake, session } = await s2sSession(def, { transport: "twilio", ...deps });
  const greeting = fake.start(true);
  fake.speak(greeting, "Welcome.", 200);
  fake.done(greeting, "completed", true);
  await clock.advance(300);
  return { clock, link, fake, session };
}

const texts = (fake: FakeS2s): string[] => fake.calls.flatMap((c) => (c.kind === "text" ? [c.text] : []));

describe("a phone session's call control", () => {
  it("hands its mode to the link when nothing screens the call, and takes it back when the call ends", async () => {
    const { clock, link, fake, session } = await phoneSession();
    // The link's own handler would only pass the caller's audio on: the mode hears it directly.
    expect(link.heardDirectly).toBe(true);
    link.sendAudio(new Uint8Array(480));
    expect(fake.audioInBytes).toBe(480);
    await session.end();
    await clock.advance(0);
    expect(link.heardDirectly).toBe(false);
    link.sendAudio(new Uint8Array(480));
    expect(fake.audioInBytes).toBe(480);
  });

  it("gathers keypad digits pressed within the inter-digit time into one typed turn", async () => {
    const { clock, link, fake } = await phoneSession();
    link.sendDtmf("1");
    await clock.advance(500);
    link.sendDtmf("2");
    await clock.advance(DEFAULTS.dtmfInterDigitMs - 1);
    expect(texts(fake)).toEqual([]);
    await clock.advance(1);
    expect(texts(fake)).toEqual(["The caller pressed 12"]);
    link.sendDtmf("#");
    expect(texts(fake)).toEqual(["The caller pressed 12", "The caller pressed #"]);
  });

  it("delivers digits to the tool named in dtmf.tool instead, with no model turn", async () => {
    pins.length = 0;
    const { clock, link, fake } = await phoneSession({ dtmf: { tool: "enter_pin" } });
    for (const digit of ["4", "2", "4", "2", "#"]) link.sendDtmf(digit);
    await clock.advance(0);
    expect(pins).toEqual(["4242"]);
    expect(link.of("tool.called")).toMatchObject([{ toolName: "enter_pin", args: { digits: "4242" } }]);
    expect(link.of("tool.completed")).toMatchObject([{ result: "PIN received." }]);
    expect(texts(fake)).toEqual([]);
  });

  it("refuses to start when dtmf.tool names no tool, naming the field and the fix", async () => {
    const def = agent({ name: "phone", s2s: { kind: "openai-realtime", options: {} }, dtmf: { tool: "no_such_tool" } }) as ResolvedAgentDef;
    const { link } = await s2sSession(def);
    expect(link.of("error.reported")).toMatchObject([{ fatal: true, message: expect.stringMatching(/^dtmf\.tool: this agent has no tool named no_such_tool; .*dtmf: "text"/) }]);
  });

  it("at maxCallDurationMs speaks the notice in the model's voice and hangs up once it was heard", async () => {
    const { clock, link, fake } = await phoneSession({}, { maxCallDurationMs: 60_000 });
    await clock.advance(59_000);
    expect(link.closed).toBeUndefined();
    await clock.advance(1000);
    expect(fake.calls.at(-1)).toEqual({ kind: "response", instructions: sayExactly(DEFAULTS.callLimitPhrase), outOfBand: true });
    const notice = fake.start(true);
    fake.speak(notice, DEFAULTS.callLimitPhrase, 3000);
    fake.done(notice, "completed", true);
    // The service is done with it; the caller still has 3 s of it to hear.
    await clock.advance(2900);
    expect(link.closed).toBeUndefined();
    await clock.advance(200);
    expect(link.closed).toEqual({ code: 1000, reason: "call duration limit" });
  });

  it("a notice that never finishes still ends the call", async () => {
    const { clock, link } = await phoneSession({}, { maxCallDurationMs: 10_000 });
    await clock.advance(10_000 + 20_000);
    expect(link.closed?.code).toBe(1000);
  });

  it("keeps a finished reply open while the line still plays it: no idle timeout, committed only once heard", async () => {
    const { clock, link, fake } = await phoneSession({ idleTimeoutMs: 1000 });
    const reply = fake.start();
    fake.speak(reply, "Your order ships on Friday.", 400);
    fake.done(reply);
    // The carrier's marks say 5 s of audio is still queued on the line.
    link.send({ type: "playback_progress", bufferedMs: 5000 });
    await clock.advance(3000);
    expect(link.of("session.timed-out")).toEqual([]);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome."]);
    await clock.advance(2500);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome.", "Your order ships on Friday."]);
    await clock.advance(1000);
    expect(link.of("session.timed-out")).toHaveLength(1);
  });

  it("a barge-in while a finished reply still plays truncates it at what was heard and records nothing", async () => {
    const { clock, link, fake } = await phoneSession();
    const reply = fake.start();
    fake.speak(reply, "Your order ships on Friday and arrives on Tuesday.", 3000);
    fake.done(reply);
    await clock.advance(1200);
    fake.events.speechStarted();
    expect(link.of("reply.cancelled")).toHaveLength(1);
    const truncate = fake.calls.find((c) => c.kind === "truncate");
    expect(truncate).toMatchObject({ kind: "truncate", itemId: `item_${reply}` });
    expect(truncate?.kind === "truncate" ? truncate.audioEndMs : -1).toBeCloseTo(1200, -2);
    // Done at the service: nothing to cancel there.
    expect(fake.calls.filter((c) => c.kind === "cancel" && c.responseId === reply)).toEqual([]);
    await clock.advance(5000);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome."]);
  });
});
