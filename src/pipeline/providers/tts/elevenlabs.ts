/**
 * ElevenLabs TTS over its **multi-stream-input** WebSocket, as docs/vendors.md (ElevenLabs)
 * describes it.
 *
 * Why multi-stream-input and not stream-input: stream-input has no way to stop a generation short of
 * closing the socket (its only end is `{"text":""}`, which flushes and speaks everything: "Why
 * multi-stream-input" there), so every barge-in would cost a reconnect. multi-stream-input has
 * `close_context` (for barge-in) and runs every stream as a context of one socket. Constraints
 * that come with it: at most 5 contexts per socket ("5 contexts per socket"), and no `eleven_v3`
 * ("Connection").
 *
 * What the service does (SDK `@elevenlabs/elevenlabs-js` 2.73.0, api/types):
 * - GenerationConfig: text is buffered until `chunk_length_schedule` is reached (default
 *   [120, 160, 250, 290] characters) or a `flush` empties the buffer: without a flush a short first
 *   sentence is not spoken until more text arrives.
 * - WebsocketTtsServerMessageMulti.isFinal: "the final message for the specified contextId. This is
 *   sent when a context is closed." A flush alone never yields it (bolna-ai/bolna#790, verified live).
 * - CloseContext: "If it has already been set to flush it will continue flushing."
 *
 * Wire mapping, per stream (one `context_id`):
 * - first text → `{"text":" ","context_id"}` opens the context (plus `voice_settings` /
 *   `generation_config` when configured), then `{"text":"…␠","context_id","flush":true}` per push (the
 *   voice loop pushes sentence batches: each is spoken at once); each chunk ends with a space, as
 *   the service asks ("Every batch is flushed"), added when the pushed text lacks one;
 * - `end()` → `{"context_id","close_context":true}` after the last flushed text; ← the last audio,
 *   then ← `isFinal` → done. No isFinal and no audio for the context `finalTimeoutMs` after the close
 *   (the service has been seen to drop it, pipecat-ai/pipecat#4681) → the stream fails, slot freed;
 * - `cancel()` → `{"context_id","close_context":true}`; late audio for the id is dropped; the context
 *   keeps its slot until its `isFinal` (or the same bound);
 * - a stream needing a context while 5 are held waits when one of them is closing (it frees at its
 *   isFinal or bound), and fails at once when all 5 carry live streams;
 * - session close → `{"close_socket":true}` (the multi-context form of stream-input's `{"text":""}`).
 * The key goes in the `xi-api-key` handshake header ("Auth"), so a wrong key is an HTTP 401/403.
 * `sync_alignment=true` puts timing data on every audio chunk; alignment char times are taken as
 * relative to the chunk they come with [INF: ElevenLabs' reference does not say]. Responses arrive
 * in camelCase or snake_case ("Reads"); both are accepted.
 *
 * Socket drop: contexts die with the socket; after a reconnect each unfinished stream continues on a
 * fresh context with the text after the last word whose audio arrived (from the alignment).
 */
