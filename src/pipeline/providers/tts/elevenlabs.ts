/**
 * ElevenLabs TTS over its **multi-stream-input** WebSocket (vendors.md §6 "multi-stream-input").
 *
 * Why multi-stream-input and not stream-input: stream-input has no way to stop a generation short of
 * closing the socket (its only end is `{"text":""}`, which flushes and speaks everything, §6
 * "stream-input client messages"), so every barge-in would cost a reconnect. multi-stream-input has
 * `close_context` ("use it on barge-in", §6) and runs every stream as a context of one socket.
 * Constraints that come with it: at most 5 contexts per socket, and no `eleven_v3` (§6 Connection).
 *
 * Wire mapping, per stream (one `context_id`):
 * - first text → `{"text":" ","context_id"}` opens the context (plus `voice_settings` /
 *   `generation_config` when configured), then `{"text":"…␠","context_id"}` per push: each chunk ends
 *   with a space (§6: "End each chunk with a space"), added when the pushed text lacks one;
 * - `end()` → `{"context_id","flush":true}`; ← the last audio, then ← `is_final` → done;
 * - `cancel()` → `{"context_id","close_context":true}`; late audio for the id is dropped;
 * - session close → `{"close_socket":true}` (the multi-context form of stream-input's `{"text":""}`).
 * The key goes in the `xi-api-key` handshake header (§6 Auth), so a wrong key is an HTTP 401/403.
 * `sync_alignment=true` puts timing data on every audio chunk; alignment char times are taken as
 * relative to the chunk they come with [INF: vendors.md does not say]. Responses arrive in camelCase
 * or snake_case (§6 "Casing varies"); both are accepted.
 *
 * Socket drop: contexts die with the socket; after a reconnect each unfinished stream continues on a
 * fresh context with the text after the last word whose audio arrived (from the alignment).
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

export interface ElevenLabsTtsOptions {
  /** Log lines for ignored server messages and reconnects (default: none). */
  readonly log?: TtsLog;
  /** Timers (open timeout, reconnect backoff); default the system clock. */
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; its length is the attempt budget. Default [100, 300, 1000]. */
  readonly retryDelaysMs?: readonly number[];
  /** How long `open()` and each reconnect wait for the handshake (ms). Default 10 000. */
  readonly connectTimeoutMs?: number;
}

export const ELEVENLABS_KEY_VARIABLE = "ELEVENLABS_API_KEY";
/** §6 Connection: the origin; the path `/v1/text-to-speech/{voice_id}/multi-stream-input` is appended. */
export const ELEVENLABS_DEFAULT_URL = "wss://api.elevenlabs.io";
/** §6 Connection: the `pcm_<rate>` output formats (16-bit LE). */
export const ELEVENLABS_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/** §6 Connection: at most 5 contexts per socket. */
export const ELEVENLABS_MAX_CONTEXTS = 5;

const DEFAULT_RETRY_DELAYS_MS = [100, 300, 1000] as const;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const NO_LOG: TtsLog = { warn: () => undefined, debug: () => undefined };

/**
 * Build the ElevenLabs TTS provider. Throws MissingKeyError (naming the variable) when the key is
 * absent, and a fatal GatewayError naming `tts.options.voiceId` when no voice is set.
 */
