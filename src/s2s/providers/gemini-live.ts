/**
 * Google Gemini Live (`BidiGenerateContent` over WebSocket) as an `S2sProvider`, per
 * docs/vendors.md (Gemini Live), which links Google's Live API reference, and the official SDK,
 * `@google/genai` 2.32.0 (`dist/node/index.mjs` `Live.connect`, `dist/genai.d.ts`).
 *
 * Wire summary (docs/vendors.md (Gemini Live)):
 * - Connect to `GEMINI_LIVE_URL` (`…/ws/google.ai.generativelanguage.v1beta.GenerativeService.
 *   BidiGenerateContent`, as the SDK builds it) with `?key=<API_KEY>` (the key is a query parameter).
 * - → `setup` must be the first message, once per socket; ← `setupComplete`, and nothing else is
 *   sent until it arrives. The configuration cannot change after `setup`.
 * - → `realtimeInput.audio {data: b64, mimeType: "audio/pcm;rate=16000"}` (PCM16 LE, 16 kHz);
 *   → `clientContent {turns, turnComplete}` (appended to the history; it interrupts any generation
 *   in progress); → `toolResponse {functionResponses:[{id, name, response:{output}}]}`.
 * - ← `serverContent` (`modelTurn.parts[].inlineData` 24 kHz PCM16, `inputTranscription`,
 *   `outputTranscription`, `interrupted`, `generationComplete`, `turnComplete`), `toolCall`,
 *   `toolCallCancellation`, `usageMetadata`, `goAway {timeLeft}`, `sessionResumptionUpdate`,
 *   `voiceActivity` (preview, allowlisted). Frames may be text or binary (UTF-8 JSON). Errors
 *   come as a close code and reason.
 *
 * Mapping onto the port, and the gaps (Gemini has fewer knobs than the port):
 * - **Responses.** Gemini names no responses: the adapter synthesizes `gemini_<n>`. A response
 *   starts with the first model output (`modelTurn`, `outputTranscription` or `toolCall`) while
 *   none is in flight; it ends on `turnComplete` (completed), `interrupted` (cancelled), or a
 *   `toolCall` message (completed: Gemini holds the turn open until the `toolResponse`, and the
 *   port answers a response's calls once the response is done, so the batch's response ends
 *   there; the model's continuation after the `toolResponse` is a new response).
 * - **Out of band.** Gemini has no out-of-band responses (OpenAI's `conversation:"none"`):
 *   `createResponse` sends a `clientContent` user turn with the instructions and
 *   `turnComplete:true`, and the next response is reported with `outOfBand: true`. Gemini records
 *   both the instruction turn and the spoken line in its context, and the model keeps its tools.
 * - **Cancel.** There is no cancel message: `cancelResponse` mutes the response locally (no more
 *   audio, transcript or speech of it is forwarded; its tool calls still are, since the model
 *   waits for their results) and it ends as `cancelled` when Gemini ends the turn. A real barge-in
 *   is Gemini's own (`activityHandling: START_OF_ACTIVITY_INTERRUPTS` → `interrupted`).
 * - **Truncate.** Not supported (no such message): a no-op with a debug log; Gemini's context keeps
 *   what the model generated, heard or not.
 * - **Tool results.** `respond` cannot be honoured either way: Gemini continues on its own after a
 *   `toolResponse` (new `serverContent` follows) and has no "do not respond".
 * - **Speech edges.** The service's activity detection is reported only by `voiceActivity`
 *   (`ACTIVITY_START`/`ACTIVITY_END`; preview and allowlisted, docs/vendors.md (Gemini Live)),
 *   used when it comes.
 *   Otherwise `speechStarted` is emitted when `interrupted` arrives (Gemini's VAD heard a barge-in)
 *   or when input transcription starts while no response is in flight, and there is no end-of-
 *   speech signal at all in automatic activity detection: the model starting to answer is the
 *   first sign the caller stopped, so `speechStopped` is emitted then, *after* `responseStarted`.
 *   The runner times a turn only from an end of speech reported before the response started, so
 *   such a turn carries no `endpointMs`/`voiceToVoiceMs` rather than a fabricated ~0.
 * - **The caller's transcript.** Pieces are joined as sent, with runs of whitespace collapsed:
 *   they carry their own spacing and the service splits mid-word (js-genai's recorded
 *   transcription pieces: "We", " could talk about … you", "'d like"), so a separator of ours
 *   would break words; Google's ADK likewise joins input pieces with no separator (`+=`). 2.5-family models never set `inputTranscription.finished`, so an utterance also
 *   ends at its boundary, as Google's ADK does (`gemini_llm_connection.py`: "The Gemini API or
 *   Vertex AI might not send a transcription finished signal. Instead, we rely on
 *   generation_complete, turn_complete or interrupted signals"): `interrupted` (the caller began a
 *   new utterance over the model), `generationComplete`, and a `turnComplete` — except the one
 *   that closes an interrupted turn, which comes while the barge-in utterance is being spoken.
 *   Not at the model's first output: transcription is not ordered relative to `modelTurn`, so the
 *   utterance's last pieces may still follow it.
 * - **Tool choice / transcription prompt.** `setup` has no tool choice and no transcription
 *   prompt: `toolChoice:"none"` omits the tools, other choices behave as "auto", and
 *   `transcriptionPrompt` is ignored (each with a debug log).
 *
 * Resilience: a transient close (or a `goAway`, proactively: see `#maybeSwitch`) reconnects with
 * backoff on the injected clock, bounded by `reconnectDelaysMs`. Each socket gets exactly one
 * `setup`. When the server gave a `sessionResumptionUpdate` handle the new `setup` resumes with
 * the newest one (docs/vendors.md (Gemini Live), "Resumption and goAway") and the server
 * restores the conversation; otherwise the history (`options.history()`) is replayed as one
 * `clientContent` with `turnComplete:false`. Then every request the model has not acted on goes
 * out once on the new socket, in order: tool results (undelivered, or sent while reconnecting) and
 * `createResponse`/`sendText` turns that got no response yet (a typed turn is in the replayed
 * history already, so only its `turnComplete` is re-sent). Mic audio while no socket is ready is
 * dropped (it is real time). Past the budget, or on a close that a retry cannot fix (1002, 1003,
 * 1007, 1008; an HTTP 4xx other than 408/429 at upgrade): one fatal error and `closed({expected:false})`.
 */
