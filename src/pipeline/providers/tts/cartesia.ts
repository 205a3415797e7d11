/**
 * Cartesia TTS over its WebSocket (vendors.md §5 "Cartesia TTS WebSocket").
 *
 * One socket per session; every TtsStream is one Cartesia **context** (`context_id`) on it:
 * - each `push` → a generation request with the new text and `continue:true` (transcripts are joined
 *   verbatim, so text is sent exactly as pushed; every other field is identical on every input of a
 *   context, §5 "Continuations");
 * - `end()` → `"transcript":""` with `continue:false` (the form for "last text not known in advance");
 * - `cancel()` → `{"context_id":…,"cancel":true}` (§5 "Cancel"); later chunks for the id are dropped;
 * - ← `chunk` (base64 `data`, raw `pcm_s16le`) → audio; ← `timestamps` (`word_timestamps`, seconds)
 *   → word timings, taken as counted from the context's first sample [INF: §5 does not say]; ← `done`
 *   → done; ← `error` → the stream's error.
 *
 * Socket drop: contexts do not survive a socket (and an id cannot be reused after it expires, §5), so
 * after a reconnect each unfinished stream continues on a fresh context with the text not yet spoken:
 * word timestamps whose audio has been delivered mark the spoken prefix.
 */
import { randomUUID } from "node:crypto";
import { WebSocket, type RawData } from "ws";
import { systemClock, type Clock } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { guardStream, type TtsOpenOptions, type TtsProvider, type TtsSession, type TtsStream, type TtsStreamEvents, type WordTiming } from "../../tts-port.js";
import { apiKeyFor, type Env } from "../keys.js";

/** The part of a pino logger the adapter uses (pino's `Logger` fits). */
export interface TtsLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface CartesiaTtsOptions {
  /** Log lines for ignored server messages and reconnects (default: none). */
  readonly log?: TtsLog;
  /** Timers (open timeout, reconnect backoff); default the system clock. */
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; its length is the attempt budget. Default [100, 300, 1000]. */
  readonly retryDelaysMs?: readonly number[];
  /** How long `open()` and each reconnect wait for the handshake (ms). Default 10 000. */
  readonly connectTimeoutMs?: number;
}

export const CARTESIA_KEY_VARIABLE = "CARTESIA_API_KEY";
/** §5 Connection. */
export const CARTESIA_DEFAULT_URL = "wss://api.cartesia.ai/tts/websocket";
/** §5 Connection: the `Cartesia-Version` the official SDK sends. */
export const CARTESIA_DEFAULT_VERSION = "2025-11-04";
/** §5 Generation request: the `sample_rate` values Cartesia accepts. */
export const CARTESIA_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/**
 * Used when `options.voice` is not set (the built-in default descriptor names only the model). A
 * stock Cartesia voice id seen in several public clients [3P]; set `tts.options.voice` for your own.
 */
export const CARTESIA_DEFAULT_VOICE = "a0e99841-438c-4a64-b679-ae501e7d6091";

const DEFAULT_RETRY_DELAYS_MS = [100, 300, 1000] as const;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const NO_LOG: TtsLog = { warn: () => undefined, debug: () => undefined };

/** Build the Cartesia TTS provider. Throws MissingKeyError (naming the variable) when the key is absent. */
export function cartesiaTts(descriptor: ProviderDescriptor, env: Env, options: CartesiaTtsOptions = {}): TtsProvider {
  // Validated here first so a bad apiKeyEnv is reported as tts.options.apiKeyEnv.
  const keyVariable = stringOption(descriptor, "apiKeyEnv") ?? CARTESIA_KEY_VARIABLE;
  const apiKey = apiKeyFor(descriptor, env, [CARTESIA_KEY_VARIABLE]);
  const url = stringOption(descriptor, "url") ?? CARTESIA_DEFAULT_URL;
  const version = stringOption(descriptor, "version") ?? CARTESIA_DEFAULT_VERSION;
  const model = stringOption(descriptor, "model") ?? "sonic-3";
  const voice = stringOption(descriptor, "voice") ?? CARTESIA_DEFAULT_VOICE;
  const language = stringOption(descriptor, "language");
  const config: Config = {
    url,
    // §5 Connection: version and key as headers (the query-string form exists for browsers only).
    headers: { "Cartesia-Version": version, Authorization: `Bearer ${apiKey}` },
    keyVariable,
    model,
    voice,
    language,
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
  };
  return {
    kind: "cartesia",
    async open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      const session = new CartesiaSession(config, nearest(openOptions.sampleRate, CARTESIA_SAMPLE_RATES));
      await session.start(openOptions.signal);
      return session;
    },
  };
}

