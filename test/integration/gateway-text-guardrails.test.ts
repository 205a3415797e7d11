import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, type Guardrail } from "../../src/manifest/index.js";
import { REFUSED_TURN_PROMPT } from "../../src/turn/guardrails.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { connect } from "../helpers/ws-client.js";

/** Sixteen digits, spaced or not: a full card number. */
const CARD = /\b(?:\d[ -]?){15}\d\b/;
const noCardInput: Guardrail = (text) => (CARD.test(text) ? { replacement: "Please don't share card numbers here.", reason: "card number" } : undefined);
const noCardOutput: Guardrail = (text) => (CARD.test(text) ? { replacement: "I can't read card numbers aloud." } : undefined);

let fake: FakeOpenAiServer;
let gateway: Gateway;
let base: string;

async function start(guardrails: { inputGuardrails?: Guardrail[]; outputGuardrails?: Guardrail[] }): Promise<void> {
  const def = agent({
    name: "guarded",
    mode: "text",
    greeting: "Hello.",
    llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } },
    maxRetries: 0,
    ...guardrails,
  });
  gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false });
  base = (await gateway.listen(0)).url.replace(/^http/, "ws");
}

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});

afterEach(async () => {
  await gateway.close();
  await fake.close();
});

describe("guardrails in a text session", () => {
  it("an input guardrail answers a refused turn with its replacement; the model never sees the turn, only that one was refused", async () => {
    await start({ inputGuardrails: [noCardInput] });
    const client = await connect(`${base}/websocket`);
    await client.say("my card is 4111 1111 1111 1111");
    expect(fake.requests).toHaveLength(0);
    expect(client.of("user-transcript.committed")).toMatchObject([{ text: "my card is 4111 1111 1111 1111", refused: true }]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Please don't share card numbers here.");
    expect(client.types().slice(-5)).toEqual(["user-transcript.committed", "agent-transcript.updated", "agent-transcript.committed", "reply.completed", "metrics.turn"]);

    fake.enqueue({ text: "Sure, what else?" });
    await client.say("ok, something else then");
    expect(client.of("user-transcript.committed").at(-1)).toEqual(expect.not.objectContaining({ refused: true }));
    const history = fake.requests[0]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain("4111");
    expect(history.slice(1)).toMatchObject([
      { role: "assistant", content: "Hello." },
      { role: "user", content: REFUSED_TURN_PROMPT },
      { role: "assistant", content: "Please don't share card numbers here." },
      { role: "user", content: "ok, something else then" },
    ]);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    client.close();

    // The record says which turn was refused.
    const sessionId = client.of("session.configured")[0]?.sessionId ?? "";
    const resumeKey = client.of("session.configured")[0]?.resumeKey ?? "";
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await connect(`${base}/websocket?sessionId=${sessionId}&resumeKey=${resumeKey}`);
    const restored = await again.next("history.restored", 0);
    expect(restored.messages.filter((m) => m.role === "user")).toEqual([
      { role: "user", text: "my card is 4111 1111 1111 1111", refused: true },
      { role: "user", text: "ok, something else then" },
    ]);
    again.close();
  });

  it("an output guardrail checks the reply before it is shown: no snapshot carries the card number, and history records what was shown plus the replacement", async () => {
    await start({ outputGuardrails: [noCardOutput] });
    fake.enqueue({ text: "Sure. The card on file is 4111 1111 1111 1111. Anything else?" });
    const client = await connect(`${base}/websocket`);
    await client.say("read me my card number");
    const shown = client.of("agent-transcript.updated").map((e) => e.text);
    for (const text of shown) expect(text).not.toMatch(CARD);
    expect(shown.at(-1)).toBe("Sure. I can't read card numbers aloud.");
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Sure. I can't read card numbers aloud.");
    expect(client.types().slice(-3)).toEqual(["agent-transcript.committed", "reply.completed", "metrics.turn"]);

    fake.enqueue({ text: "Okay." });
    await client.say("fine");
    const history = fake.requests[1]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain("4111");
    expect(history.at(-2)).toMatchObject({ role: "assistant" });
    expect(JSON.stringify(history.at(-2))).toContain("I can't read card numbers aloud.");
    client.close();
  });

  it("without a card number the reply goes out whole, a sentence at a time", async () => {
    await start({ outputGuardrails: [noCardOutput] });
    fake.enqueue({ text: "Your order shipped on Monday. It arrives Friday." });
    const client = await connect(`${base}/websocket`);
    await client.say("where is my order");
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Your order shipped on Monday. It arrives Friday.");
    client.close();
  });
});
