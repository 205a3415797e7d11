import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { concatSamples, rms } from "../../../src/audio/pcm.js";
import { Resampler } from "../../../src/audio/resample.js";
import { readWav } from "../../../src/audio/wav.js";
import { GatewayError } from "../../../src/errors.js";
import { cutSentences, localTts, MAX_SENTENCE_CHARS } from "../../../src/pipeline/providers/tts/local.js";
import { crashLocalTtsWorkerForTesting, localTtsPoolStats, poisonNextLocalTtsSentenceForTesting, shutdownLocalTts } from "../../../src/pipeline/providers/tts/local-pool.js";
import { espeakWords, estimateWords, synthesize } from "../../../src/pipeline/providers/tts/local-worker.js";
import type { TtsSession } from "../../../src/pipeline/tts-port.js";
import { speak, ttsRecorder } from "../../helpers/tts-recorder.js";
import { closeAfterEach } from "../../helpers/cleanups.js";

const HELLO = "Hello there. How are you?";

const closing = closeAfterEach();
// The pool is per process: end its workers so the test process can exit.
afterAll(() => shutdownLocalTts());

async function open(options: Record<string, unknown> = {}, sampleRate = 24000): Promise<TtsSession> {
  return closing(await localTts({ kind: "local", options }).open({ sampleRate }));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A hang guard, not a speed bound: how long a synthesis worker may take to start (tsx, then the
 * flite WASM) while the rest of the suite loads both cores. This test starts three.
 */
const BOOT_MS = 30_000;

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await sleep(5);
  }
}

/** Largest gap (ms) between the ticks of a 1 ms interval while `work` runs: how long the event loop was held. */
async function maxLoopGap(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 1);
  try {
    await sleep(20);
    last = performance.now();
    max = 0;
    await work();
    max = Math.max(max, performance.now() - last);
  } finally {
    clearInterval(timer);
  }
  return max;
}