export function elevenLabsTts(descriptor: ProviderDescriptor, env: Env, options: ElevenLabsTtsOptions = {}): TtsProvider {
  const voiceId = stringOption(descriptor, "voiceId");
  if (voiceId === undefined) {
    throw new GatewayError("internal", 'tts elevenlabs needs tts.options.voiceId (an ElevenLabs voice id, e.g. "21m00Tcm4TlvDq8ikWAM").', { fatal: true });
  }
  const model = stringOption(descriptor, "model") ?? "eleven_flash_v2_5";
  if (model === "eleven_v3") {
    throw new GatewayError("internal", "tts.options.model eleven_v3 is not available on ElevenLabs multi-stream-input; use eleven_flash_v2_5 or another model.", { fatal: true });
  }
  // Validated here first so a bad apiKeyEnv is reported as tts.options.apiKeyEnv.
  const keyVariable = stringOption(descriptor, "apiKeyEnv") ?? ELEVENLABS_KEY_VARIABLE;
  const apiKey = apiKeyFor(descriptor, env, [ELEVENLABS_KEY_VARIABLE]);
  const origin = (stringOption(descriptor, "url") ?? ELEVENLABS_DEFAULT_URL).replace(/\/+$/, "");
  const language = stringOption(descriptor, "language");
  const voiceSettings = objectOption(descriptor, "voiceSettings");
  const generationConfig = objectOption(descriptor, "generationConfig");
  const config = {
    keyVariable,
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    headers: { "xi-api-key": apiKey },
    opening: {
      ...(voiceSettings === undefined ? {} : { voice_settings: voiceSettings }),
      ...(generationConfig === undefined ? {} : { generation_config: generationConfig }),
    },
  };
  return {
    kind: "elevenlabs",
    async open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      const sampleRate = nearest(openOptions.sampleRate, ELEVENLABS_SAMPLE_RATES);
      const query = new URLSearchParams({
        model_id: model,
        output_format: `pcm_${sampleRate}`,
        sync_alignment: "true",
        // Keep the socket across pauses between turns (default 20 s, maximum 180 s, §6).
        inactivity_timeout: "180",
        ...(language === undefined ? {} : { language_code: language }),
      });
      const url = `${origin}/v1/text-to-speech/${encodeURIComponent(voiceId)}/multi-stream-input?${query.toString()}`;
      const session = new ElevenLabsSession({ ...config, url }, sampleRate);
      await session.start(openOptions.signal);
      return session;
    },
  };
}

interface Config {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly keyVariable: string;
  /** Extra fields of the context-opening message. */
  readonly opening: Readonly<Record<string, unknown>>;
  readonly log: TtsLog;
  readonly clock: Clock;
  readonly retryDelaysMs: readonly number[];
  readonly connectTimeoutMs: number;
}

/** One ElevenLabs context carrying (part of) a stream. */
interface Context {
  readonly id: string;
  /** Offset in the stream's text where this context's text starts. */
  readonly startChar: number;
  /** Offset in the stream's text up to which text has been sent on this context. */
  sentChars: number;
  /** Words whose audio has arrived on this context, to find the spoken prefix. */
  readonly words: string[];
  /** The word being spelled out by the alignment (its chars may span chunks). */
  partial: { word: string; startMs: number; endMs: number } | undefined;
  /** `flush` has been sent. */
  ended: boolean;
}

interface StreamState {
  readonly guard: ReturnType<typeof guardStream>;
  /** Everything pushed, as sent (each chunk ending in a space). */
  text: string;
  ended: boolean;
  /** Prefix of `text` known to be spoken (from a finished or dropped context). */
  spokenChars: number;
  /** Audio bytes delivered to the caller (all contexts). */
  deliveredBytes: number;
  context: Context | undefined;
}

class ElevenLabsSession implements TtsSession {
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

  constructor(
    private readonly config: Config,
    readonly sampleRate: number,
  ) {}

  async start(signal: AbortSignal | undefined): Promise<void> {
    this.attach(await this.connect(signal));
  }

