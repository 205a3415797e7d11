/**
 * Deepgram streaming STT (`/v1/listen` over WebSocket), per `/work/shared/spec/vendors.md` §3.
 *
 * Wire summary (vendors.md §3):
 * - Connect to `wss://api.deepgram.com/v1/listen?…` with `Authorization: Token <key>`.
 * - Audio: binary frames of raw PCM16 LE (`encoding=linear16`) at the declared `sample_rate`,
 *   nothing wrapping them.
 * - Control (text frames): `KeepAlive` every 3–5 s while no audio flows (after 10 s of neither the
 *   server closes with NET-0001), `Finalize` (flush buffered audio now; results carry
 *   `from_finalize:true`), `CloseStream` (finish, send the last `Results` and `Metadata`, close).
 * - Server: `Results` (`is_final` false = interim, true = a finished segment; `speech_final` = the
 *   endpointer saw a pause), `UtteranceEnd` (a word gap of `utterance_end_ms`), `SpeechStarted`
 *   (needs `vad_events=true`), `Metadata` (end of stream).
 *
 * Mapping onto the port: an interim → `partial(<finals of this utterance> + <interim>)`; each
 * `is_final` segment → `final(segment, {endOfTurn: speech_final || from_finalize})`;
 * `UtteranceEnd` with a turn still open → `final(<unfinalized interim or "">, {endOfTurn:true})`.
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

/** vendors.md §3 "Connection". */
export const DEEPGRAM_LISTEN_URL = "wss://api.deepgram.com/v1/listen";
export const DEEPGRAM_KEY_VARIABLES = ["DEEPGRAM_API_KEY"] as const;
export const DEEPGRAM_DEFAULT_MODEL = "nova-3";

/**
 * `utterance_end_ms` bounds. The minimum (1000 ms) is Deepgram's: interim results come about once
 * a second, and a smaller value is refused at upgrade (HTTP 400). The maximum is this gateway's
 * choice (a user waiting longer than 5 s for a reply is a stall), not a documented vendor limit.
 */
export const DEEPGRAM_UTTERANCE_END_MIN_MS = 1000;
export const DEEPGRAM_UTTERANCE_END_MAX_MS = 5000;

/** Keyterm prompting: at most 100 terms (Deepgram docs, "Keyterm Prompting"). */
const MAX_KEYTERMS = 100;

/** The minimal logger the adapter writes to (a pino logger fits). */
interface SttLog {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const noopLog: SttLog = { debug: () => {}, warn: () => {} };

/** Runtime knobs (not user config): logging, time, timeouts, and a socket factory for tests. */
export interface DeepgramSttOptions {
  /** A pino logger (or anything with `debug`/`warn(obj, msg)`); default: silent. */
  readonly log?: Logger | { debug(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  readonly clock?: Clock;
  /** Send `KeepAlive` after this long without audio (vendors.md §3: every 3–5 s). Default 5000. */
  readonly keepAliveMs?: number;
  /** `open()` fails after this long without an open socket. Default 10000. */
  readonly openTimeoutMs?: number;
  /** After `CloseStream`, wait this long for the server to close before dropping the socket. Default 3000. */
  readonly closeTimeoutMs?: number;
  /** Build the socket (tests inject a subclass, e.g. one with a large `bufferedAmount`). */
  readonly connect?: (url: string, options: ClientOptions) => WebSocket;
}

/** Listen params the adapter sets itself (`options.params` may not override them). */
const RESERVED_PARAMS = new Set(["encoding", "sample_rate", "channels", "interim_results", "multichannel"]);

type ParamValue = string | number | boolean | readonly (string | number | boolean)[];

function optionString(descriptor: ProviderDescriptor, name: string): string | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new GatewayError("internal", `stt.options.${name} must be a non-empty string.`, { fatal: true });
  }
  return value;
}

function optionParams(descriptor: ProviderDescriptor): Readonly<Record<string, ParamValue>> {
  const value = descriptor.options.params;
  if (value === undefined) return {};
  const ok =
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => ["string", "number", "boolean"].includes(typeof v) || (Array.isArray(v) && v.every((x) => ["string", "number", "boolean"].includes(typeof x))));
  if (!ok) throw new GatewayError("internal", "stt.options.params must be an object of string, number or boolean values (or arrays of them).", { fatal: true });
  return value as Record<string, ParamValue>;
}