import { WebSocket, type RawData } from "ws";
import type { JSONSchema7, JSONSchema7Definition, JSONSchema7TypeName } from "json-schema";
import { systemClock, type Clock, type Timer } from "../../clock.js";
import { GatewayError, MissingKeyError, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import type { S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sProvider, S2sSession, S2sSetup, S2sTool } from "../s2s-port.js";
import { shieldEvents } from "../shield-events.js";

/**
 * The Gemini API version of the Live endpoint. `@google/genai` 2.32.0, dist/node/index.mjs:
 * `const GOOGLE_AI_API_DEFAULT_VERSION = 'v1beta';` (v1alpha only for ephemeral tokens, not used here).
 */
export const GEMINI_LIVE_API_VERSION = "v1beta";
/**
 * The Live endpoint as the SDK builds it (`Live.connect`, API-key path):
 * `${websocketBaseUrl}/ws/google.ai.generativelanguage.${apiVersion}.GenerativeService.${method}?${keyName}=${apiKey}`
 * with `method = 'BidiGenerateContent'`, `keyName = 'key'`, base `https://generativelanguage.googleapis.com/`
 * turned into `wss:`. The key is added per socket (`#dial`). Also docs/vendors.md (Gemini Live), "Endpoint".
 */
export const GEMINI_LIVE_URL = `wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.${GEMINI_LIVE_API_VERSION}.GenerativeService.BidiGenerateContent`;
/** docs/vendors.md (Gemini Live), "Setup": `model` is `models/<id>`. */
export const GEMINI_LIVE_DEFAULT_MODEL = "models/gemini-live-2.5-flash-preview";
/**
 * Where the key is read from, in this order; the first set to a non-empty value wins
 * (`options.apiKeyEnv` replaces the list). The SDK's order: `getApiKeyFromEnv()` returns
 * `envGoogleApiKey || envGeminiApiKey` and warns "Both GOOGLE_API_KEY and GEMINI_API_KEY are set.
 * Using GOOGLE_API_KEY." (dist/node/index.mjs).
 */
export const GEMINI_KEY_VARIABLES = ["GOOGLE_API_KEY", "GEMINI_API_KEY"] as const;
/** docs/vendors.md (Gemini Live), "Audio": input PCM16 at 16 kHz (stated in `mimeType`), output PCM16 at 24 kHz. */
export const GEMINI_INPUT_RATE = 16_000;
export const GEMINI_OUTPUT_RATE = 24_000;
const INPUT_MIME = `audio/pcm;rate=${GEMINI_INPUT_RATE}`;

/** Wait before each reconnect attempt (ms); the list's length is the budget. */
export const GEMINI_DEFAULT_RECONNECT_DELAYS_MS: readonly number[] = [250, 1000, 3000];
/** Mic audio is dropped while the socket's send backlog is above this (bytes). */
const MAX_BACKLOG_BYTES = 1024 * 1024;
/** Switch sockets this long before a `goAway`'s `timeLeft` runs out, even mid-response. */
const GOAWAY_MARGIN_MS = 1000;
/**
 * After a `goAway`, how long a switch waits (ms, from the end of the last turn) for the
 * `sessionResumptionUpdate` that follows that turn before it resumes from the newest handle it
 * has. The service sends it in a message of its own right after `turnComplete`, so this bounds a
 * missing one, never a normal exchange; the `goAway` deadline bounds it as well.
 */
export const GEMINI_RESUMPTION_WAIT_MS = 2000;
/** Close codes a retry cannot fix: protocol error, unsupported data, invalid payload (a bad setup), policy (key, quota). */
const FATAL_CLOSE_CODES = new Set([1002, 1003, 1007, 1008]);

/** The part of a pino logger the adapter uses. */
export interface GeminiLiveLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Runtime knobs (not user config). */
export interface GeminiLiveOptions {
  readonly log?: Logger | GeminiLiveLog;
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; its length is the budget. Default [250, 1000, 3000]. */
  readonly reconnectDelaysMs?: readonly number[];
  /** `open()` and each reconnect fail after this long without `setupComplete`. Default 10 000. */
  readonly openTimeoutMs?: number;
  /** After `close()`, wait this long for the server's close before dropping the socket. Default 2000. */
  readonly closeTimeoutMs?: number;
}

/** Where keys come from: the process environment, or a test's. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The descriptor's options (`s2s.options`), validated. */
export interface GeminiLiveSettings {
  readonly url: string;
  readonly apiKey: string;
  readonly model: string;
  readonly voice?: string | undefined;
  readonly language?: string | undefined;
}

const NO_LOG: GeminiLiveLog = { debug: () => undefined, warn: () => undefined };

/** Read `s2s.options` (`model`, `voice`, `language`, `url`, `apiKeyEnv`) and the key; throws a fatal error at construction. */
export function geminiLiveSettings(descriptor: ProviderDescriptor, env: Env): GeminiLiveSettings {
  const string = (name: string): string | undefined => {
    const value = descriptor.options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") {
      throw new GatewayError("internal", `s2s.options.${name} must be a non-empty string.`, { fatal: true });
    }
    return value;
  };
  const keyEnv = string("apiKeyEnv");
  const variables = keyEnv === undefined ? GEMINI_KEY_VARIABLES : [keyEnv];
  const apiKey = variables.map((name) => env[name]).find((value) => value !== undefined && value !== "");
  if (apiKey === undefined) throw new MissingKeyError(descriptor.kind, variables[0] ?? "GOOGLE_API_KEY");
  const url = string("url") ?? GEMINI_LIVE_URL;
  if (!/^wss?:\/\//.test(url)) throw new GatewayError("internal", `s2s.options.url must be a ws:// or wss:// URL, got "${url}".`, { fatal: true });
  const model = string("model") ?? GEMINI_LIVE_DEFAULT_MODEL;
  return { url, apiKey, model: model.startsWith("models/") ? model : `models/${model}`, voice: string("voice"), language: string("language") };
}

/** The Gemini Live provider (kind "gemini-live"). Throws `MissingKeyError` (naming GOOGLE_API_KEY) when no key is set. */
export function geminiLive(descriptor: ProviderDescriptor, env: Env, options: GeminiLiveOptions = {}): S2sProvider {
  const settings = geminiLiveSettings(descriptor, env);
  const runtime: Runtime = {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    reconnectDelaysMs: options.reconnectDelaysMs ?? GEMINI_DEFAULT_RECONNECT_DELAYS_MS,
    openTimeoutMs: options.openTimeoutMs ?? 10_000,
    closeTimeoutMs: options.closeTimeoutMs ?? 2000,
  };
  return {
    kind: "gemini-live",
    // Gemini Live takes PCM16 only (16 kHz in, 24 kHz out): a phone call is decoded at the edge.
    audioFormats: ["pcm16"],
    open: (open, events) => GeminiLiveSession.open(settings, runtime, open, events),
  };
}

// ---- setup (docs/vendors.md (Gemini Live), "Setup": the first message, once per socket) ----

/** The `setup` message for one socket; `handle` resumes a session (`sessionResumption.handle`). */
export function geminiSetupMessage(settings: GeminiLiveSettings, setup: S2sSetup, handle?: string, log: GeminiLiveLog = NO_LOG): object {
  const speechConfig: Record<string, unknown> = {};
  if (settings.voice !== undefined) speechConfig.voiceConfig = { prebuiltVoiceConfig: { voiceName: settings.voice } };
  if (settings.language !== undefined) speechConfig.languageCode = settings.language;
  if (typeof setup.toolChoice !== "string" || setup.toolChoice === "required") {
    log.debug({ toolChoice: setup.toolChoice }, "gemini-live: setup has no tool choice; the model chooses (auto)");
  }
  if (setup.transcriptionPrompt !== undefined) log.debug({}, "gemini-live: input transcription takes no prompt; transcriptionPrompt ignored");
  const withTools = setup.tools.length > 0 && setup.toolChoice !== "none";
  return {
    setup: {
      model: settings.model,
      generationConfig: {
        responseModalities: ["AUDIO"],
        ...(Object.keys(speechConfig).length > 0 ? { speechConfig } : {}),
      },
      systemInstruction: { parts: [{ text: setup.instructions }] },
      ...(withTools ? { tools: [{ functionDeclarations: setup.tools.map(functionDeclaration) }] } : {}),
      realtimeInputConfig: {
        automaticActivityDetection: { disabled: false },
        activityHandling: setup.interruptResponse ? "START_OF_ACTIVITY_INTERRUPTS" : "NO_INTERRUPTION",
      },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      // `{}` asks for `sessionResumptionUpdate` handles; a handle resumes (docs/vendors.md (Gemini Live)).
      sessionResumption: handle === undefined ? {} : { handle },
    },
  };
}

function functionDeclaration(tool: S2sTool): object {
  const parameters = toGeminiSchema(tool.parameters);
  // Gemini refuses an OBJECT with no properties: a tool without parameters declares none.
  const empty = parameters.type === "OBJECT" && parameters.properties === undefined;
  return { name: tool.name, description: tool.description, ...(empty ? {} : { parameters }) };
}

/** A Gemini `Schema` (an OpenAPI 3.0 subset with upper-case type names, docs/vendors.md (Gemini Live)). */
export interface GeminiSchema {
  type?: string;
  [key: string]: unknown;
}

const COPIED_KEYWORDS = ["title", "description", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "default"] as const;
const FORMATS = new Set(["enum", "date-time", "float", "double", "int32", "int64"]);

/**
 * JSON Schema → Gemini `Schema`: type names upper case, a `null` type becomes `nullable`, `const`
 * and string `enum`s become `enum`, `oneOf` becomes `anyOf`, `allOf` is merged, and keywords
 * Gemini does not know (`$schema`, `additionalProperties`, `$ref`, …) are dropped. Non-string
 * enums (Gemini's `enum` is for strings) are written into the description.
 */
export function toGeminiSchema(definition: JSONSchema7Definition): GeminiSchema {
  if (typeof definition === "boolean") return { type: "STRING" };
  const schema = definition.allOf === undefined ? definition : mergeAllOf(definition);
  const out: GeminiSchema = {};
  for (const key of COPIED_KEYWORDS) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.format !== undefined && FORMATS.has(schema.format)) out.format = schema.format;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) out.example = schema.examples[0];

  const types: JSONSchema7TypeName[] = schema.type === undefined ? [] : Array.isArray(schema.type) ? [...schema.type] : [schema.type];
  const values = schema.const !== undefined ? [schema.const] : schema.enum;
  if (types.includes("null") || values?.includes(null) === true) out.nullable = true;
  const concrete = types.filter((t) => t !== "null");
  if (concrete.length > 1) {
    out.anyOf = concrete.map((t) => toGeminiSchema({ ...schema, type: t, description: undefined }));
    return out;
  }
  const type = concrete[0] ?? (schema.properties !== undefined ? "object" : schema.items !== undefined ? "array" : undefined);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (type === undefined && alternatives !== undefined) {
    out.anyOf = alternatives.map(toGeminiSchema);
    return out;
  }
  out.type = (type ?? "string").toUpperCase();

  const listed = values?.filter((v) => v !== null);
  if (listed !== undefined && listed.length > 0) {
    if (listed.every((v) => typeof v === "string")) {
      out.type = "STRING";
      out.enum = listed;
    } else {
      const note = `One of: ${listed.map((v) => JSON.stringify(v)).join(", ")}.`;
      out.description = typeof out.description === "string" ? `${out.description} ${note}` : note;
    }
  }
  const properties = schema.properties ?? {};
  if (out.type === "OBJECT" && Object.keys(properties).length > 0) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, toGeminiSchema(s)]));
    const required = (schema.required ?? []).filter((name) => name in properties);
    if (required.length > 0) out.required = required;
  }
  if (out.type === "ARRAY" && schema.items !== undefined) {
    out.items = Array.isArray(schema.items) ? { anyOf: schema.items.map(toGeminiSchema) } : toGeminiSchema(schema.items);
  }
  return out;
}