  stream(events: TtsStreamEvents): TtsStream {
    const state: StreamState = { guard: guardStream(events), text: "", ended: false, spokenChars: 0, deliveredBytes: 0, context: undefined };
    if (this.closed) {
      queueMicrotask(() => this.fail(state, new GatewayError("tts", "elevenlabs: the TTS session is closed.")));
    } else {
      this.streams.add(state);
      this.ensureConnected();
    }
    return {
      push: (text) => {
        if (!state.guard.open || state.ended || text.trim() === "") return;
        // §6: end each chunk with a space (the caller batches; pieces are words or sentences).
        state.text += /\s$/.test(text) ? text : `${text} `;
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
    if (ws === undefined) return;
    // §6 multi-stream-input: close_socket closes every context.
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ close_socket: true }));
    await closeSocket(ws, this.config.clock);
  }

  // ---- streams ----

  /** Send whatever the stream's state asks for on its context (opening a new one if needed). */
  private sync(state: StreamState): void {
    try {
      if (!state.guard.open || this.ws === undefined) return; // the reconnect resyncs
      let context = state.context;
      if (context === undefined) {
        while (state.spokenChars < state.text.length && /\s/.test(state.text[state.spokenChars] ?? "")) state.spokenChars++;
        if (state.spokenChars >= state.text.length) {
          if (state.ended) this.finish(state);
          return;
        }
        if (this.byContext.size >= ELEVENLABS_MAX_CONTEXTS) {
          this.fail(state, new GatewayError("tts", `elevenlabs: at most ${ELEVENLABS_MAX_CONTEXTS} streams can run at once on one session (multi-stream-input).`));
          return;
        }
        context = { id: `${this.idPrefix}-${++this.nextId}`, startChar: state.spokenChars, sentChars: state.spokenChars, words: [], partial: undefined, ended: false };
        state.context = context;
        this.byContext.set(context.id, state);
        // §6: the first message on a context opens it, with text " ".
        this.send({ text: " ", context_id: context.id, ...this.config.opening });
      }
      if (context.sentChars < state.text.length) {
        this.send({ text: state.text.slice(context.sentChars), context_id: context.id });
        context.sentChars = state.text.length;
      }
      if (state.ended && !context.ended) {
        // §6: flush generates everything buffered; the last audio then is_final follow.
        this.send({ context_id: context.id, flush: true });
        context.ended = true;
      }
    } catch (error) {
      this.fail(state, new GatewayError("tts", `elevenlabs: ${messageOf(error)}`, { cause: error }));
    }
  }

  private cancel(state: StreamState): void {
    if (!state.guard.open) return;
    state.guard.cancel();
    // §6: close_context on barge-in; any late audio for the id is ignored (it is unmapped below).
    if (state.context !== undefined) this.send({ context_id: state.context.id, close_context: true });
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
      this.config.log.warn({ err: thrown }, "elevenlabs: a TTS error handler threw");
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
      this.config.log.warn({ bytes: rawLength(data) }, "elevenlabs sent a binary frame; ignored");
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch {
      this.config.log.warn({ sample: rawText(data).slice(0, 200) }, "elevenlabs sent malformed JSON; ignored");
      return;
    }
    if (!isRecord(message)) {
      this.config.log.warn({ sample: rawText(data).slice(0, 200) }, "elevenlabs sent a non-object message; ignored");
      return;
    }
    // §6: the server echoes `contextId` (some versions `context_id`), and `isFinal` or `is_final`.
    const rawId = message.contextId ?? message.context_id;
    const contextId = typeof rawId === "string" ? rawId : undefined;
    const state = contextId === undefined ? undefined : this.byContext.get(contextId);
    const context = state?.context;
    try {
      if (typeof message.message === "string" && typeof message.audio !== "string") {
        // §6 Errors: a JSON object with a `message` field (often followed by a close).
        const text = `elevenlabs: ${message.message}`;
        this.lastFailure = message.message;
        if (state !== undefined) this.fail(state, new GatewayError("tts", text));
        else this.config.log.warn({ contextId, error: message.error }, text);
        return;
      }
      if (state === undefined || context === undefined) return; // cancelled or unknown context
      if (typeof message.audio === "string" && message.audio !== "") {
        this.onAudio(state, context, message.audio, message.alignment ?? message.normalizedAlignment ?? message.normalized_alignment);
      }
      if ((message.isFinal ?? message.is_final) === true) this.onFinal(state, context);
    } catch (error) {
      this.config.log.warn({ err: error }, "elevenlabs: handling a server message failed");
    }
  }

  private onAudio(state: StreamState, context: Context, base64: string, alignment: unknown): void {
    const pcm = new Uint8Array(Buffer.from(base64, "base64"));
    if (pcm.length === 0) return;
    this.attempts = 0; // progress: the reconnect budget starts over
    const chunkStartMs = bytesToMs(state.deliveredBytes, this.sampleRate);
    state.deliveredBytes += pcm.length;
    state.guard.events.audio(pcm);
    if (alignment !== undefined && alignment !== null) this.onAlignment(state, context, chunkStartMs, alignment);
  }

  /** Chars + start times + durations → whole words (a word's chars may span chunks). */
  private onAlignment(state: StreamState, context: Context, chunkStartMs: number, alignment: unknown): void {
    if (!isRecord(alignment)) return;
    const chars = alignment.chars;
    const starts = alignment.charStartTimesMs ?? alignment.char_start_times_ms;
    const durations = alignment.charDurationsMs ?? alignment.char_durations_ms;
    if (!Array.isArray(chars) || !Array.isArray(starts) || !Array.isArray(durations)) {
      this.config.log.warn({ contextId: context.id }, "elevenlabs sent an alignment without chars/times; ignored");
      return;
    }
    const startList: readonly unknown[] = starts;
    const durationList: readonly unknown[] = durations;
    const timings: WordTiming[] = [];
    (chars as readonly unknown[]).forEach((char, i) => {
      const start = startList[i];
      const duration = durationList[i];
      if (typeof char !== "string" || typeof start !== "number" || typeof duration !== "number") return;
      if (/^\s*$/.test(char)) {
        const word = this.completeWord(context);
        if (word !== undefined) timings.push(word);
        return;
      }
      const startMs = chunkStartMs + start;
      const endMs = startMs + duration;
      if (context.partial === undefined) context.partial = { word: char, startMs, endMs };
      else {
        context.partial.word += char;
        context.partial.endMs = endMs;
      }
    });
    if (timings.length > 0) state.guard.events.words(timings);
  }

  private completeWord(context: Context): WordTiming | undefined {
    const word = context.partial;
    context.partial = undefined;
    if (word === undefined) return undefined;
    context.words.push(word.word);
    return word;
  }

  private onFinal(state: StreamState, context: Context): void {
    const last = this.completeWord(context);
    if (last !== undefined) state.guard.events.words([last]);
    if (context.ended) {
      // Free the context slot (at most 5 per socket) in case is_final did not close it.
      this.send({ context_id: context.id, close_context: true });
      this.finish(state);
      return;
    }
    // The server ended the context on its own (e.g. idle): what was sent is spoken; more text
    // goes on a new context.
    state.spokenChars = context.sentChars;
    this.byContext.delete(context.id);
    state.context = undefined;
    this.sync(state);
  }

  // ---- connection ----

  private connect(signal?: AbortSignal): Promise<WebSocket> {
    return connectSocket(this.config.url, this.config.headers, {
      vendor: "elevenlabs",
      keyVariable: this.config.keyVariable,
      timeoutMs: this.config.connectTimeoutMs,
      clock: this.config.clock,
      signal,
    });
  }

  private attach(ws: WebSocket): void {
    this.ws = ws;
    ws.on("message", (data, isBinary) => this.onMessage(data, isBinary));
    ws.on("error", (error) => this.config.log.warn({ err: error }, "elevenlabs socket error"));
    ws.on("close", (code, reason) => this.onClose(ws, code, reason.toString()));
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws || this.closed) return;
    this.ws = undefined;
    this.lastFailure = `socket closed (${code}${reason === "" ? "" : ` ${reason}`})`;
    for (const state of this.streams) this.dropContext(state);
    if (this.streams.size > 0) this.config.log.warn({ code, reason, open: this.streams.size }, "elevenlabs socket dropped mid-stream; reconnecting");
    this.ensureConnected();
  }

  /** The socket is gone: note how much of the context's text was spoken and forget the context. */
  private dropContext(state: StreamState): void {
    const context = state.context;
    if (context === undefined) return;
    let cursor = context.startChar;
    for (const word of context.words) {
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
      this.giveUp(new GatewayError("tts", `elevenlabs: the connection was lost and ${this.attempts} reconnect attempts failed (${this.lastFailure}).`));
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

function objectOption(descriptor: ProviderDescriptor, name: string): Record<string, unknown> | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (!isRecord(value)) throw new GatewayError("internal", `tts.options.${name} must be an object.`, { fatal: true });
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
