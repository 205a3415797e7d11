/**
 * Cartesia TTS over its WebSocket, as docs/vendors.md (Cartesia) describes it.
 *
 * One socket per session; every TtsStream is one Cartesia **context** (`context_id`) on it:
 * - each `push` → a generation request with the new text and `continue:true` (transcripts are joined
 *   verbatim, so text is sent exactly as pushed; every other field is identical on every input of a
 *   context: both under "Continuations" there);
 * - `end()` → `"transcript":""` with `continue:false` (the form for "last text not known in advance");
 * - `cancel()` → `{"context_id":…,"cancel":true}` ("Ending and cancelling"); later chunks for the
 *   id are dropped;
 * - ← `chunk` (base64 `data`, raw `pcm_s16le`) → audio; ← `timestamps` (`word_timestamps`: `words`,
 *   `start`, `end`, seconds; optional) → word timings, taken as counted from the context's first
 *   sample [INF: Cartesia's reference does not say]; ← `done` → done; ← `error` → the stream's error.
 *
 * Socket drop: contexts do not survive a socket (and an id cannot be reused after it expires), so
 * after a reconnect each unfinished stream continues on a fresh context with the text not yet spoken:
 * word timestamps whose audio has been delivered mark the spoken prefix.
 */
import { durationMs } from "../../../audio/pcm.js";
import { GatewayError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { TtsOpenOptions, TtsProvider, TtsSession, WordTiming } from "../../tts-port.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey } from "../provider-options.js";
import { ContextSocketSession, nearestRate, spokenUpTo, type StreamState } from "../tts-contexts.js";
import { ttsSocketRuntime, type TtsSocketOptions, type TtsSocketTarget } from "../tts-socket.js";
import { isRecord } from "../../../providers/ws-frames.js";
import { spread } from "../../../spread.js";

/** Logging, time, the reconnect budget and the connect timeout (see `TtsSocketOptions`). */
export type CartesiaTtsOptions = TtsSocketOptions;

export const CARTESIA_KEY_VARIABLE = "CARTESIA_API_KEY";
/** docs/vendors.md (Cartesia), "URL". */
export const CARTESIA_DEFAULT_URL = "wss://api.cartesia.ai/tts/websocket";
/**
 * docs/vendors.md (Cartesia), "Headers": the `Cartesia-Version` the official SDK sends on every
 * WebSocket upgrade —
 * @cartesia/cartesia-js 4.2.0 `src/internal/client-identity.ts:33`: `'cartesia-version': '2026-08-14'`.
 * The messages below follow that version's declared types (`src/resources/tts.ts`:
 * `GenerationRequest`, `VoiceSpecifier`, `WebsocketResponse.Timestamps`); `tts.options.version`
 * changes only the header, so set it only to a version with the same message shapes (2025-11-04, for
 * one, wanted `voice: {mode: "id", id}`).
 */
export const CARTESIA_DEFAULT_VERSION = "2026-08-14";
/** docs/vendors.md (Cartesia), "Sends": the `sample_rate` values Cartesia accepts. */
export const CARTESIA_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/**
 * Used when `options.voice` is not set (the built-in default descriptor names only the model). A
 * stock Cartesia voice id seen in several public clients [3P]; set `tts.options.voice` for your own.
 */
export const CARTESIA_DEFAULT_VOICE = "a0e99841-438c-4a64-b679-ae501e7d6091";

/** Build the Cartesia TTS provider. Throws MissingKeyError (naming the variable) when the key is absent. */
export function cartesiaTts(descriptor: ProviderDescriptor, env: Env, options: CartesiaTtsOptions = {}): TtsProvider {
  const read = optionsOf(descriptor, "tts");
  const { apiKey, keyVariable } = providerKey(descriptor, env, [CARTESIA_KEY_VARIABLE], read);
  const url = read.string("url") ?? CARTESIA_DEFAULT_URL;
  const version = read.string("version") ?? CARTESIA_DEFAULT_VERSION;
  const model = read.string("model") ?? "sonic-3";
  const voice = read.string("voice") ?? CARTESIA_DEFAULT_VOICE;
  const language = read.string("language");
  const config: Config = {
    socket: {
      vendor: "cartesia",
      url,
      // docs/vendors.md (Cartesia), "Headers": version and key as headers (the query-string form
      // exists for browsers only).
      headers: { "Cartesia-Version": version, Authorization: `Bearer ${apiKey}` },
      keyVariable,
      ...ttsSocketRuntime(options),
    },
    model,
    voice,
    language,
  };
  return {
    kind: "cartesia",
    async open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      const session = new CartesiaSession(config, nearestRate(openOptions.sampleRate, CARTESIA_SAMPLE_RATES));
      await session.start(openOptions.signal);
      return session;
    },
  };
}

