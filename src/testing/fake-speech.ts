import type { Clock, Timer } from "../clock.js";
import { bytesForMs } from "../audio/pcm.js";
import { PLAYBACK_SAMPLE_RATE } from "../audio/rates.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "../pipeline/stt-port.js";
import type { TtsOpenOptions, TtsProvider, TtsSession, TtsStream, TtsStreamEvents, WordTiming } from "../pipeline/tts-port.js";
import { guardStream } from "../pipeline/tts-port.js";
import type { Vad, VadFrame } from "../pipeline/vad.js";

/**
 * In-memory speech providers for tests: a test plays the STT vendor (`partial`, `final`, …)
 * and the TTS turns text into silent PCM of a known length, under the injected clock.
 */
export class FakeStt implements SttProvider {
  readonly kind = "fake";
  readonly sessions: FakeSttSession[] = [];
  /** Opens to refuse from now on (a vendor that is down). */
  failOpens = 0;
  /** Refuse every open as a recognizer that is not installed here. */
  unavailable = false;
  readonly #endpointing: boolean;

  constructor(options: { readonly endpointing?: boolean } = {}) {
    this.#endpointing = options.endpointing ?? true;
  }

  open(options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
    if (this.unavailable) {
      return Promise.reject(Object.assign(new Error("the local recognizer is not installed: install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us."), { unavailable: true }));
    }
    if (this.failOpens > 0) {
      this.failOpens -= 1;
      return Promise.reject(new Error("connection refused"));
    }
    const session = new FakeSttSession(options, events, this.#endpointing);
    this.sessions.push(session);
    return Promise.resolve(session);
  }

  /** The live session (the last opened). */
  get current(): FakeSttSession {
    const session = this.sessions.at(-1);
    if (session === undefined) throw new Error("no STT session was opened");
    return session;
  }
}

export class FakeSttSession implements SttSession {
  readonly endpointing: boolean;
  readonly droppedBytes = 0;
  readonly options: SttOpenOptions;
  /** Set it before `final()` to play a vendor that says where its finalized audio ends (ms of this session's audio). */
  finalizedAudioMs: number | undefined = undefined;
  audioBytes = 0;
  finalizeCalls = 0;
  closed = false;
  readonly #events: SttEvents;

  constructor(options: SttOpenOptions, events: SttEvents, endpointing: boolean) {
    this.options = options;
    this.#events = events;
    this.endpointing = endpointing;
  }

  sendAudio(pcm: Uint8Array): void {
    if (!this.closed) this.audioBytes += pcm.byteLength;
  }

  finalize(): void {
    this.finalizeCalls += 1;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  speechStarted(): void {
    this.#events.speechStarted();
  }

  partial(text: string, eotConfidence?: number): void {
    this.#events.partial(text, eotConfidence === undefined ? {} : { eotConfidence });
  }

  final(text: string, endOfTurn = true): void {
    this.#events.final(text, { endOfTurn });
  }

  /** The socket drops without a close (the gateway should reconnect and replay). */
  drop(): void {
    this.closed = true;
    this.#events.error(new Error("socket dropped"), { recoverable: true });
    this.#events.closed({ expected: false });
  }
}

/**
 * A TTS that "speaks" `msPerChar` of silence per character, word by word, after `latencyMs`, at
 * the rate it was asked for (a vendor that offers every rate) unless told its one `sampleRate`.
 */
export class FakeTts implements TtsProvider {
  readonly kind = "fake";
  readonly spoken: string[] = [];
  readonly cancelled: string[] = [];
  /** The rate each `open` asked for (Hz), in order. */
  readonly requestedRates: number[] = [];
  /** Streams opened so far, on every session. */
  streamsOpened = 0;
  readonly #clock: Clock;
  readonly #msPerChar: number;
  readonly #latencyMs: number;
  readonly #sampleRate: number | undefined;
  readonly #level: number;

