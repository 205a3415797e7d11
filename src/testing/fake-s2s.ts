import type { S2sAudioFormat, S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sProvider, S2sSegment, S2sSession } from "../s2s/s2s-port.js";

/** What the runner asked the fake service to do, in order. */
export type FakeS2sCall =
  | { readonly kind: "response"; readonly instructions?: string | undefined; readonly outOfBand: boolean }
  | { readonly kind: "cancel"; readonly responseId?: string | undefined }
  | { readonly kind: "truncate"; readonly itemId: string; readonly audioEndMs: number }
  | { readonly kind: "delete"; readonly itemId: string }
  | { readonly kind: "remember"; readonly item: S2sHistoryItem }
  | { readonly kind: "results"; readonly results: readonly { readonly callId: string; readonly output: string }[]; readonly respond: boolean }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "update"; readonly segment: S2sSegment }
  | { readonly kind: "note"; readonly text: string };

/**
 * An in-memory speech-to-speech service for tests: a test plays the service (`respond`,
 * `speechStarted`, `toolCall`, …) and reads what the session asked of it in `calls`.
 */
export class FakeS2s implements S2sProvider {
  readonly kind = "fake";
  /** What the fake accepts; a test of G.711 passthrough sets it to include "pcmu". */
  audioFormats: readonly S2sAudioFormat[] = ["pcm16"];
  readonly opens: S2sOpenOptions[] = [];
  readonly calls: FakeS2sCall[] = [];
  audioInBytes = 0;
  /** Whether its sessions take notes (`S2sSession.note`); false leaves the method out, as a service that cannot. */
  takesNotes = true;
  #events: S2sEvents | undefined;
  #responses = 0;

  open(options: S2sOpenOptions, events: S2sEvents): Promise<S2sSession> {
    this.opens.push(options);
    this.#events = events;
    const calls = this.calls;
    const audioFormat = options.audioFormat ?? "pcm16";
    const rate = audioFormat === "pcm16" ? 24000 : 8000;
    return Promise.resolve({
      audioFormat,
      inputSampleRate: rate,
      outputSampleRate: rate,
      sendAudio: (pcm) => {
        this.audioInBytes += pcm.byteLength;
      },
      createResponse: (request) => calls.push({ kind: "response", instructions: request?.instructions, outOfBand: request?.outOfBand ?? false }),
      sendText: (text) => calls.push({ kind: "text", text }),
      cancelResponse: (responseId) => calls.push({ kind: "cancel", responseId }),
      truncate: (itemId, audioEndMs) => calls.push({ kind: "truncate", itemId, audioEndMs }),
      deleteItem: (itemId) => calls.push({ kind: "delete", itemId }),
      remember: (item) => calls.push({ kind: "remember", item }),
      sendToolResults: (results, respond) => calls.push({ kind: "results", results, respond }),
      update: (segment) => calls.push({ kind: "update", segment }),
      ...(this.takesNotes ? { note: (text: string) => calls.push({ kind: "note", text }) > 0 } : {}),
      close: () => Promise.resolve(),
    });
  }

  get events(): S2sEvents {
    if (this.#events === undefined) throw new Error("the session has not opened the service");
    return this.#events;
  }

  /** Start a response; returns its id. */
  start(outOfBand = false): string {
    const responseId = `resp_${++this.#responses}`;
    this.events.responseStarted({ responseId, outOfBand });
    return responseId;
  }

  /** Speak `text` in a response: `ms` of audio (24 kHz PCM16) with its transcript. */
  speak(responseId: string, text: string, ms: number): void {
    this.events.audio(new Uint8Array(48 * ms), { responseId, itemId: `item_${responseId}` });
    this.events.agentTranscript(text, { responseId, itemId: `item_${responseId}` });
  }

  /** End a response; "failed" is how a response lost with the service link ends. */
  done(responseId: string, status: "completed" | "cancelled" | "failed" = "completed", outOfBand = false): void {
    this.events.responseDone({ responseId, outOfBand, status });
  }
}
