/**
 * The speech-to-text port. An adapter (providers/stt/<vendor>.ts) speaks one vendor's wire
 * protocol; the turn loop only sees these events.
 */

/** What an STT session reports. Audio is PCM16 LE mono at the rate the session was opened with. */
export interface SttEvents {
  /** An interim hypothesis of the current utterance (replaces the previous one). */
  partial(text: string, info: { readonly eotConfidence?: number }): void;
  /**
   * A finalized stretch of the utterance. `endOfTurn` is true when the provider's endpointing
   * decided the user finished their turn (Deepgram `speech_final`/`UtteranceEnd`, AssemblyAI
   * `end_of_turn`); providers without endpointing always send false and the loop's local VAD
   * decides.
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