function mergeAllOf(schema: JSONSchema7): JSONSchema7 {
  const { allOf = [], ...rest } = schema;
  const merged: JSONSchema7 = { ...rest };
  for (const part of allOf) {
    if (typeof part === "boolean") continue;
    const flat = part.allOf === undefined ? part : mergeAllOf(part);
    for (const [key, value] of Object.entries(flat) as [keyof JSONSchema7, unknown][]) {
      if (key === "properties") merged.properties = { ...merged.properties, ...flat.properties };
      else if (key === "required") merged.required = [...new Set([...(merged.required ?? []), ...(flat.required ?? [])])];
      else if (merged[key] === undefined) (merged as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

/** History → `clientContent` turns (Gemini's roles are `user` and `model`). */
export function historyTurns(history: readonly S2sHistoryItem[]): object[] {
  return history.map((item) => ({ role: item.role === "assistant" ? "model" : "user", parts: [{ text: item.text }] }));
}

// ---- the session ----

interface Runtime {
  readonly log: GeminiLiveLog;
  readonly clock: Clock;
  readonly reconnectDelaysMs: readonly number[];
  readonly openTimeoutMs: number;
  readonly closeTimeoutMs: number;
}

/** One socket. `ready` after `setupComplete`; `retired` once the session stopped listening to it. */
interface Link {
  readonly ws: WebSocket;
  readonly id: number;
  readonly resumed: boolean;
  ready: boolean;
  retired: boolean;
  /** The service sent a resumable handle on this socket (it sends one after each turn). */
  sentHandle: boolean;
  httpStatus?: number;
}

/** A failed dial: the error, and whether another attempt may help. */
class DialFailure extends Error {
  constructor(
    readonly error: Error,
    readonly transient: boolean,
  ) {
    super(error.message);
  }
}

/** A synthesized response (Gemini has no response ids). */
interface Turn {
  readonly id: string;
  readonly outOfBand: boolean;
  /** `cancelResponse` was called: nothing more of it is forwarded but its tool calls. */
  muted: boolean;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

interface FunctionResponse {
  id?: string;
  name: string;
  response: { output: string };
}

/**
 * A request the model has not acted on yet, re-sent once on each new socket until it does: a
 * `toolResponse` (acted on when the model next outputs on the socket it went out on) or a
 * `clientContent` asking for a response (`createResponse`, `sendText`; acted on when a response
 * starts, oldest first).
 */
type Pending =
  | { readonly kind: "tools"; readonly message: object; sentOn: Link | undefined }
  | { readonly kind: "ask"; readonly message: object; readonly outOfBand: boolean; readonly typed: boolean; sentOn: Link | undefined };

type State = "open" | "reconnecting" | "closing" | "closed";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8");
}

/** A proto3 JSON duration (`"5s"`, `"1.5s"`) in ms. */
function durationMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match?.[1] === undefined ? undefined : Math.round(Number(match[1]) * 1000);
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

class GeminiLiveSession implements S2sSession {
  readonly audioFormat = "pcm16";
  readonly inputSampleRate = GEMINI_INPUT_RATE;
  readonly outputSampleRate = GEMINI_OUTPUT_RATE;
  readonly #events: S2sEvents;
  #state: State = "open";
  #link: Link | undefined;
  #links = 0;
  /** Aborted by `close()`: stops a reconnect's wait or dial. */
  readonly #stop = new AbortController();
  #handle: string | undefined;
  /** `#handle` came after the last turn ended: resuming with it loses nothing the service did. */
  #handleCurrent = false;
  #turn: Turn | undefined;
  #responses = 0;
  readonly #callNames = new Map<string, { name: string; wireId: string | undefined }>();
  #calls = 0;
  #pending: Pending[] = [];
  /** The caller's utterance so far: transcription pieces as sent (they carry their own spacing). */
  #userText = "";
  #userSpeaking = false;
  /** `interrupted` came; the `turnComplete` that closes that turn has not. */
  #closingInterrupted = false;
  /** A `toolCall` ended the last turn and the model has not continued yet (not resumable meanwhile). */
  #toolRound = false;
  #draining: Link | undefined;
  /** The `goAway` deadline: switch then, even mid-response. */
  #drainTimer: Timer | undefined;
  /** Bounds the wait for the handle that follows the last turn (`GEMINI_RESUMPTION_WAIT_MS`). */
  #handleWait: Timer | undefined;
  #droppedAudio = 0;
  #warnedRate = false;
  #closing: Promise<void> | undefined;

  private constructor(
    private readonly settings: GeminiLiveSettings,
    private readonly runtime: Runtime,
    private readonly options: S2sOpenOptions,
    events: S2sEvents,
  ) {
    this.#events = shieldEvents(events, (event, error) => runtime.log.warn({ err: messageOf(error), event }, "an s2s event handler threw; ignored"));
  }

  static async open(settings: GeminiLiveSettings, runtime: Runtime, options: S2sOpenOptions, events: S2sEvents): Promise<S2sSession> {
    const { signal } = options;
    if (signal?.aborted === true) throw abortReason(signal);
    const session = new GeminiLiveSession(settings, runtime, options, events);
    try {
      await session.#dial(signal);
    } catch (error) {
      session.#state = "closed";
      throw error instanceof DialFailure ? error.error : error;
    }
    return session;
  }

  // ---- the port ----

  sendAudio(pcm: Uint8Array): void {
    const link = this.#link;
    if (this.#state !== "open" || link?.ready !== true || link.ws.readyState !== WebSocket.OPEN || link.ws.bufferedAmount > MAX_BACKLOG_BYTES) {
      this.#droppedAudio += pcm.byteLength; // real time: never queued (logged on the next reconnect)
      return;
    }
    const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString("base64");
    this.#send(link, { realtimeInput: { audio: { data, mimeType: INPUT_MIME } } });
  }

  createResponse(options: { readonly instructions?: string; readonly outOfBand?: boolean } = {}): void {
    // No out-of-band responses on Gemini: a user turn carrying the instructions, which Gemini
    // keeps in its context (there is no `conversation:"none"`); see the header.
    const turns = options.instructions === undefined ? [] : [{ role: "user", parts: [{ text: options.instructions }] }];
    const message = { clientContent: { ...(turns.length > 0 ? { turns } : {}), turnComplete: true } };
    this.#request({ kind: "ask", message, outOfBand: options.outOfBand === true, typed: false, sentOn: undefined });
  }

  sendText(text: string): void {
    const message = { clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true } };
    this.#request({ kind: "ask", message, outOfBand: false, typed: true, sentOn: undefined });
  }

  cancelResponse(responseId?: string): void {
    const turn = this.#turn;
    if (turn === undefined || (responseId !== undefined && responseId !== turn.id)) {
      this.runtime.log.debug({ responseId }, "gemini-live: no such response in flight; cancel ignored");
      return;
    }
    // No cancel message on Gemini: stop forwarding the rest of this turn (see the header).
    turn.muted = true;
  }

  truncate(itemId: string, audioEndMs: number): void {
    this.runtime.log.debug({ itemId, audioEndMs }, "gemini-live: truncate is not supported; ignored");
  }

  sendToolResults(results: readonly { readonly callId: string; readonly output: string }[], respond: boolean): void {
    if (results.length === 0) return;
    if (!respond) this.runtime.log.debug({}, "gemini-live: the model continues on its own after a toolResponse; respond:false cannot be honoured");
    const responses = results.map((result): FunctionResponse => {
      const call = this.#callNames.get(result.callId);
      if (call === undefined) this.runtime.log.warn({ callId: result.callId }, "gemini-live: a tool result for an unknown call");
      return {
        ...(call === undefined ? { id: result.callId } : call.wireId === undefined ? {} : { id: call.wireId }),
        name: call?.name ?? "",
        response: { output: result.output },
      };
    });
    this.#request({ kind: "tools", message: { toolResponse: { functionResponses: responses } }, sentOn: undefined });
  }

  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    if (this.#state === "closed") return Promise.resolve();
    this.#state = "closing";
    this.#stop.abort(new Error("gemini-live session closed"));
    this.#stopDraining();
    const link = this.#link;
    this.#link = undefined;
    this.#closing = (link === undefined ? Promise.resolve() : this.#closeLink(link)).then(() => {
      this.#state = "closed";
      this.#events.closed({ expected: true });
    });
    return this.#closing;
  }

  // ---- sockets ----

  /** Open a socket, send its one `setup`, and resolve on `setupComplete`. Rejects with a `DialFailure`. */
  #dial(signal: AbortSignal | undefined): Promise<void> {
    const url = new URL(this.settings.url);
    url.searchParams.set("key", this.settings.apiKey); // docs/vendors.md (Gemini Live): the key is the `key` query parameter
    const handle = this.#handle;
    // Audio is base64: permessage-deflate would cost CPU and a zlib context per socket for little gain.
    const ws = new WebSocket(url.toString(), { perMessageDeflate: false });
    const link: Link = { ws, id: ++this.#links, resumed: handle !== undefined, ready: false, retired: false, sentHandle: false };
    this.#link = link;
    this.runtime.log.debug({ link: link.id, resumed: link.resumed }, "gemini-live: connecting");
    return new Promise<void>((resolve, reject) => {
      let socketError: Error | undefined;
      const fail = (failure: DialFailure): void => {
        if (link.retired) return;
        link.retired = true;
        timer.cancel();
        signal?.removeEventListener("abort", onAbort);
        ws.terminate();
        reject(failure);
      };
      const onAbort = (): void => fail(new DialFailure(abortReason(signal), false));
      const timer = this.runtime.clock.setTimeout(
        () => fail(new DialFailure(new GatewayError("s2s", `Gemini Live did not complete setup within ${this.runtime.openTimeoutMs} ms`), true)),
        this.runtime.openTimeoutMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });

      ws.on("open", () => {
        if (link.retired) return;
        // The one `setup` of this socket, first (docs/vendors.md (Gemini Live)).
        this.#send(link, geminiSetupMessage(this.settings, this.options.setup, handle, this.runtime.log));
      });
      ws.on("unexpected-response", (_request, response) => {
        link.httpStatus = response.statusCode ?? 0;
        response.resume();
        ws.terminate();
      });
      ws.on("error", (error: Error) => {
        socketError ??= error;
        this.runtime.log.debug({ link: link.id, err: error.message }, "gemini-live: socket error");
      });
      ws.on("message", (data: RawData) => {
        if (link.retired || link !== this.#link) return;
        const message = this.#parse(data);
        if (message === undefined) return;
        if (!link.ready) {
          if (!("setupComplete" in message)) {
            this.runtime.log.warn({ keys: Object.keys(message) }, "gemini-live: a message before setupComplete; ignored");
            return;
          }
          link.ready = true;
          timer.cancel();
          signal?.removeEventListener("abort", onAbort);
          this.runtime.log.debug({ link: link.id }, "gemini-live: setup complete");
          resolve();
          return;
        }
        this.#onMessage(link, message);
      });
      ws.on("close", (code: number, reason: Buffer) => {
        const why = reason.toString();
        if (!link.ready) {
          fail(dialFailure(link.httpStatus, code, why, socketError));
          return;
        }
        this.#onClosed(link, code, why);
      });
    });
  }

  /** A ready socket closed. */
  #onClosed(link: Link, code: number, reason: string): void {
    if (link.retired || link !== this.#link || this.#state !== "open") return;
    link.retired = true;
    this.#stopDraining();
    this.#endTurn("failed");
    if (FATAL_CLOSE_CODES.has(code)) {
      this.#fail(new GatewayError("s2s", `Gemini Live closed the connection (${code}${reason === "" ? "" : `: ${reason}`})`, { fatal: true }));
      return;
    }
    this.runtime.log.warn({ link: link.id, code, reason }, "gemini-live: connection dropped; reconnecting");
    void this.#reconnect(false);
  }

  /**
   * Dial again until a socket is ready or the budget is spent. `now`: one immediate attempt first
   * (a `goAway` switch), outside the budget.
   */
  async #reconnect(now: boolean): Promise<void> {
    this.#state = "reconnecting";
    this.#link = undefined;
    const delays = now ? [0, ...this.runtime.reconnectDelaysMs] : this.runtime.reconnectDelaysMs;
    let last: Error | undefined;
    for (const delay of delays) {
      try {
        if (delay > 0) await this.runtime.clock.sleep(delay, this.#stop.signal);
      } catch {
        return; // closed while waiting
      }
      if (this.#state !== "reconnecting") return;
      const resuming = this.#handle !== undefined;
      try {
        await this.#dial(this.#stop.signal);
      } catch (error) {
        if (this.#state !== "reconnecting") return;
        const failure = error instanceof DialFailure ? error : new DialFailure(error instanceof Error ? error : new Error(messageOf(error)), true);
        last = failure.error;
        // A refused resumption handle (expired, or not resumable): the next attempt starts afresh.
        if (resuming) this.#handle = undefined;
        else if (!failure.transient) return this.#fail(new GatewayError("s2s", `Gemini Live reconnect refused: ${failure.message}`, { fatal: true, cause: failure.error }));
        this.runtime.log.warn({ err: failure.message }, "gemini-live: reconnect attempt failed");
        continue;
      }
      if (this.#state !== "reconnecting") return;
      this.#state = "open";
      this.#restore();
      return;
    }
    this.#fail(
      new GatewayError("connection", `Gemini Live connection lost: ${delays.length} reconnect attempts failed${last === undefined ? "" : ` (${last.message})`}`, {
        fatal: true,
        ...(last === undefined ? {} : { cause: last }),
      }),
    );
  }

  /** A new socket is ready: restore the conversation, then re-send (or send) every pending request, in order. */
  #restore(): void {
    const link = this.#link;
    if (link === undefined) return;
    if (!link.resumed) {
      const turns = historyTurns(this.options.history());
      if (turns.length > 0) this.#send(link, { clientContent: { turns, turnComplete: false } });
    }
    for (const item of this.#pending) {
      item.sentOn = link;
      // A typed turn is in the replayed history already (the session commits it first): only ask for the response.
      this.#send(link, item.kind === "ask" && item.typed && !link.resumed ? { clientContent: { turnComplete: true } } : item.message);
    }
    if (this.#droppedAudio > 0) this.runtime.log.debug({ bytes: this.#droppedAudio }, "gemini-live: mic audio dropped while reconnecting");
    this.#droppedAudio = 0;
    this.runtime.log.debug({ link: link.id, resumed: link.resumed }, "gemini-live: reconnected");
    this.#events.reconnected?.();
  }

  /**
   * After a `goAway`: switch sockets once the service is between turns and the newest handle
   * reflects the last one. A `sessionResumptionUpdate` follows `turnComplete` in a message of its
   * own, and while the model generates or runs function calls the service sends only
   * `{resumable:false}` (SDK `LiveServerSessionResumptionUpdate`: "Resuming session (using previous
   * session token) in such state will result in some data loss"). So a switch waits for: no
   * response in flight, no tool round open, and — on a socket that sends handles — a handle newer
   * than the last turn. The alternative, reading the retired socket until the server closes it,
   * would keep the switch until `timeLeft` runs out and cut a response mid-way ("terminated as
   * ABORTED"); waiting for the handle costs nothing while it comes as documented. Bounds: a missing
   * handle is waited for `GEMINI_RESUMPTION_WAIT_MS`, then the newest one is used (it restores the
   * service's own state up to it; a history replay would lose that and any reply still playing);
   * the `goAway` deadline switches regardless (`#switchSocket`).
   */
  #maybeSwitch(): void {
    const link = this.#draining;
    if (link === undefined || link !== this.#link || this.#state !== "open") return;
    if (this.#turn !== undefined || this.#toolRound) return;
    if (!this.#handleCurrent && link.sentHandle) {
      this.#handleWait ??= this.runtime.clock.setTimeout(() => {
        this.#handleWait = undefined;
        if (this.#turn !== undefined || this.#toolRound) return; // a new turn: its end starts another wait
        this.runtime.log.warn(
          { link: link.id, waitedMs: GEMINI_RESUMPTION_WAIT_MS },
          "gemini-live: goAway; no resumption handle after the last turn; resuming from the newest one",
        );
        this.#switchSocket();
      }, GEMINI_RESUMPTION_WAIT_MS);
      return;
    }
    this.#switchSocket();
  }

  #stopDraining(): void {
    this.#drainTimer?.cancel();
    this.#drainTimer = undefined;
    this.#handleWait?.cancel();
    this.#handleWait = undefined;
    this.#draining = undefined;
  }

  /** Swap sockets after a `goAway`: between turns (`#maybeSwitch`), or at the deadline even mid-response. */
  #switchSocket(): void {
    const link = this.#draining;
    this.#stopDraining();
    if (link === undefined || link !== this.#link || this.#state !== "open") return;
    this.#endTurn("failed");
    link.retired = true;
    void this.#closeLink(link);
    this.runtime.log.debug({ link: link.id }, "gemini-live: goAway; switching sockets");
    void this.#reconnect(true);
  }

  #closeLink(link: Link): Promise<void> {
    link.retired = true;
    const { ws } = link;
    if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.runtime.clock.setTimeout(() => ws.terminate(), this.runtime.closeTimeoutMs);
      ws.once("close", () => {
        timer.cancel();
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else ws.terminate();
    });
  }

  /** The link is gone for good: one fatal error, then `closed({expected:false})`. */
  #fail(error: GatewayError): void {
    if (this.#state === "closed" || this.#state === "closing") return;
    this.#state = "closed";
    this.#stop.abort(error);
    this.#stopDraining();
    const link = this.#link;
    this.#link = undefined;
    if (link !== undefined) void this.#closeLink(link);
    this.runtime.log.warn({ err: error.message }, "gemini-live: connection lost for good");
    this.#events.error(error, { fatal: true });
    this.#events.closed({ expected: false });
  }

  #send(link: Link, message: object): void {
    if (link.ws.readyState !== WebSocket.OPEN) return;
    try {
      link.ws.send(JSON.stringify(message));
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, "gemini-live: message not sent");
    }
  }

  /** A request: sent now on a ready socket, else when the next one is ready (`#restore`); kept until the model acts on it. */
  #request(item: Pending): void {
    if (this.#state === "closing" || this.#state === "closed") {
      this.runtime.log.debug({ kind: item.kind }, "gemini-live: session closed; request dropped");
      return;
    }
    this.#pending.push(item);
    const link = this.#link;
    if (this.#state === "open" && link?.ready === true) {
      item.sentOn = link;
      this.#send(link, item.message);
    }
  }

  #parse(data: RawData): Record<string, unknown> | undefined {
    // Frames may be text or binary, both UTF-8 JSON (docs/vendors.md (Gemini Live), "Messages").
    try {
      const message: unknown = JSON.parse(rawText(data));
      if (isRecord(message)) return message;
      this.runtime.log.warn({}, "gemini-live: a frame that is not a JSON object; ignored");
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, "gemini-live: malformed JSON frame; ignored");
    }
    return undefined;
  }

  // ---- server messages (docs/vendors.md (Gemini Live), "Messages" and "Turns") ----

  /** One server message; it may carry several top-level keys. */
  #onMessage(link: Link, message: Record<string, unknown>): void {
    const { usageMetadata, sessionResumptionUpdate, serverContent, toolCall, toolCallCancellation, goAway, voiceActivity, error } = message;
    if (isRecord(usageMetadata)) this.#onUsage(usageMetadata);
    if (isRecord(voiceActivity)) this.#onVoiceActivity(voiceActivity);
    if (isRecord(serverContent)) this.#onServerContent(link, serverContent);
    if (isRecord(toolCall)) this.#onToolCall(link, toolCall);
    if (isRecord(toolCallCancellation)) {
      // A barge-in voided pending calls; the tool runner's results for them are harmless.
      this.#toolRound = false;
      this.runtime.log.debug({ ids: toolCallCancellation.ids }, "gemini-live: tool calls cancelled by the server");
    }
    // After the content it came with: a handle in the same message as `turnComplete` reflects that turn.
    if (isRecord(sessionResumptionUpdate)) this.#onResumption(link, sessionResumptionUpdate);
    if (isRecord(error)) {
      const text = typeof error.message === "string" ? error.message : JSON.stringify(error);
      this.#events.error(new GatewayError("s2s", `Gemini Live error: ${text}`), { fatal: false });
    }
    if (isRecord(goAway)) this.#onGoAway(link, goAway);
    if (this.#draining === link) this.#maybeSwitch();
  }

  #onUsage(usage: Record<string, unknown>): void {
    const inputTokens = numberOr(usage.promptTokenCount, 0);
    const outputTokens = numberOr(usage.responseTokenCount, numberOr(usage.candidatesTokenCount, 0));
    const totals = { inputTokens, outputTokens, totalTokens: numberOr(usage.totalTokenCount, inputTokens + outputTokens) };
    if (this.#turn !== undefined) this.#turn.usage = totals;
  }

  #onResumption(link: Link, update: Record<string, unknown>): void {
    // Keep the newest resumable handle; a non-resumable moment (generating, calling tools: no
    // handle, `resumable:false`) keeps the older one, which then predates the last turn.
    if (update.resumable !== false && typeof update.newHandle === "string" && update.newHandle !== "") {
      this.#handle = update.newHandle;
      this.#handleCurrent = true;
      link.sentHandle = true;
    }
  }

  /** `voiceActivity` (SDK `VoiceActivity {voiceActivityType, audioOffset}`): the service's own activity detection. */
  #onVoiceActivity(activity: Record<string, unknown>): void {
    // A start while a response is in flight is left to `interrupted` (the barge-in, when activity
    // handling interrupts); an end is the only end-of-speech report Gemini gives.
    if (activity.voiceActivityType === "ACTIVITY_START" && this.#turn === undefined) this.#speechStarted();
    else if (activity.voiceActivityType === "ACTIVITY_END") this.#speechStopped();
  }

  #onServerContent(link: Link, content: Record<string, unknown>): void {
    const { inputTranscription, modelTurn, outputTranscription } = content;
    if (isRecord(inputTranscription)) this.#onInputTranscription(inputTranscription);
    if (content.interrupted === true) {
      // Gemini's VAD heard the caller over the model: the barge-in. Queued audio of this turn is
      // void, and what the caller said before is one utterance, final now: the next pieces are new speech.
      this.#flushUserText();
      this.#speechStarted();
      this.#endTurn("cancelled");
      this.#closingInterrupted = true;
    } else {
      if (isRecord(modelTurn) && Array.isArray(modelTurn.parts)) this.#onModelParts(link, modelTurn.parts);
      if (isRecord(outputTranscription) && typeof outputTranscription.text === "string" && outputTranscription.text !== "") {
        const turn = this.#modelOutput(link);
        if (!turn.muted) this.#events.agentTranscript(outputTranscription.text, { responseId: turn.id, itemId: turn.id });
      }
    }
    // The model is done generating: the utterance it answered is over.
    if (content.generationComplete === true) this.#flushUserText();
    if (content.turnComplete === true) {
      if (this.#turn !== undefined) this.#endTurn("completed");
      // A turn that answered nothing still ends the utterance; the one closing an interrupted turn
      // comes while the barge-in utterance is being spoken, and leaves it open.
      else if (!this.#closingInterrupted) this.#flushUserText();
      this.#closingInterrupted = false;
    }
  }

  #onModelParts(link: Link, parts: unknown[]): void {
    for (const part of parts) {
      if (!isRecord(part) || !isRecord(part.inlineData)) continue; // `text`, `executableCode`: not spoken
      const { mimeType, data } = part.inlineData;
      if (typeof data !== "string" || (typeof mimeType === "string" && !mimeType.startsWith("audio/"))) continue;
      if (!this.#warnedRate && typeof mimeType === "string" && !mimeType.includes(`rate=${GEMINI_OUTPUT_RATE}`)) {
        this.#warnedRate = true;
        this.runtime.log.warn({ mimeType }, "gemini-live: model audio is not the expected 24 kHz PCM16");
      }
      const turn = this.#modelOutput(link);
      if (turn.muted) continue;
      const pcm = Buffer.from(data, "base64");
      if (pcm.byteLength > 0) this.#events.audio(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), { responseId: turn.id, itemId: turn.id });
    }
  }

  #onInputTranscription(transcription: Record<string, unknown>): void {
    const { text, finished } = transcription;
    if (typeof text === "string" && text !== "") {
      // As sent: each piece carries its own spacing (see the header), never a separator of ours.
      this.#userText += text;
      const spoken = spokenText(this.#userText);
      if (spoken !== "" && text.trim() !== "") {
        // Without voiceActivity, transcription starting is the only sign of speech outside a response.
        if (this.#turn === undefined) this.#speechStarted();
        this.#events.userTranscript(spoken, { final: false });
      }
    }
    if (finished === true) this.#flushUserText();
  }

  #onToolCall(link: Link, toolCall: Record<string, unknown>): void {
    const calls = Array.isArray(toolCall.functionCalls) ? toolCall.functionCalls.filter(isRecord) : [];
    if (calls.length === 0) return;
    const turn = this.#modelOutput(link);
    for (const call of calls) {
      const wireId = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
      const callId = wireId ?? `gemini_call_${++this.#calls}`;
      const name = typeof call.name === "string" ? call.name : "";
      this.#callNames.set(callId, { name, wireId });
      this.#events.toolCall({ callId, name, args: call.args ?? {}, responseId: turn.id });
    }
    // Gemini waits for the toolResponse: this batch's response is done (see the header).
    this.#endTurn("completed");
    this.#toolRound = true;
  }

  #onGoAway(link: Link, goAway: Record<string, unknown>): void {
    if (this.#draining !== undefined) return;
    const left = durationMs(goAway.timeLeft) ?? 0;
    this.runtime.log.debug({ timeLeft: goAway.timeLeft }, "gemini-live: goAway; switching sockets between turns, with the newest resumption handle");
    this.#draining = link;
    this.#drainTimer = this.runtime.clock.setTimeout(() => this.#switchSocket(), Math.max(0, left - GOAWAY_MARGIN_MS));
  }

  /** The response this model output belongs to, started when none is in flight. Delivers outstanding tool results. */
  #modelOutput(link: Link): Turn {
    this.#pending = this.#pending.filter((item) => item.kind !== "tools" || item.sentOn !== link);
    if (this.#turn !== undefined) return this.#turn;
    // The oldest request for a response is answered by this one (Gemini names neither).
    const asked = this.#pending.find((item) => item.kind === "ask");
    if (asked !== undefined) this.#pending = this.#pending.filter((item) => item !== asked);
    const turn: Turn = { id: `gemini_${++this.#responses}`, outOfBand: asked?.kind === "ask" && asked.outOfBand, muted: false };
    this.#turn = turn;
    this.#toolRound = false;
    this.#events.responseStarted({ responseId: turn.id, outOfBand: turn.outOfBand });
    // No `voiceActivity` end came: the model answering is the first sign the caller stopped. Reported
    // after the response started, as inferred, so no turn is timed from it (see the header, "Speech edges").
    this.#speechStopped(true);
    return turn;
  }

  #endTurn(status: "completed" | "cancelled" | "failed"): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    this.#turn = undefined;
    this.#handleCurrent = false; // the service's state moved on: a handle from before is stale
    this.#flushUserText(); // the utterance ends with the response to it; the caller's words go before the reply
    this.#events.responseDone({
      responseId: turn.id,
      outOfBand: turn.outOfBand,
      status: turn.muted ? "cancelled" : status,
      ...(turn.usage === undefined ? {} : { usage: turn.usage }),
    });
  }

  #speechStarted(): void {
    if (this.#userSpeaking) return;
    this.#userSpeaking = true;
    this.#events.speechStarted();
  }

  #speechStopped(inferred = false): void {
    if (!this.#userSpeaking) return;
    this.#userSpeaking = false;
    this.#events.speechStopped(inferred ? { inferred: true } : undefined);
  }

  /** The utterance is over: its text, final, once. */
  #flushUserText(): void {
    const text = spokenText(this.#userText);
    this.#userText = "";
    if (text !== "") this.#events.userTranscript(text, { final: true });
  }
}

