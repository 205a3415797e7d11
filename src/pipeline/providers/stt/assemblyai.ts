/**
 * AssemblyAI Universal Streaming v3 over WebSocket, per `/work/shared/spec/vendors.md` §4.
 *
 * Wire summary (vendors.md §4):
 * - Connect to `wss://streaming.assemblyai.com/v3/ws?…` with `Authorization: <key>` (the raw key,
 *   no scheme word). The server sends `Begin` first; only then is the session usable.
 * - Audio: binary frames of raw PCM16 LE (`encoding=pcm_s16le`), **50–1000 ms per frame** (about
 *   50 ms recommended). Mic frames are usually 20 ms, so they are buffered to ≥ 50 ms here.
 * - Control (text frames): `ForceEndpoint` (end the turn now), `Terminate` (flush, `Termination`,
 *   close 1000). `KeepAlive` only matters with `inactivity_timeout`, which is not set.
 * - Server: `Turn` (same `turn_order` = same turn; `transcript` = finalized words; `end_of_turn`
 *   closes it; with `format_turns=true` a formatted copy with `turn_is_formatted:true` follows),
 *   `SpeechStarted`, `Termination`, `{"error":…}`, and close codes 4000–4103.
 *
 * Mapping onto the port: `end_of_turn:false` → `partial(transcript + trailing non-final words,
 * {eotConfidence})`; `end_of_turn:true` → `final(text, {endOfTurn:true, eotConfidence})`, using the
 * formatted copy when `format_turns` is on (if it does not come within `formatWaitMs`, or the next
 * turn starts first, the unformatted text is used).
 *
 * Errors while opening reject `open()` (a GatewayError, `fatal` when a retry cannot help) and
 * are not reported through the events; after `open()` resolved, failures go to
 * `events.error` + `events.closed({expected:false})`.
 */
import { WebSocket, type ClientOptions, type RawData } from "ws";
import type { IncomingMessage } from "node:http";
import { systemClock, type Clock, type Timer } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "../../stt-port.js";
import { apiKeyFor, type Env } from "../keys.js";
import { sendAudioOrDrop } from "../ws-backlog.js";

/** vendors.md §4 "Connection". */
export const ASSEMBLYAI_STREAMING_URL = "wss://streaming.assemblyai.com/v3/ws";
export const ASSEMBLYAI_KEY_VARIABLES = ["ASSEMBLYAI_API_KEY"] as const;

/** Audio frame bounds (vendors.md §4: 50–1000 ms per binary frame). */
export const ASSEMBLYAI_MIN_CHUNK_MS = 50;
export const ASSEMBLYAI_MAX_CHUNK_MS = 1000;

/** `end_of_turn_confidence_threshold` default (vendors.md §4). */
const DEFAULT_EOT_THRESHOLD = 0.4;
const MAX_KEYTERMS = 100;

/**
 * Close codes a retry cannot fix (vendors.md §4): bad sample rate, not authorized, insufficient
 * funds, free-tier user, audio too short / too long, bad schema.
 */
const FATAL_CLOSE_CODES = new Set([4000, 4001, 4002, 4003, 4032, 4033, 4101]);

/** The minimal logger the adapter writes to (a pino logger fits). */
interface SttLog {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const noopLog: SttLog = { debug: () => {}, warn: () => {} };

/** Runtime knobs (not user config): logging, time, timeouts, and a socket factory for tests. */
export interface AssemblyAiSttOptions {
  /** A pino logger (or anything with `debug`/`warn(obj, msg)`); default: silent. */
  readonly log?: Logger | { debug(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  readonly clock?: Clock;
  /** `open()` fails after this long without `Begin`. Default 10000. */
  readonly openTimeoutMs?: number;
  /** After `Terminate`, wait this long for the server to close before dropping the socket. Default 3000. */
  readonly closeTimeoutMs?: number;
  /** How long to wait for the formatted copy of an ended turn. Default 1000. */
  readonly formatWaitMs?: number;
  /** Build the socket (tests inject a subclass, e.g. one with a large `bufferedAmount`). */
  readonly connect?: (url: string, options: ClientOptions) => WebSocket;
}

/** Query params the adapter sets itself (`options.params` may not override them). */
const RESERVED_PARAMS = new Set(["sample_rate", "encoding", "token"]);

type ParamValue = string | number | boolean;

function optionString(descriptor: ProviderDescriptor, name: string): string | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new GatewayError("internal", `stt.options.${name} must be a non-empty string.`, { fatal: true });
  }
  return value;
}

function optionNumber(descriptor: ProviderDescriptor, name: string, min: number, max: number): number | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new GatewayError("internal", `stt.options.${name} must be a number from ${min} to ${max}.`, { fatal: true });
  }
  return value;
}