interface Config {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly keyVariable: string;
  readonly model: string;
  readonly voice: string;
  readonly language: string | undefined;
  readonly log: TtsLog;
  readonly clock: Clock;
  readonly retryDelaysMs: readonly number[];
  readonly connectTimeoutMs: number;
}

/** One Cartesia context carrying (part of) a stream. */
interface Context {
  readonly id: string;
  /** Offset in the stream's text where this context's transcript starts. */
  readonly startChar: number;
  /** Offset in the stream's text up to which text has been sent on this context. */
  sentChars: number;
  /** The stream's delivered audio bytes when this context started (its timestamps count from there). */
  readonly startBytes: number;
  /** Words timed so far (end in ms from the context's first sample), to find the spoken prefix. */
  readonly words: { word: string; endMs: number }[];
  /** `continue:false` has been sent. */
  ended: boolean;
}

interface StreamState {
  readonly guard: ReturnType<typeof guardStream>;
  /** Everything pushed, verbatim. */
  text: string;
  ended: boolean;
  /** Prefix of `text` known to be spoken (from a finished or dropped context). */
  spokenChars: number;
  /** Audio bytes delivered to the caller (all contexts). */
  deliveredBytes: number;
  context: Context | undefined;
}

class CartesiaSession implements TtsSession {
  private ws: WebSocket | undefined;
  private connecting = false;
  private closed = false;
  /** Reconnect attempts since audio last arrived; the budget is `retryDelaysMs.length`. */
  private attempts = 0;
  private lastFailure = "";
  private readonly streams = new Set<StreamState>();
  private readonly byContext = new Map<string, StreamState>();
  private readonly idPrefix = randomUUID().slice(0, 8);
  private nextId = 0;
  /** The generation fields that stay the same on every input of a context (§5 Continuations). */
  private readonly base: Record<string, unknown>;