import { durationMs } from "../../../audio/pcm.js";
import type { Timer } from "../../../clock.js";
import { GatewayError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { TtsOpenOptions, TtsProvider, TtsSession, WordTiming } from "../../tts-port.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey } from "../provider-options.js";
import { ContextSocketSession, nearestRate, spokenUpTo, type StreamState } from "../tts-contexts.js";
import { ttsSocketRuntime, type TtsSocketOptions, type TtsSocketTarget } from "../tts-socket.js";
import { isRecord } from "../../../providers/ws-frames.js";
import { spread } from "../../../spread.js";

/** Logging, time, the reconnect budget and the connect timeout (see `TtsSocketOptions`), and: */
export interface ElevenLabsTtsOptions extends TtsSocketOptions {
  /**
   * How long a closed context may go without audio or `isFinal` before it is given up on (ms):
   * its stream fails (a cancelled one is just forgotten) and its slot is freed. Default
   * `ELEVENLABS_FINAL_TIMEOUT_MS`.
   */
  readonly finalTimeoutMs?: number;
}

export const ELEVENLABS_KEY_VARIABLE = "ELEVENLABS_API_KEY";
/** docs/vendors.md (ElevenLabs), "Connection": the origin; the path `/v1/text-to-speech/{voice_id}/multi-stream-input` is appended. */
export const ELEVENLABS_DEFAULT_URL = "wss://api.elevenlabs.io";
/** docs/vendors.md (ElevenLabs), "Connection": the `pcm_<rate>` output formats (16-bit LE). */
export const ELEVENLABS_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/**
 * docs/vendors.md (ElevenLabs): at most 5 contexts per socket. A 6th is refused with "Maximum simultaneous contexts
 * per WebSocket connection exceeded (5)" and the socket closed with 1008 (livekit/agents-js#1985).
 */
export const ELEVENLABS_MAX_CONTEXTS = 5;
/**
 * After `close_context`, the longest wait for the context's next audio or its `isFinal` (ms). The
 * service has already been sent every character with `flush`, so audio should be flowing: 5 s of
 * silence means the final was lost [INF: no documented bound; the connect timeout is 10 s].
 */
export const ELEVENLABS_FINAL_TIMEOUT_MS = 5_000;

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
    // docs/vendors.md (ElevenLabs), "Auth": the key in the `xi-api-key` handshake header.
    headers: { "xi-api-key": apiKey },
    keyVariable,
    ...ttsSocketRuntime(options),
  };
  const finalTimeoutMs = options.finalTimeoutMs ?? ELEVENLABS_FINAL_TIMEOUT_MS;
  const opening = spread(voiceSettings === undefined ? {} : { voice_settings: voiceSettings }, generationConfig === undefined ? {} : { generation_config: generationConfig });
  return {
    kind: "elevenlabs",
    async open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      const sampleRate = nearestRate(openOptions.sampleRate, ELEVENLABS_SAMPLE_RATES);
      const query = new URLSearchParams({
        model_id: model,
        output_format: `pcm_${sampleRate}`,
        sync_alignment: "true",
        // Keep the socket across pauses between turns (default 20 s, maximum 180 s: docs/vendors.md (ElevenLabs)).
        inactivity_timeout: "180",
        ...(language === undefined ? {} : { language_code: language }),
      });
      const url = `${origin}/v1/text-to-speech/${encodeURIComponent(voiceId)}/multi-stream-input?${query.toString()}`;
      const session = new ElevenLabsSession({ socket: spread(socket, { url }), opening, finalTimeoutMs }, sampleRate);
      await session.start(openOptions.signal);
      return session;
    },
  };
}

interface Config {
  readonly socket: TtsSocketTarget;
  /** Extra fields of the context-opening message. */
  readonly opening: Readonly<Record<string, unknown>>;
  /** See `ElevenLabsTtsOptions.finalTimeoutMs`. */
  readonly finalTimeoutMs: number;
}

/** One ElevenLabs context carrying (part of) a stream. */
interface Context {
  readonly id: string;
  /** Offset in the stream's text where this context's text starts. */
  readonly startChar: number;
  /** Offset in the stream's text up to which text has been sent (each piece with `flush`) on this context. */
  sentChars: number;
  /** Words whose audio has arrived on this context, to find the spoken prefix. */
  readonly words: string[];
  /** The word being spelled out by the alignment (its chars may span chunks). */
  partial: { word: string; startMs: number; endMs: number } | undefined;
  /** `close_context` has been sent. */
  closed: boolean;
  /** After the close: gives up on `isFinal` (re-armed by each audio chunk). */
  finalTimer: Timer | undefined;
}

/** A stream; its text is everything pushed, as sent (each chunk ending in a space). */
type Stream = StreamState<Context>;

class ElevenLabsSession extends ContextSocketSession<Context> {
  /**
   * Contexts of cancelled streams, closed and not yet reported `isFinal`: the
   * service still counts them against the 5 (CloseContext: a flushed context "will continue
   * flushing"). Each frees its slot at its `isFinal`, or when its timer gives up.
   */
  readonly #closing = new Map<string, Timer>();