function optionBoolean(descriptor: ProviderDescriptor, name: string): boolean | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw new GatewayError("internal", `stt.options.${name} must be true or false.`, { fatal: true });
  return value;
}

function optionParams(descriptor: ProviderDescriptor): Readonly<Record<string, ParamValue>> {
  const value = descriptor.options.params;
  if (value === undefined) return {};
  const ok = typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => ["string", "number", "boolean"].includes(typeof v));
  if (!ok) throw new GatewayError("internal", "stt.options.params must be an object of string, number or boolean values.", { fatal: true });
  return value as Record<string, ParamValue>;
}

/** The variable the key came from (for error messages): `options.apiKeyEnv` or the first one set. */
function keyVariableOf(descriptor: ProviderDescriptor, env: Env, variables: readonly string[]): string {
  const named = descriptor.options.apiKeyEnv;
  if (typeof named === "string" && named !== "") return named;
  return variables.find((v) => (env[v] ?? "") !== "") ?? variables[0] ?? "ASSEMBLYAI_API_KEY";
}

/**
 * Split an `sttPrompt` into keyterms: on commas, semicolons, pipes and newlines (a phrase with
 * spaces stays one term); trimmed, de-duplicated, at most 100.
 */
function splitKeyterms(prompt: string | undefined): string[] {
  if (prompt === undefined) return [];
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of prompt.split(/[,;|\n\r]+/)) {
    const term = raw.trim().replace(/\s+/g, " ");
    if (term === "" || seen.has(term.toLowerCase()) || terms.length >= MAX_KEYTERMS) continue;
    seen.add(term.toLowerCase());
    terms.push(term);
  }
  return terms;
}

/** The speech model: explicit option, else English or multilingual by language. */
function defaultSpeechModel(language: string | undefined): string {
  return language === undefined || /^en\b/i.test(language) ? "universal-streaming-english" : "universal-streaming-multilingual";
}

/** The `/v3/ws` URL for a session (vendors.md §4 "Connection"). */
export function assemblyAiStreamingUrl(
  base: string,
  settings: { speechModel: string; formatTurns: boolean; eotThreshold: number; params?: Readonly<Record<string, ParamValue>> },
  options: Pick<SttOpenOptions, "sampleRate" | "prompt" | "minSilenceMs" | "maxSilenceMs">,
): string {
  const url = new URL(base);
  const q = url.searchParams;
  const set = (name: string, value: string | number | boolean): void => q.set(name, String(value));
  const minSilence = Math.max(0, Math.round(options.minSilenceMs));
  set("sample_rate", Math.round(options.sampleRate));
  set("encoding", "pcm_s16le");
  set("speech_model", settings.speechModel);
  set("format_turns", settings.formatTurns);
  set("end_of_turn_confidence_threshold", settings.eotThreshold);
  // The SDK marks this name deprecated (replacement: `min_turn_silence`); vendors.md §4 lists both.
  set("min_end_of_turn_silence_when_confident", minSilence);
  set("max_turn_silence", Math.max(minSilence, Math.round(options.maxSilenceMs)));
  const terms = splitKeyterms(options.prompt);
  // keyterms_prompt: the URL value is a JSON array (vendors.md §4).
  if (terms.length > 0) set("keyterms_prompt", JSON.stringify(terms));
  for (const [name, value] of Object.entries(settings.params ?? {})) {
    if (!RESERVED_PARAMS.has(name)) set(name, value);
  }
  return url.toString();
}

