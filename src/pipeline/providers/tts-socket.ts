/**
 * The socket plumbing of the TTS adapters that keep one WebSocket per session (Cartesia and
 * ElevenLabs multi-stream-input: docs/vendors.md (Cartesia), (ElevenLabs)): connecting with the key
 * in a handshake header under a timeout and the caller's abort signal (401/403: a fatal error
 * naming the key variable), reading JSON frames, closing cleanly, and after a drop reconnecting,
 * on the one retry loop (src/providers/reconnect.ts) with the TTS schedule (`retryDelaysMs`), while
 * streams still need the socket. What lived on the dropped socket, and what to re-send on the new
 * one, is the adapter's.
 */
import { WebSocket, type RawData } from "ws";
import { GatewayError, messageOf } from "../../errors.js";
import { LogThrottle } from "../../log.js";
import { isKeyRefused, ttsKeyRefused } from "../../providers/key-refusal.js";
import { reconnect } from "../../providers/reconnect.js";
import { retrying, type Retrying, type RetryOptions } from "./provider-runtime.js";
import { closeGracefully, newWebSocket, openDeadline } from "../../providers/ws-connect.js";
import { isRecord, rawLength, rawText } from "../../providers/ws-frames.js";
import { spread } from "../../spread.js";

/** Runtime knobs (not user config) of a socket TTS adapter. */
export interface TtsSocketOptions extends RetryOptions {
  /** How long `open()` and each reconnect wait for the handshake (ms). Default 10 000. */
  readonly connectTimeoutMs?: number;
}

/** What to connect to, and how. */
export interface TtsSocketTarget extends Retrying {
  readonly vendor: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly keyVariable: string;
  readonly connectTimeoutMs: number;
}

/** `TtsSocketOptions` with the defaults filled in. */
export function ttsSocketRuntime(options: TtsSocketOptions): Omit<TtsSocketTarget, "vendor" | "url" | "headers" | "keyVariable"> {
  return spread(retrying(options), { connectTimeoutMs: options.connectTimeoutMs ?? 10_000 });
}

/** How long a clean close may take before the socket is dropped (ms). */
const CLOSE_TIMEOUT_MS = 1000;

/**
 * Open a WebSocket: resolves when the handshake completes; rejects with a GatewayError on timeout,
 * abort, a network error, or an HTTP refusal (401/403: fatal, naming the key variable).
 */
export function connectTtsSocket(target: TtsSocketTarget, signal?: AbortSignal): Promise<WebSocket> {
  const { vendor, connectTimeoutMs: timeoutMs } = target;
  const aborted = (): GatewayError => new GatewayError("tts", `${vendor}: opening the TTS session was aborted.`);
  if (signal?.aborted === true) return Promise.reject(aborted());
  const ws = newWebSocket(target.url, { headers: { ...target.headers } });
  const opening = openDeadline<WebSocket>({
    clock: target.clock,
    timeoutMs,
    signal,
    timedOut: () => new GatewayError("tts", `${vendor}: the TTS connection timed out after ${timeoutMs / 1000} s.`),
    aborted,
    settled: (error) => {
      ws.removeAllListeners();
      ws.on("error", () => undefined); // until the caller attaches its own handlers
      if (error !== undefined) ws.terminate(); // reports an abort error once more: swallowed above
    },
  });
  ws.once("open", () => opening.resolve(ws));
  ws.once("unexpected-response", (_request, response) => {
    const status = response.statusCode ?? 0;
    response.resume();
    opening.reject(isKeyRefused(status) ? ttsKeyRefused(vendor, status, target.keyVariable) : new GatewayError("tts", `${vendor}: the TTS connection was refused (HTTP ${status}).`));
  });
  ws.once("error", (error) => opening.reject(new GatewayError("tts", `${vendor}: the TTS connection failed: ${error.message}`, { cause: error })));
  return opening.promise;
}

/** What the adapter's session tells its socket. */
export interface ReconnectingSocketHooks {
  /** A JSON object from the server (binary frames, malformed JSON and non-objects are logged and dropped). */
  message(message: Record<string, unknown>): void;
  /** How many streams still need the socket: with none, a drop is not reconnected. */
  waiting(): number;
  /** The socket dropped: what lived on it (contexts) is gone. */
  dropped(): void;
  /** A new socket replaced the dropped one: re-send what is unfinished. */
  reconnected(): void;
  /** The reconnect budget is spent, or the vendor refused the key: fail what is waiting. */
  gaveUp(error: Error): void;
}

