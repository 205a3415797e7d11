// AudioWorklet: the microphone, as 16 kHz mono PCM16 in 20 ms frames.
//
// It runs on the audio thread at the context's rate (`sampleRate`, usually 48000 or 44100).
// Each 128-sample block is mixed to mono, low-passed below the target Nyquist (two biquads, a
// 4th-order Butterworth at 0.45 × the target rate) and resampled by linear interpolation. Every
// complete frame is posted to the main thread as an ArrayBuffer (transferred), with its RMS level.
//
// processorOptions: { targetRate = 16000, frameMs = 20 }

/** RBJ low-pass biquad coefficients, normalized by a0. */
function lowpass(cutoff, rate, q) {
  const w0 = (2 * Math.PI * cutoff) / rate;
  const cos = Math.cos(w0);
  const alpha = Math.sin(w0) / (2 * q);
  const a0 = 1 + alpha;
  return {
    b0: (1 - cos) / 2 / a0,
    b1: (1 - cos) / a0,
    b2: (1 - cos) / 2 / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha) / a0,
    x1: 0,
    x2: 0,
    y1: 0,
    y2: 0,
  };
}

function runBiquad(f, x) {
  const y = f.b0 * x + f.b1 * f.x1 + f.b2 * f.x2 - f.a1 * f.y1 - f.a2 * f.y2;
  f.x2 = f.x1;
  f.x1 = x;
  f.y2 = f.y1;
  f.y1 = y;
  return y;
}

class MicCaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const opts = (options && options.processorOptions) || {};
    const targetRate = opts.targetRate || 16000;
    const frameMs = opts.frameMs || 20;
    this.step = sampleRate / targetRate; // input samples per output sample
    this.frameSamples = Math.round((targetRate * frameMs) / 1000);
    this.frame = new Int16Array(this.frameSamples);
    this.fill = 0;
    this.sumSquares = 0;
    this.pos = 0; // where the next output sample falls, in input samples from the block start
    this.prev = 0; // the last filtered sample of the previous block
    this.block = new Float32Array(128);
    // Butterworth, 4th order: two sections with Q 0.5412 and 1.3066.
    this.filters = sampleRate > targetRate * 1.01 ? [lowpass(targetRate * 0.45, sampleRate, 0.5412), lowpass(targetRate * 0.45, sampleRate, 1.3066)] : [];
  }

  process(inputs) {
    const input = inputs[0];
    if (!input || input.length === 0 || !input[0]) return true;
    const n = input[0].length;
    if (this.block.length < n) this.block = new Float32Array(n);
    const x = this.block;
    const channels = input.length;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let c = 0; c < channels; c++) s += input[c][i];
      s /= channels;
      for (const f of this.filters) s = runBiquad(f, s);
      x[i] = s;
    }
    // Output samples at input positions pos, pos + step, … (x[-1] is the previous block's last).
    let t = this.pos;
    while (t < n - 1) {
      const i = Math.floor(t);
      const frac = t - i;
      const a = i < 0 ? this.prev : x[i];
      const b = x[i + 1];
      this.push(a + (b - a) * frac);
      t += this.step;
    }
    this.pos = t - n;
    this.prev = x[n - 1];
    return true;
  }

  push(sample) {
    const clamped = Math.max(-1, Math.min(1, sample));
    this.sumSquares += clamped * clamped;
    this.frame[this.fill++] = clamped < 0 ? Math.round(clamped * 0x8000) : Math.round(clamped * 0x7fff);
    if (this.fill === this.frameSamples) {
      const level = Math.sqrt(this.sumSquares / this.fill);
      const pcm = this.frame.buffer;
      this.port.postMessage({ pcm, level }, [pcm]); // transferred: the old view is empty now
      this.frame = new Int16Array(this.frameSamples);
      this.fill = 0;
      this.sumSquares = 0;
    }
  }
}

registerProcessor("mic-capture", MicCaptureProcessor);