  /** `level`: every sample's value (default 0, silence); a test that checks where agent audio went sets one it can see. */
  constructor(clock: Clock, options: { readonly msPerChar?: number; readonly latencyMs?: number; readonly sampleRate?: number; readonly level?: number } = {}) {
    this.#clock = clock;
    this.#level = options.level ?? 0;
    this.#msPerChar = options.msPerChar ?? 50;
    this.#latencyMs = options.latencyMs ?? 0;
    this.#sampleRate = options.sampleRate;
  }

  /** Without options (a test opening it directly): 24 kHz, the browser's playback rate. */
  open(options?: TtsOpenOptions): Promise<TtsSession> {
    if (options !== undefined) this.requestedRates.push(options.sampleRate);
    const sampleRate = this.#sampleRate ?? options?.sampleRate ?? PLAYBACK_SAMPLE_RATE;
    return Promise.resolve({
      sampleRate,
      stream: (events: TtsStreamEvents) => this.#stream(events, sampleRate),
      close: () => Promise.resolve(),
    });
  }

  #stream(events: TtsStreamEvents, sampleRate: number): TtsStream {
    this.streamsOpened += 1;
    const guard = guardStream(events);
    const timers: Timer[] = [];
    let at = this.#clock.now() + this.#latencyMs;
    let offsetMs = 0;
    let ended = false;
    let pending = 0;
    const texts: string[] = [];
    const finish = (): void => {
      if (ended && pending === 0) guard.events.done();
    };
    return {
      push: (text) => {
        texts.push(text);
        this.spoken.push(text);
        for (const word of text.trim().split(/\s+/).filter(Boolean)) {
          const ms = (word.length + 1) * this.#msPerChar;
          const timing: WordTiming = { word, startMs: offsetMs, endMs: offsetMs + ms };
          offsetMs += ms;
          at = Math.max(at, this.#clock.now());
          const due = at - this.#clock.now();
          at += ms;
          pending += 1;
          timers.push(
            this.#clock.setTimeout(() => {
              pending -= 1;
              guard.events.words([timing]);
              guard.events.audio(this.#pcm(bytesForMs(ms, sampleRate)));
              finish();
            }, due),
          );
        }
      },
      end: () => {
        ended = true;
        finish();
      },
      cancel: () => {
        guard.cancel();
        for (const timer of timers) timer.cancel();
        this.cancelled.push(texts.join(" "));
      },
    };
  }

  /** `bytes` of PCM16 at the fake's level. */
  #pcm(bytes: number): Uint8Array {
    const pcm = new Uint8Array(bytes);
    if (this.#level !== 0) new DataView(pcm.buffer).setInt16(0, this.#level, true);
    for (let i = 2; i + 1 < bytes && this.#level !== 0; i += 2) pcm.copyWithin(i, 0, 2);
    return pcm;
  }
}

/**
 * A VAD for tests: a 20 ms frame is speech when any of its samples is non-zero, so a test
 * sends silence as zeros and "speech" as any non-zero bytes.
 */
export function fakeVad(sampleRate: number): Vad {
  const frameBytes = bytesForMs(20, sampleRate);
  let pending = new Uint8Array(0);
  let atMs = 0;
  let closed = false;
  return {
    sampleRate,
    vadRate: sampleRate,
    frameMs: 20,
    mode: 2,
    push(pcm) {
      if (closed) return [];
      const joined = new Uint8Array(pending.byteLength + pcm.byteLength);
      joined.set(pending);
      joined.set(pcm, pending.byteLength);
      const frames: VadFrame[] = [];
      let offset = 0;
      for (; offset + frameBytes <= joined.byteLength; offset += frameBytes) {
        atMs += 20;
        frames.push({ speech: joined.subarray(offset, offset + frameBytes).some((b) => b !== 0), atMs });
      }
      pending = joined.slice(offset);
      return frames;
    },
    close() {
      closed = true;
    },
  };
}
