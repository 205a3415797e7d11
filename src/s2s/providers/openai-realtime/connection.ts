/**
 * OpenAI Realtime: the session's socket over time. Dial (Bearer key), wait for `session.created`,
 * send the one `session.update`, resolve on `session.updated`; a transient close (the close-code
 * table, `providers/close-codes.ts`) reconnects with the one retry loop (`providers/reconnect.ts`);
 * anything else ends the session with one fatal error. The conversation on the socket is the
 * session's (`session.ts`, through `ConnectionHooks`).
 */
import type { IncomingMessage } from "node:http";
import { WebSocket, type RawData } from "ws";
import type { Clock } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import { isTransientClose, isVendorClose } from "../../../providers/close-codes.js";
import { LogThrottle } from "../../../log.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { reconnect } from "../../../providers/reconnect.js";
import { abortReason, closeGracefully, openDeadline, type SocketFactory } from "../../../providers/ws-connect.js";
import { isRecord, rawText } from "../../../providers/ws-frames.js";
import { VENDOR, type RealtimeConfig } from "./config.js";
import { errorText, handshakeClose, upgradeRefusal } from "./wire.js";

/** What an aborted open rejects with. */
export function openAborted(signal: AbortSignal | undefined): Error {
  return abortReason(signal, () => new GatewayError("s2s", `${VENDOR}: opening the session was aborted.`));
}

/** How long a clean close may take before the socket is dropped (ms). */
const CLOSE_TIMEOUT_MS = 1000;

/** Runtime knobs, defaulted. */
export interface Runtime {
  readonly log: ProviderLog;
  readonly clock: Clock;
  readonly reconnectDelaysMs: readonly number[];
  readonly openTimeoutMs: number;
  readonly connect: SocketFactory;
}

/** One socket of the session. */
export interface Link {
  readonly ws: WebSocket;
  /** Which socket of the session (1, 2, …): a tool call made on an earlier one is not in this conversation. */
  readonly generation: number;
  /** `session.update` sent: exactly once per socket. */
  updateSent: boolean;
  /** `session.updated` seen and the conversation replayed. */
  ready: boolean;
  socketError: Error | undefined;
  /** Settles the wait for `session.updated`; undefined once settled. */
  handshake: { resolve(): void; reject(error: Error): void } | undefined;
}

/**
 * What the session (`owner`) does with the socket: methods of one object every connection of a
 * process shares, each handed its connection's owner, rather than an object per session. Every
 * service event crosses them (50 audio deltas a second on a call), and on a process running
 * hundreds of calls each per-call object on that path is a cache line cold by the call's next
 * delta (docs/benchmarks.md, `bench:carrier-counts`); the shared one stays cached.
 */
export interface ConnectionHooks<Owner> {
  /** The `session.update` for a new socket. */
  sessionUpdate(owner: Owner): object;
  /** `session.updated`: replay the conversation (the socket is usable once this returns). */
  ready(owner: Owner, link: Link): void;
  /** A server event on a ready socket. */
  event(owner: Owner, link: Link, type: string, message: Record<string, unknown>): void;
  /** The socket dropped: what lived on it ends with it. */
  lost(owner: Owner): void;
  reconnected(owner: Owner): void;
  /** Gone for good: report `error`, then `closed({expected:false})`. */
  gaveUp(owner: Owner, error: GatewayError): void;
}

export class RealtimeConnection<Owner> {
  #link: Link | undefined;
  #generations = 0;
  /** close() was called, or the link is gone for good. */
  #ended = false;
  /** Aborted when the session ends: stops a reconnect's wait or dial. */
  readonly #stop = new AbortController();
  /** Reconnect attempts since the link last proved healthy; the budget is `reconnectDelaysMs.length`. */
  #attempts = 0;
  #lastFailure = "";
  /** Frames the service should not send (binary, not JSON, no type): at most a line a kind every 10 s. */
  readonly #warnings: LogThrottle;

