// The `openai` package's own Realtime WebSocket client (`OpenAIRealtimeWS`), pointed at a gateway's
// `/v1/realtime`: a client nobody here wrote. The package always dials `wss://<baseURL>/realtime`;
// the test hands ws a plain TCP connection to the loopback gateway (ws's `createConnection`), as a
// TLS-terminating proxy in front of the gateway would, so the client's own URL, headers, auth and
// event handling run unchanged.
import { connect as tcpConnect } from "node:net";
import OpenAI from "openai";
import type { RealtimeServerEvent } from "openai/resources/realtime/realtime";
import { OpenAIRealtimeWS } from "openai/realtime/ws";

export class RealtimeTestClient {
  readonly rt: OpenAIRealtimeWS;
  readonly events: RealtimeServerEvent[] = [];
  readonly errors: Error[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #waiters: { type: string; after: number; resolve: (event: RealtimeServerEvent) => void }[] = [];

  constructor(port: number, apiKey: string, headers: Record<string, string> = {}) {
    const client = new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${port}/v1` });
    this.rt = new OpenAIRealtimeWS({ model: "switchboard", options: { headers, createConnection: () => tcpConnect(port, "127.0.0.1") } }, client);
    this.opened = new Promise((resolve, reject) => {
      this.rt.socket.once("open", () => resolve());
      this.rt.socket.once("error", reject);
    });
    this.closed = new Promise((resolve) => this.rt.socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    this.rt.on("error", (err) => this.errors.push(err));
    this.rt.on("event", (event) => {
      this.events.push(event);
      for (const waiter of [...this.#waiters]) {
        if (waiter.type === event.type && this.events.length > waiter.after) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    });
  }

  /** The next event of `type` after the `after`-th event (default: after all seen so far). */
  next<K extends RealtimeServerEvent["type"]>(type: K, after = this.events.length): Promise<Extract<RealtimeServerEvent, { type: K }>> {
    const seen = this.events.slice(after).find((e) => e.type === type);
    if (seen !== undefined) return Promise.resolve(seen as Extract<RealtimeServerEvent, { type: K }>);
    return new Promise((resolve) => this.#waiters.push({ type, after, resolve: resolve as (event: RealtimeServerEvent) => void }));
  }

  of<K extends RealtimeServerEvent["type"]>(type: K): Extract<RealtimeServerEvent, { type: K }>[] {
    return this.events.filter((e): e is Extract<RealtimeServerEvent, { type: K }> => e.type === type);
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }

  close(): void {
    this.rt.close();
  }
}