/** Joined transcription pieces as shown: runs of whitespace (a piece's trailing space, the next one's leading space) are one space. */
function spokenText(joined: string): string {
  return joined.replace(/\s+/g, " ").trim();
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new GatewayError("s2s", "Gemini Live open aborted");
}

/** Why a socket failed before `setupComplete`, and whether another attempt may help. */
function dialFailure(httpStatus: number | undefined, code: number, reason: string, cause: Error | undefined): DialFailure {
  if (httpStatus !== undefined) {
    const keyRefused = httpStatus === 401 || httpStatus === 403;
    const message = keyRefused
      ? `Gemini Live refused the API key (HTTP ${httpStatus}): check GOOGLE_API_KEY / GEMINI_API_KEY`
      : `Gemini Live refused the connection (HTTP ${httpStatus})`;
    const transient = httpStatus >= 500 || httpStatus === 408 || httpStatus === 429;
    return new DialFailure(new GatewayError(keyRefused ? "auth" : "s2s", message, { fatal: !transient }), transient);
  }
  const transient = !FATAL_CLOSE_CODES.has(code);
  const detail = reason !== "" ? `: ${reason}` : cause !== undefined ? `: ${cause.message}` : "";
  return new DialFailure(
    new GatewayError("s2s", `Gemini Live closed before setupComplete (${code}${detail})`, { fatal: !transient, ...(cause === undefined ? {} : { cause }) }),
    transient,
  );
}

