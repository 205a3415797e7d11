/**
 * The callers, run as their own process by bench/pipeline.ts (so the server's CPU and memory
 * figures are the server's alone). Each caller is a `ws` client that streams a 20 ms mic frame
 * every 20 ms for its whole life, waits for the greeting, then takes turns: "speaks" for a few
 * frames, asks the runner for the STT final, and records t3 — when the first binary audio frame
 * of the reply arrives — then waits for `reply.completed` and pauses before the next turn.
 * Turns are sequential per caller and concurrent across callers.
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
  readonly #frames: { readonly speech: Buffer; readonly silence: Buffer };
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** The greeting's `reply.completed`. */
  readonly greeted: Promise<void>;
  #completed: (() => void)[] = [];
  #awaiting: number | undefined;
  #speechLeft = 0;
  #spoken: (() => void) | undefined;
  #mic: NodeJS.Timeout | undefined;

  constructor(client: number, url: string, arrivals: Arrival[], errors: string[]) {
    this.client = client;
    this.#arrivals = arrivals;
    this.#errors = errors;
    this.#frames = { speech: micFrame(client, true), silence: micFrame(client, false) };
    this.#ws = new WebSocket(url, { perMessageDeflate: false });
    this.greeted = this.#nextCompleted();
    this.opened = new Promise((resolve, reject) => {
      this.#ws.once("open", () => resolve());
      this.#ws.once("error", reject);
    });
    this.closed = new Promise((resolve) => this.#ws.once("close", () => resolve()));
    this.#ws.on("message", (data, isBinary) => this.#receive(data as Buffer, isBinary));
    this.#ws.on("error", (err) => this.#errors.push(`client ${client}: ${err.message}`));
    this.#ws.once("open", () => {
      // Callers' mics are not in phase with each other.
      this.#mic = setTimeout(() => {
        this.#mic = setInterval(() => this.#tick(), MIC_FRAME_MS);
      }, Math.random() * MIC_FRAME_MS);
    });
  }

  /** Take `turns` turns (after the runner says go). */
  async converse(plan: LoadPlan): Promise<void> {
    await sleep(Math.random() * plan.startSpreadMs);
    for (let turn = 1; turn <= plan.turns; turn++) {
      await this.#speak(plan.speechFrames);
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

  /** Resolves once `frames` frames of speech have gone out. */
  #speak(frames: number): Promise<void> {
    this.#speechLeft = frames;
    return new Promise((resolve) => {
      this.#spoken = resolve;
    });
  }

  #tick(): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    const speaking = this.#speechLeft > 0;
    this.#ws.send(speaking ? this.#frames.speech : this.#frames.silence);
    if (!speaking) return;
    this.#speechLeft -= 1;
    if (this.#speechLeft === 0) {
      this.#spoken?.();
      this.#spoken = undefined;
    }
  }
}

serveLoad(async (plan, arrivals, errors, callers) => {
  const created = Array.from({ length: plan.sessions }, (_, i) => new Caller(i + 1, plan.url, arrivals, errors));
  callers.push(...created);
  await Promise.all(created.map((caller) => caller.opened));
});
