/**
 * The Speex resampler (SpeexDSP's resample.c, compiled to WASM by `@echogarden/speex-resampler-wasm`,
 * BSD-3) behind the gateway's streaming shape: PCM16 mono in, PCM16 mono out, one stateful instance
 * per stream, chunks of any size. The `Resampler` facade (resample.ts) uses it when the module loads.
 *
 * Each stream owns a speex state and an in/out buffer pair in the module's heap (grown on demand,
 * freed by `close`). `process` copies the chunk in, calls `speex_resampler_process_int` until every
 * input sample is consumed, and copies the output out: the copies are part of the measured cost, as
 * they would be in the gateway. `speex_resampler_skip_zeros` is called once at the start, so the
 * output is aligned with the input like ours: the filter's delay is held back instead of being
 * played as leading silence (the sum of the two is the same either way).
 */

/** The Emscripten module the package exports (only what is used; the package ships no types). */
export interface SpeexModule {
  /** Returns the state pointer (0 on failure); writes an error code (0 = success) at `errPtr`. */
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errPtr: number): number;
  /** `inLenPtr` / `outLenPtr` point at uint32: input samples / output capacity before, consumed / produced after. Returns an error code. */
  _speex_resampler_process_int(state: number, channel: number, inPtr: number, inLenPtr: number, outPtr: number, outLenPtr: number): number;
  /** Input samples of delay (half the filter length). */
  _speex_resampler_get_input_latency(state: number): number;
  _speex_resampler_get_output_latency(state: number): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_reset_mem(state: number): number;
  _speex_resampler_destroy(state: number): void;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  /** Views of the heap; replaced when memory grows, so read them anew after any `_malloc`. */
  readonly HEAP16: Int16Array;
  readonly HEAPU32: Uint32Array;
}
type SpeexFactory = (moduleArg?: object) => Promise<SpeexModule>;

/** Which build loaded: the SIMD one if this Node runs it, else the plain one. */
export interface LoadedSpeex {
  readonly module: SpeexModule;
  readonly build: "simd" | "non-SIMD";
}

// Variable specifiers: the package has no type declarations.
const SPEEX_SIMD: string = "@echogarden/speex-resampler-wasm/simd";
const SPEEX_PLAIN: string = "@echogarden/speex-resampler-wasm";

/** Load the module: the SIMD build where this Node runs WASM SIMD, else the plain one. Rejects if neither loads. */
export async function loadSpeex(): Promise<LoadedSpeex> {
  try {
    const simd = (await import(SPEEX_SIMD)) as { default: SpeexFactory };
    return { module: await simd.default(), build: "simd" };
  } catch {
    const plain = (await import(SPEEX_PLAIN)) as { default: SpeexFactory };
    return { module: await plain.default(), build: "non-SIMD" };
  }
}

/** One speex stream: rates in Hz, quality 0 (fastest) … 10 (best). */
export class SpeexStream {
  readonly #m: SpeexModule;
  readonly #fromRate: number;
  readonly #toRate: number;
  #state: number;
  /** Two uint32 words: input length, output length (in samples). */
  readonly #lengths: number;
  #inPtr = 0;
  #outPtr = 0;
  /** Capacity of the heap buffers, in input samples (the output buffer is sized to match). */
  #capacity = 0;
  /** Samples in and out since the stream (re)started: `flush` ends the stream at ⌈in · to / from⌉. */
  #inCount = 0;
  #outCount = 0;

  constructor(m: SpeexModule, fromRate: number, toRate: number, quality: number) {
    this.#m = m;
    this.#fromRate = fromRate;
    this.#toRate = toRate;
    this.#lengths = m._malloc(8);
    const state = m._speex_resampler_init(1, fromRate, toRate, quality, this.#lengths);
    const err = m.HEAPU32[this.#lengths >> 2] ?? -1;
    if (state === 0 || err !== 0) throw new Error(`speex_resampler_init(${fromRate} → ${toRate}, q${quality}) failed: error ${err}`);
    this.#state = state;
    m._speex_resampler_skip_zeros(state);
  }

  /** Input samples `process` holds back (speex's own figure). */
  get latencySamples(): number {
    return this.inputLatency;
  }

  /** Input samples the filter delays by (speex's own figure). */
  get inputLatency(): number {
    return this.#m._speex_resampler_get_input_latency(this.#state);
  }

  process(chunk: Int16Array): Int16Array {
    const out = this.#process(chunk);
    this.#inCount += chunk.length;
    this.#outCount += out.length;
    return out;
  }

  /** Ends the stream: the held-back output (the input padded with silence), then a fresh stream. */
  flush(): Int16Array {
    const total = Math.ceil((this.#inCount * this.#toRate) / this.#fromRate);
    const tail = this.#process(new Int16Array(this.inputLatency + 1));
    const want = Math.max(0, total - this.#outCount);
    const out = new Int16Array(want);
    out.set(tail.subarray(0, want));
    this.#m._speex_resampler_reset_mem(this.#state);
    this.#m._speex_resampler_skip_zeros(this.#state);
    this.#inCount = 0;
    this.#outCount = 0;
    return out;
  }

  #process(chunk: Int16Array): Int16Array {
    const m = this.#m;
    this.#reserve(chunk.length);
    m.HEAP16.set(chunk, this.#inPtr >> 1);
    const outCapacity = this.#outCapacity(this.#capacity);
    const out = new Int16Array(this.#outCapacity(chunk.length));
    let consumed = 0;
    let produced = 0;
    // speex stops early when the output buffer is full: call again until all input is consumed.
    while (consumed < chunk.length) {
      const heap32 = m.HEAPU32;
      heap32[this.#lengths >> 2] = chunk.length - consumed;
      heap32[(this.#lengths >> 2) + 1] = outCapacity;
      const err = m._speex_resampler_process_int(this.#state, 0, this.#inPtr + 2 * consumed, this.#lengths, this.#outPtr, this.#lengths + 4);
      const used = m.HEAPU32[this.#lengths >> 2] ?? 0;
      const made = m.HEAPU32[(this.#lengths >> 2) + 1] ?? 0;
      if (err !== 0 || (used === 0 && made === 0)) throw new Error(`speex_resampler_process_int: error ${err}, ${used} consumed, ${made} produced`);
      if (produced + made > out.length) throw new Error(`speex produced more than the ${out.length} samples expected`);
      out.set(m.HEAP16.subarray(this.#outPtr >> 1, (this.#outPtr >> 1) + made), produced);
      consumed += used;
      produced += made;
    }
    return produced === out.length ? out : out.slice(0, produced);
  }

  close(): void {
    if (this.#state === 0) return;
    this.#m._speex_resampler_destroy(this.#state);
    this.#m._free(this.#lengths);
    if (this.#capacity > 0) {
      this.#m._free(this.#inPtr);
      this.#m._free(this.#outPtr);
    }
    this.#state = 0;
  }

  /** Output samples `input` samples can yield: ⌈input · to / from⌉ plus slack for speex's fractional carry. */
  #outCapacity(input: number): number {
    return Math.ceil((input * this.#toRate) / this.#fromRate) + 4;
  }

  #reserve(samples: number): void {
    if (samples <= this.#capacity) return;
    if (this.#capacity > 0) {
      this.#m._free(this.#inPtr);
      this.#m._free(this.#outPtr);
    }
    this.#inPtr = this.#m._malloc(2 * samples);
    this.#outPtr = this.#m._malloc(2 * this.#outCapacity(samples));
    if (this.#inPtr === 0 || this.#outPtr === 0) throw new Error("speex buffer allocation failed");
    this.#capacity = samples;
  }
}
