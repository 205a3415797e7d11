/**
 * `npm run bench:resampler`: the gateway's polyphase resampler (src/audio/resample.ts) against the
 * Speex resampler (src/audio/speex.ts) at qualities 3, 5 and 10, on the conversions the
 * gateway performs at the carrier edge. One process, no I/O but the report, deterministic signals,
 * about 10 s. Both run as the gateway runs them: one stateful instance per stream, fed 20 ms chunks.
 *
 * Per (conversion, resampler):
 * - CPU: µs of process CPU (user + system, `process.cpuUsage`) per second of audio, streaming 60 s
 *   of noise in 20 ms chunks; median of REPS runs after one warm-up run, runs interleaved.
 * - Tone levels: 1 s tones at 0.9 full scale (10 ms raised-cosine fades), analysed from 0.1 s to
 *   0.9 s of output. A tone's level is the amplitude of the least-squares sinusoid at its frequency
 *   in the output over the same in the input (dB).
 * - Stopband: down to 8 kHz, a tone above 4 kHz and the same fit at its alias; up from 8 kHz, a
 *   tone under 4 kHz and the fit at its image (dB under the tone). int16 output rounds a residue
 *   under ½ LSB to silence, so these tones carry seeded noise (σ ≈ 4 LSB); the noise alone gives
 *   the floor. The clean tones' whole-output RMS over input RMS (dB) is reported as well.
 * - Latency: an impulse in 1 s of silence. Group delay = where the output's peak lies (parabolic
 *   interpolation) − where the impulse was (ms); held back = input fed − output returned, worst
 *   chunk (ms). Their sum is the delay the resampler adds to the audio.
 * - Continuity: 2 s of noise in 20 ms chunks against the same in one call: max |difference| over
 *   the common length (LSB), and the difference in length (samples).
 *
 * Options: --no-docs (print only). Results go to stdout and to docs/benchmarks.md between the
 * bench:resampler markers.
 */
import { cpus } from "node:os";
import { concatSamples } from "../../src/audio/pcm.js";
import { Resampler } from "../../src/audio/resample.js";
import { docSection, publishSection, runBench } from "../shared/common.js";
import { loadSpeex, SpeexStream, type SpeexModule } from "../../src/audio/speex.js";

const RUN_LIMIT_MS = 60_000;
const SECTION = docSection("bench:resampler");

/** The gateway's frame (ms). */
const CHUNK_MS = 20;
/** Audio streamed per CPU run (s), and timed runs per (conversion, resampler) after one warm-up. */
const CPU_SECONDS = 60;
const REPS = 7;
/** Tone amplitude (LSB): 0.9 full scale. */
const TONE_AMPLITUDE = 0.9 * 32767;
/** Tone length and the analysed stretch of it (s): past every filter's warm-up and before its tail. */
const TONE_SECONDS = 1;
const ANALYSE_FROM_S = 0.1;
const ANALYSE_TO_S = 0.9;
/** Passband tones (Hz): in band for every conversion; 3.4 kHz is the top of the phone band. */
const PASS_HZ = [1000, 3000, 3400] as const;
/** The passband bar applies to these (Hz). */
const BAR_PASS_HZ = [1000, 3000] as const;
/** A tone in the transition band just under 4 kHz (Hz). */
const TRANSITION_HZ = 3800;
/**
 * Stopband pairs (Hz) around 4 kHz, the 8 kHz side's Nyquist: going down to 8 kHz a tone at `high`
 * folds to `low` (4.6 kHz lands on 3.4 kHz, the top of the phone band; 6 kHz on 2 kHz); going up
 * from 8 kHz a tone at `low` leaves its image at `high`.
 */
const STOP_PAIRS = [
  { high: 4600, low: 3400 },
  { high: 6000, low: 2000 },
] as const;
/** Noise added to the stopband tones so the int16 rounding of a tiny residue does not erase it (σ ≈ 4 LSB). */
const DITHER_SCALE = 7;
/** Telephony bar: alias products in the phone band at least this far down (dB). */
const ALIAS_BAR_DB = -60;
/** Passband bar: |level error| at BAR_PASS_HZ at most this (dB). */
const PASS_BAR_DB = 0.5;

