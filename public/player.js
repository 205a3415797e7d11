// Plays the agent's audio: raw PCM16 little-endian mono chunks (24 kHz by default), each
// scheduled as an AudioBufferSourceNode right after the one before, so chunks play gaplessly
// whatever size they arrive in. `bufferedMs()` is the audio queued but not yet played (what the
// page reports as `playback_progress`); `flush()` stops everything at once (barge-in, cancel,
// reset).

/** Scheduling slack for the first chunk after silence: absorbs network jitter. */
const START_LEAD_S = 0.06;

export class Player {
  /**
   * @param {AudioContext} context
   * @param {{ sampleRate?: number }} [options]
   */
  constructor(context, options = {}) {
    this.context = context;
    this.sampleRate = options.sampleRate ?? 24000;
    this.output = context.createGain();
    this.output.connect(context.destination);
    /** @type {Set<AudioBufferSourceNode>} */
    this.sources = new Set();
    this.nextTime = 0;
    /** @type {number | undefined} a byte left over from an odd-length chunk */
    this.carry = undefined;
    this.msQueued = 0;
  }

  /** Queue one chunk of PCM16 (an ArrayBuffer). Returns its duration in ms. */
  enqueue(data) {
    let bytes = new Uint8Array(data);
    if (this.carry !== undefined) {
      const joined = new Uint8Array(bytes.length + 1);
      joined[0] = this.carry;
      joined.set(bytes, 1);
      bytes = joined;
      this.carry = undefined;
    }
    if (bytes.length % 2 === 1) {
      this.carry = bytes[bytes.length - 1];
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    const samples = bytes.length / 2;
    if (samples === 0) return 0;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const buffer = this.context.createBuffer(1, samples, this.sampleRate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples; i++) channel[i] = view.getInt16(i * 2, true) / 0x8000;

    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    const now = this.context.currentTime;
    const start = this.nextTime > now ? this.nextTime : now + START_LEAD_S;
    source.start(start);
    this.nextTime = start + buffer.duration;
    this.sources.add(source);
    source.onended = () => {
      this.sources.delete(source);
      source.disconnect();
    };
    const ms = (samples / this.sampleRate) * 1000;
    this.msQueued += ms;
    return ms;
  }

  /** Milliseconds of queued audio not played yet. */
  bufferedMs() {
    return Math.max(0, (this.nextTime - this.context.currentTime) * 1000);
  }

  /** True while some queued audio has not finished playing. */
  get playing() {
    return this.bufferedMs() > 0;
  }

  /** Drop everything queued, now. */
  flush() {
    for (const source of this.sources) {
      source.onended = null;
      try {
        source.stop();
      } catch {
        // never started: nothing to stop
      }
      source.disconnect();
    }
    this.sources.clear();
    this.nextTime = 0;
    this.carry = undefined;
  }

  /** Output volume, 0…1. */
  set volume(value) {
    this.output.gain.value = value;
  }
}
