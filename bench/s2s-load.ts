/**
 * The callers of the s2s bench, run as their own process by bench/s2s.ts (a trimmed
 * bench/load.ts). Each caller is a `ws` client streaming a 20 ms PCM16 16 kHz frame every 20 ms.
 * Callers connect one at a time — the next once the previous one's greeting audio arrives — so
 * that the fake service's connection k is client k + 1. Then, concurrently, each takes turns:
 * asks the runner for a turn (the fake's `userSays` on its connection), records t3 when the
 * reply's first binary frame arrives, waits for `reply.completed`, and pauses.
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { countReceived, serveLoad, type LoadCaller } from "./common.js";
import { micFrame, send, type Arrival, type FromLoad, type LoadPlan } from "./protocol.js";
import { monoMs } from "./stats.js";

const MIC_FRAME_MS = 20;

class Caller implements LoadCaller {
  readonly client: number;
  readonly #ws: WebSocket;
  readonly #arrivals: Arrival[];
  readonly #errors: string[];
  readonly #frame: Buffer;
  readonly closed: Promise<void>;
  /** The greeting's first audio frame (the service connection exists). */
  readonly heard: Promise<void>;
  readonly greeted: Promise<void>;
  #heard: (() => void) | undefined;
  #completed: (() => void)[] = [];
  #awaiting: number | undefined;
  #mic: NodeJS.Timeout | undefined;

  constructor(client: number, url: string, arrivals: Arrival[], errors: string[]) {
    this.client = client;
    this.#arrivals = arrivals;
    this.#errors = errors;
    this.#frame = micFrame(client, false);
    this.#ws = new WebSocket(url, { perMessageDeflate: false });
    this.heard = new Promise((resolve) => (this.#heard = resolve));
    this.greeted = this.#nextCompleted();
    this.closed = new Promise((resolve) => this.#ws.once("close", () => resolve()));
    this.#ws.on("message", (data, isBinary) => this.#receive(data as Buffer, isBinary));
    this.#ws.on("error", (err) => this.#errors.push(`client ${client}: ${err.message}`));
    this.#ws.once("open", () => {
      this.#mic = setTimeout(() => {
        this.#mic = setInterval(() => {
          if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(this.#frame);
        }, MIC_FRAME_MS);
      }, Math.random() * MIC_FRAME_MS);
    });
  }

  async converse(plan: LoadPlan): Promise<void> {
    await sleep(Math.random() * plan.startSpreadMs);
    for (let turn = 1; turn <= plan.turns; turn++) {
      await sleep(plan.speechFrames * MIC_FRAME_MS);
      const completed = this.#nextCompleted();
      this.#awaiting = turn;
      send<FromLoad>({ type: "final", client: this.client, turn });
      await completed;
      if (this.#awaiting !== undefined) this.#errors.push(`client ${this.client} turn ${turn}: reply.completed before any audio`);
      this.#awaiting = undefined;
      await sleep(plan.pauseMs * (0.5 + Math.random()));
    }
  }

  close(): void {
    clearTimeout(this.#mic);
    clearInterval(this.#mic);
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(1000, "bench done");
  }

  #receive(data: Buffer, isBinary: boolean): void {
    const at = monoMs();
    countReceived(data, isBinary);
    if (isBinary) {
      this.#heard?.();
      this.#heard = undefined;
      if (this.#awaiting !== undefined) {
        this.#arrivals.push({ client: this.client, turn: this.#awaiting, t3: at });
        this.#awaiting = undefined;
      }
      return;
    }
    const event = JSON.parse(data.toString("utf8")) as { type?: string; message?: string; fatal?: boolean };
    if (event.type === "reply.completed") this.#completed.shift()?.();
    else if (event.type === "error.reported") this.#errors.push(`client ${this.client}: ${event.message ?? "error"}${event.fatal === true ? " (fatal)" : ""}`);
  }

  #nextCompleted(): Promise<void> {
    return new Promise((resolve) => this.#completed.push(resolve));
  }
}

serveLoad(async (plan, arrivals, errors, callers) => {
  for (let i = 1; i <= plan.sessions; i++) {
    const caller = new Caller(i, plan.url, arrivals, errors);
    callers.push(caller);
    await caller.heard;
  }
});
