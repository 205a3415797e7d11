/**
 * What the TTS adapters that run every stream as a context of one socket share (Cartesia's
 * `context_id`, ElevenLabs' multi-stream-input: docs/vendors.md (Cartesia), (ElevenLabs)): the
 * streams and the contexts carrying them, the port's barrier (`guardStream`: nothing after cancel,
 * done or error), the session around them (its socket, reconnected by `tts-socket.ts`), the spoken
 * prefix a fresh context continues from after a drop, and the output rate to ask for. The wire
 * messages are the adapter's.
 */
import { randomUUID } from "node:crypto";
import { GatewayError, messageOf } from "../../errors.js";
import { guardStream, type TtsSession, type TtsStream, type TtsStreamEvents } from "../tts-port.js";
import type { ProviderLog } from "../../providers/provider-log.js";
import { ServiceAudio } from "../../audio/service-audio.js";
import { ReconnectingSocket, type TtsSocketTarget } from "./tts-socket.js";

/** One stream, and the context carrying (part of) it now. */
export interface StreamState<C> {
  readonly guard: ReturnType<typeof guardStream>;
  /** Everything pushed, as the adapter sends it. */
  text: string;
  ended: boolean;
  /** Prefix of `text` known to be spoken (from a finished or dropped context). */
  spokenChars: number;
  /** Audio bytes delivered to the caller (all contexts). */
  deliveredBytes: number;
  context: C | undefined;
}

export interface ContextStreamHooks<C> {
  /** A pushed piece as the vendor wants it sent, or undefined to ignore the push. */
  accept(text: string): string | undefined;
  /** Send whatever the stream's state asks for on its context (opening one if needed). */
  sync(state: StreamState<C>): void;
  /** A stream was cancelled while `context` ran: tell the vendor to stop it. */
  cancelled(context: C): void;
}

/** A session's streams, and which stream each running context id belongs to. */
export class ContextStreams<C extends { readonly id: string }> {
  readonly #streams = new Set<StreamState<C>>();
  readonly #byContext = new Map<string, StreamState<C>>();

  constructor(
    private readonly vendor: string,
    private readonly log: ProviderLog,
    private readonly hooks: ContextStreamHooks<C>,
  ) {}

  /** Streams still running (not done, failed or cancelled). */
  get size(): number {
    return this.#streams.size;
  }

  /** Contexts running. */
  get contexts(): number {
    return this.#byContext.size;
  }

  /** The running streams, as a copy (walking it may finish or fail some). */
  list(): StreamState<C>[] {
    return [...this.#streams];
  }

  /** The stream a server message's context id belongs to: none for a cancelled or unknown context. */
  ofContext(id: string | undefined): StreamState<C> | undefined {
    return id === undefined ? undefined : this.#byContext.get(id);
  }

  /** A new stream; on a closed session it fails, after the call returns. */
  open(events: TtsStreamEvents, sessionClosed: boolean): TtsStream {
    const state: StreamState<C> = { guard: guardStream(events), text: "", ended: false, spokenChars: 0, deliveredBytes: 0, context: undefined };
    if (sessionClosed) queueMicrotask(() => this.fail(state, new GatewayError("tts", `${this.vendor}: the TTS session is closed.`)));
    else this.#streams.add(state);
    return {
      push: (text) => {
        if (!state.guard.open || state.ended) return;
        const piece = this.hooks.accept(text);
        if (piece === undefined) return;
        state.text += piece;
        this.hooks.sync(state);
      },
      end: () => {
        if (!state.guard.open || state.ended) return;
        state.ended = true;
        // Defer so `done` for an empty stream never fires inside `end()`.
        queueMicrotask(() => this.hooks.sync(state));
      },
      cancel: () => this.#cancel(state),
    };
  }

  /**
   * Before a new context: skip the whitespace after the spoken prefix, so the context starts at a
   * word. False when nothing is left to say (the stream is then done if it has ended).
   */
  hasUnsaid(state: StreamState<C>): boolean {
    while (state.spokenChars < state.text.length && /\s/.test(state.text[state.spokenChars] ?? "")) state.spokenChars++;
    if (state.spokenChars < state.text.length) return true;
    if (state.ended) this.finish(state);
    return false;
  }

  /** `context` now carries the stream: server messages for its id reach it. */
  bind(state: StreamState<C>, context: C): void {
    state.context = context;
    this.#byContext.set(context.id, state);
  }

  /** The stream's context is over (the server ended it, or its socket dropped); the stream goes on. */
  unbind(state: StreamState<C>): void {
    if (state.context !== undefined) this.#byContext.delete(state.context.id);
    state.context = undefined;
  }

  finish(state: StreamState<C>): void {
    this.#forget(state);
    state.guard.events.done();
  }

  fail(state: StreamState<C>, error: Error): void {
    this.#forget(state);
    try {
      state.guard.events.error(error);
    } catch (thrown) {
      this.log.warn({ err: thrown }, `${this.vendor}: a TTS error handler threw`);
    }
  }

  failAll(error: Error): void {
    for (const state of this.list()) this.fail(state, error);
  }

  /** The session is closing: every stream stops where it is, with no further events. */
  cancelAll(): void {
    for (const state of this.#streams) state.guard.cancel();
    this.#streams.clear();
    this.#byContext.clear();
  }

  #cancel(state: StreamState<C>): void {
    if (!state.guard.open) return;
    state.guard.cancel();
    if (state.context !== undefined) this.hooks.cancelled(state.context);
    this.#forget(state);
  }

  #forget(state: StreamState<C>): void {
    this.unbind(state);
    this.#streams.delete(state);
  }
}

