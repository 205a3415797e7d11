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
import { durationMs } from "../../../audio/pcm.js";
import { GatewayError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { TtsOpenOptions, TtsProvider, TtsSession, WordTiming } from "../../tts-port.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey } from "../provider-options.js";
import { ContextSocketSession, nearestRate, spokenUpTo, type StreamState } from "../tts-contexts.js";
import { ttsSocketRuntime, type TtsSocketOptions, type TtsSocketTarget } from "../tts-socket.js";
import { isRecord } from "../ws-frames.js";

/** Logging, time, the reconnect budget and the connect timeout (see `TtsSocketOptions`). */
export type ElevenLabsTtsOptions = TtsSocketOptions;

export const ELEVENLABS_KEY_VARIABLE = "ELEVENLABS_API_KEY";
/** §6 Connection: the origin; the path `/v1/text-to-speech/{voice_id}/multi-stream-input` is appended. */
export const ELEVENLABS_DEFAULT_URL = "wss://api.elevenlabs.io";
/** §6 Connection: the `pcm_<rate>` output formats (16-bit LE). */
export const ELEVENLABS_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/** §6 Connection: at most 5 contexts per socket. */
export const ELEVENLABS_MAX_CONTEXTS = 5;

/**
 * Build the ElevenLabs TTS provider. Throws MissingKeyError (naming the variable) when the key is
 * absent, and a fatal GatewayError naming `tts.options.voiceId` when no voice is set.
 */
export function elevenLabsTts(descriptor: ProviderDescriptor, env: Env, options: ElevenLabsTtsOptions = {}): TtsProvider {
  const read = optionsOf(descriptor, "tts");
  const voiceId = read.string("voiceId");
  if (voiceId === undefined) {
    throw new GatewayError("internal", 'tts elevenlabs needs tts.options.voiceId (an ElevenLabs voice id, e.g. "21m00Tcm4TlvDq8ikWAM").', { fatal: true });
  }
  const model = read.string("model") ?? "eleven_flash_v2_5";
  if (model === "eleven_v3") {
    throw new GatewayError("internal", "tts.options.model eleven_v3 is not available on ElevenLabs multi-stream-input; use eleven_flash_v2_5 or another model.", { fatal: true });
  }
  const { apiKey, keyVariable } = providerKey(descriptor, env, [ELEVENLABS_KEY_VARIABLE], read);
  const origin = (read.string("url") ?? ELEVENLABS_DEFAULT_URL).replace(/\/+$/, "");
  const language = read.string("language");
  const voiceSettings = read.object("voiceSettings");
  const generationConfig = read.object("generationConfig");
  const socket = {
    vendor: "elevenlabs",
    // §6 Auth: the key in the `xi-api-key` handshake header.
    headers: { "xi-api-key": apiKey },
    keyVariable,
    ...ttsSocketRuntime(options),
  };
  const opening = {
    ...(voiceSettings === undefined ? {} : { voice_settings: voiceSettings }),
    ...(generationConfig === undefined ? {} : { generation_config: generationConfig }),
  };
  return {
    kind: "elevenlabs",
    async open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      const sampleRate = nearestRate(openOptions.sampleRate, ELEVENLABS_SAMPLE_RATES);
      const query = new URLSearchParams({
        model_id: model,
        output_format: `pcm_${sampleRate}`,
        sync_alignment: "true",
        // Keep the socket across pauses between turns (default 20 s, maximum 180 s, §6).
        inactivity_timeout: "180",
        ...(language === undefined ? {} : { language_code: language }),
      });
      const url = `${origin}/v1/text-to-speech/${encodeURIComponent(voiceId)}/multi-stream-input?${query.toString()}`;
      const session = new ElevenLabsSession({ socket: { ...socket, url }, opening }, sampleRate);
      await session.start(openOptions.signal);
      return session;
    },
  };
}

interface Config {
  readonly socket: TtsSocketTarget;
  /** Extra fields of the context-opening message. */
  readonly opening: Readonly<Record<string, unknown>>;
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

/** A stream; its text is everything pushed, as sent (each chunk ending in a space). */
type Stream = StreamState<Context>;

class ElevenLabsSession extends ContextSocketSession<Context> {
  constructor(
    private readonly config: Config,
    readonly sampleRate: number,
  ) {
    // §6 multi-stream-input: close_socket closes every context.
    super(config.socket, { close_socket: true });
  }

  // ---- streams ----

  /** §6: end each chunk with a space (the caller batches; pieces are words or sentences). */
  protected accept(text: string): string | undefined {
    if (text.trim() === "") return undefined;
    return /\s$/.test(text) ? text : `${text} `;
  }