// ---- server messages (vendors.md §4 "Server messages") ----

interface TurnMessage {
  readonly type: "Turn";
  readonly turn_order?: number;
  readonly turn_is_formatted?: boolean;
  readonly end_of_turn?: boolean;
  readonly transcript?: string;
  readonly end_of_turn_confidence?: number;
  readonly words?: readonly { readonly text?: string; readonly word_is_final?: boolean }[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(message: TurnMessage): string {
  return typeof message.transcript === "string" ? message.transcript.trim() : "";
}

/** The interim text: finalized words plus the trailing word(s) not final yet. */
function partialTextOf(message: TurnMessage): string {
  const trailing: string[] = [];
  if (Array.isArray(message.words)) {
    for (const word of message.words) {
      if (isRecord(word) && word.word_is_final === false && typeof word.text === "string" && word.text !== "") trailing.push(word.text);
    }
  }
  return [textOf(message), ...trailing].filter((p) => p !== "").join(" ");
}

function confidenceOf(message: TurnMessage): { eotConfidence?: number } {
  return typeof message.end_of_turn_confidence === "number" ? { eotConfidence: message.end_of_turn_confidence } : {};
}

/** A failure as the port reports it: the error, and whether reconnecting may help. */
interface Failure {
  readonly error: GatewayError;
  readonly recoverable: boolean;
}

function failure(message: string, recoverable: boolean, cause?: unknown): Failure {
  return { error: new GatewayError("stt", message, { fatal: !recoverable, ...(cause === undefined ? {} : { cause }) }), recoverable };
}

function authFailure(how: string, keyVariable: string, detail: string): Failure {
  return failure(`assemblyai refused the API key (${how}); check ${keyVariable}${detail === "" ? "" : `: ${detail}`}`, false);
}

function upgradeFailure(status: number, detail: string, keyVariable: string): Failure {
  if (status === 401 || status === 403) return authFailure(`HTTP ${status}`, keyVariable, detail);
  const recoverable = status >= 500 || status === 408 || status === 429;
  return failure(`assemblyai refused the connection (HTTP ${status})${detail === "" ? "" : `: ${detail}`}`, recoverable);
}

function closeFailure(code: number, reason: string, serverError: string, cause: Error | undefined, keyVariable: string): Failure {
  const why = [reason, serverError].filter((s) => s !== "").join("; ") || cause?.message || "no reason given";
  if (code === 4001) return authFailure("close 4001", keyVariable, why);
  return failure(`assemblyai connection closed (code ${code}): ${why}`, !FATAL_CLOSE_CODES.has(code), cause);
}

type Phase = "opening" | "open" | "closed";

interface PendingTurn {
  readonly order: number;
  readonly text: string;
  readonly info: { eotConfidence?: number };
  readonly timer: Timer;
}

class AssemblyAiSession implements SttSession {
  readonly endpointing = true;
  #dropped = 0;
  #phase: Phase = "opening";
  #closeRequested = false;
  /** Audio not sent yet because it is under the 50 ms frame minimum. */
  #buffer: Uint8Array = new Uint8Array(0);
  /** The highest turn_order already handed over as a final. */
  #lastFinalOrder = -1;
  /** An ended turn waiting for its formatted copy. */
  #pending: PendingTurn | undefined;
  #closeTimer: Timer | undefined;
  #upgradeStatus: number | undefined;
  #upgradeDetail = "";
  #socketError: Error | undefined;
  #serverError = "";
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;
  #openWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly events: SttEvents,
    private readonly log: SttLog,
    private readonly clock: Clock,
    private readonly keyVariable: string,
    private readonly formatTurns: boolean,
    /** Bytes in 50 ms and in 1000 ms of PCM16 mono at the session's rate. */
    private readonly minChunk: number,
    private readonly maxChunk: number,
    private readonly formatWaitMs: number,
    private readonly closeTimeoutMs: number,
  ) {
    this.#closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));
    ws.binaryType = "nodebuffer";
    ws.on("unexpected-response", (_req, res: IncomingMessage) => this.#onUnexpectedResponse(res));
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onMessage(data, isBinary));
    ws.on("error", (error: Error) => {
      this.#socketError ??= error;
      this.log.debug({ err: messageOf(error) }, "assemblyai socket error");
    });
    ws.on("close", (code: number, reason: Buffer) => this.#onClose(code, reason.toString()));
  }

  get droppedBytes(): number {
    return this.#dropped;
  }

  /** Resolves on `Begin`; rejects on failure, abort or timeout. */
  waitOpen(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        if (this.#openWaiter === undefined) return;
        this.#openWaiter = undefined;
        timer.cancel();
        signal?.removeEventListener("abort", onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const abandon = (error: Error): void => {
        settle(error);
        this.#phase = "closed";
        this.ws.terminate();
      };
      const onAbort = (): void => abandon(signal?.reason instanceof Error ? signal.reason : new Error("assemblyai open aborted"));
      const timer = this.clock.setTimeout(() => abandon(failure(`assemblyai did not begin a session within ${timeoutMs} ms`, true).error), timeoutMs);
      this.#openWaiter = { resolve: () => settle(), reject: settle };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted === true) onAbort();
    });
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#closeRequested || this.#phase !== "open" || pcm.byteLength === 0) return;
    // Frames must be 50–1000 ms (vendors.md §4): buffer up to 50 ms, split anything over 1000 ms.
    let data = this.#buffer.byteLength === 0 ? pcm : concat(this.#buffer, pcm);
    while (data.byteLength >= this.minChunk) {
      const n = Math.min(data.byteLength, this.maxChunk);
      this.#send(data.subarray(0, n));
      data = data.subarray(n);
    }
    this.#buffer = new Uint8Array(data); // a copy: the caller may reuse its buffer
  }

  finalize(): void {
    if (this.#closeRequested || this.#phase !== "open") return;
    this.#flushAudio();
    this.#control({ type: "ForceEndpoint" });
  }

  close(): Promise<void> {
    if (this.#phase === "closed") return this.#closed;
    if (!this.#closeRequested) {
      if (this.ws.readyState === this.ws.OPEN) {
        this.#flushAudio();
        // Terminate: turns in flight arrive, then Termination, then close 1000 (vendors.md §4).
        this.#control({ type: "Terminate" });
        this.#closeTimer = this.clock.setTimeout(() => this.ws.terminate(), this.closeTimeoutMs);
      } else {
        this.ws.terminate();
      }
      this.#closeRequested = true;
    }
    return this.#closed;
  }

  /** Send what is buffered, padded with silence to the 50 ms minimum. */
  #flushAudio(): void {
    if (this.#buffer.byteLength === 0) return;
    const padded = new Uint8Array(this.minChunk);
    padded.set(this.#buffer);
    this.#buffer = new Uint8Array(0);
    this.#send(padded);
  }

  #send(chunk: Uint8Array): void {
    this.#dropped += sendAudioOrDrop(this.ws, chunk, chunk.byteLength);
  }

  // ---- socket events ----

  #onUnexpectedResponse(res: IncomingMessage): void {
    this.#upgradeStatus = res.statusCode ?? 0;
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (body.length < 500) body += chunk;
    });
    res.on("error", () => {});
    res.on("end", () => {
      this.#upgradeDetail = body.slice(0, 500).trim();
      this.ws.terminate();
    });
  }

  #onClose(code: number, reason: string): void {
    const wasPhase = this.#phase;
    this.#phase = "closed";
    this.#closeTimer?.cancel();
    this.#resolveClosed();
    if (wasPhase === "opening") {
      let f: Failure;
      if (this.#upgradeStatus !== undefined) f = upgradeFailure(this.#upgradeStatus, this.#upgradeDetail, this.keyVariable);
      else if (this.#socketError !== undefined && code === 1006) f = failure(`assemblyai connection failed: ${this.#socketError.message}`, true, this.#socketError);
      else f = closeFailure(code, reason, this.#serverError, this.#socketError, this.keyVariable);
      this.#openWaiter?.reject(f.error);
      return;
    }
    if (wasPhase === "closed") return;
    this.#flushPendingTurn();
    if (this.#closeRequested) {
      this.#emit(() => this.events.closed({ expected: true }));
      return;
    }
    const f = closeFailure(code, reason, this.#serverError, this.#socketError, this.keyVariable);
    this.log.warn({ code, reason, err: f.error.message }, "assemblyai connection dropped");
    this.#emit(() => this.events.error(f.error, { recoverable: f.recoverable }));
    this.#emit(() => this.events.closed({ expected: false }));
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary || this.#phase === "closed") return;
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch (error) {
      this.log.warn({ err: messageOf(error) }, "assemblyai sent malformed JSON; ignored");
      return;
    }
    if (!isRecord(message)) {
      this.log.warn({ message }, "assemblyai sent a non-object message; ignored");
      return;
    }
    if (typeof message.error === "string") {
      // Errors come as {"error":…} and/or a close code (vendors.md §4); the close reports it.
      this.#serverError = message.error;
      this.log.warn({ error: message.error }, "assemblyai reported an error");
      return;
    }
    switch (message.type) {
      case "Begin":
        this.log.debug({ id: message.id, expiresAt: message.expires_at }, "assemblyai session began");
        if (this.#phase === "opening" && this.#openWaiter !== undefined) {
          this.#phase = "open";
          this.#openWaiter.resolve();
        }
        break;
      case "Turn":
        if (this.#phase === "open") this.#onTurn(message as unknown as TurnMessage);
        break;
      case "SpeechStarted":
        if (this.#phase === "open") this.#emit(() => this.events.speechStarted());
        break;
      case "Termination":
        this.log.debug({ audioSeconds: message.audio_duration_seconds }, "assemblyai session terminated");
        this.#flushPendingTurn();
        break;
      default:
        this.log.debug({ type: message.type }, "assemblyai message ignored");
    }
  }

  #onTurn(message: TurnMessage): void {
    const order = typeof message.turn_order === "number" ? message.turn_order : Math.max(this.#lastFinalOrder + 1, this.#pending?.order ?? 0);
    if (order <= this.#lastFinalOrder) return; // a late copy of a turn already handed over
    if (this.#pending !== undefined && order > this.#pending.order) this.#flushPendingTurn();
    const info = confidenceOf(message);
    if (message.end_of_turn !== true) {
      const text = partialTextOf(message);
      if (text !== "") this.#emit(() => this.events.partial(text, info));
      return;
    }
    if (this.formatTurns && message.turn_is_formatted !== true) {
      // format_turns: a formatted copy follows; wait for it, but not forever.
      if (this.#pending === undefined) {
        const timer = this.clock.setTimeout(() => this.#flushPendingTurn(), this.formatWaitMs);
        this.#pending = { order, text: textOf(message), info, timer };
      }
      return;
    }
    const fallback = this.#pending;
    this.#pending = undefined;
    fallback?.timer.cancel();
    const text = textOf(message);
    this.#finalTurn(order, text, { ...fallback?.info, ...info });
  }

  #flushPendingTurn(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    pending.timer.cancel();
    this.log.debug({ turnOrder: pending.order }, "assemblyai formatted turn did not come; using the unformatted one");
    this.#finalTurn(pending.order, pending.text, pending.info);
  }

  #finalTurn(order: number, text: string, info: { eotConfidence?: number }): void {
    this.#lastFinalOrder = Math.max(this.#lastFinalOrder, order);
    this.#emit(() => this.events.final(text, { endOfTurn: true, ...info }));
  }

  /** A control message: a text frame, never dropped by the backlog policy. */
  #control(message: { type: string }): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    try {
      this.ws.send(JSON.stringify(message));
    } catch (error) {
      this.log.warn({ err: messageOf(error), type: message.type }, "assemblyai control message not sent");
    }
  }

  /** Call an event handler without letting it throw into the socket's event loop. */
  #emit(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.log.warn({ err: messageOf(error) }, "an STT event handler threw; ignored");
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

/** PCM16 mono bytes in `ms` at `sampleRate` (vendors.md §0: 16 kHz → 640 bytes per 20 ms). */
function pcmBytes(sampleRate: number, ms: number): number {
  return Math.ceil((sampleRate * ms) / 1000) * 2;
}

/**
 * An AssemblyAI Universal Streaming v3 provider. Options: `speechModel` (alias `model`; default
 * universal-streaming-english, or -multilingual for a non-English `language`), `language`,
 * `formatTurns` (default true), `endOfTurnConfidenceThreshold` (default 0.4), `url` (instead of
 * `wss://streaming.assemblyai.com/v3/ws`), `apiKeyEnv`, `params` (more query params). Throws
 * `MissingKeyError` naming the variable when there is no key.
 */
export function assemblyAiStt(descriptor: ProviderDescriptor, env: Env, runtime: AssemblyAiSttOptions = {}): SttProvider {
  const apiKey = apiKeyFor(descriptor, env, ASSEMBLYAI_KEY_VARIABLES);
  const keyVariable = keyVariableOf(descriptor, env, ASSEMBLYAI_KEY_VARIABLES);
  const speechModel = optionString(descriptor, "speechModel") ?? optionString(descriptor, "model");
  const language = optionString(descriptor, "language");
  const formatTurns = optionBoolean(descriptor, "formatTurns") ?? true;
  const eotThreshold = optionNumber(descriptor, "endOfTurnConfidenceThreshold", 0, 1) ?? DEFAULT_EOT_THRESHOLD;
  const base = optionString(descriptor, "url") ?? ASSEMBLYAI_STREAMING_URL;
  if (!/^wss?:\/\//.test(base)) throw new GatewayError("internal", `stt.options.url must be a ws:// or wss:// URL, got "${base}".`, { fatal: true });
  const params = optionParams(descriptor);
  const log: SttLog = runtime.log ?? noopLog;
  const clock = runtime.clock ?? systemClock;
  const connect = runtime.connect ?? ((url: string, options: ClientOptions) => new WebSocket(url, options));

  return {
    kind: "assemblyai",
    async open(options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
      if (options.signal?.aborted === true) {
        throw options.signal.reason instanceof Error ? options.signal.reason : new Error("assemblyai open aborted");
      }
      const model = speechModel ?? defaultSpeechModel(language ?? options.language);
      const url = assemblyAiStreamingUrl(base, { speechModel: model, formatTurns, eotThreshold, params }, options);
      log.debug({ url }, "assemblyai connecting");
      let ws: WebSocket;
      try {
        // The raw key, no scheme word (vendors.md §4).
        ws = connect(url, { headers: { Authorization: apiKey } });
      } catch (error) {
        throw failure(`assemblyai connection failed: ${messageOf(error)}`, false, error).error;
      }
      const session = new AssemblyAiSession(
        ws,
        events,
        log,
        clock,
        keyVariable,
        formatTurns,
        pcmBytes(options.sampleRate, ASSEMBLYAI_MIN_CHUNK_MS),
        pcmBytes(options.sampleRate, ASSEMBLYAI_MAX_CHUNK_MS),
        runtime.formatWaitMs ?? 1000,
        runtime.closeTimeoutMs ?? 3000,
      );
      await session.waitOpen(options.signal, runtime.openTimeoutMs ?? 10_000);
      return session;
    },
  };
}