/**
 * A TTS session whose streams are contexts on one reconnecting socket: a drop ends every context
 * (the adapter notes each stream's spoken prefix), the new socket re-syncs every unfinished stream,
 * and once the reconnect budget is spent every stream fails. The adapter supplies the wire protocol.
 */
export abstract class ContextSocketSession<C extends { readonly id: string }> implements TtsSession {
  abstract readonly sampleRate: number;
  protected readonly log: ProviderLog;
  /** The vendor's base64 audio chunks, decoded strictly. */
  protected readonly audio: ServiceAudio;
  protected readonly streams: ContextStreams<C>;
  protected readonly socket: ReconnectingSocket;
  readonly #vendor: string;
  readonly #idPrefix = randomUUID().slice(0, 8);
  #nextId = 0;

  /** `goodbye`: the vendor's close message, sent before the socket is closed. */
  constructor(
    target: TtsSocketTarget,
    private readonly goodbye?: object,
  ) {
    this.#vendor = target.vendor;
    this.log = target.log;
    this.audio = new ServiceAudio(target.vendor, target.log, () => target.clock.now());
    this.streams = new ContextStreams(target.vendor, target.log, {
      accept: (text) => this.accept(text),
      sync: (state) => this.sync(state),
      cancelled: (context) => this.cancelled(context),
    });
    this.socket = new ReconnectingSocket(target, {
      message: (message) => this.onMessage(message),
      waiting: () => this.streams.size,
      dropped: () => {
        this.socketDropped();
        for (const state of this.streams.list()) this.dropContext(state);
      },
      reconnected: () => {
        for (const state of this.streams.list()) this.sync(state);
      },
      gaveUp: (error) => this.streams.failAll(error),
    });
  }

  /** `open()`: the first connection. */
  start(signal: AbortSignal | undefined): Promise<void> {
    return this.socket.open(signal);
  }

  stream(events: TtsStreamEvents): TtsStream {
    const stream = this.streams.open(events, this.socket.closed);
    this.socket.ensureConnected();
    return stream;
  }

  async close(): Promise<void> {
    if (this.socket.closed) return;
    this.streams.cancelAll();
    await this.socket.close(this.goodbye);
  }

  /** A context id unique to this session. */
  protected newContextId(): string {
    return `${this.#idPrefix}-${++this.#nextId}`;
  }

  /** Send whatever the stream's state asks for on its context (opening a new one if needed). */
  protected sync(state: StreamState<C>): void {
    try {
      if (!state.guard.open || !this.socket.connected) return; // the reconnect resyncs
      if (state.context === undefined && !this.streams.hasUnsaid(state)) return;
      this.send(state);
    } catch (error) {
      this.streams.fail(state, new GatewayError("tts", `${this.#vendor}: ${messageOf(error)}`, { cause: error }));
    }
  }

  /** A pushed piece as the vendor wants it sent, or undefined to ignore the push. */
  protected abstract accept(text: string): string | undefined;
  /**
   * The vendor's messages for an open stream on a live socket: open a context when it has none
   * (there is unsaid text then), send the text not sent yet, and end the context once the stream ended.
   */
  protected abstract send(state: StreamState<C>): void;
  /** A stream was cancelled while `context` ran: tell the vendor to stop it. */
  protected abstract cancelled(context: C): void;
  /** A JSON object from the server. */
  protected abstract onMessage(message: Record<string, unknown>): void;
  /** The socket dropped: set the stream's spoken prefix from what its context delivered, and unbind it. */
  protected abstract dropContext(state: StreamState<C>): void;
  /** The socket dropped, before `dropContext` runs per stream: forget what the adapter kept about the old socket's contexts. */
  protected socketDropped(): void {
    // Nothing by default: only contexts bound to streams lived on the socket.
  }
}

/**
 * Where the spoken prefix ends: `start` moved past each of `words` (those whose audio arrived, in
 * order) while each is next in `text`, stopping at the first that is not (normalized text).
 */
export function spokenUpTo(text: string, start: number, words: Iterable<string>, limit: number): number {
  let cursor = start;
  for (const word of words) {
    const next = skipWord(text, cursor, word, limit);
    if (next === undefined) break;
    cursor = next;
  }
  return cursor;
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

/** The output rate to ask for: the one the vendor offers nearest the requested rate (tts-port). */
export function nearestRate(requested: number, supported: readonly number[]): number {
  let best = supported[0] ?? requested;
  for (const rate of supported) if (Math.abs(rate - requested) < Math.abs(best - requested)) best = rate;
  return best;
}