describe("localTts: flite", () => {
  it("speaks two sentences at 24 kHz: non-silent, plausible length, in order, words timed, done once", async () => {
    const session = await open();
    expect(session.sampleRate).toBe(24000);
    const rec = await speak(session, HELLO);

    const samples = rec.samples();
    const seconds = samples.length / 24000;
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(3);
    expect(rms(samples)).toBeGreaterThan(0.02);
    // Exactly the two sentences, resampled 16 → 24 kHz: 1.5 × their native samples.
    const first = await synthesize("flite", "Hello there. ", 1);
    const second = await synthesize("flite", "How are you?", 1);
    expect(samples.length).toBe(Math.ceil((first.samples.length + second.samples.length) * 1.5));

    // One timing per word, in order, each sentence's words before its audio; the second sentence's after the first's audio.
    expect(rec.words.map((w) => w.word)).toEqual(["Hello", "there.", "How", "are", "you?"]);
    for (let i = 1; i < rec.words.length; i++) expect(rec.words[i]!.startMs).toBeGreaterThanOrEqual(rec.words[i - 1]!.endMs);
    const firstMs = (first.samples.length / 16000) * 1000;
    expect(rec.words[1]!.endMs).toBeLessThanOrEqual(firstMs + 1);
    expect(rec.words[2]!.startMs).toBeGreaterThanOrEqual(firstMs);
    expect(rec.words.at(-1)!.endMs).toBeLessThanOrEqual(seconds * 1000);
    expect(rec.order[0]).toBe("words");
    expect(rec.order.filter((e) => e === "words")).toHaveLength(2);

    // ~100 ms chunks (2400 samples; each sentence's last is what remains), all whole samples.
    for (const chunk of rec.chunks) expect(chunk.length % 2).toBe(0);
    for (const chunk of rec.chunks) expect(chunk.length / 2).toBeLessThanOrEqual(2400 * 1.05);
    expect(rec.chunks.filter((c) => Math.abs(c.length / 2 - 2400) < 2400 * 0.05).length).toBeGreaterThanOrEqual(rec.chunks.length - 3);

    await sleep(100);
    expect(rec.doneCount()).toBe(1);
    expect(rec.order.at(-1)).toBe("done");
  });

  // 16 kHz: flite's own samples; 8 kHz (a phone line): flite's 16 kHz converted once, straight to 8 kHz, so the link only encodes.
  it.each([16000, 8000])("at %i Hz delivers flite's samples converted once (none at its own 16 kHz): the sentences back to back, in order", async (rate) => {
    const session = await open({}, rate);
    expect(session.sampleRate).toBe(rate);
    const rec = await speak(session, HELLO);
    const first = await synthesize("flite", "Hello there. ", 1);
    const second = await synthesize("flite", "How are you?", 1);
    const once = new Resampler(16000, rate);
    const expected = concatSamples([once.process(concatSamples([first.samples, second.samples])), once.flush()]);
    expect(Buffer.from(rec.samples().buffer).equals(Buffer.from(expected.buffer))).toBe(true);
  });

  it("speaks exactly what flite under node:wasi spoke for the fixtures (the in-memory WASI is faithful)", async () => {
    const fixture = readWav(new Uint8Array(await readFile("fixtures/audio/hello.wav")));
    const rec = await speak(await open({}, 16000), "Hello there.");
    expect(Buffer.from(rec.samples().buffer).equals(Buffer.from(fixture.samples.buffer, fixture.samples.byteOffset, fixture.samples.byteLength))).toBe(true);
  });

  it("reports the requested rate when the resampler makes it, else the nearest", async () => {
    for (const rate of [8000, 16000, 24000, 44100, 48000]) expect((await open({}, rate)).sampleRate).toBe(rate);
    expect((await open({}, 22050)).sampleRate).toBe(24000);
    expect((await open({}, 11025)).sampleRate).toBe(8000);
  });

  it("text pushed in pieces is cut at sentence ends: the same audio as one push", async () => {
    const session = await open({}, 16000);
    const whole = await speak(session, HELLO);
    const pieces = await speak(session, "Hello th", "ere. How ", "are", " you?");
    expect(Buffer.concat(pieces.chunks).equals(Buffer.concat(whole.chunks))).toBe(true);
    expect(pieces.words).toEqual(whole.words);
  });

  it("speed shortens the speech", async () => {
    const normal = await speak(await open({}, 16000), "Speed makes this shorter.");
    const fast = await speak(await open({ speed: 2 }, 16000), "Speed makes this shorter.");
    const ratio = fast.samples().length / normal.samples().length;
    expect(ratio).toBeGreaterThan(0.4);
    expect(ratio).toBeLessThan(0.6);
  });

  it("rejects a bad voice or speed at build time", () => {
    expect(() => localTts({ kind: "local", options: { voice: "nope" } })).toThrow(GatewayError);
    expect(() => localTts({ kind: "local", options: { speed: 5 } })).toThrow(/tts\.options\.speed/);
  });
});

describe("localTts: espeak", () => {
  it("speaks with eSpeak-NG at 24 kHz and 16 kHz, with its own word timings", async () => {
    for (const rate of [24000, 16000]) {
      const session = await open({ voice: "espeak" }, rate);
      expect(session.sampleRate).toBe(rate);
      const rec = await speak(session, HELLO);
      const samples = rec.samples();
      const seconds = samples.length / rate;
      expect(seconds).toBeGreaterThan(0.8);
      expect(seconds).toBeLessThan(3);
      expect(rms(samples)).toBeGreaterThan(0.02);
      // eSpeak-NG speaks 22.05 kHz: converted, the length follows the rate.
      const native = (await synthesize("espeak", "Hello there. ", 1)).samples.length + (await synthesize("espeak", "How are you?", 1)).samples.length;
      expect(Math.abs(samples.length - (native * rate) / 22050)).toBeLessThan(4);
      expect(rec.words.map((w) => w.word)).toEqual(["Hello", "there.", "How", "are", "you?"]);
      expect(rec.words[0]!.startMs).toBe(0);
      for (let i = 1; i < rec.words.length; i++) expect(rec.words[i]!.startMs).toBeGreaterThan(rec.words[i - 1]!.startMs);
      expect(rec.doneCount()).toBe(1);
    }
    // Loads eSpeak-NG's WASM and speaks six times: seconds on a loaded 2-core machine (CI failed at the default 5 s).
  }, 30_000);
});