const CONVERSIONS: readonly (readonly [number, number])[] = [
  [8000, 16000],
  [24000, 8000],
  [16000, 8000],
  [8000, 24000],
];

/** A stateful PCM16 mono stream, as the gateway uses one per call. */
interface Stream {
  process(chunk: Int16Array): Int16Array;
  close(): void;
}
interface Impl {
  readonly name: string;
  create(from: number, to: number): Stream;
}

function impls(speex: SpeexModule): Impl[] {
  const ours: Impl = {
    name: "ours (polyphase)",
    create: (from, to) => {
      const r = new Resampler(from, to, { engine: "polyphase" });
      return { process: (chunk) => r.process(chunk), close: () => undefined };
    },
  };
  const speexAt = (q: number): Impl => ({ name: `speex q${q}`, create: (from, to) => new SpeexStream(speex, from, to, q) });
  return [ours, speexAt(3), speexAt(5), speexAt(10)];
}

// ── signals (all deterministic) ─────────────────────────────────────────────────────────

/** Seeded xorshift32: uniform in [−0.5, 0.5). */
function uniform(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000 - 0.5;
  };
}

/** Noise ≈ Gaussian (sum of four uniforms), σ = scale / √3 LSB; the same for a given seed. */
function noiseSamples(n: number, scale: number, seed: number): Float64Array {
  const next = uniform(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = scale * (next() + next() + next() + next());
  return out;
}

const NOISE_SEED = 0x9e3779b9;
const DITHER_SEED = 0x2545f491;

/** Broadband noise, σ ≈ 3500 LSB (−19 dBFS). */
function noise(rate: number, seconds: number): Int16Array {
  return Int16Array.from(noiseSamples(Math.round(rate * seconds), 6000, NOISE_SEED), Math.round);
}

/** A tone (0 Hz: none) at TONE_AMPLITUDE with 10 ms raised-cosine fades, plus `dither` × the dither noise. */
function tone(hz: number, rate: number, dither = 0): Int16Array {
  const n = Math.round(rate * TONE_SECONDS);
  const fade = Math.round(rate * 0.01);
  const d = noiseSamples(n, DITHER_SCALE, DITHER_SEED);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const edge = Math.min(i, n - 1 - i);
    const gain = edge >= fade ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / fade);
    out[i] = Math.round((hz === 0 ? 0 : gain * TONE_AMPLITUDE * Math.sin((2 * Math.PI * hz * i) / rate)) + dither * (d[i] ?? 0));
  }
  return out;
}

function chunksOf(signal: Int16Array, rate: number): Int16Array[] {
  const size = (rate * CHUNK_MS) / 1000;
  const chunks: Int16Array[] = [];
  for (let i = 0; i < signal.length; i += size) chunks.push(signal.subarray(i, i + size));
  return chunks;
}

/** Streams `signal` in 20 ms chunks; also the worst hold-back after a chunk (ms): input fed − output returned. */
function stream(impl: Impl, from: number, to: number, signal: Int16Array): { out: Int16Array; heldMs: number } {
  const s = impl.create(from, to);
  const parts: Int16Array[] = [];
  let fed = 0;
  let returned = 0;
  let heldMs = 0;
  for (const chunk of chunksOf(signal, from)) {
    const out = s.process(chunk);
    parts.push(out);
    fed += chunk.length;
    returned += out.length;
    heldMs = Math.max(heldMs, (fed / from - returned / to) * 1000);
  }
  s.close();
  return { out: concatSamples(parts), heldMs };
}

// ── analysis ────────────────────────────────────────────────────────────────────────────

/** The analysed stretch of a signal at `rate` (a whole number of periods of every test tone). */
function steady(signal: Int16Array, rate: number): Int16Array {
  return signal.subarray(Math.round(ANALYSE_FROM_S * rate), Math.round(ANALYSE_TO_S * rate));
}

