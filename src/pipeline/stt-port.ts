/**
 * The speech-to-text port. An adapter (providers/stt/<vendor>.ts) speaks one vendor's wire
 * protocol; the turn loop only sees these events.
 *
 * Transcript contract (every adapter, pinned by test/conformance/stt.test.ts):
 * - `final(text)` delivers the next finalized segment of the utterance, once; it is never
 *   repeated, never revised, and covers the audio of the current partial.
 * - `partial(text)` is the current unfinalized tail only: the words heard since the last `final`
 *   and not yet delivered in one. It replaces the previous partial; `""` clears it.
 * - The utterance so far is the finals in order, then the current partial. Only `UtteranceText`
 *   (below), held by the voice loop, joins them: an adapter never prepends earlier finals to a
 *   partial or a final, and nothing else joins partials and finals.
 * How a vendor's messages map onto this is written at the top of each adapter.
 */

/** What an STT session reports. Audio is PCM16 LE mono at the rate the session was opened with. */
export interface SttEvents {
  /**
   * The current unfinalized tail of the utterance: words heard since the last `final` that no
   * `final` has delivered yet (never text a `final` already carried). Replaces the previous
   * partial; `""` clears it (the provider withdrew its hypothesis). `eotConfidence` (0–1) is the
   * provider's confidence that the turn has ended, when it gives one (AssemblyAI).
   */
  partial(text: string, info: { readonly eotConfidence?: number }): void;
  /**
   * The next finalized segment of the utterance, delivered once: the text for audio the
   * provider will not transcribe again. It covers (and so clears) the current partial; `""` is a
   * segment with no words. `endOfTurn` is true when the provider's endpointing decided the user
   * finished their turn (Deepgram `speech_final`/`UtteranceEnd`, AssemblyAI `end_of_turn`);
   * providers without endpointing always send false and the loop's local VAD decides.
   */
  final(text: string, info: { readonly endOfTurn: boolean; readonly eotConfidence?: number }): void;
  /** The provider heard speech start (VAD event), if it reports one. */
  speechStarted(): void;
  /** The provider's connection failed. `recoverable`: a reconnect may help (drop, 5xx). */
  error(error: Error, info: { readonly recoverable: boolean }): void;
  /** The socket closed; `expected` is false for a drop the session did not ask for. */
  closed(info: { readonly expected: boolean }): void;
}

export interface SttOpenOptions {
  readonly sampleRate: number;
  /** Vocabulary biasing (`sttPrompt`): keyterms, prompt or word boost, as the vendor takes it. */
  readonly prompt?: string | undefined;
  /** Pause after which the provider should check end-of-turn (ms). */
  readonly minSilenceMs: number;
  /** Pause after which the provider must end the turn (ms). */
  readonly maxSilenceMs: number;
  readonly language?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface SttSession {
  /** True when the provider endpoints turns itself (the loop then trusts `final.endOfTurn`). */
  readonly endpointing: boolean;
  /** Send PCM16 LE audio. Dropped (and counted) when the socket's backlog is over 1 MiB. */
  sendAudio(pcm: Uint8Array): void;
  /** Ask the provider to finalize what it has heard so far (e.g. end of a push-to-talk turn). */
  finalize(): void;
  /** Close cleanly (the vendor's close message, then the socket). */
  close(): Promise<void>;
  /** Audio bytes dropped by the backlog policy so far. */
  readonly droppedBytes: number;
  /**
   * Where the audio finalized so far ends in this connection's stream (ms since its first sample),
   * when the provider says (Deepgram: a final's `start + duration`); read when `final` arrives.
   * Audio sent after it is not finalized yet: a reconnect must replay it. Unset: everything sent
   * when a final arrives counts as finalized.
   */
  readonly finalizedAudioMs?: number | undefined;
}

/** Opens STT sessions for one configured provider. */
export interface SttProvider {
  readonly kind: string;
  open(options: SttOpenOptions, events: SttEvents): Promise<SttSession>;
}

/** An STT that cannot run on this machine (e.g. the local recognizer is not installed) marks its open error so. */
export function isSttUnavailable(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { unavailable?: unknown }).unavailable === true;
}

/** The STT of a session whose recognizer is unavailable: typed turns only; audio is ignored. */
export const NO_STT: SttSession = {
  endpointing: true,
  droppedBytes: 0,
  sendAudio: () => {},
  finalize: () => {},
  close: () => Promise.resolve(),
};

/** Transcript text as the loop compares and counts it: trimmed, whitespace runs as one space. */
function collapse(text: string): string {
  return text.trim().replace(/\s+/g, " ");
}

/**
 * The utterance so far, assembled from its `partial`/`final` events under the transcript contract
 * above: the finals in order, then the current partial, one space between. The voice loop holds
 * one per utterance (captions, barge-in `minWords`, `userTurnLimit.maxWords`, the committed turn);
 * the contract test replays each adapter's events through it.
 */
export class UtteranceText {
  readonly #finals: string[] = [];
  #partial = "";

  /** A `partial` event: the unfinalized tail, replacing the previous one (`""` clears it). */
  partial(text: string): void {
    this.#partial = collapse(text);
  }

  /** A `final` event: the segment (kept when it has words) covers the tail, which is cleared. */
  final(text: string): void {
    const segment = collapse(text);
    if (segment !== "") this.#finals.push(segment);
    this.#partial = "";
  }

  /** The finals, then the partial. */
  get text(): string {
    return this.#partial === "" ? this.#finals.join(" ") : [...this.#finals, this.#partial].join(" ");
  }

  /** Some words were finalized. */
  get finalized(): boolean {
    return this.#finals.length > 0;
  }

  /** A partial is waiting for the final that covers it. */
  get pending(): boolean {
    return this.#partial !== "";
  }
}