  constructor(
    private readonly config: Config,
    readonly sampleRate: number,
  ) {
    // docs/vendors.md (ElevenLabs), "Session end": close_socket closes every context.
    super(config.socket, { close_socket: true });
  }

  override async close(): Promise<void> {
    for (const state of this.streams.list()) state.context?.finalTimer?.cancel();
    this.#forgetClosing();
    await super.close();
  }

  // ---- streams ----

  /** docs/vendors.md (ElevenLabs): end each chunk with a space (the caller batches; pieces are words or sentences). */
  protected accept(text: string): string | undefined {
    if (text.trim() === "") return undefined;
    return /\s$/.test(text) ? text : `${text} `;
  }

  protected send(state: Stream): void {
    let context = state.context;
    if (context === undefined) {
      if (this.streams.contexts + this.#closing.size >= ELEVENLABS_MAX_CONTEXTS) {
        // A closed context frees its slot at its isFinal or its timer (`#slotFreed` re-syncs this stream).
        if (this.#closing.size > 0 || this.streams.list().some((other) => other.context?.closed === true)) return;
        this.streams.fail(state, new GatewayError("tts", `elevenlabs: at most ${ELEVENLABS_MAX_CONTEXTS} streams can run at once on one session (multi-stream-input).`));
        return;
      }
      context = { id: this.newContextId(), startChar: state.spokenChars, sentChars: state.spokenChars, words: [], partial: undefined, closed: false, finalTimer: undefined };
      this.streams.bind(state, context);
      // docs/vendors.md (ElevenLabs), "One context per reply": the first message on a context opens it, with text " ".
      this.socket.send({ text: " ", context_id: context.id, ...this.config.opening });
    }
    if (context.sentChars < state.text.length) {
      // GenerationConfig: without a flush the service holds text until 120 characters are buffered;
      // each push is a batch the caller wants spoken now.
      this.socket.send({ text: state.text.slice(context.sentChars), context_id: context.id, flush: true });
      context.sentChars = state.text.length;
    }
    if (state.ended && !context.closed) {
      // isFinal is "sent when a context is closed"; every text sent was flushed, which a close lets finish.
      this.socket.send({ context_id: context.id, close_context: true });
      context.closed = true;
      this.#armFinal(state, context);
    }
  }

  /** docs/vendors.md (ElevenLabs), "Barge-in": close_context; late audio for the id is ignored, and its slot held until its isFinal. */
  protected cancelled(context: Context): void {
    context.finalTimer?.cancel();
    if (!context.closed) this.socket.send({ context_id: context.id, close_context: true });
    context.closed = true;
    this.#holdClosing(context.id);
  }

  /** After `close_context`: fail the stream if neither audio nor `isFinal` comes within the bound. */
  #armFinal(state: Stream, context: Context): void {
    context.finalTimer?.cancel();
    context.finalTimer = this.config.socket.clock.setTimeout(() => {
      context.finalTimer = undefined;
      if (state.context !== context) return;
      const seconds = this.config.finalTimeoutMs / 1000;
      this.log.warn({ contextId: context.id }, `elevenlabs: no isFinal within ${seconds} s of close_context; the stream fails and its slot is freed`);
      this.streams.fail(state, new GatewayError("tts", `elevenlabs: context ${context.id} sent no isFinal within ${seconds} s of close_context (or of its last audio); its audio may be cut short.`));
      this.#slotFreed();
    }, this.config.finalTimeoutMs);
  }