describe("localTts: streams", () => {
  it("cancel mid-stream: no audio or words after it, done never fires, queued sentences dropped", async () => {
    const session = await open();
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("This is the first sentence. ");
    for (let i = 0; i < 8; i++) stream.push(`Here is queued sentence number ${i}, which should never be spoken. `);
    stream.end();
    await rec.firstAudio;
    stream.cancel();
    const seen = rec.order.length;
    await until(() => localTtsPoolStats().busy === 0 && localTtsPoolStats().queued === 0);
    await sleep(200);
    expect(rec.order.length).toBe(seen);
    expect(rec.order).not.toContain("done");
    // Only the first sentence's words were delivered.
    expect(rec.words.map((w) => w.word)).toEqual(["This", "is", "the", "first", "sentence."]);
  });

  it("cancel before any audio delivers nothing", async () => {
    const session = await open();
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("Cancelled before it is heard. And this too.");
    stream.end();
    stream.cancel();
    await until(() => localTtsPoolStats().busy === 0);
    await sleep(100);
    expect(rec.order).toEqual([]);
  });

  // Twelve flite runs on a two-worker pool: seconds of CPU, more on a loaded machine (the default 5 s is not a bound on them).
  it("many concurrent streams, over several sessions, all complete with their own audio", { timeout: 60_000 }, async () => {
    const sessions = [await open(), await open({}, 16000), await open({ voice: "espeak" })];
    const runs = Array.from({ length: 12 }, (_, i) => {
      const session = sessions[i % sessions.length]!;
      const rec = ttsRecorder();
      const stream = session.stream(rec.events);
      stream.push(`This is stream number ${i}. It says two sentences.`);
      stream.end();
      return { rec, rate: session.sampleRate };
    });
    expect(localTtsPoolStats().workers).toBeLessThanOrEqual(2);
    const results = await Promise.all(runs.map((r) => r.rec.ended));
    expect(results.every((r) => r === "done")).toBe(true);
    for (const { rec, rate } of runs) {
      expect(rec.samples().length / rate).toBeGreaterThan(1);
      expect(rms(rec.samples())).toBeGreaterThan(0.02);
      expect(rec.words.map((w) => w.word).slice(0, 4)).toEqual(["This", "is", "stream", "number"]);
      expect(rec.doneCount()).toBe(1);
    }
  });

  it("close cancels the session's streams; the pool stays for other sessions", async () => {
    const closed = await open();
    const other = await open();
    const rec = ttsRecorder();
    const stream = closed.stream(rec.events);
    stream.push("A long goodbye that the close cuts short. And more of it. And more.");
    stream.end();
    await rec.firstAudio;
    await closed.close();
    const seen = rec.order.length;
    expect(localTtsPoolStats().workers).toBeGreaterThan(0);
    await speak(other, "Still here.");
    await sleep(100);
    expect(rec.order.length).toBe(seen);
    expect(rec.order).not.toContain("done");

    const late = ttsRecorder();
    closed.stream(late.events);
    expect(await late.ended).toBeInstanceOf(GatewayError);
  });

  it("synthesis does not hold the event loop (a 1 ms interval keeps ticking)", { timeout: 60_000 }, async () => {
    // Long sentences (~250 chars, no sentence end inside): each is one flite run of ~13 s of speech.
    // (Also the regression test for node:wasi, which crashed the process after a few of these.)
    const sentence = "the quick brown fox jumps over the lazy dog while the band plays on and on, ".repeat(3).trim();
    const paragraph = Array.from({ length: 10 }, (_, i) => `Part ${i}, ${sentence}.`).join(" ");
    expect(Math.max(...cutSentences(paragraph).sentences.map((s) => s.length))).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    const session = await open();
    await speak(session, "Warm up."); // worker started and flite compiled: measure steady state
    // One of those sentences synthesized on this thread instead, for comparison: the loop stalls for the whole run.
    await synthesize("flite", "Warm up.", 1);
    const mainThreadGap = await maxLoopGap(() => synthesize("flite", `Part 0, ${sentence}.`, 1));
    // A gap can also come from other processes taking the CPU (a busy CI box): that is transient,
    // while synthesis on this thread would hold the loop on every attempt. So: the best of up to 3,
    // against the main-thread gap measured in the same run (seen: 34 ms against 369 ms), not a wall-clock bound.
    const bound = mainThreadGap / 4;
    const gaps: number[] = [];
    let seconds = 0;
    while (gaps.length < 3 && !gaps.some((g) => g < bound)) {
      gaps.push(
        await maxLoopGap(async () => {
          const rec = await speak(session, paragraph);
          seconds = rec.samples().length / 24000;
        }),
      );
    }
    const workerGap = Math.min(...gaps);
    console.log(`${seconds.toFixed(1)} s of speech: max loop gap ${gaps.map((g) => g.toFixed(1)).join(", ")} ms with the worker pool; ${mainThreadGap.toFixed(1)} ms for one sentence on the main thread`);
    expect(seconds).toBeGreaterThan(100);
    expect(workerGap).toBeLessThan(bound);
  });
});