  constructor(
    private readonly config: Config,
    readonly sampleRate: number,
  ) {
    this.base = {
      model_id: config.model,
      voice: { mode: "id", id: config.voice },
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: sampleRate },
      ...(config.language === undefined ? {} : { language: config.language }),
      add_timestamps: true,
    };
  }

  async start(signal: AbortSignal | undefined): Promise<void> {
    this.attach(await this.connect(signal));
  }

  stream(events: TtsStreamEvents): TtsStream {
    const state: StreamState = { guard: guardStream(events), text: "", ended: false, spokenChars: 0, deliveredBytes: 0, context: undefined };
    if (this.closed) {
      queueMicrotask(() => this.fail(state, new GatewayError("tts", "cartesia: the TTS session is closed.")));
    } else {
      this.streams.add(state);
      this.ensureConnected();
    }
    return {
      push: (text) => {
        if (!state.guard.open || state.ended || text === "") return;
        state.text += text;
        this.sync(state);
      },
      end: () => {
        if (!state.guard.open || state.ended) return;
        state.ended = true;
        // Defer so `done` for an empty stream never fires inside `end()`.
        queueMicrotask(() => this.sync(state));
      },
      cancel: () => this.cancel(state),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.streams) state.guard.cancel();
    this.streams.clear();
    this.byContext.clear();
    const ws = this.ws;
    this.ws = undefined;
    if (ws !== undefined) await closeSocket(ws, this.config.clock);
  }

  // ---- streams ----

  /** Send whatever the stream's state asks for on its context (opening a new one if needed). */
  private sync(state: StreamState): void {
    try {
      if (!state.guard.open || this.ws === undefined) return; // the reconnect resyncs
      let context = state.context;
      if (context === undefined) {
        // Skip the spoken prefix's trailing whitespace: the next context starts at a word.
        while (state.spokenChars < state.text.length && /\s/.test(state.text[state.spokenChars] ?? "")) state.spokenChars++;
        if (state.spokenChars >= state.text.length) {
          if (state.ended) this.finish(state);
          return;
        }
        context = { id: `${this.idPrefix}-${++this.nextId}`, startChar: state.spokenChars, sentChars: state.spokenChars, startBytes: state.deliveredBytes, words: [], ended: false };
        state.context = context;
        this.byContext.set(context.id, state);
      }
      if (context.sentChars < state.text.length) {
        this.send({ ...this.base, context_id: context.id, transcript: state.text.slice(context.sentChars), continue: true });
        context.sentChars = state.text.length;
      }
      if (state.ended && !context.ended) {
        // §5: "If the last text is not known in advance, send "transcript":"" with continue:false."
        this.send({ ...this.base, context_id: context.id, transcript: "", continue: false });
        context.ended = true;
      }
    } catch (error) {
      this.fail(state, new GatewayError("tts", `cartesia: ${messageOf(error)}`, { cause: error }));
    }
  }

  private cancel(state: StreamState): void {
    if (!state.guard.open) return;
    state.guard.cancel();
    const context = state.context;
    // §5 Cancel: stop any further output for the context (barge-in).
    if (context !== undefined) this.send({ context_id: context.id, cancel: true });
    this.forget(state);
  }

  private finish(state: StreamState): void {
    this.forget(state);
    state.guard.events.done();
  }

  private fail(state: StreamState, error: Error): void {
    this.forget(state);
    try {
      state.guard.events.error(error);
    } catch (thrown) {
      this.config.log.warn({ err: thrown }, "cartesia: a TTS error handler threw");
    }
  }

  private forget(state: StreamState): void {
    if (state.context !== undefined) this.byContext.delete(state.context.id);
    state.context = undefined;
    this.streams.delete(state);
  }

  private send(message: object): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  // ---- server messages ----

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.config.log.warn({ bytes: rawLength(data) }, "cartesia sent a binary frame; ignored");
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch {
      this.config.log.warn({ sample: rawText(data).slice(0, 200) }, "cartesia sent malformed JSON; ignored");
      return;
    }
    if (!isRecord(message)) {
      this.config.log.warn({ sample: rawText(data).slice(0, 200) }, "cartesia sent a non-object message; ignored");
      return;
    }
    const contextId = typeof message.context_id === "string" ? message.context_id : undefined;
    const state = contextId === undefined ? undefined : this.byContext.get(contextId);
    const context = state?.context;
    try {
      switch (message.type) {
        case "chunk":
          if (state !== undefined && typeof message.data === "string") this.onChunk(state, message.data);
          return;
        case "timestamps":
          if (state !== undefined && context !== undefined) this.onTimestamps(state, context, message.word_timestamps);
          return;
        case "done":
          if (state === undefined || context === undefined) return;
          if (context.ended) {
            this.finish(state);
          } else {
            // The context ended without `continue:false` (e.g. it expired, §5): what was sent is
            // spoken; further text goes on a new context.
            state.spokenChars = context.sentChars;
            this.byContext.delete(context.id);
            state.context = undefined;
            this.sync(state);
          }
          return;
        case "error": {
          const text = `cartesia: ${typeof message.title === "string" ? `${message.title}: ` : ""}${typeof message.message === "string" ? message.message : "error"}`;
          if (state !== undefined) this.fail(state, new GatewayError("tts", text));
          else this.config.log.warn({ contextId, status: message.status_code }, text);
          return;
        }
        default:
          // flush_done, phoneme_timestamps and anything newer: nothing to do.
          return;
      }
    } catch (error) {
      this.config.log.warn({ err: error, type: message.type }, "cartesia: handling a server message failed");
    }
  }

  private onChunk(state: StreamState, base64: string): void {
    const pcm = new Uint8Array(Buffer.from(base64, "base64"));
    if (pcm.length === 0) return;
    this.attempts = 0; // progress: the reconnect budget starts over
    state.deliveredBytes += pcm.length;
    state.guard.events.audio(pcm);
  }

  private onTimestamps(state: StreamState, context: Context, raw: unknown): void {
    if (!isRecord(raw) || !Array.isArray(raw.words) || !Array.isArray(raw.start) || !Array.isArray(raw.end)) {
      this.config.log.warn({ contextId: context.id }, "cartesia sent timestamps without words/start/end; ignored");
      return;
    }
    const offsetMs = bytesToMs(context.startBytes, this.sampleRate);
    const starts: readonly unknown[] = raw.start;
    const ends: readonly unknown[] = raw.end;
    const timings: WordTiming[] = [];
    (raw.words as readonly unknown[]).forEach((word, i) => {
      const start = starts[i];
      const end = ends[i];
      if (typeof word !== "string" || typeof start !== "number" || typeof end !== "number") return;
      context.words.push({ word, endMs: end * 1000 });
      timings.push({ word, startMs: offsetMs + start * 1000, endMs: offsetMs + end * 1000 });
    });
    if (timings.length > 0) state.guard.events.words(timings);
  }

  // ---- connection ----

  private connect(signal?: AbortSignal): Promise<WebSocket> {
    return connectSocket(this.config.url, this.config.headers, {
      vendor: "cartesia",
      keyVariable: this.config.keyVariable,
      timeoutMs: this.config.connectTimeoutMs,
      clock: this.config.clock,
      signal,
    });
  }

  private attach(ws: WebSocket): void {
    this.ws = ws;
    ws.on("message", (data, isBinary) => this.onMessage(data, isBinary));
    ws.on("error", (error) => this.config.log.warn({ err: error }, "cartesia socket error"));
    ws.on("close", (code, reason) => this.onClose(ws, code, reason.toString()));
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws || this.closed) return;
    this.ws = undefined;
    this.lastFailure = `socket closed (${code}${reason === "" ? "" : ` ${reason}`})`;
    for (const state of this.streams) this.dropContext(state);
    if (this.streams.size > 0) this.config.log.warn({ code, reason, open: this.streams.size }, "cartesia socket dropped mid-stream; reconnecting");
    this.ensureConnected();
  }

  /** The socket is gone: note how much of the context's text was spoken and forget the context. */
  private dropContext(state: StreamState): void {
    const context = state.context;
    if (context === undefined) return;
    const heardMs = bytesToMs(state.deliveredBytes - context.startBytes, this.sampleRate);
    let cursor = context.startChar;
    for (const { word, endMs } of context.words) {
      if (endMs > heardMs + 0.5) break;
      const next = skipWord(state.text, cursor, word, context.sentChars);
      if (next === undefined) break;
      cursor = next;
    }
    state.spokenChars = cursor;
    this.byContext.delete(context.id);
    state.context = undefined;
  }

  /** Reconnect (bounded, with backoff) when streams need the socket; a no-op when connected or connecting. */
  private ensureConnected(): void {
    if (this.closed || this.ws !== undefined || this.connecting || this.streams.size === 0) return;
    const delay = this.config.retryDelaysMs[this.attempts];
    if (delay === undefined) {
      this.giveUp(new GatewayError("tts", `cartesia: the connection was lost and ${this.attempts} reconnect attempts failed (${this.lastFailure}).`));
      return;
    }
    this.attempts++;
    this.connecting = true;
    this.config.clock.setTimeout(() => void this.reconnect(), delay);
  }

  private async reconnect(): Promise<void> {
    if (this.closed || this.streams.size === 0) {
      this.connecting = false;
      return;
    }
    try {
      const ws = await this.connect();
      this.connecting = false;
      if (this.closed) {
        ws.terminate();
        return;
      }
      this.attach(ws);
      for (const state of [...this.streams]) this.sync(state);
    } catch (error) {
      this.connecting = false;
      this.lastFailure = messageOf(error);
      // A rejected key will not get better by retrying.
      if (error instanceof GatewayError && error.fatal) this.giveUp(error);
      else this.ensureConnected();
    }
  }

  private giveUp(error: Error): void {
    this.attempts = 0; // a later stream tries again with a fresh budget
    for (const state of [...this.streams]) this.fail(state, error);
  }
}

