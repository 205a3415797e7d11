/**
 * Streaming sample-rate conversion for PCM16 mono, in plain TypeScript: the fallback engine of
 * `Resampler` (resample.ts) when the Speex WASM module cannot load. Pure: no I/O.
 *
 * Method: rational polyphase resampling with a Kaiser-windowed sinc (J. O. Smith, "Digital Audio
 * Resampling", https://ccrma.stanford.edu/~jos/resample/). For a ratio L/M (reduced by the gcd),
 * output sample n sits at input time t = n·M/L; it is the sum of the input around t weighted by
 * the low-pass kernel h(t − k), looked up from a table of L phases.
 *
 * Filter: cutoff at 0.9 × the lower rate's Nyquist (so 3.6 kHz for 8 kHz, 7.2 kHz for 16 kHz);
 * ZERO_CROSSINGS = 32 sinc zero crossings each side; Kaiser β = 8.5 (≈ 85 dB stopband). The
 * transition band is ≈ 0.08 × the lower rate wide, so it ends just below the lower Nyquist and
 * nothing above it aliases on the way down (a 6 kHz tone at 16k → 8k is gone, > 80 dB down).
 * Taps per output sample: 2·⌈32 · from / (0.9 · min(from, to))⌉ — 72 when upsampling,
 * 144 for 16k → 8k, 198 for 44.1k → 16k, 428 for 48k → 8k (≈ 3–7 ms of CPU per second of audio).
 *
 * Latency: the filter is linear-phase and centred, so output n is aligned with input time
 * n·M/L (no group delay in the output), but `process` holds back the last
 * 32 / (0.9 · min(from, to)) seconds of input until the samples after them arrive:
 * ≈ 4.5 ms when either side is 8 kHz, 2.25 ms at 16 kHz, 1.5 ms at 24 kHz, 0.8 ms for 44.1k ↔ 48k.
 * `flush` pads with zeros and returns the rest, so process(a) + process(b) + flush() equals
 * process(a + b) + flush() sample for sample, and the total length is ⌈input · to / from⌉.
 */
/** Sinc zero crossings on each side of the kernel's centre. */
const ZERO_CROSSINGS = 32;
/** Cutoff as a fraction of the lower rate's Nyquist frequency. */
const ROLLOFF = 0.9;
/** Kaiser window shape: β = 0.1102 · (A − 8.7) for A ≈ 85 dB stopband attenuation. */
const KAISER_BETA = 8.5;

interface Kernel {
  /** Upsampling factor L and downsampling factor M (reduced). */
  readonly up: number;
  readonly down: number;
  /** Half the taps: output at input position i + frac uses inputs i − half + 1 … i + half. */
  readonly half: number;
  /** L phases × 2·half taps, phase-major. */
  readonly taps: Float64Array;
}

const kernels = new Map<string, Kernel>();

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (power series; converges fast for x ≤ 20). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 64; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

function buildKernel(from: number, to: number): Kernel {
  const g = gcd(from, to);
  const up = to / g;
  const down = from / g;
  // Cutoff in cycles per input sample, and the kernel's half-width in input samples.
  const fc = (ROLLOFF * Math.min(from, to)) / 2 / from;
  const width = ZERO_CROSSINGS / (2 * fc);
  const half = Math.ceil(width);
  const n = 2 * half;
  const taps = new Float64Array(up * n);
  const i0Beta = besselI0(KAISER_BETA);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let j = 0; j < n; j++) {
      // Distance from the output position (i + p/L) to input i − half + 1 + j, in input samples.
      const x = p / up + half - 1 - j;
      const r = x / width;
      let h = 0;
      if (Math.abs(r) < 1) {
        const arg = 2 * fc * x;
        const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
        h = 2 * fc * sinc * (besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta);
      }
      taps[p * n + j] = h;
      sum += h;
    }
    // Unity DC gain on every phase (no phase-dependent ripple on a constant signal).
    for (let j = 0; j < n; j++) taps[p * n + j] = (taps[p * n + j] ?? 0) / sum;
  }
  return { up, down, half, taps };
}

