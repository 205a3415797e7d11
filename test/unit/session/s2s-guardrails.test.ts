import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { agent, tool, withTools, type Guardrail, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { sayExactly } from "../../../src/session/s2s-lines.js";
import { REFUSED_TURN_PROMPT } from "../../../src/turn/guardrails.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";

/** Thirteen to nineteen digits, spaced or dashed or not: a full card number. */
const CARD = /\b(?:\d[ -]?){12,18}\d\b/;
const IN = "Please don't read me card numbers.";
const OUT = "I can't read card numbers out loud.";
const noCardInput: Guardrail = (text) => (CARD.test(text) ? { replacement: IN } : undefined);
const noCardOutput: Guardrail = (text) => (CARD.test(text) ? { replacement: OUT } : undefined);

let runs = 0;
const charge = tool({
  description: "Charge a card",
  parameters: Type.Object({ card: Type.String() }),
  execute: () => {
    runs += 1;
    return "Charged.";
  },
});

function session(guardrails: { inputGuardrails?: Guardrail[]; outputGuardrails?: Guardrail[] }) {
  return s2sSession(withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} }, ...guardrails }), { charge }) as ResolvedAgentDef);
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("input guardrails in an s2s session", () => {
  it("a refused interim cuts the answer the caller is hearing, removes it and the caller's words from the model's memory, and speaks the replacement", async () => {
    const { link, fake, clock } = await session({ inputGuardrails: [noCardInput] });
    fake.events.speechStarted();
    fake.events.speechStopped();
    const answer = fake.start();
    fake.speak(answer, "Sure, I'll read that", 2000);
    await clock.advance(400);
    const before = link.audioOut.length;
    fake.events.userTranscript("my card is 4111 1111 1111 1111", { final: false, itemId: "item_caller" });
    await tick();
    expect(link.of("reply.cancelled")).toHaveLength(1);
    expect(link.of("user-transcript.committed")).toEqual([expect.objectContaining({ text: "my card is 4111 1111 1111 1111", refused: true })]);
    expect(fake.calls.slice(-5)).toEqual([
      { kind: "delete", itemId: "item_caller" },
      { kind: "cancel", responseId: answer },
      { kind: "remember", item: { role: "user", text: REFUSED_TURN_PROMPT } },
      { kind: "remember", item: { role: "assistant", text: IN } },
      { kind: "response", instructions: sayExactly(IN), outOfBand: true },
    ]);
    // The rest of the answer never reaches the caller; once done it leaves the model's memory.
    fake.speak(answer, " and here it is", 1000);
    expect(link.audioOut).toHaveLength(before);
    fake.done(answer, "cancelled");
    expect(fake.calls.at(-1)).toEqual({ kind: "delete", itemId: `item_${answer}` });
    // The final is not committed again; the replacement is the agent's line once spoken.
    fake.events.userTranscript("my card is 4111 1111 1111 1111.", { final: true, itemId: "item_caller" });
    const line = fake.start(true);
    fake.speak(line, IN, 1500);
    fake.done(line, "completed", true);
    // Committed once the caller has heard it.
    await clock.advance(1600);
    expect(link.of("user-transcript.committed")).toHaveLength(1);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual([IN]);
    expect(link.of("agent-transcript.updated").map((e) => e.text)).not.toContain(expect.stringMatching(CARD));
  });

  it("a turn refused before its answer starts: the answer is cut as it starts, with nothing flushed, and its tool calls are not run", async () => {
    runs = 0;
    const { link, fake } = await session({ inputGuardrails: [noCardInput] });
    fake.events.speechStarted();
    fake.events.speechStopped();
    fake.events.userTranscript("charge 4111 1111 1111 1111", { final: true, itemId: "item_caller" });
    await tick();
    expect(fake.calls.at(-1)).toEqual({ kind: "response", instructions: sayExactly(IN), outOfBand: true });
    const answer = fake.start();
    expect(fake.calls.at(-1)).toEqual({ kind: "cancel", responseId: answer });
    fake.events.toolCall({ callId: "call_1", name: "charge", args: { card: "4111111111111111" }, responseId: answer });
    fake.done(answer, "cancelled");
    await tick();
    expect(runs).toBe(0);
    expect(fake.calls.filter((c) => c.kind === "results")).toEqual([
      { kind: "results", results: [{ callId: "call_1", output: "Not run: the caller's turn was refused by an input guardrail." }], respond: false },
    ]);
    expect(link.of("reply.cancelled")).toEqual([]);
  });

  it("refused while the caller is still speaking (a service that transcribes as they talk, naming no item): the answer to come is cut as it starts", async () => {
    const { link, fake } = await session({ inputGuardrails: [noCardInput] });
    const earlier = fake.start();
    fake.speak(earlier, "Hello.", 300);
    fake.done(earlier);
    fake.events.speechStarted();
    fake.events.userTranscript("my card is 4111 1111 1111 1111", { final: false });
    await tick();
    // The earlier reply answered the earlier turn: it is neither cut nor removed.
    expect(fake.calls.filter((c) => c.kind === "cancel" || c.kind === "delete")).toEqual([]);
    const answer = fake.start();
    fake.events.speechStopped({ inferred: true });
    expect(fake.calls.at(-1)).toEqual({ kind: "cancel", responseId: answer });
    fake.speak(answer, "Sure, 4111", 500);
    fake.done(answer, "cancelled");
    expect(link.of("agent-transcript.updated").map((e) => e.text)).not.toContain("Sure, 4111");
    expect(fake.calls.at(-1)).toEqual({ kind: "delete", itemId: `item_${answer}` });
  });

  it("a passing turn is committed once its final passed; a refused typed turn never reaches the service", async () => {
    const { link, fake } = await session({ inputGuardrails: [noCardInput] });
    fake.events.userTranscript("where is", { final: false, itemId: "item_1" });
    fake.events.userTranscript("where is my order", { final: true, itemId: "item_1" });
    await tick();
    expect(link.of("user-transcript.committed")).toEqual([expect.objectContaining({ text: "where is my order" })]);
    expect(link.of("user-transcript.committed")[0]).not.toHaveProperty("refused");

    link.send({ type: "user_text", text: "my card is 4111-1111-1111-1111" });
    link.send({ type: "user_text", text: "and my order?" });
    await tick();
    expect(fake.calls.filter((c) => c.kind === "text")).toEqual([{ kind: "text", text: "and my order?" }]);
    expect(link.of("user-transcript.committed").slice(1)).toEqual([
      expect.objectContaining({ text: "my card is 4111-1111-1111-1111", refused: true }),
      expect.objectContaining({ text: "and my order?" }),
    ]);
    expect(fake.calls).toContainEqual({ kind: "response", instructions: sayExactly(IN), outOfBand: true });
  });
});

