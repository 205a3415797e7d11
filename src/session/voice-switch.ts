import { MIC_SAMPLE_RATE, pcm16, type SessionAudio } from "../audio/rates.js";
import type { Logger } from "../log.js";
import { sameJson, type ProviderDescriptor } from "../manifest/index.js";
import type { TtsProvider, TtsSession, TtsStream, TtsStreamEvents } from "../pipeline/tts-port.js";
import type { PreparedSwitch } from "./hand-off.js";
import type { VoiceProviders } from "./voice-runner.js";

/**
 * The one TTS session a pipeline's voice loop holds for the whole call, with the voice behind it
 * replaceable: a hand-off puts the new agent's voice there between replies (a reply settles once
 * it has played, so no stream of the old voice is still speaking) and closes the old one.
 */
export class SwitchableTts implements TtsSession {
  #current: TtsSession;

  constructor(first: TtsSession) {
    this.#current = first;
  }

  /** The rate of the voice speaking now (Hz). */
  get sampleRate(): number {
    return this.#current.sampleRate;
  }

  stream(events: TtsStreamEvents): TtsStream {
    return this.#current.stream(events);
  }

  /** Speak with `next` from the next stream on; resolves once the previous voice has closed. */
  replace(next: TtsSession): Promise<void> {
    const previous = this.#current;
    this.#current = next;
    return previous.close();
  }

  close(): Promise<void> {
    return this.#current.close();
  }
}

/** The link's side of the voice: the rate it plays, and where the session declares the rates it speaks. */
export interface VoiceLink {
  readonly playbackRate: number;
  readonly useAudio: (audio: SessionAudio) => void;
}

/**
 * A pipeline's voice across hand-offs. Only what differs is reopened: an agent whose `tts` is the
 * one speaking keeps it; another voice is opened while the announcing reply runs and replaces it
 * when the hand-off is made. The caller's line (STT, the link) stays as it is.
 */
export class VoiceSwitch {
  readonly #voice: VoiceProviders;
  readonly #link: VoiceLink;
  readonly #log: Logger;
  #descriptor: ProviderDescriptor | undefined;
  #tts: SwitchableTts | undefined;

  /** `speaking`: the served agent's `tts`, which the voice runner opens first. */
  constructor(voice: VoiceProviders, link: VoiceLink, log: Logger, speaking: ProviderDescriptor | undefined) {
    this.#voice = voice;
    this.#link = link;
    this.#log = log;
    this.#descriptor = speaking;
  }

  /** The providers the voice runner opens with: the TTS session it gets is the switchable one. */
  get providers(): VoiceProviders {
    const tts = (descriptor: ProviderDescriptor): TtsProvider => {
      const provider = this.#voice.tts(descriptor);
      return {
        kind: provider.kind,
        open: async (options) => {
          const session = new SwitchableTts(await provider.open(options));
          this.#tts = session;
          return session;
        },
      };
    };
    // Not a spread: a gateway's providers may be a class instance, whose methods live on its prototype.
    const voice = this.#voice;
    const vad = voice.vad;
    return { stt: (descriptor) => voice.stt(descriptor), tts, ...(vad === undefined ? {} : { vad: (sampleRate: number) => vad.call(voice, sampleRate) }) };
  }

  /** The new agent's voice, opened now and put behind the loop's TTS at `commit`; undefined when it speaks with the voice speaking now. */
  async prepare(descriptor: ProviderDescriptor | undefined, signal: AbortSignal): Promise<PreparedSwitch | undefined> {
    const tts = this.#tts;
    if (descriptor === undefined || tts === undefined || sameJson(descriptor, this.#descriptor)) return undefined;
    const next = await this.#voice.tts(descriptor).open({ sampleRate: this.#link.playbackRate, signal });
    return {
      commit: () => {
        this.#descriptor = descriptor;
        // The link converts the voice's own rate for the listener: told again only when it changes.
        if (next.sampleRate !== tts.sampleRate) this.#link.useAudio({ input: pcm16(MIC_SAMPLE_RATE), output: pcm16(next.sampleRate) });
        tts.replace(next).catch((error: unknown) => this.#log.warn({ err: error }, "previous tts close failed"));
      },
      dispose: () => next.close(),
    };
  }
}