function kernelFor(from: number, to: number): Kernel {
  const key = `${from}>${to}`;
  let kernel = kernels.get(key);
  if (kernel === undefined) {
    kernel = buildKernel(from, to);
    kernels.set(key, kernel);
  }
  return kernel;
}

/**
 * A stateful PCM16 mono resampler for one stream: feed chunks of any size to `process`, then
 * `flush` at the end of the stream (which also resets it for a new stream). Rates are checked by
 * the `Resampler` facade (resample.ts).
 */
export class PolyphaseResampler {
  readonly fromRate: number;
  readonly toRate: number;
  readonly #kernel: Kernel | undefined;
  /** Input from absolute index #historyStart on (only what later outputs still need). */
  #history: Int16Array = new Int16Array(0);
  #historyStart = 0;
  /** Input samples received since the stream started. */
  #inCount = 0;
  /** Next output: its input position is #pos + #phase / L. */
  #pos = 0;
  #phase = 0;
  #outCount = 0;

  constructor(fromRate: number, toRate: number) {
    this.fromRate = fromRate;
    this.toRate = toRate;
    this.#kernel = fromRate === toRate ? undefined : kernelFor(fromRate, toRate);
    this.#reset();
  }

  /** Input held back for lookahead, in input samples (0 when the rates are equal). */
  get latencySamples(): number {
    return this.#kernel?.half ?? 0;
  }

  /** Resamples the next chunk. Returns what can be computed so far (a new array). */
  process(samples: Int16Array): Int16Array {
    const kernel = this.#kernel;
    if (kernel === undefined) return samples.slice();
    const buffer = new Int16Array(this.#history.length + samples.length);
    buffer.set(this.#history, 0);
    buffer.set(samples, this.#history.length);
    this.#inCount += samples.length;
    const out = this.#run(kernel, buffer, Number.POSITIVE_INFINITY);
    const keep = this.#pos - kernel.half + 1;
    this.#history = buffer.slice(keep - this.#historyStart);
    this.#historyStart = keep;
    return out;
  }

  /** Ends the stream: returns the held-back output (input padded with silence) and resets. */
  flush(): Int16Array {
    const kernel = this.#kernel;
    if (kernel === undefined) return new Int16Array(0);
    const total = Math.ceil((this.#inCount * kernel.up) / kernel.down);
    const buffer = new Int16Array(this.#history.length + kernel.half);
    buffer.set(this.#history, 0);
    this.#inCount += kernel.half;
    const out = this.#run(kernel, buffer, total - this.#outCount);
    this.#reset();
    return out;
  }

  #reset(): void {
    // Before the stream, the input is silence: `half` zeros cover the first output's left taps.
    const half = this.#kernel?.half ?? 0;
    this.#history = new Int16Array(half);
    this.#historyStart = -half;
    this.#inCount = 0;
    this.#pos = 0;
    this.#phase = 0;
    this.#outCount = 0;
  }

  /** Computes up to `limit` outputs whose taps all lie inside `buffer` (which ends at #inCount). */
  #run(kernel: Kernel, buffer: Int16Array, limit: number): Int16Array {
    const { up, down, half, taps } = kernel;
    const n = 2 * half;
    // Outputs with #pos + half < #inCount: absolute indices below ⌈(#inCount − half) · L / M⌉.
    const ready = Math.ceil(((this.#inCount - half) * up) / down) - this.#outCount;
    const out = new Int16Array(Math.max(0, Math.min(limit, ready)));
    let count = 0;
    while (count < out.length && this.#pos + half < this.#inCount) {
      const base = this.#pos - half + 1 - this.#historyStart;
      const offset = this.#phase * n;
      let acc = 0;
      for (let j = 0; j < n; j++) acc += (buffer[base + j] ?? 0) * (taps[offset + j] ?? 0);
      const v = Math.round(acc);
      out[count++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      this.#phase += down;
      if (this.#phase >= up) {
        this.#pos += Math.floor(this.#phase / up);
        this.#phase %= up;
      }
    }
    this.#outCount += count;
    return count === out.length ? out : out.slice(0, count);
  }
}
