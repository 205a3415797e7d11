import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { REDIS_SERVER, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { connect } from "../helpers/ws-client.js";
import { startWsProxy } from "../helpers/ws-proxy.js";

/** Why this file's tests cannot run here, or undefined: said once in the output, and in the suite's name. */
const SKIPPED = REDIS_SERVER === undefined ? "redis-server is not installed (sudo apt-get install redis-server)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);

let redis: RedisServer;
let llm: FakeOpenAiServer;
const gateways: Gateway[] = [];

beforeAll(async () => {
  if (REDIS_SERVER === undefined) return;
  [redis, llm] = await Promise.all([startRedis(), startFakeOpenAiServer()]);
});
afterAll(async () => {
  await Promise.all([redis?.stop(), llm?.close()]);
});
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
});

/** One gateway instance on the shared Redis: what a load balancer would put behind one address. */
async function instance(port = 0): Promise<string> {
  const gateway = gatewayInstance();
  const listening = await gateway.listen(port);
  return `ws://127.0.0.1:${listening.port}/websocket`;
}

function gatewayInstance(): Gateway {
  const def = agent({ name: "shop", mode: "text", greeting: "Welcome to the shop.", llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } }, maxRetries: 0 });
  const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, env: { SWITCHBOARD_REDIS_URL: redis.url } });
  gateways.push(gateway);
  return gateway;
}

const portOf = (url: string): number => Number(new URL(url).port);
/** `?sessionId=…&resumeKey=…` from a client's `session.configured`: what resuming needs. */
const resumeOf = (events: readonly { type: string; sessionId?: string; resumeKey?: string }[]): string => {
  const configured = events.find((e) => e.type === "session.configured");
  return `sessionId=${configured?.sessionId ?? ""}&resumeKey=${configured?.resumeKey ?? ""}`;
};

describe.skipIf(SKIPPED !== undefined)(`gateway instances sharing a Redis store${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, () => {
  it("a session started on one instance resumes on another: history.restored, no second greeting", async () => {
    const [a, b] = [await instance(), await instance()];
    llm.enqueue({ text: "Noted, Ada." });
    const first = await connect(a);
    const sessionId = first.events[0]?.type === "session.configured" ? first.events[0].sessionId : "";
    await first.say("my name is Ada");
    first.close();
    await first.closed;

    const second = await connect(`${b}?${resumeOf(first.events)}`);
    const restored = await second.next("history.restored", 0);
    expect(second.events[0]).toMatchObject({ type: "session.configured", sessionId });
    expect(restored.messages).toEqual([
      { role: "assistant", text: "Welcome to the shop." },
      { role: "user", text: "my name is Ada" },
      { role: "assistant", text: "Noted, Ada." },
    ]);
    expect(second.of("agent-transcript.committed")).toEqual([]);
    llm.enqueue({ text: "Yes, Ada." });
    await second.say("do you remember me?");
    expect(llm.requests.at(-1)?.messages.map((m) => m.content)).toContain("my name is Ada");
    second.close();
  }, 20_000);

  it("a rolling restart of both instances behind a proxy loses no conversation", async () => {
    const [a, b] = [await instance(), await instance()];
    const proxy = await startWsProxy([portOf(a), portOf(b)]);
    try {
      llm.enqueue({ text: "Noted." });
      const first = await connect(`${proxy.url}/websocket`);
      const resume = resumeOf(first.events);
      await first.say("my order is A17");

      // Restart A: it drains (unready, the call on it closes 1001), the client reconnects through the proxy.
      const draining = gateways[0]!.drain(300);
      expect((await first.closed).code).toBe(1001);
      await draining;
      const second = await connect(`${proxy.url}/websocket?${resume}`);
      const restored = await second.next("history.restored", 0);
      expect(restored.messages.map((m) => m.text)).toEqual(["Welcome to the shop.", "my order is A17", "Noted."]);
      llm.enqueue({ text: "Still here." });
      await second.say("are you there?");
      const aAgain = await instance(portOf(a));

      // Restart B the same way: the conversation moves back to the new A.
      const drainingB = gateways[1]!.drain(300);
      expect((await second.closed).code).toBe(1001);
      await drainingB;
      const third = await connect(`${proxy.url}/websocket?${resume}`);
      const again = await third.next("history.restored", 0);
      expect(again.messages.map((m) => m.text)).toEqual(["Welcome to the shop.", "my order is A17", "Noted.", "are you there?", "Still here."]);
      expect(third.of("agent-transcript.committed")).toEqual([]);
      expect(aAgain).toBe(a);
      third.close();
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it("a live session taken over from another instance closes there with the takeover reason", async () => {
    const [a, b] = [await instance(), await instance()];
    llm.enqueue({ text: "Okay." });
    const first = await connect(a);
    await first.say("hello");
    const second = await connect(`${b}?${resumeOf(first.events)}`);
    expect(await first.closed).toEqual({ code: 1000, reason: "session resumed by another connection" });
    await second.next("history.restored", 0);
    expect(gateways[0]?.sessions).toBe(0);
    second.close();
  }, 20_000);
});
