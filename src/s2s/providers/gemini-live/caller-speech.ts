/**
 * Gemini Live: the caller's speech edges and transcript (docs/vendors.md (Gemini Live),
 * "Transcripts" and "endpointMs"; the reasoning: the header of `gemini-live.ts`). Pieces are joined
 * as sent (they carry their own spacing); an utterance is final on `finished` or at its boundary,
 * which the session decides.
 */
import type { S2sEvents } from "../../s2s-port.js";

/** Joined transcription pieces as shown: runs of whitespace (a piece's trailing space, the next one's leading space) are one space. */
function spokenText(joined: string): string {
  return joined.replace(/\s+/g, " ").trim();
}

export class CallerSpeech {
  /** The caller's utterance so far: transcription pieces as sent (they carry their own spacing). */
  #text = "";
  #speaking = false;

  constructor(private readonly events: S2sEvents) {}

  /** `inputTranscription`; `inTurn`: a response is in flight (then only `interrupted` or `voiceActivity` start speech). */
  transcription(transcription: Record<string, unknown>, inTurn: boolean): void {
    const { text, finished } = transcription;
    if (typeof text === "string" && text !== "") {
      // As sent: each piece carries its own spacing (see the header), never a separator of ours.
      this.#text += text;
      const spoken = spokenText(this.#text);
      if (spoken !== "" && text.trim() !== "") {
        // Without voiceActivity, transcription starting is the only sign of speech outside a response.
        if (!inTurn) this.started();
        this.events.userTranscript(spoken, { final: false });
      }
    }
    if (finished === true) this.flush();
  }

  started(): void {
    if (this.#speaking) return;
    this.#speaking = true;
    this.events.speechStarted();
  }

  /** `inferred`: no end of speech was reported; the model answering is the first sign of it. */
  stopped(inferred = false): void {
    if (!this.#speaking) return;
    this.#speaking = false;
    this.events.speechStopped(inferred ? { inferred: true } : undefined);
  }

  /** The utterance is over: its text, final, once. */
  flush(): void {
    const text = spokenText(this.#text);
    this.#text = "";
    if (text !== "") this.events.userTranscript(text, { final: true });
  }
}
