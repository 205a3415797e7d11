/**
 * The speech-to-speech port. An adapter (providers/<vendor>.ts) speaks one vendor's wire
 * protocol; the session's s2s runner only sees these calls and events. Audio both ways is
 * PCM16 LE mono at the session's rates, or G.711 at 8 kHz when a phone call passes it through.
 */
import type { AudioPayload } from "../audio/audio-payload.js";
import type { JSONSchema7 } from "json-schema";
import { g711, pcm16, type SessionAudio } from "../audio/rates.js";

/** A tool as the service is told about it (the agent segment's frozen list). */
export interface S2sTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JSONSchema7;
}

/** A committed line of the conversation, replayed into a new socket after a reconnect. */
export interface S2sHistoryItem {
  readonly role: "user" | "assistant";
  readonly text: string;
}

/** What one session tells the service once per socket (the setup message). */
export interface S2sSetup {
  /** System prompt + voice presets + prompt context. */
  readonly instructions: string;
  readonly tools: readonly S2sTool[];
  readonly toolChoice: "auto" | "required" | "none" | { readonly type: "tool"; readonly toolName: string };
  /** `false` for `interruption: "off"`: the service's VAD must not cancel a response. */
  readonly interruptResponse: boolean;
  /** Vocabulary biasing for the service's input transcription (`sttPrompt`). */
  readonly transcriptionPrompt?: string | undefined;
}

/** What a hand-off changes on the service: the new agent's instructions, tools and tool choice. */
export type S2sSegment = Pick<S2sSetup, "instructions" | "tools" | "toolChoice">;

/** Audio on the service's socket: PCM16 LE mono, or G.711 μ-law / A-law at 8 kHz (telephony passthrough). */
export type S2sAudioFormat = "pcm16" | "pcmu" | "pcma";

export interface S2sOpenOptions {
  readonly setup: S2sSetup;
  /** Audio both ways; default `pcm16`. Only a format in the provider's `audioFormats`. */
  readonly audioFormat?: S2sAudioFormat;
  /** The conversation so far, replayed after a reconnect (and on a resumed session). */
  readonly history: () => readonly S2sHistoryItem[];
  readonly signal?: AbortSignal | undefined;
}

/** A tool call the model made; `args` is parsed JSON (or the raw string when it is not JSON). */
export interface S2sToolCall {
  readonly callId: string;
  readonly name: string;
  readonly args: unknown;
  /** The response that made the call: results go back once per response batch. */
  readonly responseId: string;
}

export interface S2sEvents {
  /** Model audio for an item of a response. */
  audio(pcm: Uint8Array, info: { readonly responseId: string; readonly itemId: string }): void;
  /** The model's transcript of what it says (a delta), per response. */
  agentTranscript(delta: string, info: { readonly responseId: string; readonly itemId: string }): void;
  /** The service's VAD heard the caller start / stop. */
  speechStarted(): void;
  /**
   * `inferred`: the service reports no end of speech (Gemini Live without `voiceActivity`); this
   * stop is inferred from the model starting to answer, so it dates nothing (no turn is timed from it).
   */
  speechStopped(info?: { readonly inferred?: boolean }): void;
  /**
   * The caller's words, as the service transcribed them: interim deltas, then the final text.
   * `itemId`: the conversation item of the caller's audio they belong to, where the service names
   * one (OpenAI Realtime; Gemini Live has no items).
   */
  userTranscript(text: string, info: { readonly final: boolean; readonly itemId?: string }): void;
  responseStarted(info: { readonly responseId: string; readonly outOfBand: boolean }): void;
  responseDone(info: {
    readonly responseId: string;
    readonly outOfBand: boolean;
    readonly status: "completed" | "cancelled" | "failed" | "incomplete";
    readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly totalTokens: number };
  }): void;
  toolCall(call: S2sToolCall): void;
  /** In-band provider errors are non-fatal; `fatal` when the link is gone for good. */
  error(error: Error, info: { readonly fatal: boolean }): void;
  /** A dropped socket was replaced (for metrics; the conversation was replayed). */
  reconnected?(): void;
  /** The socket closed for good (after any reconnects); `expected` when the session closed it. */
  closed(info: { readonly expected: boolean }): void;
}

/** One live speech-to-speech conversation (reconnects are the adapter's, invisible here). */
export interface S2sSession {
  /** Caller audio dropped by the adapter's backlog policy (bytes), if it keeps count. */
  readonly droppedAudioBytes?: number;
  /** The audio both ways: PCM16 at the rates below, or G.711 at 8 kHz. */
  readonly audioFormat: S2sAudioFormat;
  /** The rates the service takes and gives (OpenAI: 24 kHz both ways; Gemini: 16 kHz in, 24 kHz out; G.711: 8 kHz). */
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  /** The caller's audio: bytes, or a carrier's canonical base64 text not yet decoded, which a service that takes base64 sends as is (audio/audio-payload.ts). */
  sendAudio(audio: AudioPayload): void;
  /**
   * Ask for a response. `outOfBand`: spoken in the model's voice but never written to the
   * conversation, with no tools (tool messages, the greeting); `responseStarted` reports it
   * with `outOfBand: true` once the service names the response.
   */
  createResponse(options?: { readonly instructions?: string; readonly outOfBand?: boolean }): void;
  /** A typed user turn (`user_text`): a user message in the conversation, then a response. */
  sendText?(text: string): void;
  /** Cancel the response in flight (or the given one). */
  cancelResponse(responseId?: string): void;
  /** The caller heard only `audioEndMs` of this item: cut the model's memory there. */
  truncate(itemId: string, audioEndMs: number): void;
  /**
   * Remove an item from the model's memory (a caller turn an input guardrail refused, and the
   * answer to it). Absent where the service lets a client remove nothing (Gemini Live).
   */
  deleteItem?(itemId: string): void;
  /**
   * Add a line to the model's memory without asking for a response (what a guardrail had said
   * instead). Absent where the service cannot (Gemini Live).
   */
  remember?(item: S2sHistoryItem): void;
  /**
   * A note from the gateway, not the caller (a workflow run ended), added to the conversation,
   * then one in-band response: the model says it in its own voice and words. OpenAI Realtime: a
   * `system` message item and `response.create`; Gemini Live: a `user` turn (its only role for
   * added content). False when it cannot be sent now (no socket ready): asked again later.
   * Absent where the service can take no such note: `notify` is then refused.
   */
  note?(text: string): boolean;
  /** Every result of one response's calls, then one request for the next response. */
  sendToolResults(results: readonly { readonly callId: string; readonly output: string }[], respond: boolean): void;
  /**
   * A hand-off: the service runs on another agent's instructions and tools from now on (one
   * update; later sockets are set up with it). Absent where the service fixes them for the whole
   * session (Gemini Live): such a session cannot hand off.
   */
  update?(segment: S2sSegment): void;
  close(): Promise<void>;
}

export interface S2sProvider {
  readonly kind: string;
  /** Audio formats the service accepts on its socket (`pcm16` always). */
  readonly audioFormats: readonly S2sAudioFormat[];
  open(options: S2sOpenOptions, events: S2sEvents): Promise<S2sSession>;
}

/** What a service hears and speaks, as its session declares it to the link: its G.711 both ways, or PCM16 at its input and output rates. */
export function sessionAudioOf(session: Pick<S2sSession, "audioFormat" | "inputSampleRate" | "outputSampleRate">): SessionAudio {
  const format = session.audioFormat;
  return format === "pcm16" ? { input: pcm16(session.inputSampleRate), output: pcm16(session.outputSampleRate) } : { input: g711(format), output: g711(format) };
}
