import type { Writable } from "node:stream";
import type { WebSocket } from "ws";
import type { Clock } from "../clock.js";
import { CLOSE } from "../errors.js";
import { WholeTextFrames } from "../providers/text-frame.js";
import { LogThrottle, type Logger } from "../log.js";
import type { ConnectionHandler } from "./client-connection.js";
import { InputBudget, type InputBudgetLimits } from "./input-budget.js";
import { KeepAlive, onPeerMessage } from "./keepalive.js";
import { PreAttachBuffer } from "./pre-attach.js";
import type { Limits } from "./protocol.js";

/** WebSocket close reasons are limited to 123 bytes of UTF-8 (RFC 6455 §5.5). */
export function clipReason(reason: string): string {
  let clipped = reason;
  while (Buffer.byteLength(clipped) > 123) clipped = clipped.slice(0, -1);
  return clipped;
}

export interface PeerSocketOptions<T> {
  readonly clock: Clock;
  readonly log: Logger;
  readonly limits: Limits;
  /** The peer's input budget (transport/input-budget.ts). */
  readonly budget: InputBudgetLimits;
  /**
   * The socket under ws, as the upgrade handed it over: text frames are written onto it whole
   * (`providers/text-frame.ts`). Absent: through ws's `send`.
   */
  readonly socket?: Pick<Writable, "write"> | undefined;
  /** One frame, once the budget lets it in. */
  readonly receive: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void;
  /** Frames dropped over the budget (at most once a second): tell the peer. */
  readonly dropped: (count: number) => void;
  /** Audio bytes an input holds before the session attaches (undefined: a command). */
  readonly audioBytesOf: (item: T) => number | undefined;
  /** Input past the pre-attach limits was dropped: tell the peer (once). */
  readonly overflow: () => void;
  /** Hand one input to the session. */
  readonly hand: (handler: ConnectionHandler, item: T) => void;
  /** The link is done sending (closed by either side, or dead): stop what paces output. */
  readonly stopped: () => void;
}

/**
 * What every socket link of the gateway's own shares (the browser's protocol v1, a Realtime
 * client): input metered by the peer's budget, held until the session attaches, pings and the
 * dead-peer cut, writes checked against the backlog limit, and one close however it comes.
 * The link keeps only its wire format.
 */
export class PeerSocket<T> {
  readonly #ws: WebSocket;
  readonly #frames: WholeTextFrames | undefined;
  readonly #log: Logger;
  readonly #limits: Limits;
  readonly #options: PeerSocketOptions<T>;
  readonly #buffer: PreAttachBuffer<T>;
  readonly #keepAlive: KeepAlive;
  /** This peer's warnings, at most one line per kind every 10 s: a flood of bad frames is not a flood of log lines. */
  readonly throttle: LogThrottle;
  readonly hungUp: Promise<void>;
  readonly #budget: InputBudget;
  #resolveHungUp: () => void = () => {};
  #handler: ConnectionHandler | undefined;
  #closed = false;
  #closeInfo: { code: number; reason: string } | undefined;

  constructor(ws: WebSocket, options: PeerSocketOptions<T>) {
    this.#ws = ws;
    // The gateway's servers never negotiate compression (server/upgrade.ts); were one to, ws would queue its frames.
    this.#frames = options.socket === undefined || ws.extensions !== "" ? undefined : new WholeTextFrames(options.socket, false);
    this.#log = options.log;
    this.#limits = options.limits;
    this.#options = options;
    this.throttle = new LogThrottle(() => options.clock.now());
    this.#buffer = new PreAttachBuffer<T>({ audioBytes: options.limits.preStartAudioBytes, commands: options.limits.preStartCommands }, options.audioBytesOf, options.overflow);
    this.hungUp = new Promise((resolve) => {
      this.#resolveHungUp = resolve;
    });
    const budget = new InputBudget(options.budget, options.clock);
    this.#budget = budget;
    onPeerMessage(
      ws,
      this.#log,
      (data, isBinary) => {
        if (this.#closed) return;
        this.#keepAlive.seen();
        options.receive(data, isBinary);
      },
      { budget, clock: options.clock, dropped: options.dropped },
    );
    ws.on("close", (code, reason) => this.#onClose(code, reason.toString()));
    ws.on("error", (err) => this.throttle.warn(this.#log, { err }, "client socket error"));
    this.#keepAlive = new KeepAlive(ws, options.clock, options.log, options.limits.pingIntervalMs, () => {
      this.#closed = true;
      options.stopped();
      ws.terminate();
    });
  }

  get open(): boolean {
    return !this.#closed;
  }

  /** The peer's input budget from now on (input-budget.ts `retune`). */
  retune(budget: InputBudgetLimits): void {
    this.#budget.retune(budget);
  }

  /** One input: to the session, or held until it attaches. */
  deliver(item: T): void {
    const handler = this.#handler;
    if (handler !== undefined) this.#options.hand(handler, item);
    else this.#buffer.hold(item);
  }

  attach(handler: ConnectionHandler): void {
    this.#handler = handler;
    for (const item of this.#buffer.drain()) this.#options.hand(handler, item);
    if (this.#closeInfo !== undefined) handler.closed(this.#closeInfo.code, this.#closeInfo.reason);
  }

  close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#keepAlive.stop();
    this.#options.stopped();
    try {
      this.#ws.close(code, clipReason(reason));
    } catch (err) {
      this.#log.debug({ err }, "client close failed");
      this.#ws.terminate();
    }
  }

  /** Send a frame; a peer that stopped reading (its backlog over the limit) is closed 1008 with `reason`. */
  write(data: string | Uint8Array, reason: string): void {
    if (this.#closed || this.#ws.readyState !== this.#ws.OPEN) return;
    const frames = this.#frames;
    if (frames !== undefined && typeof data === "string") frames.send(data);
    else this.#ws.send(data);
    if (this.#ws.bufferedAmount > this.#limits.maxBacklogBytes) {
      this.throttle.warn(this.#log, { backlog: this.#ws.bufferedAmount }, "client stopped reading");
      this.close(CLOSE.policy, reason);
    }
  }

  #onClose(code: number, reason: string): void {
    this.#closed = true;
    this.#keepAlive.stop();
    this.#options.stopped();
    this.#closeInfo = { code, reason };
    this.#resolveHungUp();
    this.#handler?.closed(code, reason);
  }
}
