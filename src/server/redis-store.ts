/**
 * Resume records on Redis, shared by every gateway instance (issue 8): a client that reconnects to
 * *another* instance resumes with `history.restored`. Records are JSON strings under
 * `<prefix>session:<id>`, written with `SET … PX <grace>` so Redis expires them (no sweeper).
 *
 * Ownership: a session id is owned by one live socket across instances. The instance that takes a
 * session over publishes `{sessionId, owner}` on `<prefix>takeover`; every other instance holding
 * that id live closes it ("session resumed by another connection"). Two connections: commands, and
 * a subscriber (a subscribed Redis connection can issue nothing else).
 *
 * It is also the deployment's `Coordinator` when Redis is configured: call tickets and replay
 * records under `<prefix>hold:<key>` (`SET … NX PX`, taken with `GETDEL`), connection budgets as a
 * token bucket per address under `<prefix>budget:<perMinute>:<address>` (one Lua script, atomic).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "../log.js";
import type { SessionRecord, SessionStore } from "../session/store.js";
import type { Coordinator } from "./coordination.js";

/**
 * A token bucket in one atomic step: KEYS[1] the bucket, ARGV[1] tokens per minute (also the
 * size), ARGV[2] now (epoch ms). Refill by elapsed time, take one if there is one; the bucket
 * expires once it would be full again (a minute), so idle addresses cost nothing.
 */
const ADMIT_SCRIPT = `
local rate = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(held[1]) or rate
local at = tonumber(held[2]) or now
tokens = math.min(rate, tokens + math.max(0, now - at) * rate / 60000)
local ok = 0
if tokens >= 1 then tokens = tokens - 1; ok = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return ok`;

export interface SessionOwnership {
  /** This instance now holds `sessionId` live: any other instance holding it closes its socket. */
  claim(sessionId: string): Promise<void>;
  /** Called when another instance claims a session id. */
  onTakeover(handler: (sessionId: string) => void): void;
}

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]` */
  readonly url: string;
  readonly log: Logger;
  /** Key and channel prefix; default `switchboard:`. */
  readonly prefix?: string;
}

function isRecord(value: unknown): value is SessionRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Partial<Record<keyof SessionRecord, unknown>>;
  return typeof r.sessionId === "string" && typeof r.agent === "string" && Array.isArray(r.transcript) && Array.isArray(r.toolCalls) && Array.isArray(r.history);
}

export class RedisSessionStore implements SessionStore, SessionOwnership, Coordinator {
  /** The command and subscriber connections; ioredis (~13 MB) is loaded only by a gateway that uses Redis. */
  readonly #clients: Promise<{ readonly redis: Redis; readonly subscriber: Redis }>;
  readonly #log: Logger;
  readonly #prefix: string;
  /** Tells this instance's own takeover messages from the others'. */
  readonly #owner = randomBytes(8).toString("hex");
  readonly #handlers: ((sessionId: string) => void)[] = [];
  readonly #subscribed: Promise<void>;

  constructor(options: RedisStoreOptions) {
    this.#log = options.log.child({ store: "redis" });
    this.#prefix = options.prefix ?? "switchboard:";
    const channel = `${this.#prefix}takeover`;
    this.#clients = import("ioredis").then(({ Redis: Client }) => {
      // Commands fail fast while Redis is down rather than queueing without bound; the client reconnects on its own.
      const settings = { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false } as const;
      const redis = new Client(options.url, settings);
      const subscriber = new Client(options.url, settings);
      for (const [name, client] of [["commands", redis], ["subscriber", subscriber]] as const) {
        client.on("error", (err: Error) => this.#log.warn({ connection: name, err: err.message }, "redis error"));
      }
      subscriber.on("message", (from: string, text: string) => {
        if (from !== channel) return;
        let message: { sessionId?: unknown; owner?: unknown };
        try {
          message = JSON.parse(text) as typeof message;
        } catch {
          return;
        }
        if (typeof message.sessionId !== "string" || message.owner === this.#owner) return;
        for (const handler of this.#handlers) handler(message.sessionId);
      });
      return { redis, subscriber };
    });
    this.#subscribed = this.#clients.then(({ subscriber }) => subscriber.subscribe(channel)).then(() => undefined);
    this.#subscribed.catch((err: unknown) => this.#log.warn({ err }, "redis subscribe failed"));
  }

  /** Resolves once the takeover channel is subscribed (the gateway waits for it before listening). */
  ready(): Promise<void> {
    return this.#subscribed;
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const { redis } = await this.#clients;
    const text = await redis.get(this.#key(sessionId));
    if (text === null) return undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      return isRecord(parsed) ? parsed : undefined;
    } catch {
      this.#log.warn({ sessionId }, "redis record is not valid JSON; ignored");
      return undefined;
    }
  }

  async save(record: SessionRecord, ttlMs: number): Promise<void> {
    const { redis } = await this.#clients;
    await redis.set(this.#key(record.sessionId), JSON.stringify(record), "PX", Math.max(1, Math.round(ttlMs)));
  }

  async delete(sessionId: string): Promise<void> {
    const { redis } = await this.#clients;
    await redis.del(this.#key(sessionId));
  }

  async claim(sessionId: string): Promise<void> {
    const { redis } = await this.#clients;
    await redis.publish(`${this.#prefix}takeover`, JSON.stringify({ sessionId, owner: this.#owner }));
  }

  async hold(key: string, value: string, ttlMs: number): Promise<boolean> {
    const { redis } = await this.#clients;
    return (await redis.set(`${this.#prefix}hold:${key}`, value, "PX", Math.max(1, Math.round(ttlMs)), "NX")) === "OK";
  }

  async take(key: string): Promise<string | undefined> {
    const { redis } = await this.#clients;
    return (await redis.getdel(`${this.#prefix}hold:${key}`)) ?? undefined;
  }

  async admit(address: string, perMinute: number): Promise<boolean> {
    const { redis } = await this.#clients;
    return (await redis.eval(ADMIT_SCRIPT, 1, `${this.#prefix}budget:${perMinute}:${address}`, perMinute, Date.now())) === 1;
  }

  onTakeover(handler: (sessionId: string) => void): void {
    this.#handlers.push(handler);
  }

  async close(): Promise<void> {
    const clients = await this.#clients.catch(() => undefined);
    if (clients !== undefined) await Promise.allSettled([clients.subscriber.quit(), clients.redis.quit()]);
  }

  #key(sessionId: string): string {
    return `${this.#prefix}session:${sessionId}`;
  }
}
