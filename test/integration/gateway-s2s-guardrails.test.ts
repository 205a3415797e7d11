import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, type Guardrail } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { sayExactly } from "../../src/session/s2s-lines.js";
import { REFUSED_TURN_PROMPT } from "../../src/turn/guardrails.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

/** Thirteen to nineteen digits, spaced or dashed or not: a full card number. */
const CARD = /\b(?:\d[ -]?){12,18}\d\b/;
const IN = "Please don't read me card numbers.";
const OUT = "I can't read card numbers out loud.";
const noCardInput: Guardrail = (text) => (CARD.test(text) ? { replacement: IN } : undefined);
const noCardOutput: Guardrail = (text) => (CARD.test(text) ? { replacement: OUT } : undefined);

let service: FakeOpenAiRealtime;
let gateway: Gateway;
let client: TestClient | undefined;

async function start(guardrails: { inputGuardrails?: Guardrail[]; outputGuardrails?: Guardrail[] }): Promise<TestClient> {
  service = await startFakeOpenAiRealtime({ paceMs: 5 });
  const def = agent({ name: "realtime", greeting: "Welcome.", s2s: { kind: "openai-realtime", options: { url: service.url } }, ...guardrails });
  gateway = createGateway({ agent: def, logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
  await gateway.listen(0);
  const address = gateway.server.address() as { port: number };
  service.enqueue({ say: "Welcome.", audioMs: 100 });
  const connected = await connect(`ws://127.0.0.1:${address.port}/websocket`);
  await connected.next("reply.completed", 0);
  return connected;
}

afterEach(async () => {
  client?.close();
  await gateway.close();
  await service.close();
});

/** The client messages of one type the service received. */
const sent = (type: string): Record<string, unknown>[] => service.messages.filter((m) => m.message.type === type).map((m) => m.message);

describe("guardrails in an s2s session over the OpenAI Realtime wire protocol", () => {
  it("an input guardrail refuses a spoken turn: its answer is cut, it leaves the service's memory, and the replacement is spoken and recorded", async () => {
    client = await start({ inputGuardrails: [noCardInput] });
    service.enqueue({ say: "Thanks, I'll read that back: 4111 1111 1111 1111.", audioMs: 2000 }, { say: IN, audioMs: 300 });
    const committed = client.next("agent-transcript.committed");
    await service.userSays("my card is 4111 1111 1111 1111");
    expect((await committed).text).toBe(IN);
    expect(client.of("user-transcript.committed")).toMatchObject([{ text: expect.stringContaining("4111") as string, refused: true }]);
    // The service heard it; its memory no longer holds the caller's words, only that a turn was refused and what was said.
    const caller = service.connections[0]!.messages.find((m) => m.type === "conversation.item.delete")?.item_id;
    expect(caller).toEqual(expect.any(String));
    const items = service.connections[0]!.items;
    expect(items.some((i) => i.id === caller)).toBe(false);
    const remembered = sent("conversation.item.create").map((m) => (m.item as { content: { text: string }[] }).content[0]?.text);
    expect(remembered).toEqual([REFUSED_TURN_PROMPT, IN]);
    expect(sent("response.cancel")).toHaveLength(1);
    expect(sent("response.create").map((m) => (m.response as { instructions?: string }).instructions)).toContain(sayExactly(IN));
    for (const event of client.of("agent-transcript.updated")) expect(event.text).not.toMatch(CARD);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(service.violations).toEqual([]);
  }, 20_000);

  it("an output guardrail cuts a reply as its transcript streams, truncates the service's item at what was heard, and speaks the replacement", async () => {
    client = await start({ outputGuardrails: [noCardOutput] });
    service.enqueue({ say: "Sure. The card on file is 4111 1111 1111 1111, expiring in May.", audioMs: 3000 }, { say: OUT, audioMs: 300 });
    const committed = client.next("agent-transcript.committed");
    await service.userSays("read me the card on file");
    expect((await committed).text).toMatch(new RegExp(`${OUT}$`));
    expect((await committed).text).not.toMatch(CARD);
    // One cut after the caller's turn (a cancel before it is the caller's speech over the greeting's tail).
    const turn = client.types().indexOf("user-transcript.committed");
    expect(client.types().slice(turn).filter((t) => t === "reply.cancelled")).toHaveLength(1);
    for (const event of client.of("agent-transcript.updated")) expect(event.text).not.toMatch(CARD);
    const truncate = sent("conversation.item.truncate")[0];
    expect(truncate).toMatchObject({ content_index: 0 });
    expect(Number(truncate?.audio_end_ms)).toBeLessThan(3000);
    expect(sent("response.create").map((m) => (m.response as { instructions?: string }).instructions)).toContain(sayExactly(OUT));
    expect(service.violations).toEqual([]);
  }, 20_000);
});