  constructor(
    private readonly config: RealtimeConfig,
    private readonly runtime: Runtime,
    private readonly hooks: ConnectionHooks<Owner>,
    private readonly owner: Owner,
  ) {
    this.#warnings = new LogThrottle(() => runtime.clock.now());
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The link works: the reconnect budget starts over. */
  healthy(): void {
    this.#attempts = 0;
  }

  /** The current socket, when `session.updated` came and it is open. */
  readyLink(): Link | undefined {
    const link = this.#link;
    return link?.ready === true && link.ws.readyState === WebSocket.OPEN ? link : undefined;
  }

  send(link: Link, message: object): void {
    if (link.ws.readyState !== WebSocket.OPEN) return;
    try {
      link.ws.send(JSON.stringify(message));
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, `${VENDOR}: message not sent`);
    }
  }

  /** The first socket: resolves after `session.updated`. */
  async start(signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#connect(signal);
    } catch (error) {
      this.#ended = true;
      throw error;
    }
  }

  /** End the session: resolves once the socket is closed; true when it was still live (so `closed({expected:true})` is due). */
  async close(): Promise<boolean> {
    const wasEnded = this.#ended;
    this.#ended = true;
    this.#stop.abort();
    const link = this.#link;
    this.#link = undefined;
    if (link?.handshake !== undefined) this.#failHandshake(link, new GatewayError("s2s", `${VENDOR}: the session was closed while reconnecting.`));
    else if (link !== undefined) await closeGracefully(link.ws, this.runtime.clock, CLOSE_TIMEOUT_MS);
    return !wasEnded;
  }

  /** Dial, send the one `session.update` after `session.created`; resolves on `session.updated`. */
  #connect(signal: AbortSignal | undefined): Promise<void> {
    const { runtime, config } = this;
    const generation = ++this.#generations;
    runtime.log.debug({ url: config.url, generation }, `${VENDOR} connecting`);
    let ws: WebSocket;
    try {
      // docs/vendors.md (OpenAI Realtime), "URL": Bearer key; GA sends no OpenAI-Beta header.
      ws = runtime.connect(config.url, { headers: { Authorization: `Bearer ${config.apiKey}` } });
    } catch (error) {
      return Promise.reject(new GatewayError("s2s", `${VENDOR} connection failed: ${messageOf(error)}`, { fatal: true, cause: error }));
    }
    const link: Link = { ws, generation, updateSent: false, ready: false, socketError: undefined, handshake: undefined };
    this.#link = link;
    this.#listen(link);
    const opening = openDeadline<void>({
      clock: runtime.clock,
      timeoutMs: runtime.openTimeoutMs,
      signal,
      timedOut: () => new GatewayError("s2s", `${VENDOR} did not confirm the session within ${runtime.openTimeoutMs} ms.`),
      aborted: () => openAborted(signal),
      settled: (error) => {
        link.handshake = undefined;
        if (error === undefined) return;
        if (this.#link === link) this.#link = undefined;
        ws.terminate();
      },
    });
    link.handshake = { resolve: () => opening.resolve(), reject: (error) => opening.reject(error) };
    return opening.promise;
  }

  /**
   * The socket's listeners, made here rather than in `#connect`: they live as long as the socket, and
   * closures share their function's scope, so made there they would keep the handshake's deadline
   * (its timer, callbacks and promise) for the whole call.
   */
  #listen(link: Link): void {
    const { ws } = link;
    ws.on("error", (error: Error) => {
      link.socketError ??= error;
      this.runtime.log.debug({ err: error.message }, `${VENDOR} socket error`);
    });
    ws.on("unexpected-response", (_request, response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      response.resume();
      this.#failHandshake(link, upgradeRefusal(status, this.config.keyVariable));
      ws.terminate();
    });
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onFrame(link, data, isBinary));
    ws.on("close", (code: number, reason: Buffer) => this.#onClose(link, code, reason.toString()));
  }

  /** The handshake failed (refusal, close, setup error): drop the socket — never a half-open one. */
  #failHandshake(link: Link, error: Error): void {
    link.handshake?.reject(error);
  }

  #onClose(link: Link, code: number, reason: string): void {
    if (link.handshake !== undefined) {
      this.#failHandshake(link, handshakeClose(code, reason, link.socketError));
      return;
    }
    if (link !== this.#link) return; // abandoned, or closed by close()
    this.#link = undefined;
    if (this.#ended) return;
    this.hooks.lost(this.owner);
    const detail = `${link.socketError?.message ?? "socket closed"} (${code}${reason === "" ? "" : ` ${reason}`})`;
    if (isTransientClose(code)) {
      this.runtime.log.warn({ code, reason }, `${VENDOR} connection dropped; reconnecting`);
      this.#lastFailure = detail;
      void this.#reconnect();
      return;
    }
    // 1000 we did not ask for, 1008 policy, 4xxx: a retry would be refused the same way.
    const hint = isVendorClose(code) ? `; check ${this.config.keyVariable}` : "";
    this.#giveUp(new GatewayError("s2s", `${VENDOR} closed the connection: ${detail}${hint}`, { fatal: true }));
  }

  /** Reconnect within what is left of the budget (it starts over once a link proves healthy). */
  async #reconnect(): Promise<void> {
    const outcome = await reconnect({
      clock: this.runtime.clock,
      delaysMs: this.runtime.reconnectDelaysMs.slice(this.#attempts),
      signal: this.#stop.signal,
      attempt: () => {
        this.#attempts++;
        return this.#connect(undefined);
      },
      failed: (error) => {
        this.#lastFailure = error.message;
        this.runtime.log.warn({ err: this.#lastFailure, attempt: this.#attempts }, `${VENDOR} reconnect failed`);
      },
    });
    if (outcome.kind === "connected") {
      this.runtime.log.debug({ attempt: this.#attempts }, `${VENDOR} reconnected`);
      this.hooks.reconnected(this.owner);
    } else if (outcome.kind === "refused") {
      // A refused key (or a rejected setup) will not get better by retrying.
      this.#giveUp(outcome.error instanceof GatewayError ? outcome.error : new GatewayError("s2s", outcome.error.message, { fatal: true }));
    } else if (outcome.kind === "exhausted") {
      const message = `${VENDOR}: the connection was lost and ${this.#attempts} reconnect attempts failed (${this.#lastFailure}).`;
      this.#giveUp(new GatewayError("connection", message, { fatal: true }));
    }
  }

  /** Gone for good: one fatal error, then `closed({expected:false})`; no socket left behind. */
  #giveUp(error: GatewayError): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop.abort();
    const link = this.#link;
    this.#link = undefined;
    link?.ws.terminate();
    this.hooks.gaveUp(this.owner, error);
  }

  #onFrame(link: Link, data: RawData, isBinary: boolean): void {
    if (link !== this.#link) return;
    const text = rawText(data);
    if (isBinary) {
      this.#warnings.warn(this.runtime.log, { bytes: text.length }, `${VENDOR} sent a binary frame; ignored`);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.#warnings.warn(this.runtime.log, { err: messageOf(error), sample: text.slice(0, 200) }, `${VENDOR} sent malformed JSON; ignored`);
      return;
    }
    const type = isRecord(message) ? message.type : undefined;
    if (!isRecord(message) || typeof type !== "string") {
      this.#warnings.warn(this.runtime.log, { sample: text.slice(0, 200) }, `${VENDOR} sent a message without a type; ignored`);
      return;
    }
    if (link.ready) this.hooks.event(this.owner, link, type, message);
    else this.#onHandshakeEvent(link, type, message);
  }

  #onHandshakeEvent(link: Link, type: string, message: Record<string, unknown>): void {
    if (type === "session.created" && !link.updateSent) {
      link.updateSent = true;
      this.send(link, this.hooks.sessionUpdate(this.owner));
    } else if (type === "session.updated" && link.updateSent) {
      link.ready = true;
      this.hooks.ready(this.owner, link);
      link.handshake?.resolve();
    } else if (type === "error") {
      // The setup itself was refused (a bad voice, tool schema, …): retrying sends the same.
      this.#failHandshake(link, new GatewayError("s2s", `${VENDOR} refused the session setup: ${errorText(message)}`, { fatal: true }));
    }
  }
}