// ---- helpers (kept in this file: one adapter, one file) ----

function stringOption(descriptor: ProviderDescriptor, name: string): string | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new GatewayError("internal", `tts.options.${name} must be a non-empty string.`, { fatal: true });
  }
  return value;
}

function nearest(requested: number, supported: readonly number[]): number {
  let best = supported[0] ?? requested;
  for (const rate of supported) if (Math.abs(rate - requested) < Math.abs(best - requested)) best = rate;
  return best;
}

function bytesToMs(bytes: number, sampleRate: number): number {
  return (bytes / 2 / sampleRate) * 1000;
}

/**
 * Move `cursor` in `text` past `word` when only spaces or punctuation lie between (and past the
 * punctuation right after it); `undefined` when the word is not next (normalized text).
 */
function skipWord(text: string, cursor: number, word: string, limit: number): number | undefined {
  const bare = word.trim();
  if (bare === "") return cursor;
  const at = text.indexOf(bare, cursor);
  if (at < 0 || at + bare.length > limit || !/^[\s\p{P}]*$/u.test(text.slice(cursor, at))) return undefined;
  let next = at + bare.length;
  while (next < limit && /\p{P}/u.test(text[next] ?? "")) next++;
  return next;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8");
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data.byteLength;
}

interface ConnectOptions {
  readonly vendor: string;
  readonly keyVariable: string;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Open a WebSocket: resolves when the handshake completes; rejects with a GatewayError on timeout,
 * abort, a network error, or an HTTP refusal (401/403: fatal, naming the key variable).
 */
function connectSocket(url: string, headers: Readonly<Record<string, string>>, options: ConnectOptions): Promise<WebSocket> {
  const { vendor, keyVariable, timeoutMs, clock, signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new GatewayError("tts", `${vendor}: opening the TTS session was aborted.`));
      return;
    }
    let settled = false;
    const ws = new WebSocket(url, { headers: { ...headers } });
    const settle = (error?: GatewayError): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      signal?.removeEventListener("abort", onAbort);
      ws.removeAllListeners();
      ws.on("error", () => undefined); // until the caller attaches its own handlers
      if (error === undefined) {
        resolve(ws);
        return;
      }
      ws.terminate(); // reports an abort error once more: swallowed above
      reject(error);
    };
    const onAbort = (): void => settle(new GatewayError("tts", `${vendor}: opening the TTS session was aborted.`));
    const timer = clock.setTimeout(() => settle(new GatewayError("tts", `${vendor}: the TTS connection timed out after ${timeoutMs / 1000} s.`)), timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    ws.once("open", () => settle());
    ws.once("unexpected-response", (_request, response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      if (status === 401 || status === 403) {
        settle(new GatewayError("tts", `${vendor} refused the API key (HTTP ${status}): check ${keyVariable}.`, { fatal: true }));
      } else {
        settle(new GatewayError("tts", `${vendor}: the TTS connection was refused (HTTP ${status}).`));
      }
    });
    ws.once("error", (error) => settle(new GatewayError("tts", `${vendor}: the TTS connection failed: ${error.message}`, { cause: error })));
  });
}

/** Close a socket cleanly, or terminate it if the close handshake takes over a second. */
function closeSocket(ws: WebSocket, clock: Clock): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) {
      resolve();
      return;
    }
    const timer = clock.setTimeout(() => {
      ws.terminate();
      resolve();
    }, 1000);
    ws.once("close", () => {
      timer.cancel();
      resolve();
    });
    ws.close(1000);
  });
}