  protected send(state: Stream): void {
    let context = state.context;
    if (context === undefined) {
      if (this.streams.contexts >= ELEVENLABS_MAX_CONTEXTS) {
        this.streams.fail(state, new GatewayError("tts", `elevenlabs: at most ${ELEVENLABS_MAX_CONTEXTS} streams can run at once on one session (multi-stream-input).`));
        return;
      }
      context = { id: this.newContextId(), startChar: state.spokenChars, sentChars: state.spokenChars, words: [], partial: undefined, ended: false };
      this.streams.bind(state, context);
      // §6: the first message on a context opens it, with text " ".
      this.socket.send({ text: " ", context_id: context.id, ...this.config.opening });
    }
    if (context.sentChars < state.text.length) {
      this.socket.send({ text: state.text.slice(context.sentChars), context_id: context.id });
      context.sentChars = state.text.length;
    }
    if (state.ended && !context.ended) {
      // §6: flush generates everything buffered; the last audio then is_final follow.
      this.socket.send({ context_id: context.id, flush: true });
      context.ended = true;
    }
  }

  /** §6: close_context on barge-in; any late audio for the id is ignored (the id is unmapped). */
  protected cancelled(context: Context): void {
    this.socket.send({ context_id: context.id, close_context: true });
  }

  // ---- server messages ----

  protected onMessage(message: Record<string, unknown>): void {
    // §6: the server echoes `contextId` (some versions `context_id`), and `isFinal` or `is_final`.
    const rawId = message.contextId ?? message.context_id;
    const contextId = typeof rawId === "string" ? rawId : undefined;
    const state = this.streams.ofContext(contextId);
    const context = state?.context;
    try {
      if (typeof message.message === "string" && typeof message.audio !== "string") {
        // §6 Errors: a JSON object with a `message` field (often followed by a close).
        const text = `elevenlabs: ${message.message}`;
        this.socket.noteFailure(message.message);
        if (state !== undefined) this.streams.fail(state, new GatewayError("tts", text));
        else this.log.warn({ contextId, error: message.error }, text);
        return;
      }
      if (state === undefined || context === undefined) return; // cancelled or unknown context
      if (typeof message.audio === "string" && message.audio !== "") {
        this.onAudio(state, context, message.audio, message.alignment ?? message.normalizedAlignment ?? message.normalized_alignment);
      }
      if ((message.isFinal ?? message.is_final) === true) this.onFinal(state, context);
    } catch (error) {
      this.log.warn({ err: error }, "elevenlabs: handling a server message failed");
    }
  }

  private onAudio(state: Stream, context: Context, base64: string, alignment: unknown): void {
    const pcm = new Uint8Array(Buffer.from(base64, "base64"));
    if (pcm.length === 0) return;
    this.socket.progress(); // the reconnect budget starts over
    const chunkStartMs = durationMs(state.deliveredBytes, this.sampleRate);
    state.deliveredBytes += pcm.length;
    state.guard.events.audio(pcm);
    if (alignment !== undefined && alignment !== null) this.onAlignment(state, context, chunkStartMs, alignment);
  }
  /** Chars + start times + durations → whole words (a word's chars may span chunks). */
  private onAlignment(state: Stream, context: Context, chunkStartMs: number, alignment: unknown): void {
    if (!isRecord(alignment)) return;
    const chars = alignment.chars;
    const starts = alignment.charStartTimesMs ?? alignment.char_start_times_ms;
    const durations = alignment.charDurationsMs ?? alignment.char_durations_ms;
    if (!Array.isArray(chars) || !Array.isArray(starts) || !Array.isArray(durations)) {
      this.log.warn({ contextId: context.id }, "elevenlabs sent an alignment without chars/times; ignored");
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

  private onFinal(state: Stream, context: Context): void {
    const last = this.completeWord(context);
    if (last !== undefined) state.guard.events.words([last]);
    if (context.ended) {
      // Free the context slot (at most 5 per socket) in case is_final did not close it.
      this.socket.send({ context_id: context.id, close_context: true });
      this.streams.finish(state);
      return;
    }
    // The server ended the context on its own (e.g. idle): what was sent is spoken; more text
    // goes on a new context.
    state.spokenChars = context.sentChars;
    this.streams.unbind(state);
    this.sync(state);
  }

  // ---- socket drop ----

  /** The socket is gone: note how much of the context's text was spoken and forget the context. */
  protected dropContext(state: Stream): void {
    const context = state.context;
    if (context === undefined) return;
    state.spokenChars = spokenUpTo(state.text, context.startChar, context.words, context.sentChars);
    this.streams.unbind(state);
  }
}