describe("localTts: the worker pool", () => {
  it("survives a worker crash: the worker is replaced and later streams work", async () => {
    const session = await open();
    await speak(session, "Before the crash.");
    const before = localTtsPoolStats().workers;
    expect(before).toBeGreaterThan(0);
    expect(crashLocalTtsWorkerForTesting()).toBe(true);
    await until(() => localTtsPoolStats().workers === before - 1);
    const runs = [await speak(session, "After the crash."), await speak(session, "And again. Twice.")];
    for (const rec of runs) expect(rms(rec.samples())).toBeGreaterThan(0.02);
  });

  it("a crash while streams are in progress: the sentence it held is retried on a new worker, so all complete", async () => {
    const session = await open();
    const recs = Array.from({ length: 4 }, () => ttsRecorder());
    for (const rec of recs) {
      const stream = session.stream(rec.events);
      stream.push("One sentence here. Another sentence there. A third one to be sure.");
      stream.end();
    }
    await recs[0]!.firstAudio;
    crashLocalTtsWorkerForTesting();
    crashLocalTtsWorkerForTesting();
    // A worker busy in flite reads the crash message after its sentence, so it dies holding the next one.
    expect(await Promise.all(recs.map((r) => r.ended))).toEqual(["done", "done", "done", "done"]);
    for (const rec of recs) expect(rec.words).toHaveLength(12);
    expect(rms((await speak(session, "Recovered.")).samples())).toBeGreaterThan(0.02);
  });

  it("a sentence whose worker dies twice fails its stream (an error, not a hang); the pool goes on", async () => {
    await shutdownLocalTts();
    const session = await open();
    await until(() => localTtsPoolStats().workers === 1 && localTtsPoolStats().busy === 0, BOOT_MS); // the warm-up
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    // A poisoned sentence kills every worker that takes it: the first, then the one it is retried on.
    poisonNextLocalTtsSentenceForTesting();
    stream.push("A poisoned sentence.");
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(GatewayError);
    expect((outcome as Error).message).toMatch(/local tts: the synthesis worker crashed/);
    expect(rec.chunks).toEqual([]);
    expect(localTtsPoolStats().started).toBe(2);
    expect(rms((await speak(session, "The pool goes on.")).samples())).toBeGreaterThan(0.02);
  }, 4 * BOOT_MS);

  it("shutdownLocalTts ends the workers and fails what was pending; the next use starts a new pool", async () => {
    const session = await open();
    await speak(session, "Workers are up.");
    expect(localTtsPoolStats().workers).toBeGreaterThan(0);
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("Pending when the pool shuts down. And another.");
    stream.end();
    await until(() => localTtsPoolStats().busy > 0);
    await shutdownLocalTts();
    expect(localTtsPoolStats()).toEqual({ workers: 0, busy: 0, queued: 0, started: 0 });
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(GatewayError);
    expect((outcome as Error).message).toMatch(/shut down/);
    expect(rms((await speak(session, "A new pool.")).samples())).toBeGreaterThan(0.02);
    await shutdownLocalTts();
    expect(localTtsPoolStats().workers).toBe(0);
  });

  it("runs under plain `node --import tsx` too, and the process exits after shutdownLocalTts", async () => {
    const dir = await mkdtemp(join(tmpdir(), "switchboard-local-tts-"));
    closing({ close: () => rm(dir, { recursive: true, force: true }) });
    const script = join(dir, "speak.mts");
    const local = pathToFileURL(join(process.cwd(), "src/pipeline/providers/tts/local.ts")).href;
    const pool = pathToFileURL(join(process.cwd(), "src/pipeline/providers/tts/local-pool.ts")).href;
    await writeFile(
      script,
      `import { localTts } from ${JSON.stringify(local)};
import { shutdownLocalTts } from ${JSON.stringify(pool)};
const session = await localTts({ kind: "local", options: {} }).open({ sampleRate: 24000 });
let bytes = 0;
await new Promise<void>((resolve, reject) => {
  const stream = session.stream({ audio: (pcm) => { bytes += pcm.length; }, words: () => {}, done: resolve, error: reject });
  stream.push("Hello from a child process.");
  stream.end();
});
await shutdownLocalTts();
console.log(JSON.stringify({ bytes }));
`,
    );
    const tsx = import.meta.resolve("tsx");
    const child = spawn(process.execPath, ["--import", tsx, script], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(err).toBe("");
    expect(code).toBe(0);
    expect((JSON.parse(out) as { bytes: number }).bytes).toBeGreaterThan(24000 * 2);
  }, 20_000);
});

describe("sentence cutting and word timings", () => {
  it("cuts at sentence ends followed by whitespace or the end of the text so far", () => {
    expect(cutSentences("Hello there. How are you?")).toEqual({ sentences: ["Hello there. ", "How are you?"], rest: "" });
    expect(cutSentences("Wait! \"Really?\" Yes")).toEqual({ sentences: ["Wait! ", '"Really?" '], rest: "Yes" });
    expect(cutSentences("Version 3.5 is out")).toEqual({ sentences: [], rest: "Version 3.5 is out" });
    expect(cutSentences("Hello th")).toEqual({ sentences: [], rest: "Hello th" });
  });

  it("cuts text with no sentence end at a space once it passes the limit", () => {
    const text = "word ".repeat(100);
    const { sentences, rest } = cutSentences(text);
    for (const s of sentences) expect(s.length).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    for (const s of sentences) expect(s.endsWith(" ")).toBe(true);
    expect(sentences.join("") + rest).toBe(text);
  });

  it("flite estimate: one timing per word, over the voiced span, by letters; punctuation takes no time", () => {
    const samples = new Int16Array(16000); // 1 s; voiced from 0.25 s to 0.75 s
    samples.fill(1000, 4000, 12000);
    const words = estimateWords("ab — abcd abcdef", samples, 16000);
    expect(words.map((w) => w.word)).toEqual(["ab", "—", "abcd", "abcdef"]);
    expect(words[0]).toEqual({ word: "ab", startMs: 250, endMs: 333 });
    expect(words[1]).toEqual({ word: "—", startMs: 333, endMs: 333 });
    expect(words[3]!.endMs).toBe(750);
  });

  it("eSpeak-NG events: a word's first event starts it, the next word's start ends it", () => {
    const ev = (text_position: number, audio_position: number) => ({ type: "word", text_position, word_length: 1, audio_position });
    // "Pay 3.5 — now": "3.5" has three word events, "—" none.
    const words = espeakWords("Pay 3.5 — now", [ev(1, 0), ev(5, 300), ev(5, 500), ev(7, 600), ev(11, 900), { type: "end", text_position: 14, word_length: 0, audio_position: 1200 }], 1300);
    expect(words).toEqual([
      { word: "Pay", startMs: 0, endMs: 300 },
      { word: "3.5", startMs: 300, endMs: 900 },
      { word: "—", startMs: 900, endMs: 900 },
      { word: "now", startMs: 900, endMs: 1300 },
    ]);
  });
});
