import WebSocket from "ws";
import type { EventType, ServerEvent } from "../../src/transport/protocol.js";

/** A protocol-v1 client for tests: collects events, waits for them, records the close. */
export class TestClient {
  readonly events: ServerEvent[] = [];
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #waiters: { type: EventType; after: number; resolve: (event: ServerEvent) => void }[] = [];

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, options);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
    this.closed = new Promise((resolve) => this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    this.ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const event = JSON.parse((data as Buffer).toString("utf8")) as ServerEvent;
      this.events.push(event);
      for (const waiter of [...this.#waiters]) {
        if (waiter.type === event.type && this.events.length > waiter.after) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    });
  }

  send(command: unknown): void {
    this.ws.send(typeof command === "string" ? command : JSON.stringify(command));
  }

  /** The next event of `type` after the `after`-th event (default: after all seen so far). */
  next<K extends EventType>(type: K, after = this.events.length): Promise<Extract<ServerEvent, { type: K }>> {
    const seen = this.events.slice(after).find((e) => e.type === type);
    if (seen !== undefined) return Promise.resolve(seen as Extract<ServerEvent, { type: K }>);
    return new Promise((resolve) => this.#waiters.push({ type, after, resolve: resolve as (event: ServerEvent) => void }));
  }

  /** Send `user_text` and wait for the reply's `metrics.turn` (emitted once per reply, whatever its end). */
  async say(text: string): Promise<void> {
    const after = this.events.length;
    this.send({ type: "user_text", text });
    await this.next("metrics.turn", after);
  }

  of<K extends EventType>(type: K): Extract<ServerEvent, { type: K }>[] {
    return this.events.filter((e): e is Extract<ServerEvent, { type: K }> => e.type === type);
  }

  types(): EventType[] {
    return this.events.map((e) => e.type);
  }

  close(): void {
    this.ws.close();
  }
}

/** Open a client and wait for `session.configured`. */
export async function connect(url: string, options?: WebSocket.ClientOptions): Promise<TestClient> {
  const client = new TestClient(url, options);
  await client.opened;
  await client.next("session.configured", 0);
  return client;
}

/** An upgrade the gateway refuses: its HTTP status and body. */
export function refusalOf(url: string): Promise<{ status: number | undefined; body: string }> {
  const ws = new WebSocket(url);
  ws.on("error", () => {});
  return new Promise((resolve) =>
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    }),
  );
}
