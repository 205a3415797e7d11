import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { RedisSessionStore } from "../../src/server/redis-store.js";
import type { SessionRecord } from "../../src/session/store.js";
import { REDIS_SERVER, startRedis, type RedisServer } from "../helpers/redis-server.js";

/** Why this file's tests cannot run here, or undefined: said once in the output, and in the suite's name. */
const SKIPPED = REDIS_SERVER === undefined ? "redis-server is not installed (sudo apt-get install redis-server)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);

let redis: RedisServer;
beforeAll(async () => {
  if (REDIS_SERVER !== undefined) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const record = (sessionId: string): SessionRecord => ({
  sessionId,
  agent: "shop",
  transcript: [{ role: "user", text: "hi" }],
  toolCalls: [{ toolCallId: "c1", toolName: "lookup", args: { id: 1 }, result: "ok" }],
  history: [{ role: "user", content: "hi" }],
  updatedAt: 1,
});

describe.skipIf(SKIPPED !== undefined)(`RedisSessionStore${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, () => {
  it("round-trips a record, lets Redis expire it after the grace, and deletes on demand", async () => {
    const store = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t1:" });
    await store.ready();
    await store.save(record("s1"), 300);
    expect(await store.load("s1")).toEqual(record("s1"));
    await sleep(450);
    expect(await store.load("s1")).toBeUndefined();
    await store.save(record("s2"), 60_000);
    await store.delete("s2");
    expect(await store.load("s2")).toBeUndefined();
    await store.close();
  });

  it("ignores a value that is not a record instead of failing the resume", async () => {
    const raw = new Redis(redis.url);
    await raw.set("t2:session:bad", "{not json");
    await raw.set("t2:session:odd", JSON.stringify({ sessionId: "odd" }));
    await raw.quit();
    const store = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t2:" });
    expect(await store.load("bad")).toBeUndefined();
    expect(await store.load("odd")).toBeUndefined();
    await store.close();
  });

  it("tells other instances, and only them, about a takeover", async () => {
    const a = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t3:" });
    const b = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t3:" });
    await Promise.all([a.ready(), b.ready()]);
    const seenA: string[] = [];
    const seenB: string[] = [];
    a.onTakeover((id) => seenA.push(id));
    b.onTakeover((id) => seenB.push(id));
    await a.claim("s9");
    await sleep(100);
    expect(seenB).toEqual(["s9"]);
    expect(seenA).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it("is the deployment's coordinator: a ticket held by one instance is taken once by any, and connection budgets are shared", async () => {
    const a = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t9:" });
    const b = new RedisSessionStore({ url: redis.url, log: silentLogger, prefix: "t9:" });
    await Promise.all([a.ready(), b.ready()]);
    expect(await a.hold("ticket:x", '{"carrier":"twilio"}', 60_000)).toBe(true);
    expect(await b.hold("ticket:x", "other", 60_000)).toBe(false);
    expect(await b.take("ticket:x")).toBe('{"carrier":"twilio"}');
    expect(await a.take("ticket:x")).toBeUndefined();
    expect(await a.hold("seen:y", "1", 200)).toBe(true);
    await sleep(300);
    expect(await b.hold("seen:y", "1", 200)).toBe(true);
    // 3 a minute from one address, across both instances.
    const admitted = [await a.admit("10.0.0.1", 3), await b.admit("10.0.0.1", 3), await a.admit("10.0.0.1", 3), await b.admit("10.0.0.1", 3)];
    expect(admitted).toEqual([true, true, true, false]);
    expect(await b.admit("10.0.0.2", 3)).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });
});