/** One session's socket: connected by `open()`, reconnected after a drop while streams need it. */
export class ReconnectingSocket {
  #ws: WebSocket | undefined;
  /** The reconnect under way, if any: aborted by `close()`, or once no stream needs the socket. */
  #reconnecting: AbortController | undefined;
  #closed = false;
  /** Reconnect attempts since audio last arrived, across drops; the budget is `retryDelaysMs.length`. */
  #attempts = 0;
  #lastFailure = "";
  /** Frames the vendor should not send (binary, not JSON, not an object), on any of the session's sockets: a line a kind every 10 s at most. */
  readonly #warnings: LogThrottle;

  constructor(
    private readonly target: TtsSocketTarget,
    private readonly hooks: ReconnectingSocketHooks,
  ) {
    this.#warnings = new LogThrottle(() => target.clock.now());
  }

  /** `close()` was called: the session is over. */
  get closed(): boolean {
    return this.#closed;
  }

  /** A socket is attached (it may still be closing: `send` checks). */
  get connected(): boolean {
    return this.#ws !== undefined;
  }

  /** The first connection (`open()`): rejects on refusal, timeout or abort. */
  async open(signal: AbortSignal | undefined): Promise<void> {
    this.#attach(await connectTtsSocket(this.target, signal));
  }

  /** Send a JSON message if the socket is open. */
  send(message: object): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(message));
  }

  /** Audio arrived: the reconnect budget starts over. */
  progress(): void {
    this.#attempts = 0;
  }

  /** The latest reason the connection is failing (for the give-up message), e.g. a server error. */
  noteFailure(reason: string): void {
    this.#lastFailure = reason;
  }

  /** Reconnect (bounded, with backoff) when streams need the socket; a no-op when connected or connecting. */
  ensureConnected(): void {
    if (this.#closed || this.#ws !== undefined || this.#reconnecting !== undefined || this.hooks.waiting() === 0) return;
    void this.#reconnect(new AbortController());
  }

  /** Close for good: `goodbye` (the vendor's close message, if any) on an open socket, then a clean close. */
  async close(goodbye?: object): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#reconnecting?.abort();
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws === undefined) return;
    if (goodbye !== undefined && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(goodbye));
    await closeGracefully(ws, this.target.clock, CLOSE_TIMEOUT_MS);
  }

  #attach(ws: WebSocket): void {
    const { vendor, log } = this.target;
    this.#ws = ws;
    ws.on("message", (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on("error", (error) => log.warn({ err: error }, `${vendor} socket error`));
    ws.on("close", (code, reason) => this.#onClose(ws, code, reason.toString()));
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    const { vendor, log } = this.target;
    if (isBinary) {
      this.#warnings.warn(log, { bytes: rawLength(data) }, `${vendor} sent a binary frame; ignored`);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch {
      this.#warnings.warn(log, { sample: rawText(data).slice(0, 200) }, `${vendor} sent malformed JSON; ignored`);
      return;
    }
    if (!isRecord(message)) {
      this.#warnings.warn(log, { sample: rawText(data).slice(0, 200) }, `${vendor} sent a non-object message; ignored`);
      return;
    }
    this.hooks.message(message);
  }

  #onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.#ws || this.#closed) return;
    this.#ws = undefined;
    this.#lastFailure = `socket closed (${code}${reason === "" ? "" : ` ${reason}`})`;
    this.hooks.dropped();
    const open = this.hooks.waiting();
    if (open > 0) this.target.log.warn({ code, reason, open }, `${this.target.vendor} socket dropped mid-stream; reconnecting`);
    this.ensureConnected();
  }

  /** Dial again with what is left of the budget; a refused key or a spent budget fails what is waiting. */
  async #reconnect(run: AbortController): Promise<void> {
    this.#reconnecting = run;
    const outcome = await reconnect({
      clock: this.target.clock,
      delaysMs: this.target.retryDelaysMs.slice(this.#attempts),
      signal: run.signal,
      attempt: async () => {
        this.#attempts++;
        if (this.hooks.waiting() === 0) {
          run.abort(); // no stream needs the socket any more: the loop stops
          return;
        }
        const ws = await connectTtsSocket(this.target, run.signal);
        if (run.signal.aborted) ws.terminate(); // closed while the handshake completed
        else this.#attach(ws);
      },
      failed: (error) => (this.#lastFailure = messageOf(error)),
    });
    this.#reconnecting = undefined;
    if (outcome.kind === "connected") {
      this.hooks.reconnected();
    } else if (outcome.kind === "refused") {
      this.#giveUp(outcome.error); // a rejected key will not get better by retrying
    } else if (outcome.kind === "exhausted") {
      this.#giveUp(new GatewayError("tts", `${this.target.vendor}: the connection was lost and ${this.#attempts} reconnect attempts failed (${this.#lastFailure}).`));
    }
  }

  #giveUp(error: Error): void {
    this.#attempts = 0; // a later stream tries again with a fresh budget
    this.hooks.gaveUp(error);
  }
}
