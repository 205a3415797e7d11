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
 * Resilience: a transient close (the close-code table, `src/providers/close-codes.ts`), or a
 * `goAway` (proactively: `gemini-live/go-away.ts`), reconnects with backoff on the injected clock,
 * bounded by `reconnectDelaysMs` (default `RECONNECT_DELAYS_MS`, `src/providers/reconnect.ts`). Each socket gets exactly one
 * `setup`. When the server gave a `sessionResumptionUpdate` handle the new `setup` resumes with
 * the newest one (docs/vendors.md (Gemini Live), "Resumption and goAway") and the server
 * restores the conversation; otherwise the history (`options.history()`) is replayed as one
 * `clientContent` with `turnComplete:false`. Then every request the model has not acted on goes
 * out once on the new socket, in order: tool results (undelivered, or sent while reconnecting) and
 * `createResponse`/`sendText` turns that got no response yet (a typed turn is in the replayed
 * history already, so only its `turnComplete` is re-sent). Mic audio while no socket is ready is
 * dropped (it is real time). Past the budget, or on a close that a retry cannot fix (any but
 * 1001/1006/1011/1012/1013; an HTTP 4xx other than 408/429 at upgrade): one fatal error and
 * `closed({expected:false})`.
 *
 * The modules of `gemini-live/`: `settings.ts` (endpoint, key, options), `setup.ts` (the `setup`
 * message, Gemini Schema, history turns), `link.ts` (one socket up to `setupComplete`),
 * `go-away.ts` (when to switch sockets), `caller-speech.ts` (the caller's edges and transcript),
 * `session.ts` (the port over the sockets, and the server messages).
 */
import { systemClock, type Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import { NO_LOG, type ProviderLog } from "../../providers/provider-log.js";
import { RECONNECT_DELAYS_MS } from "../../providers/reconnect.js";
import { newWebSocket, type SocketFactory } from "../../providers/ws-connect.js";
import type { S2sProvider } from "../s2s-port.js";
import { GeminiLiveSession } from "./gemini-live/session.js";
import type { Runtime } from "./gemini-live/sockets.js";
import { geminiLiveSettings, type Env } from "./gemini-live/settings.js";

/** Runtime knobs (not user config). */
export interface GeminiLiveOptions {
  readonly log?: Logger | ProviderLog;
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; its length is the budget. Default `RECONNECT_DELAYS_MS` (docs/vendors.md, "Reconnects"). */
  readonly reconnectDelaysMs?: readonly number[];
  /** `open()` and each reconnect fail after this long without `setupComplete`. Default 10 000. */
  readonly openTimeoutMs?: number;
  /** After `close()`, wait this long for the server's close before dropping the socket. Default 2000. */
  readonly closeTimeoutMs?: number;
  /** Build the socket (tests inject one, e.g. with a large `bufferedAmount`). */
  readonly connect?: SocketFactory;
}

/** The Gemini Live provider (kind "gemini-live"). Throws `MissingKeyError` (naming GOOGLE_API_KEY) when no key is set. */
export function geminiLive(descriptor: ProviderDescriptor, env: Env, options: GeminiLiveOptions = {}): S2sProvider {
  const settings = geminiLiveSettings(descriptor, env);
  const runtime: Runtime = {
    log: options.log ?? NO_LOG,
    connect: options.connect ?? newWebSocket,
    clock: options.clock ?? systemClock,
    reconnectDelaysMs: options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS,
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