function rms(x: Int16Array | Float64Array): number {
  let sum = 0;
  for (const v of x) sum += v * v;
  return Math.sqrt(sum / x.length);
}

/** Amplitude of the least-squares sinusoid at `hz` (the stretch holds whole periods, so sin and cos are orthogonal). */
function amplitudeAt(x: Int16Array, hz: number, rate: number): number {
  let s = 0;
  let c = 0;
  for (let i = 0; i < x.length; i++) {
    const w = (2 * Math.PI * hz * i) / rate;
    s += (x[i] ?? 0) * Math.sin(w);
    c += (x[i] ?? 0) * Math.cos(w);
  }
  return (2 / x.length) * Math.hypot(s, c);
}

const dB = (ratio: number): number => 20 * Math.log10(ratio);

interface Figures {
  /** Median CPU, µs per second of audio. */
  cpuUs: number;
  /** Output level over input level at each PASS_HZ tone, and at the transition-band tone (dB). */
  passDb: number[];
  transitionDb: number;
  /** Per STOP_PAIRS: the alias (down) or image (up) over the input tone (dB), and the same with the noise alone (the floor). */
  stopDb: number[];
  stopFloorDb: number[];
  /** Downsampling only, per STOP_PAIRS: output RMS over input RMS for the tone without noise (dB; −∞ when it rounds to silence). */
  cleanRmsDb: number[];
  heldMs: number;
  groupDelayMs: number;
  /** Chunked vs whole: max |Δ| (LSB) over the common length, and the length difference (samples). */
  maxDiff: number;
  lengthDiff: number;
}

function levelDb(impl: Impl, from: number, to: number, hz: number): number {
  const input = tone(hz, from);
  const { out } = stream(impl, from, to, input);
  return dB(amplitudeAt(steady(out, to), hz, to) / amplitudeAt(steady(input, from), hz, from));
}

/**
 * Stopband for one pair: down, the tone at `high` and its alias at `low`; up, the tone at `low` and
 * its image at `high`. The amplitude of the least-squares sinusoid at the alias/image frequency in
 * the output, over the input tone's; the tone carries the dither noise, and the floor is the same
 * fit on the noise alone through the same resampler.
 */
function stopband(impl: Impl, from: number, to: number, pair: (typeof STOP_PAIRS)[number]): { db: number; floorDb: number; cleanDb: number } {
  const down = to < from;
  const [inHz, outHz] = down ? [pair.high, pair.low] : [pair.low, pair.high];
  const input = tone(inHz, from, 1);
  const reference = amplitudeAt(steady(input, from), inHz, from);
  const measured = amplitudeAt(steady(stream(impl, from, to, input).out, to), outHz, to);
  const floor = amplitudeAt(steady(stream(impl, from, to, tone(0, from, 1)).out, to), outHz, to);
  let cleanDb = Number.NaN;
  if (down) {
    const clean = tone(inHz, from);
    cleanDb = dB(rms(steady(stream(impl, from, to, clean).out, to)) / rms(steady(clean, from)));
  }
  return { db: dB(measured / reference), floorDb: dB(floor / reference), cleanDb };
}

function latency(impl: Impl, from: number, to: number): { heldMs: number; groupDelayMs: number } {
  // The impulse sits on the output grid (0.5 s), so a centred filter peaks on an output sample.
  const input = new Int16Array(from);
  const at = from / 2;
  input[at] = 16384;
  const { out, heldMs } = stream(impl, from, to, input);
  let peak = 1;
  for (let i = 1; i < out.length - 1; i++) if ((out[i] ?? 0) > (out[peak] ?? 0)) peak = i;
  const [a, b, c] = [out[peak - 1] ?? 0, out[peak] ?? 0, out[peak + 1] ?? 0];
  const offset = a - 2 * b + c === 0 ? 0 : (0.5 * (a - c)) / (a - 2 * b + c);
  return { heldMs, groupDelayMs: ((peak + offset) / to - at / from) * 1000 };
}