/** The variable the key came from (for error messages): `options.apiKeyEnv` or the first one set. */
function keyVariableOf(descriptor: ProviderDescriptor, env: Env, variables: readonly string[]): string {
  const named = descriptor.options.apiKeyEnv;
  if (typeof named === "string" && named !== "") return named;
  return variables.find((v) => (env[v] ?? "") !== "") ?? variables[0] ?? "DEEPGRAM_API_KEY";
}

/**
 * Split an `sttPrompt` into keyterms: on commas, semicolons, pipes and newlines (a phrase with
 * spaces stays one term, e.g. "order id"); trimmed, de-duplicated, at most 100.
 */
export function splitKeyterms(prompt: string | undefined): string[] {
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

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The `/v1/listen` URL for a session (vendors.md §3 "Connection"). */
export function deepgramListenUrl(
  base: string,
  settings: { model: string; language?: string | undefined; params?: Readonly<Record<string, ParamValue>> },
  options: Pick<SttOpenOptions, "sampleRate" | "prompt" | "minSilenceMs" | "maxSilenceMs">,
): string {
  const url = new URL(base);
  const q = url.searchParams;
  const set = (name: string, value: string | number | boolean): void => q.set(name, String(value));
  set("model", settings.model);
  set("encoding", "linear16");
  set("sample_rate", Math.round(options.sampleRate));
  set("channels", 1);
  set("interim_results", true);
  // endpointing: ms of silence before `speech_final` (vendor default 10 ms).
  set("endpointing", Math.max(10, Math.round(options.minSilenceMs)));
  // utterance_end_ms needs interim_results=true; 1000 ms is the vendor's floor.
  set("utterance_end_ms", clamp(Math.round(options.maxSilenceMs), DEEPGRAM_UTTERANCE_END_MIN_MS, DEEPGRAM_UTTERANCE_END_MAX_MS));
  set("vad_events", true);
  set("smart_format", true);
  if (settings.language !== undefined) set("language", settings.language);
  // Vocabulary biasing: `keyterm` (repeated) on nova-3; older models take `keywords` (single words).
  const terms = splitKeyterms(options.prompt);
  if (settings.model.startsWith("nova-3")) {
    for (const term of terms) q.append("keyterm", term);
  } else {
    for (const term of terms) if (!/\s/.test(term)) q.append("keywords", term);
  }
  for (const [name, value] of Object.entries(settings.params ?? {})) {
    if (RESERVED_PARAMS.has(name)) continue;
    q.delete(name);
    for (const v of Array.isArray(value) ? (value as readonly (string | number | boolean)[]) : [value as string | number | boolean]) q.append(name, String(v));
  }
  return url.toString();
}

// ---- server messages (vendors.md §3 "Server messages") ----

interface ResultsMessage {
  readonly type: "Results";
  readonly is_final?: boolean;
  readonly speech_final?: boolean;
  readonly from_finalize?: boolean;
  readonly channel?: { readonly alternatives?: readonly { readonly transcript?: string }[] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function transcriptOf(message: ResultsMessage): string {
  const text = message.channel?.alternatives?.[0]?.transcript;
  return typeof text === "string" ? text.trim() : "";
}

function joinText(...parts: string[]): string {
  return parts.filter((p) => p !== "").join(" ");
}

/** A failure as the port reports it: the error, and whether reconnecting may help. */
interface Failure {
  readonly error: GatewayError;
  readonly recoverable: boolean;
}

function failure(message: string, recoverable: boolean, cause?: unknown): Failure {
  return { error: new GatewayError("stt", message, { fatal: !recoverable, ...(cause === undefined ? {} : { cause }) }), recoverable };
}

/** An HTTP status at upgrade → failure. 401/403 name the key variable; 4xx other than 408/429 are not retried. */
function upgradeFailure(status: number, detail: string, keyVariable: string): Failure {
  const suffix = detail === "" ? "" : `: ${detail}`;
  if (status === 401 || status === 403) {
    return failure(`deepgram refused the API key (HTTP ${status}); check ${keyVariable}${suffix}`, false);
  }
  const recoverable = status >= 500 || status === 408 || status === 429;
  return failure(`deepgram refused the connection (HTTP ${status})${suffix}`, recoverable);
}

/**
 * A server close → failure. Deepgram closes with 1008 for audio it cannot decode (retrying the
 * same audio will not help) and 1011 for its own errors and timeouts such as NET-0001.
 */
function closeFailure(code: number, reason: string, cause: Error | undefined): Failure {
  const why = reason !== "" ? reason : cause !== undefined ? cause.message : "no reason given";
  return failure(`deepgram connection closed unexpectedly (code ${code}): ${why}`, code !== 1008, cause);
}

type Phase = "opening" | "open" | "closed";

class DeepgramSession implements SttSession {
  readonly endpointing = true;
  #dropped = 0;
  #phase: Phase = "opening";
  #closeRequested = false;
  /** Finalized segments of the current utterance, and the latest interim after them. */
  #finals: string[] = [];
  #interim = "";
  /** Something was heard since the last end of turn. */
  #turnOpen = false;
  #lastActivity: number;
  #keepAliveTimer: Timer | undefined;
  #closeTimer: Timer | undefined;
  #upgradeStatus: number | undefined;
  #upgradeDetail = "";
  #socketError: Error | undefined;
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;
  #openWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly events: SttEvents,
    private readonly log: SttLog,
    private readonly clock: Clock,
    private readonly keyVariable: string,
    private readonly keepAliveMs: number,
    private readonly closeTimeoutMs: number,
  ) {
    this.#lastActivity = clock.now();
    this.#closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));
    ws.binaryType = "nodebuffer";
    ws.on("upgrade", (res: IncomingMessage) => this.log.debug({ requestId: res.headers["dg-request-id"] }, "deepgram connected"));
    ws.on("unexpected-response", (_req, res: IncomingMessage) => this.#onUnexpectedResponse(res));
    ws.on("open", () => this.#onOpen());
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onMessage(data, isBinary));
    ws.on("error", (error: Error) => {
      this.#socketError ??= error;
      this.log.debug({ err: messageOf(error) }, "deepgram socket error");
    });
    ws.on("close", (code: number, reason: Buffer) => this.#onClose(code, reason.toString()));
  }

  get droppedBytes(): number {
    return this.#dropped;
  }

  /** Resolves when the socket is open; rejects on failure, abort or timeout. */
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
      const onAbort = (): void => abandon(signal?.reason instanceof Error ? signal.reason : new Error("deepgram open aborted"));
      const timer = this.clock.setTimeout(() => abandon(failure(`deepgram did not open within ${timeoutMs} ms`, true).error), timeoutMs);
      this.#openWaiter = { resolve: () => settle(), reject: settle };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted === true) onAbort();
    });
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#closeRequested || this.#phase === "closed" || pcm.byteLength === 0) return;
    const dropped = sendAudioOrDrop(this.ws, pcm, pcm.byteLength);
    this.#dropped += dropped;
    if (dropped === 0) this.#lastActivity = this.clock.now();
  }

  finalize(): void {
    this.#control({ type: "Finalize" });
  }

  close(): Promise<void> {
    if (this.#phase === "closed") return this.#closed;
    if (!this.#closeRequested) {
      this.#closeRequested = true;
      this.#stopKeepAlive();
      // CloseStream: the server flushes, sends the last Results and Metadata, then closes (§3).
      if (this.ws.readyState === this.ws.OPEN) {
        this.#control({ type: "CloseStream" });
        this.#closeTimer = this.clock.setTimeout(() => this.ws.terminate(), this.closeTimeoutMs);
      } else {
        this.ws.terminate();
      }
    }
    return this.#closed;
  }

  // ---- socket events ----

  #onUnexpectedResponse(res: IncomingMessage): void {
    this.#upgradeStatus = res.statusCode ?? 0;
    const header = res.headers["dg-error"];
    this.#upgradeDetail = typeof header === "string" ? header : "";
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (body.length < 500) body += chunk;
    });
    res.on("error", () => {});
    res.on("end", () => {
      if (this.#upgradeDetail === "") this.#upgradeDetail = body.slice(0, 500).trim();
      this.ws.terminate();
    });
  }

  #onOpen(): void {
    if (this.#openWaiter === undefined) return; // abandoned (aborted or timed out)
    this.#phase = "open";
    this.#lastActivity = this.clock.now();
    this.#armKeepAlive(this.keepAliveMs);
    this.#openWaiter.resolve();
  }

  #onClose(code: number, reason: string): void {
    const wasPhase = this.#phase;
    this.#phase = "closed";
    this.#stopKeepAlive();
    this.#closeTimer?.cancel();
    this.#resolveClosed();
    if (wasPhase === "opening") {
      const f =
        this.#upgradeStatus !== undefined
          ? upgradeFailure(this.#upgradeStatus, this.#upgradeDetail, this.keyVariable)
          : failure(`deepgram connection failed: ${this.#socketError?.message ?? `closed with code ${code}`}`, true, this.#socketError);
      this.#openWaiter?.reject(f.error);
      return;
    }
    if (wasPhase === "closed") return;
    if (this.#closeRequested) {
      this.#emit(() => this.events.closed({ expected: true }));
      return;
    }
    const f = closeFailure(code, reason, this.#socketError);
    this.log.warn({ code, reason, err: f.error.message }, "deepgram connection dropped");
    this.#emit(() => this.events.error(f.error, { recoverable: f.recoverable }));
    this.#emit(() => this.events.closed({ expected: false }));
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary || this.#phase === "closed") return;
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch (error) {
      this.log.warn({ err: messageOf(error) }, "deepgram sent malformed JSON; ignored");
      return;
    }
    if (!isRecord(message) || typeof message.type !== "string") {
      this.log.warn({ message }, "deepgram sent a message without a type; ignored");
      return;
    }
    switch (message.type) {
      case "Results":
        this.#onResults(message as unknown as ResultsMessage);
        break;
      case "UtteranceEnd":
        this.#onUtteranceEnd();
        break;
      case "SpeechStarted":
        this.#emit(() => this.events.speechStarted());
        break;
      case "Metadata":
        this.log.debug({ requestId: message.request_id, duration: message.duration }, "deepgram metadata");
        break;
      case "Error":
        this.log.warn({ message }, "deepgram reported an error");
        break;
      default:
        this.log.debug({ type: message.type }, "deepgram message ignored");
    }
  }

  #onResults(message: ResultsMessage): void {
    const text = transcriptOf(message);
    if (message.is_final !== true) {
      this.#interim = text;
      if (text !== "") {
        this.#turnOpen = true;
        const partial = joinText(...this.#finals, text);
        this.#emit(() => this.events.partial(partial, {}));
      }
      return;
    }
    // A finished segment. `speech_final` is the endpointer's pause; a result produced by our
    // Finalize (`from_finalize`) also ends the turn, since the loop asked for it.
    this.#interim = "";
    const endOfTurn = message.speech_final === true || message.from_finalize === true;
    if (text !== "") {
      this.#finals.push(text);
      this.#turnOpen = true;
    }
    if (text === "" && !(endOfTurn && this.#turnOpen)) return; // silence: Deepgram sends empty finals
    if (endOfTurn) this.#endTurn();
    this.#emit(() => this.events.final(text, { endOfTurn }));
  }

  #onUtteranceEnd(): void {
    // After a speech_final the turn is already closed: Deepgram says to ignore this one.
    if (!this.#turnOpen) return;
    const text = this.#interim;
    this.#endTurn();
    this.#emit(() => this.events.final(text, { endOfTurn: true }));
  }

  #endTurn(): void {
    this.#finals = [];
    this.#interim = "";
    this.#turnOpen = false;
  }

  // ---- keepalive (vendors.md §3: KeepAlive every 3–5 s while no audio flows) ----

  #armKeepAlive(delay: number): void {
    this.#keepAliveTimer = this.clock.setTimeout(() => this.#onKeepAliveTimer(), Math.max(1, delay));
  }

  #onKeepAliveTimer(): void {
    if (this.#phase !== "open" || this.#closeRequested) return;
    const idle = this.clock.now() - this.#lastActivity;
    if (idle >= this.keepAliveMs) {
      this.#control({ type: "KeepAlive" });
      this.#lastActivity = this.clock.now();
      this.#armKeepAlive(this.keepAliveMs);
    } else {
      this.#armKeepAlive(this.keepAliveMs - idle);
    }
  }

  #stopKeepAlive(): void {
    this.#keepAliveTimer?.cancel();
    this.#keepAliveTimer = undefined;
  }

  /** A control message: a text frame, never dropped by the backlog policy. */
  #control(message: { type: string }): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    try {
      this.ws.send(JSON.stringify(message));
    } catch (error) {
      this.log.warn({ err: messageOf(error), type: message.type }, "deepgram control message not sent");
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

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

/**
 * A Deepgram STT provider. Options: `model` (default "nova-3"), `language`, `url` (instead of
 * `wss://api.deepgram.com/v1/listen`), `apiKeyEnv`, `params` (more listen query params, e.g.
 * `{numerals:true}`; the audio-format ones are the adapter's). Throws `MissingKeyError` naming
 * the variable when there is no key.
 */
export function deepgramStt(descriptor: ProviderDescriptor, env: Env, runtime: DeepgramSttOptions = {}): SttProvider {
  const apiKey = apiKeyFor(descriptor, env, DEEPGRAM_KEY_VARIABLES);
  const keyVariable = keyVariableOf(descriptor, env, DEEPGRAM_KEY_VARIABLES);
  const model = optionString(descriptor, "model") ?? DEEPGRAM_DEFAULT_MODEL;
  const language = optionString(descriptor, "language");
  const base = optionString(descriptor, "url") ?? DEEPGRAM_LISTEN_URL;
  if (!/^wss?:\/\//.test(base)) throw new GatewayError("internal", `stt.options.url must be a ws:// or wss:// URL, got "${base}".`, { fatal: true });
  const params = optionParams(descriptor);
  const log: SttLog = runtime.log ?? noopLog;
  const clock = runtime.clock ?? systemClock;
  const connect = runtime.connect ?? ((url: string, options: ClientOptions) => new WebSocket(url, options));

  return {
    kind: "deepgram",
    async open(options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
      if (options.signal?.aborted === true) {
        throw options.signal.reason instanceof Error ? options.signal.reason : new Error("deepgram open aborted");
      }
      const url = deepgramListenUrl(base, { model, language: language ?? options.language, params }, options);
      log.debug({ url }, "deepgram connecting");
      let ws: WebSocket;
      try {
        ws = connect(url, { headers: { Authorization: `Token ${apiKey}` } });
      } catch (error) {
        throw failure(`deepgram connection failed: ${messageOf(error)}`, false, error).error;
      }
      const session = new DeepgramSession(ws, events, log, clock, keyVariable, runtime.keepAliveMs ?? 5000, runtime.closeTimeoutMs ?? 3000);
      await session.waitOpen(options.signal, runtime.openTimeoutMs ?? 10_000);
      return session;
    },
  };
}
