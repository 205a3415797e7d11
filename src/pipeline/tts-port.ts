/**
 * The text-to-speech port. An adapter (providers/tts/<vendor>.ts) speaks one vendor's wire
 * protocol; the reply loop sees streams of text in and PCM16 out.
 */

/** A word's place in a stream's audio (ms from the stream's first audio sample). */
export interface WordTiming {
  readonly word: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** What one TTS stream reports. Audio is PCM16 LE mono at the session's `sampleRate`. */
export interface TtsStreamEvents {
  audio(pcm: Uint8Array): void;
  words(timings: readonly WordTiming[]): void;
  /** All audio for the text pushed before `end()` has been delivered. */
  done(): void;
  error(error: Error): void;
}

/** One utterance being synthesized: text in (possibly in pieces), audio out. */
export interface TtsStream {
  /** Append text. Adapters send it as it comes; batching is the caller's. */
  push(text: string): void;
  /** No more text: synthesize what is buffered and report `done`. */
  end(): void;
  /**
   * Stop: the barrier after which no audio, words or done of this stream are delivered (the
   * port guarantees it; see `guardStream`). Tells the vendor to stop where it can.
   */
  cancel(): void;
}

export interface TtsSession {
  /** Output sample rate (Hz) of every stream's audio. */
  readonly sampleRate: number;
  stream(events: TtsStreamEvents): TtsStream;
  close(): Promise<void>;
}

export interface TtsOpenOptions {
  /** Requested output rate (Hz); adapters pick the nearest the vendor offers and report it. */
  readonly sampleRate: number;
  readonly signal?: AbortSignal | undefined;
}

export interface TtsProvider {
  readonly kind: string;
  open(options: TtsOpenOptions): Promise<TtsSession>;
}

/** A TTS stream's delivery barrier (see `guardStream`). */
export interface StreamGuard {
  readonly events: TtsStreamEvents;
  cancel(): void;
  /** Deliver `error` (once, like `events.error`); a handler that throws goes to `threw`, never up the adapter's stack. */
  fail(error: Error, threw: (thrown: unknown) => void): void;
  readonly open: boolean;
}

/**
 * Wrap a stream's events so nothing is delivered after `cancel()` or after `done`/`error`:
 * the barrier every adapter relies on, in one place.
 */
export function guardStream(events: TtsStreamEvents): StreamGuard {
  let open = true;
  const guarded: StreamGuard = {
    events: {
      audio: (pcm) => {
        if (open) events.audio(pcm);
      },
      words: (timings) => {
        if (open) events.words(timings);
      },
      done: () => {
        if (!open) return;
        open = false;
        events.done();
      },
      error: (error) => {
        if (!open) return;
        open = false;
        events.error(error);
      },
    },
    cancel: () => {
      open = false;
    },
    fail: (error, threw) => {
      try {
        guarded.events.error(error);
      } catch (thrown) {
        threw(thrown);
      }
    },
    get open() {
      return open;
    },
  };
  return guarded;
}
