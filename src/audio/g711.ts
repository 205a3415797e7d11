/**
 * ITU-T Recommendation G.711 (11/88), "Pulse code modulation (PCM) of voice frequencies": μ-law and
 * A-law companding between 16-bit linear PCM and 8-bit codes, bit-exact with the reference algorithm
 * (the classic Sun Microsystems `g711.c` and the CCITT μ-law encoder with BIAS 0x84 / CLIP 32635).
 *
 * Pure functions over typed arrays; no imports. Decoding reads 256-entry tables; encoding reads
 * 65536-entry tables indexed by the sample's 16-bit two's-complement pattern. All four tables are
 * built once at module load from the per-sample reference functions below.
 *
 * Encoder choice, measured on Node 20 (4.8 M samples, 10 runs): table lookup ≈ 8 ms for either law,
 * versus segment search ≈ 14–27 ms (μ-law, exponent via 256-entry table) and ≈ 44–49 ms (A-law,
 * linear segment search) — the table is ~3× (μ) / ~5× (A) faster for 128 KiB of memory.
 */

// ---------------------------------------------------------------------------------------------------
// μ-law (G.711 §2, Table 2a/2b). Sign bit is 1 for positive; all bits are inverted on the line.
// ---------------------------------------------------------------------------------------------------

/** μ-law bias: 33 in 14-bit units (G.711 μ-law uses segment end points offset by 33), i.e. 33 << 2. */
const MULAW_BIAS = 0x84;
/** Magnitude clip, 32767 − 0x84, so the biased magnitude stays within 15 bits (top of segment 7). */
const MULAW_CLIP = 32635;

/** exponentOf[n] = position of the highest set bit of n (0 for n ≤ 1): the segment number. */
const EXPONENT = new Uint8Array(256);
for (let i = 2; i < 256; i++) EXPONENT[i] = (EXPONENT[i >> 1] ?? 0) + 1;

/** Reference μ-law encoder for one 16-bit sample (G.711 Table 2a decision values). */
function mulawFromLinear(sample: number): number {
  let magnitude = sample;
  let sign = 0;
  if (magnitude < 0) {
    sign = 0x80;
    magnitude = -magnitude;
  }
  if (magnitude > MULAW_CLIP) magnitude = MULAW_CLIP;
  magnitude += MULAW_BIAS;
  // After biasing, bit 7 is the lowest possible leading bit, so (magnitude >> 7) picks the segment.
  const exponent = EXPONENT[(magnitude >> 7) & 0xff] ?? 0;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Reference μ-law decoder for one code (G.711 Table 2a/2b output values, scaled to 16 bits). */
function linearFromMulaw(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & 0x0f) << 3) + MULAW_BIAS) << ((u & 0x70) >> 4);
  return u & 0x80 ? MULAW_BIAS - t : t - MULAW_BIAS;
}

// ---------------------------------------------------------------------------------------------------
// A-law (G.711 §3, Table 1a/1b). Sign bit is 1 for positive; even bits are inverted (XOR 0x55).
// ---------------------------------------------------------------------------------------------------

/** Segment end points of the 13-bit A-law magnitude (G.711 Table 1a decision values / 2). */
const ALAW_SEGMENT_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff] as const;

/** Reference A-law encoder for one 16-bit sample (the 13-bit G.711 input is sample >> 3). */
function alawFromLinear(sample: number): number {
  let value = sample >> 3;
  let mask: number;
  if (value >= 0) {
    mask = 0xd5; // sign bit 1 (positive) with the even-bit inversion 0x55
  } else {
    mask = 0x55; // sign bit 0 (negative)
    value = -value - 1; // one's complement: negative decision values mirror the positive ones
  }
  let segment = 0;
  while (segment < 8 && value > (ALAW_SEGMENT_END[segment] ?? 0)) segment++;
  if (segment >= 8) return 0x7f ^ mask; // beyond the last decision value: clip to the largest code
  const step = segment < 2 ? 1 : segment;
  return ((segment << 4) | ((value >> step) & 0x0f)) ^ mask;
}

/** Reference A-law decoder for one code (G.711 Table 1a/1b output values, scaled to 16 bits). */
function linearFromAlaw(code: number): number {
  const a = (code ^ 0x55) & 0xff;
  const segment = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  if (segment === 0) t += 8;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}

// ---------------------------------------------------------------------------------------------------
// Tables, built once.
// ---------------------------------------------------------------------------------------------------

const MULAW_DECODE = new Int16Array(256);
const ALAW_DECODE = new Int16Array(256);
for (let code = 0; code < 256; code++) {
  MULAW_DECODE[code] = linearFromMulaw(code);
  ALAW_DECODE[code] = linearFromAlaw(code);
}

/** Indexed by the sample's unsigned 16-bit pattern (sample & 0xffff). */
const MULAW_ENCODE = new Uint8Array(65536);
const ALAW_ENCODE = new Uint8Array(65536);
for (let bits = 0; bits < 65536; bits++) {
  const sample = (bits << 16) >> 16; // sign-extend
  MULAW_ENCODE[bits] = mulawFromLinear(sample);
  ALAW_ENCODE[bits] = alawFromLinear(sample);
}

function encodeWith(table: Uint8Array, pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[(pcm[i] ?? 0) & 0xffff] ?? 0;
  return out;
}

function decodeWith(table: Int16Array, bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i] ?? 0] ?? 0;
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Public API.
// ---------------------------------------------------------------------------------------------------

/** 16-bit linear PCM → G.711 μ-law, one byte per sample. */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  return encodeWith(MULAW_ENCODE, pcm);
}

/** G.711 μ-law → 16-bit linear PCM (range ±32124; 0x7F and 0xFF both decode to 0). */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return decodeWith(MULAW_DECODE, bytes);
}

/** 16-bit linear PCM → G.711 A-law, one byte per sample. */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  return encodeWith(ALAW_ENCODE, pcm);
}

/** G.711 A-law → 16-bit linear PCM (range ±32256; no zero code, smallest outputs ±8). */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  return decodeWith(ALAW_DECODE, bytes);
}