  /** A closed context no stream follows any more: its slot is held until its `isFinal`, bounded. */
  #holdClosing(id: string): void {
    this.#closing.get(id)?.cancel();
    this.#closing.set(
      id,
      this.config.socket.clock.setTimeout(() => {
        this.#closing.delete(id);
        this.log.warn({ contextId: id }, `elevenlabs: a closed context sent no isFinal within ${this.config.finalTimeoutMs / 1000} s; its slot is taken as free`);
        this.#slotFreed();
      }, this.config.finalTimeoutMs),
    );
  }

  #forgetClosing(): void {
    for (const timer of this.#closing.values()) timer.cancel();
    this.#closing.clear();
  }

  /** A context slot came free: streams waiting for one open their context now. */
  #slotFreed(): void {
    for (const state of this.streams.list()) if (state.context === undefined) this.sync(state);
  }

  // ---- server messages ----

  protected onMessage(message: Record<string, unknown>): void {
    // docs/vendors.md (ElevenLabs), "Reads": the server echoes `contextId` (some versions `context_id`), and `isFinal` or `is_final`.
    const rawId = message.contextId ?? message.context_id;
    const contextId = typeof rawId === "string" ? rawId : undefined;
    const state = this.streams.ofContext(contextId);
    const context = state?.context;
    const isFinal = (message.isFinal ?? message.is_final) === true;
    try {
      if (typeof message.message === "string" && typeof message.audio !== "string") {
        // docs/vendors.md (ElevenLabs), "Reads": an error is a JSON object with a `message` field (often followed by a close).
        const text = `elevenlabs: ${message.message}`;
        this.socket.noteFailure(message.message);
        if (state !== undefined) {
          this.streams.fail(state, new GatewayError("tts", text));
          this.#slotFreed();
        } else this.log.warn({ contextId, error: message.error }, text);
        return;
      }
      if (state === undefined || context === undefined) {
        if (contextId !== undefined && this.#closing.has(contextId)) this.#onClosing(contextId, isFinal);
        return; // cancelled or unknown context
      }
      if (typeof message.audio === "string" && message.audio !== "") {
        if (context.closed) this.#armFinal(state, context); // still flushing: the bound starts over
        this.onAudio(state, context, message.audio, message.alignment ?? message.normalizedAlignment ?? message.normalized_alignment);
      }
      if (isFinal) this.onFinal(state, context);
    } catch (error) {
      this.log.warn({ err: error }, "elevenlabs: handling a server message failed");
    }
  }

  /** A message for a closed context no stream follows: audio re-arms its bound, `isFinal` frees its slot. */
  #onClosing(id: string, isFinal: boolean): void {
    if (!isFinal) {
      this.#holdClosing(id);
      return;
    }
    this.#closing.get(id)?.cancel();
    this.#closing.delete(id);
    this.#slotFreed();
  }

  private onAudio(state: Stream, context: Context, base64: string, alignment: unknown): void {
    const decoded = this.audio.decode(base64, { contextId: context.id });
    if (decoded === undefined || decoded.length === 0) return;
    // A copy: the decoder's bytes may share Node's pool slab with others.
    const pcm = new Uint8Array(decoded);
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
    context.finalTimer?.cancel();
    context.finalTimer = undefined;
    const last = this.completeWord(context);
    if (last !== undefined) state.guard.events.words([last]);
    if (context.closed) {
      // isFinal after our close_context: every flushed text has been spoken, and the slot is free.
      this.streams.finish(state);
      this.#slotFreed();
      return;
    }
    // The server closed the context on its own (e.g. idle): what was sent is spoken; more text
    // goes on a new context.
    state.spokenChars = context.sentChars;
    this.streams.unbind(state);
    this.sync(state);
    this.#slotFreed();
  }

  // ---- socket drop ----

  /** The closing contexts died with the socket: their slots are free on the next one. */
  protected override socketDropped(): void {
    this.#forgetClosing();
  }

  /** The socket is gone: note how much of the context's text was spoken and forget the context. */
  protected dropContext(state: Stream): void {
    const context = state.context;
    if (context === undefined) return;
    context.finalTimer?.cancel();
    context.finalTimer = undefined;
    state.spokenChars = spokenUpTo(state.text, context.startChar, context.words, context.sentChars);
    this.streams.unbind(state);
  }
}
