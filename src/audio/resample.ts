/**
 * Streaming sample-rate conversion for PCM16 mono between the gateway's rates (8000, 16000,
 * 24000, 44100, 48000 Hz): one stateful `Resampler` per stream, chunks of any size, `flush` at
 * the end (process(a) + process(b) + flush() = process(a + b) + flush(), ⌈input · to / from⌉ in all).
 *
 * Engine: the Speex resampler (SpeexDSP, WASM; speex.ts) at quality 3 once `loadResampler()` has
 * loaded it — the gateway does so before it listens — else the plain-TypeScript polyphase filter
 * (polyphase.ts). Why Speex q3, from `npm run bench:resampler` (docs/benchmarks.md): about a tenth
 * of the polyphase filter's CPU on every telephony conversion, 3 ms of latency instead of 4.5 ms,
 * and aliases and images ≥ 88 dB down (the phone band needs > 60 dB); it gives up ~1 dB at 3.4 kHz.
 * A Speex stream's WASM memory is freed when its `Resampler` is garbage-collected.
 */
import { GatewayError } from "../errors.js";
import { bytesToSamples, samplesToBytes } from "./pcm.js";
import { PolyphaseResampler } from "./polyphase.js";
import { loadSpeex, SpeexStream, type SpeexModule } from "./speex.js";

/** Rates the resampler converts between (Hz). */
export const RESAMPLER_RATES = [8000, 16000, 24000, 44100, 48000] as const;
export type ResamplerRate = (typeof RESAMPLER_RATES)[number];

export type ResamplerEngine = "speex" | "polyphase";

/** Speex quality 0–10: 3 is its VoIP setting (see the header for the measurements). */
export const SPEEX_QUALITY = 3;

interface Engine {
  process(samples: Int16Array): Int16Array;
  flush(): Int16Array;
  readonly latencySamples: number;
}

let speex: SpeexModule | undefined;
let loading: Promise<ResamplerEngine> | undefined;

/** Load the Speex engine once; resolves with the engine new resamplers use (polyphase if it cannot load). */
export function loadResampler(): Promise<ResamplerEngine> {
  loading ??= loadSpeex().then(
    (loaded) => {
      speex = loaded.module;
      return "speex" as const;
    },
    () => "polyphase" as const,
  );
  return loading;
}

/** The engine a new `Resampler` gets right now. */
export function resamplerEngine(): ResamplerEngine {
  return speex === undefined ? "polyphase" : "speex";
}

const streams = new FinalizationRegistry<SpeexStream>((stream) => stream.close());

function isRate(rate: number): rate is ResamplerRate {
  return (RESAMPLER_RATES as readonly number[]).includes(rate);
}

export class Resampler {
  readonly fromRate: number;
  readonly toRate: number;
  readonly engine: ResamplerEngine;
  readonly #engine: Engine | undefined;

  /** `engine` pins one (tests, benchmarks); by default Speex once loaded, else polyphase. */
  constructor(fromRate: number, toRate: number, options: { readonly engine?: ResamplerEngine } = {}) {
    if (!isRate(fromRate) || !isRate(toRate)) {
      throw new GatewayError("audio", `Resampler: cannot convert ${fromRate} Hz → ${toRate} Hz; supported rates are ${RESAMPLER_RATES.join(", ")}`);
    }
    this.fromRate = fromRate;
    this.toRate = toRate;
    const wanted = options.engine ?? resamplerEngine();
    if (wanted === "speex" && speex === undefined) throw new GatewayError("audio", "Resampler: the Speex engine is not loaded (await loadResampler() first)");
    this.engine = wanted;
    if (fromRate === toRate) return;
    if (wanted === "speex" && speex !== undefined) {
      const stream = new SpeexStream(speex, fromRate, toRate, SPEEX_QUALITY);
      streams.register(this, stream);
      this.#engine = stream;
    } else {
      this.#engine = new PolyphaseResampler(fromRate, toRate);
    }
  }

  /** Input held back for lookahead, in input samples (0 when the rates are equal). */
  get latencySamples(): number {
    return this.#engine?.latencySamples ?? 0;
  }

  /** Resamples the next chunk. Returns what can be computed so far (a new array). */
  process(samples: Int16Array): Int16Array {
    return this.#engine === undefined ? samples.slice() : this.#engine.process(samples);
  }

  /** Ends the stream: returns the held-back output (input padded with silence) and resets. */
  flush(): Int16Array {
    return this.#engine === undefined ? new Int16Array(0) : this.#engine.flush();
  }
}

/** A stream's resampler from `fromRate` to `toRate` (Hz), or none when they match: the bytes then cross untouched. */
export function resamplerBetween(fromRate: number, toRate: number): Resampler | undefined {
  return fromRate === toRate ? undefined : new Resampler(fromRate, toRate);
}

/** PCM16 LE bytes through a stream's resampler; the same bytes (no copy) when it has none. */
export function resamplePcm(resampler: Resampler | undefined, pcm: Uint8Array): Uint8Array {
  return resampler === undefined ? pcm : samplesToBytes(resampler.process(bytesToSamples(pcm)));
}
