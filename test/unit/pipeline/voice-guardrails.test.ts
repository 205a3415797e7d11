import type { LanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { agent, DEFAULTS, type AgentOptions, type Guardrail, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { REFUSED_TURN_PROMPT } from "../../../src/turn/guardrails.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

/** Thirteen to nineteen digits, spaced or dashed or not: a full card number. */
const CARD = /\b(?:\d[ -]?){12,18}\d\b/;
const noCardInput: Guardrail = (text) => (CARD.test(text) ? { replacement: "Please don't read card numbers to me.", reason: "card number" } : undefined);
const noCardOutput: Guardrail = (text) => (CARD.test(text) ? { replacement: "I can't read card numbers out loud." } : undefined);

const script = {
  rules: [
    { when: "card", say: "I heard your card number." },
    { when: "read it back", say: "Sure. Your card is 4111 1111 1111 1111. Anything else?" },
    { when: "order", say: "Your order shipped on Monday. It arrives Friday." },
  ],
};

/** The scripted model, recording each request's prompt as JSON. */
function recording(prompts: string[]): LanguageModel {
  const inner = scriptedModel(script) as unknown as { doStream(options: { prompt: unknown }): unknown };
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== "doStream") return Reflect.get(target, key, receiver) as unknown;
      return (options: { prompt: unknown }) => {
        prompts.push(JSON.stringify(options.prompt));
        return target.doStream(options);
      };
    },
  }) as unknown as LanguageModel;
}

function def(extra: Partial<AgentOptions>): ResolvedAgentDef {
  return agent({ name: "guarded", greeting: "", ...extra });
}

describe("guardrails in a pipeline session", () => {
  it("an input guardrail refuses a spoken turn before the model sees it: the replacement is spoken, the turn committed as refused", async () => {
    const { link, stt, tts, clock, started, store, session } = voiceSession(def({ inputGuardrails: [noCardInput] }), { script });
    await started;
    stt.current.final("my card is 4111 1111 1111 1111", true);
    await clock.advance(10_000);
    expect(link.of("user-transcript.committed")).toEqual([expect.objectContaining({ text: "my card is 4111 1111 1111 1111", refused: true })]);
    expect(tts.spoken.join(" ")).toBe("Please don't read card numbers to me.");
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Please don't read card numbers to me."]);
    // The model was never called: no llmFirstTokenMs.
    expect(link.of("metrics.turn")).toEqual([expect.not.objectContaining({ llmFirstTokenMs: expect.anything() as unknown })]);

    stt.current.final("where is my order", true);
    await clock.advance(10_000);
    expect(link.of("user-transcript.committed").at(-1)).toEqual(expect.not.objectContaining({ refused: true }));
    const history = (await store.load(session.id))?.history ?? [];
    expect(JSON.stringify(history)).not.toContain("4111");
    expect(history.slice(0, 2)).toEqual([
      { role: "user", content: REFUSED_TURN_PROMPT },
      { role: "assistant", content: "Please don't read card numbers to me." },
    ]);
    expect(tts.spoken.join(" ")).not.toContain("I heard your card number");
  });

  it("no speculation on a confident interim with input guardrails: the model would see words not yet checked", async () => {
    const prompts: string[] = [];
    const { link, stt, clock, started } = voiceSession(def({ inputGuardrails: [noCardInput], turnTaking: { preemptiveGeneration: true } }), { model: recording(prompts) });
    await started;
    stt.current.speechStarted();
    stt.current.partial("my card is 4111 1111 1111 1111", 0.95);
    await clock.advance(50);
    stt.current.final("my card is 4111 1111 1111 1111", true);
    await clock.advance(10_000);
    expect(prompts).toEqual([]);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Please don't read card numbers to me."]);
  });

  it("waits for an asynchronous input guardrail before committing, and fails closed at its budget", async () => {
    let calls = 0;
    const { link, stt, tts, clock, started } = voiceSession(
      def({
        inputGuardrails: [
          async () => {
            calls += 1;
            // The first check answers after 300 ms; the second never does.
            if (calls === 1) await clock.sleep(300);
            else await new Promise(() => {});
            return undefined;
          },
        ],
      }),
      { script },
    );
    await started;
    stt.current.final("where is my order", true);
    await clock.advance(299);
    expect(link.of("user-transcript.committed")).toEqual([]);
    await clock.advance(1);
    expect(link.of("user-transcript.committed").map((e) => e.text)).toEqual(["where is my order"]);
    await clock.advance(10_000);
    expect(tts.spoken.join(" ").replace(/\s+/g, " ")).toContain("Your order shipped on Monday.");

    stt.current.final("and the other order", true);
    await clock.advance(DEFAULTS.guardrailBudgetMs - 1);
    expect(link.of("user-transcript.committed")).toHaveLength(1);
    await clock.advance(1);
    expect(link.of("user-transcript.committed").at(-1)).toMatchObject({ text: "and the other order", refused: true });
    await clock.advance(10_000);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe(DEFAULTS.guardrailFailedPhrase);
  });

  it("an output guardrail checks each sentence batch before TTS: the card number is never spoken or shown, and history records what was said", async () => {
    const { link, stt, tts, clock, started, store, session } = voiceSession(def({ outputGuardrails: [noCardOutput] }), { script });
    await started;
    stt.current.final("read it back", true);
    await clock.advance(20_000);
    const spoken = tts.spoken.join(" ");
    expect(spoken).not.toMatch(CARD);
    expect(spoken).not.toContain("Anything else");
    expect(spoken.replace(/\s+/g, " ").trim()).toBe("Sure. I can't read card numbers out loud.");
    for (const event of link.of("agent-transcript.updated")) expect(event.text).not.toMatch(CARD);
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Sure. I can't read card numbers out loud."]);
    const history = (await store.load(session.id))?.history ?? [];
    expect(JSON.stringify(history)).not.toContain("4111");
    expect(history.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "Sure." }, { type: "text", text: "I can't read card numbers out loud." }] });

    // A reply with no card number is spoken whole.
    stt.current.final("where is my order", true);
    await clock.advance(20_000);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Your order shipped on Monday. It arrives Friday.");
  });
});