function continuity(impl: Impl, from: number, to: number): { maxDiff: number; lengthDiff: number } {
  const input = noise(from, 2);
  const chunked = stream(impl, from, to, input).out;
  const s = impl.create(from, to);
  const whole = s.process(input);
  s.close();
  let maxDiff = 0;
  for (let i = 0; i < Math.min(chunked.length, whole.length); i++) maxDiff = Math.max(maxDiff, Math.abs((chunked[i] ?? 0) - (whole[i] ?? 0)));
  return { maxDiff, lengthDiff: chunked.length - whole.length };
}

/** Median CPU (µs per second of audio) for every (conversion, impl), runs interleaved so drift hits all alike. */
function cpu(list: readonly Impl[]): number[][] {
  const samples = CONVERSIONS.map(() => list.map((): number[] => []));
  const inputs = CONVERSIONS.map(([from]) => chunksOf(noise(from, CPU_SECONDS), from));
  for (let rep = 0; rep <= REPS; rep++) {
    CONVERSIONS.forEach(([from, to], c) => {
      list.forEach((impl, k) => {
        const s = impl.create(from, to);
        const before = process.cpuUsage();
        for (const chunk of inputs[c] ?? []) s.process(chunk);
        const used = process.cpuUsage(before);
        s.close();
        if (rep > 0) samples[c]?.[k]?.push((used.user + used.system) / CPU_SECONDS);
      });
    });
  }
  return samples.map((row) => row.map(median));
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

// ── report ──────────────────────────────────────────────────────────────────────────────

interface Row {
  readonly from: number;
  readonly to: number;
  readonly impl: string;
  readonly f: Figures;
}

/** A stopband figure this close to its floor (dB) is a bound: the true rejection may be deeper. */
const NEAR_FLOOR_DB = 6;

const khz = (hz: number): string => `${hz / 1000}k`;
const conv = (r: { from: number; to: number }): string => `${khz(r.from)} → ${khz(r.to)}`;
const fixed = (v: number, digits: number): string => (Number.isFinite(v) ? (Math.abs(v) < 0.5 * 10 ** -digits ? 0 : v).toFixed(digits) : v < 0 ? "−∞" : "–");
const signed = (v: number, digits: number): string => (Number(fixed(v, digits)) > 0 ? "+" : "") + fixed(v, digits);
const nearFloor = (f: Figures, i: number): boolean => (f.stopDb[i] ?? 0) - (f.stopFloorDb[i] ?? 0) < NEAR_FLOOR_DB;
const oursOf = (rows: readonly Row[], r: Row): Row | undefined => rows.find((o) => o.from === r.from && o.to === r.to);

function table(rows: readonly Row[]): string {
  const head = [
    "conversion",
    "resampler",
    "CPU (µs per s of audio)",
    "CPU ÷ ours",
    ...PASS_HZ.map((hz) => `${hz / 1000} kHz level (dB)`),
    `${TRANSITION_HZ / 1000} kHz level (dB)`,
    ...STOP_PAIRS.map((p) => `stopband ${p.high / 1000} ↔ ${p.low / 1000} kHz (dB)`),
    "held back (ms)",
    "group delay (ms)",
    "added latency (ms)",
    "chunked vs whole: max abs. difference (LSB)",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|---|---|${head.slice(2).map(() => "--:").join("|")}|`];
  for (const r of rows) {
    const f = r.f;
    const ours = oursOf(rows, r)?.f.cpuUs ?? Number.NaN;
    const cells = [
      conv(r),
      r.impl,
      f.cpuUs.toFixed(0),
      `${(f.cpuUs / ours).toFixed(2)}×`,
      ...f.passDb.map((v) => signed(v, 3)),
      signed(f.transitionDb, 2),
      ...f.stopDb.map((v, i) => `${fixed(v, 1)}${nearFloor(f, i) ? "*" : ""}`),
      fixed(f.heldMs, 3),
      signed(f.groupDelayMs, 3),
      fixed(f.heldMs + f.groupDelayMs, 3),
      `${f.maxDiff}${f.lengthDiff === 0 ? "" : ` (length ${signed(f.lengthDiff, 0)})`}`,
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** The notes under the table: the stopband floor, the clean-tone RMS the brief asks for, speex's own delay. */
function notes(rows: readonly Row[], speexLatency: string): string[] {
  const floors = rows.flatMap((r) => r.f.stopFloorDb);
  const marked = rows.some((r) => r.f.stopDb.some((_, i) => nearFloor(r.f, i)));
  const heard = rows.flatMap((r) =>
    r.f.cleanRmsDb.flatMap((v, i) => (Number.isFinite(v) ? [`${conv(r)} ${r.impl} ${(STOP_PAIRS[i]?.high ?? 0) / 1000} kHz ${fixed(v, 1)} dB`] : [])),
  );
  const silent = rows.reduce((n, r) => n + r.f.cleanRmsDb.filter((v) => v === Number.NEGATIVE_INFINITY).length, 0);
  const all = rows.reduce((n, r) => n + r.f.cleanRmsDb.filter((v) => !Number.isNaN(v)).length, 0);
  return [
    `Stopband floor (the same noise without the tone, fitted at the same frequency): ${fixed(Math.max(...floors), 1)} dB at worst, ${fixed(Math.min(...floors), 1)} dB at best.` +
      (marked ? ` A * marks a figure within ${NEAR_FLOOR_DB} dB of its floor: the true rejection is at least that.` : ""),
    `The same down-conversion tones without the noise, as whole-output RMS over input RMS: ${silent} of ${all} outputs round to pure silence (−∞ dB)` +
      (heard.length === 0 ? "." : `; the others: ${heard.join(", ")}.`),
    `Speex's own figure for its delay at q5 (\`get_input_latency\`): ${speexLatency}.`,
  ];
}

/** Per implementation: its worst figures over the conversions. */
interface Summary {
  readonly impl: string;
  /** Least rejection of an alias (down) / image (up) in the stopband columns (dB, the highest value), and whether that is a floor-bound figure. */
  readonly aliasDb: number;
  readonly aliasBound: boolean;
  readonly imageDb: number;
  readonly imageBound: boolean;
  /** Largest |level error| at BAR_PASS_HZ (dB), and the lowest 3.4 kHz level (dB). */
  readonly passErrDb: number;
  readonly topDb: number;
  readonly latencyMs: number;
  /** CPU µs per s of audio, and CPU ÷ ours, lowest and highest over the conversions. */
  readonly cpuUsLow: number;
  readonly cpuUsHigh: number;
  readonly cpuLow: number;
  readonly cpuHigh: number;
  readonly continuous: boolean;
}

function summarize(rows: readonly Row[], impl: string): Summary {
  const mine = rows.filter((r) => r.impl === impl);
  const ratios = mine.map((r) => r.f.cpuUs / (oursOf(rows, r)?.f.cpuUs ?? Number.NaN));
  const stops = (down: boolean): { db: number; bound: boolean }[] =>
    mine.filter((r) => r.to < r.from === down).flatMap((r) => r.f.stopDb.map((db, i) => ({ db, bound: nearFloor(r.f, i) })));
  const worst = (list: { db: number; bound: boolean }[]): { db: number; bound: boolean } => list.reduce((a, b) => (b.db > a.db ? b : a));
  const alias = worst(stops(true));
  const image = worst(stops(false));
  const barIndex = BAR_PASS_HZ.map((hz) => PASS_HZ.indexOf(hz));
  return {
    impl,
    aliasDb: alias.db,
    aliasBound: alias.bound,
    imageDb: image.db,
    imageBound: image.bound,
    passErrDb: Math.max(...mine.flatMap((r) => barIndex.map((i) => Math.abs(r.f.passDb[i] ?? Number.NaN)))),
    topDb: Math.min(...mine.map((r) => r.f.passDb[PASS_HZ.indexOf(3400)] ?? Number.NaN)),
    latencyMs: Math.max(...mine.map((r) => r.f.heldMs + r.f.groupDelayMs)),
    cpuUsLow: Math.min(...mine.map((r) => r.f.cpuUs)),
    cpuUsHigh: Math.max(...mine.map((r) => r.f.cpuUs)),
    cpuLow: Math.min(...ratios),
    cpuHigh: Math.max(...ratios),
    continuous: mine.every((r) => r.f.maxDiff <= 1 && r.f.lengthDiff === 0),
  };
}

/** The verdict, from the numbers: the telephony bar first, then added latency, then CPU. */
function verdict(rows: readonly Row[], names: readonly string[]): string {
  const all = names.map((n) => summarize(rows, n));
  const ours = all[0]!;
  const span = (lo: number, hi: number, digits: number, unit = ""): string =>
    lo.toFixed(digits) === hi.toFixed(digits) ? `${lo.toFixed(digits)}${unit}` : `${lo.toFixed(digits)}–${hi.toFixed(digits)}${unit}`;
  const alias = (s: Summary): string => `${s.aliasBound ? "≤ " : ""}${fixed(s.aliasDb, 1)} dB`;
  const image = (s: Summary): string => `${s.imageBound ? "≤ " : ""}${fixed(s.imageDb, 1)} dB`;
  const describe = (s: Summary): string =>
    `${s.impl}: ${s === ours ? `${span(s.cpuUsLow, s.cpuUsHigh, 0)} µs of CPU per second of audio` : `${span(s.cpuLow, s.cpuHigh, 2, "×")} our CPU`}, ` +
    `up to ${s.latencyMs.toFixed(2)} ms added, aliases at ${alias(s)} and images at ${image(s)} at worst, 3.4 kHz at ${signed(s.topDb, 2)} dB`;
  // Who is best on each figure, at the printed precision (ties: all named). A depth some reach only
  // as a floor-bound figure names those: below the floor they cannot be told apart.
  const lowest = (label: string, key: (s: Summary) => number): string => {
    const low = Math.min(...all.map(key));
    return `${label}: ${all.filter((s) => key(s) === low).map((s) => s.impl).join(" and ")}`;
  };
  const deepest = (label: string, key: (s: Summary) => number, bound: (s: Summary) => boolean): string =>
    all.some(bound) ? `${label}: ${all.filter(bound).map((s) => s.impl).join(" and ")} (at the measurement floor)` : lowest(label, key);
  const winners = [
    lowest("CPU", (s) => Number(s.cpuHigh.toFixed(2))),
    lowest("latency", (s) => Number(s.latencyMs.toFixed(2))),
    deepest("alias rejection", (s) => Number(s.aliasDb.toFixed(1)), (s) => s.aliasBound),
    deepest("image rejection", (s) => Number(s.imageDb.toFixed(1)), (s) => s.imageBound),
    lowest("flatness at 3.4 kHz", (s) => Number(Math.abs(s.topDb).toFixed(2))),
  ];
  const meets = (s: Summary): boolean => s.aliasDb <= ALIAS_BAR_DB && s.passErrDb <= PASS_BAR_DB && s.continuous;
  const eligible = all.filter(meets);
  const failing = all.filter((s) => !meets(s)).map((s) => s.impl);
  const pick = [...eligible].sort((a, b) => (Math.abs(a.latencyMs - b.latencyMs) > 0.25 ? a.latencyMs - b.latencyMs : a.cpuHigh - b.cpuHigh))[0];
  const bar = `alias products ≤ ${ALIAS_BAR_DB} dB in the phone band, 1 and 3 kHz within ±${PASS_BAR_DB} dB, seamless chunks`;
  const met = failing.length === 0 ? `All four meet the telephony bar (${bar})` : `${failing.join(", ")} miss${failing.length === 1 ? "es" : ""} the telephony bar (${bar})`;
  if (pick === undefined) return `**Verdict:** ${all.map(describe).join("; ")}. Best on ${winners.join(", ")}. ${met}: none is fit for the carrier edge as measured.`;
  const name = pick === ours ? "its own polyphase resampler" : `the Speex resampler at quality ${pick.impl.replace("speex q", "")}`;
  let why = "";
  if (pick !== ours) {
    const mine = rows.filter((r) => r.impl === pick.impl);
    const quicker = mine.every((r) => r.f.heldMs + r.f.groupDelayMs < (oursOf(rows, r)?.f.heldMs ?? 0) + (oursOf(rows, r)?.f.groupDelayMs ?? 0));
    const cheaper = mine.every((r) => r.f.cpuUs < (oursOf(rows, r)?.f.cpuUs ?? 0));
    const costs = [
      pick.aliasDb > ours.aliasDb ? `aliases ${(pick.aliasDb - ours.aliasDb).toFixed(1)} dB less deep than ours (still ${(ALIAS_BAR_DB - pick.aliasDb).toFixed(1)} dB past the bar)` : "",
      pick.imageDb > ours.imageDb ? `images at ${fixed(pick.imageDb, 1)} dB against our ${fixed(ours.imageDb, 1)} dB` : "",
      pick.topDb < ours.topDb ? `${signed(pick.topDb, 2)} dB at 3.4 kHz against our ${signed(ours.topDb, 2)} dB` : "",
    ].filter((c) => c !== "");
    why =
      ` (${pick.latencyMs.toFixed(2)} ms against our ${ours.latencyMs.toFixed(2)} ms, at ${span(pick.cpuLow, pick.cpuHigh, 2, "×")} our CPU` +
      `${quicker && cheaper ? "; it is both quicker and cheaper than ours on every conversion" : ""})` +
      (costs.length > 0 ? `. What it gives up: ${costs.join("; ")}` : "");
  }
  return (
    `**Verdict:** ${all.map(describe).join("; ")}. Best on ${winners.join(", ")}. ${met}; ranked by added latency ` +
    `(ties within 0.25 ms broken by CPU), **the gateway should use ${name}**${why}.`
  );
}

function runLine(build: string, elapsedMs: number): string {
  const cpu = cpus();
  return (
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu[0]?.model.trim() ?? "unknown CPU"} (${cpu.length} cores), Node ${process.version}, ` +
    `${process.platform}/${process.arch}; speex ${build} build; CPU: median of ${REPS} runs of ${CPU_SECONDS} s of audio in ${CHUNK_MS} ms chunks; ${(elapsedMs / 1000).toFixed(0)} s in all.`
  );
}

async function main(): Promise<number> {
  const began = Date.now();
  const { module, build } = await loadSpeex();
  const list = impls(module);
  console.log(`bench:resampler: speex ${build} build; measuring CPU (${REPS + 1} × ${CPU_SECONDS} s of audio per resampler and conversion)`);
  const cpuUs = cpu(list);
  const rows: Row[] = [];
  CONVERSIONS.forEach(([from, to], c) => {
    for (const [k, impl] of list.entries()) {
      const stops = STOP_PAIRS.map((pair) => stopband(impl, from, to, pair));
      const f: Figures = {
        cpuUs: cpuUs[c]?.[k] ?? Number.NaN,
        passDb: PASS_HZ.map((hz) => levelDb(impl, from, to, hz)),
        transitionDb: levelDb(impl, from, to, TRANSITION_HZ),
        stopDb: stops.map((s) => s.db),
        stopFloorDb: stops.map((s) => s.floorDb),
        cleanRmsDb: to < from ? stops.map((s) => s.cleanDb) : [],
        ...latency(impl, from, to),
        ...continuity(impl, from, to),
      };
      rows.push({ from, to, impl: impl.name, f });
    }
  });
  const speexLatency = CONVERSIONS.map(([from, to]) => {
    const s = new SpeexStream(module, from, to, 5);
    const n = s.inputLatency;
    s.close();
    return `${conv({ from, to })} ${n} input samples (${((n / from) * 1000).toFixed(2)} ms)`;
  }).join(", ");
  const body = [
    runLine(build, Date.now() - began),
    "",
    table(rows),
    "",
    ...notes(rows, speexLatency).flatMap((line) => [line, ""]),
    verdict(
      rows,
      list.map((i) => i.name),
    ),
  ].join("\n");
  publishSection("bench:resampler", SECTION, body);
  return 0;
}

runBench("bench:resampler", RUN_LIMIT_MS, main);
