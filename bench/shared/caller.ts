/**
 * One bench caller: a `ws` client that streams a 20 ms mic frame every 20 ms for its whole life
 * (callers' mics out of phase with each other), then takes turns: "speaks", asks the runner for
 * the turn's final, records t3 — when the reply's first binary frame arrives — waits for
 * `reply.completed` and pauses. Turns are sequential per caller, concurrent across callers.
 * Shared by the pipeline callers (bench/pipeline/load.ts: speech frames while speaking) and the s2s callers
 * (bench/s2s/load.ts: silence throughout; the fake service makes the turn).
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { countReceived, type LoadCaller } from "./common.js";
import { micFrame, send, type Arrival, type FromLoad, type LoadPlan } from "./protocol.js";
import { monoMs } from "./stats.js";

const MIC_FRAME_MS = 20;
/**
 * The events a caller reads (`error.reported` is always sent): it chooses them, as a client that
 * needs no captions would (docs/protocol.md "Choosing events"). The relays ignore the parameter.
 */
const CHOSEN_EVENTS = "reply.completed";

export interface CallerOptions {
  /** Send speech frames while speaking (pipeline: the VAD must hear it), or silence throughout (s2s). */
  readonly speech: boolean;
}

export class Caller implements LoadCaller {
  readonly client: number;
  readonly #ws: WebSocket;
  readonly #arrivals: Arrival[];
  readonly #errors: string[];
  readonly #speech: boolean;
  readonly #frames: { readonly speech: Buffer; readonly silence: Buffer };
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** The first binary frame (the greeting is being heard: the session and its providers are up). */
  readonly heard: Promise<void>;
  /** The greeting's `reply.completed`. */
  readonly greeted: Promise<void>;
  #heard: (() => void) | undefined;
  #completed: (() => void)[] = [];
  #awaiting: number | undefined;
  #speechLeft = 0;
  #spoken: (() => void) | undefined;
  #mic: NodeJS.Timeout | undefined;

  constructor(client: number, url: string, arrivals: Arrival[], errors: string[], options: CallerOptions) {
    this.client = client;
    this.#arrivals = arrivals;
    this.#errors = errors;
    this.#speech = options.speech;
    this.#frames = { speech: micFrame(client, true), silence: micFrame(client, false) };
    const chosen = new URL(url);
    chosen.searchParams.set("events", CHOSEN_EVENTS);
    this.#ws = new WebSocket(chosen, { perMessageDeflate: false });
    this.heard = new Promise((resolve) => (this.#heard = resolve));
    this.greeted = this.#nextCompleted();
    this.opened = new Promise((resolve, reject) => {
      this.#ws.once("open", () => resolve());
      this.#ws.once("error", reject);
    });
    this.closed = new Promise((resolve) => this.#ws.once("close", () => resolve()));
    this.#ws.on("message", (data, isBinary) => this.#receive(data as Buffer, isBinary));
    this.#ws.on("error", (err) => this.#errors.push(`client ${client}: ${err.message}`));
    this.#ws.once("open", () => {
      this.#mic = setTimeout(() => {
        this.#mic = setInterval(() => this.#tick(), MIC_FRAME_MS);
      }, Math.random() * MIC_FRAME_MS);
    });
  }

  /** Take `plan.turns` turns (after the runner says go). */
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

  /** Resolves once `frames` frames of speech have gone out (or, silent, as long as they would take). */
  #speak(frames: number): Promise<void> {
    if (!this.#speech) return sleep(frames * MIC_FRAME_MS);
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