interface Config {
  readonly socket: TtsSocketTarget;
  readonly model: string;
  readonly voice: string;
  readonly language: string | undefined;
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

/** A stream; its text is everything pushed, verbatim. */
type Stream = StreamState<Context>;

class CartesiaSession extends ContextSocketSession<Context> {
  /** The generation fields that stay the same on every input of a context (docs/vendors.md (Cartesia), "Continuations"). */
  private readonly base: Record<string, unknown>;

  constructor(
    config: Config,
    readonly sampleRate: number,
  ) {
    super(config.socket);
    this.base = {
      model_id: config.model,
      // 2026-08-14 `VoiceSpecifier`: "a voice ID string or an object with a required `id`" (no `mode`).
      voice: config.voice,
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: sampleRate },
      ...(config.language === undefined ? {} : { language: config.language }),
      add_timestamps: true,
    };
  }

  // ---- streams ----

  /** Transcripts are joined verbatim (docs/vendors.md (Cartesia), "Continuations"): text goes exactly as pushed. */
  protected accept(text: string): string | undefined {
    return text === "" ? undefined : text;
  }

  protected send(state: Stream): void {
    let context = state.context;
    if (context === undefined) {
      context = { id: this.newContextId(), startChar: state.spokenChars, sentChars: state.spokenChars, startBytes: state.deliveredBytes, words: [], ended: false };
      this.streams.bind(state, context);
    }
    if (context.sentChars < state.text.length) {
      this.socket.send(spread(this.base, { context_id: context.id, transcript: state.text.slice(context.sentChars), continue: true }));
      context.sentChars = state.text.length;
    }
    if (state.ended && !context.ended) {
      // docs/vendors.md (Cartesia): a context whose last text is not known in advance ends with
      // `transcript: ""` and `continue: false`.
      this.socket.send(spread(this.base, { context_id: context.id, transcript: "", continue: false }));
      context.ended = true;
    }
  }

  /** docs/vendors.md (Cartesia), "Ending and cancelling": stop any further output for the context (barge-in). */
  protected cancelled(context: Context): void {
    this.socket.send({ context_id: context.id, cancel: true });
  }

  // ---- server messages ----

  protected onMessage(message: Record<string, unknown>): void {
    const contextId = typeof message.context_id === "string" ? message.context_id : undefined;
    const state = this.streams.ofContext(contextId);
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
            this.streams.finish(state);
          } else {
            // The context ended without `continue:false` (e.g. it expired, docs/vendors.md
            // (Cartesia)): what was sent is spoken; further text goes on a new context.
            state.spokenChars = context.sentChars;
            this.streams.unbind(state);
            this.sync(state);
          }
          return;
        case "error": {
          const text = `cartesia: ${typeof message.title === "string" ? `${message.title}: ` : ""}${typeof message.message === "string" ? message.message : "error"}`;
          if (state !== undefined) this.streams.fail(state, new GatewayError("tts", text));
          else this.log.warn({ contextId, status: message.status_code }, text);
          return;
        }
        default:
          // flush_done, phoneme_timestamps and anything newer: nothing to do.
          return;
      }
    } catch (error) {
      this.log.warn({ err: error, type: message.type }, "cartesia: handling a server message failed");
    }
  }

  private onChunk(state: Stream, base64: string): void {
    const decoded = this.audio.decode(base64);
    if (decoded === undefined || decoded.length === 0) return;
    // A copy: the decoder's bytes may share Node's pool slab with others.
    const pcm = new Uint8Array(decoded);
    this.socket.progress(); // the reconnect budget starts over
    state.deliveredBytes += pcm.length;
    state.guard.events.audio(pcm);
  }

  private onTimestamps(state: Stream, context: Context, raw: unknown): void {
    // 2026-08-14 `Timestamps.word_timestamps?: WordTimestamps | null`: absent means no words this time.
    if (raw === undefined || raw === null) return;
    if (!isRecord(raw) || !Array.isArray(raw.words) || !Array.isArray(raw.start) || !Array.isArray(raw.end)) {
      this.log.warn({ contextId: context.id }, "cartesia sent timestamps without words/start/end; ignored");
      return;
    }
    const offsetMs = durationMs(context.startBytes, this.sampleRate);
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

  // ---- socket drop ----

  /** The socket is gone: note how much of the context's text was spoken and forget the context. */
  protected dropContext(state: Stream): void {
    const context = state.context;
    if (context === undefined) return;
    // Spoken: the words timed within the audio delivered so far.
    const heardMs = durationMs(state.deliveredBytes - context.startBytes, this.sampleRate);
    const heard: string[] = [];
    for (const { word, endMs } of context.words) {
      if (endMs > heardMs + 0.5) break;
      heard.push(word);
    }
    state.spokenChars = spokenUpTo(state.text, context.startChar, heard, context.sentChars);
    this.streams.unbind(state);
  }
}