describe("output guardrails in an s2s session", () => {
  it("checks the transcript as it streams: a verdict cuts the reply where the caller stopped hearing it and speaks the replacement; history records what was said", async () => {
    const { link, fake, clock, session: live } = await session({ outputGuardrails: [noCardOutput] });
    const reply = fake.start();
    const item = `item_${reply}`;
    fake.events.audio(new Uint8Array(48 * 2000), { responseId: reply, itemId: item });
    for (const delta of ["Sure. ", "Your card ", "is ", "4111 ", "1111 "]) fake.events.agentTranscript(delta, { responseId: reply, itemId: item });
    await tick();
    expect(link.of("agent-transcript.updated").at(-1)?.text).toBe("Sure. Your card is 4111 1111");
    await clock.advance(1000);
    for (const delta of ["1111 ", "1111."]) fake.events.agentTranscript(delta, { responseId: reply, itemId: item });
    await tick();
    expect(link.of("reply.cancelled")).toHaveLength(1);
    for (const event of link.of("agent-transcript.updated")) expect(event.text).not.toMatch(CARD);
    const truncate = fake.calls.find((c) => c.kind === "truncate");
    expect(truncate).toEqual({ kind: "truncate", itemId: item, audioEndMs: 1000 });
    expect(fake.calls.slice(-2)).toEqual([
      { kind: "remember", item: { role: "assistant", text: OUT } },
      { kind: "response", instructions: sayExactly(OUT), outOfBand: true },
    ]);
    fake.done(reply, "cancelled");
    const line = fake.start(true);
    fake.speak(line, OUT, 1500);
    fake.done(line, "completed", true);
    await clock.advance(1600);
    // Half its audio was heard: about half its words, never past what the guardrails had passed.
    const committed = link.of("agent-transcript.committed").map((e) => e.text);
    expect(committed).toEqual([`Sure. Your card is ${OUT}`]);
    await clock.advance(100);
    expect(live.ended).toBe(false);
  });
});
