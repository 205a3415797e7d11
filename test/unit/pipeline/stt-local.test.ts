/**
 * The local STT (pocketsphinx as a child process) against the flite fixtures. Needs Debian's
 * `pocketsphinx` + `pocketsphinx-en-us`; skipped when they are not installed. The transcripts
 * asserted are what the stock en-us model really hears (fixtures/audio/README.md).
 *
 * `STT_LOCAL_BENCH=1 npx vitest run test/unit/pipeline/stt-local.test.ts -t bench` also runs the
 * design comparison whose numbers head `src/pipeline/providers/stt/local.ts`.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readWav } from "../../../src/audio/wav.js";
import { GatewayError } from "../../../src/errors.js";
import { localStt, type LocalSttOptions, type LocalSttSession } from "../../../src/pipeline/providers/stt/local.js";
import { isSttUnavailable, LOCAL_STT_MODEL_DIR, localSttAvailable } from "../../../src/pipeline/providers/stt/local-setup.js";
import { SpeechDetector } from "../../../src/pipeline/speech-detector.js";
import { isSttUnavailable as portSttUnavailable, type SttEvents, type SttOpenOptions, type SttSession } from "../../../src/pipeline/stt-port.js";
import { createVad } from "../../../src/pipeline/vad.js";
import { sttRecorder } from "../../helpers/stt-recorder.js";

const installed = (await localSttAvailable()) && existsSync(`${LOCAL_STT_MODEL_DIR}/en-us/mdef`);
/** Why the pocketsphinx tests cannot run here, or undefined: said once in the output, and in each skipped test's name. */
const SKIPPED = installed ? undefined : "pocketsphinx or its en-us model is not installed (sudo apt-get install pocketsphinx pocketsphinx-en-us)";
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
/** `title`, with the reason when it is skipped. */
const needsPocketsphinx = (title: string): string => (SKIPPED === undefined ? title : `${title} — skipped: ${SKIPPED}`);
const OPEN: SttOpenOptions = { sampleRate: 16000, minSilenceMs: 500, maxSilenceMs: 1500 };
const FRAME_BYTES = 640; // 20 ms at 16 kHz

/**
 * Bounds that only stop a hung test, never a figure it checks: recognition runs pocketsphinx in
 * real time, and a CI machine running test files in parallel can slow it well past its usual pace.
 */
const HUNG_MS = 20_000;
const recorder = () => sttRecorder({ timeoutMs: HUNG_MS, pollMs: 5, timestamps: true });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function clip(name: string): Uint8Array {
  const wav = readWav(new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url))));
  return new Uint8Array(wav.samples.buffer, wav.samples.byteOffset, wav.samples.byteLength);
}

/** A microphone's noise floor: ±20 LSB (≈ −64 dBFS), deterministic. */
function noise(ms: number, seed = 7): Uint8Array {
  const samples = new Int16Array((ms * 16000) / 1000);
  let state = seed;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples[i] = (state % 41) - 20;
  }
  return new Uint8Array(samples.buffer);
}

/**
 * Sends `pcm` in 20 ms frames, `speed` × real time; `onFrame(endMs)` runs after each frame is
 * sent, with the ms of `pcm` sent so far.
 */
async function play(session: SttSession, pcm: Uint8Array, speed = 4, onFrame?: (endMs: number) => void): Promise<void> {
  const start = Date.now();
  for (let offset = 0, k = 1; offset < pcm.byteLength; offset += FRAME_BYTES, k++) {
    session.sendAudio(pcm.subarray(offset, offset + FRAME_BYTES));
    onFrame?.(Math.min(pcm.byteLength, offset + FRAME_BYTES) / 32);
    const due = start + (k * 20) / speed - Date.now();
    if (due > 0) await sleep(due);
  }
}

/** The pids of `pid`'s descendants (Linux /proc). */
function descendantsOf(pid: number): number[] {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  } catch {
    return [];
  }
  const children = text === "" ? [] : text.split(" ").map(Number);
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** True while `pid` exists, zombie or not. */
function exists(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

function recognizerPid(session: LocalSttSession): number {
  const pid = descendantsOf(session.pid!).find((p) => commandOf(p).startsWith("pocketsphinx"));
  if (pid === undefined) throw new Error("no pocketsphinx process under the session's shell");
  return pid;
}

/** Runs `during` with the session's recognizer (its shell, cat and pocketsphinx) stopped: it falls behind the audio. */
async function stalled(s: LocalSttSession, during: () => Promise<void>): Promise<void> {
  const pids = descendantsOf(s.pid!);
  for (const pid of pids) process.kill(pid, "SIGSTOP");
  try {
    await during();
  } finally {
    for (const pid of pids) process.kill(pid, "SIGCONT");
  }
}

let session: SttSession | undefined;
const scratch = mkdtempSync(join(tmpdir(), "stt-local-test-"));
let fakes = 0;

/** An executable shell script standing in for pocketsphinx_continuous. */
function fakeRecognizer(body: string): string {
  const file = join(scratch, `fake-${++fakes}.sh`);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

afterEach(async () => {
  await session?.close();
  session = undefined;
});

/**
 * A session on the real recognizer. Its line grace is 10 s and its close timeout 5 s unless a test
 * sets them: on a loaded machine pocketsphinx may print a line more than the default 1.5 s after
 * fvad's speech end (the turn would end empty before it), or take more than the default 1 s to
 * decode the rest of its input after `close()` (it would be killed first). Both have their own tests.
 */
async function openLocal(options: Record<string, unknown> = {}, runtime: LocalSttOptions = {}) {
  const rec = recorder();
  session = await localStt({ kind: "local", options }, { lineGraceMs: 10_000, closeTimeoutMs: 5_000, ...runtime }).open(OPEN, rec.events);
  return { rec, session: session as LocalSttSession };
}

describe("local STT: configuration and availability", () => {
  it("reports a missing binary as unavailable, and open() rejects with `unavailable` and the install hint", async () => {
    expect(await localSttAvailable("switchboard-no-such-pocketsphinx")).toBe(false);
    const provider = localStt({ kind: "local", options: { binary: "switchboard-no-such-pocketsphinx" } });
    expect(provider.kind).toBe("local");
    const error: unknown = await provider.open(OPEN, recorder().events).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(isSttUnavailable(error)).toBe(true);
    expect(portSttUnavailable(error)).toBe(true);
    expect((error as GatewayError & { unavailable: boolean }).unavailable).toBe(true);
    expect((error as GatewayError).code).toBe("stt");
    expect((error as GatewayError).fatal).toBe(true);
    expect((error as Error).message).toContain("sudo apt-get install pocketsphinx pocketsphinx-en-us");
  });

  it.skipIf(!installed)(needsPocketsphinx("reports the installed pocketsphinx_continuous as available"), async () => {
    expect(await localSttAvailable()).toBe(true);
    expect(await localSttAvailable("pocketsphinx_continuous")).toBe(true);
  });

  it("shares a probe in flight (calls made while it runs get the same answer)", async () => {
    const first = localSttAvailable("switchboard-no-such-pocketsphinx");
    expect(localSttAvailable("switchboard-no-such-pocketsphinx")).toBe(first);
    expect(await first).toBe(false);
  });

  it("refuses bad options at construction", () => {
    expect(() => localStt({ kind: "local", options: { grammar: "#JSGF V1.0;", keywords: ["stop"] } })).toThrow(/grammar and keywords/);
    expect(() => localStt({ kind: "local", options: { keywords: [] } })).toThrow(/stt\.options\.keywords/);
    expect(() => localStt({ kind: "local", options: { keywords: ["a/b"] } })).toThrow(/stt\.options\.keywords/);
    expect(() => localStt({ kind: "local", options: { hmm: 3 } })).toThrow(/stt\.options\.hmm/);
  });

  it.skipIf(!installed)(needsPocketsphinx("refuses a session rate other than 16 kHz"), async () => {
    await expect(localStt({ kind: "local", options: {} }).open({ ...OPEN, sampleRate: 24000 }, recorder().events)).rejects.toThrow(/16000 Hz/);
  });

  it.skipIf(!installed)(needsPocketsphinx("rejects open() with pocketsphinx's message for a keyword missing from the dictionary (fatal, not `unavailable`)"), async () => {
    const error: unknown = await localStt({ kind: "local", options: { keywords: ["zzqxq"] } })
      .open(OPEN, recorder().events)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).fatal).toBe(true);
    expect(isSttUnavailable(error)).toBe(false);
    expect((error as Error).message).toMatch(/zzqxq.*missing in the dictionary/);
  });

  it.skipIf(!installed)(needsPocketsphinx("rejects open() for a JSGF grammar that does not parse"), async () => {
    const grammar = "#JSGF V1.0;\ngrammar bad;\npublic <command> = (stop | go;\n";
    await expect(localStt({ kind: "local", options: { grammar } }).open(OPEN, recorder().events)).rejects.toThrow(/JSGF|syntax error/);
  });
});

describe.skipIf(!installed)(needsPocketsphinx("local STT: recognition (pocketsphinx)"), { timeout: 2 * HUNG_MS }, () => {
  it("hello.wav: speechStarted, then a final containing 'hello' that ends the turn", async () => {
    const { rec, session } = await openLocal();
    expect(session.endpointing).toBe(true);
    await play(session, noise(500));
    await play(session, clip("hello.wav"));
    await play(session, noise(1000));
    const final = await rec.waitFor("final");
    expect(final.args[0]).toContain("hello");
    expect(final.args[1]).toEqual({ endOfTurn: true });
    const started = rec.of("speechStarted");
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(rec.calls.indexOf(started[0]!)).toBeLessThan(rec.calls.indexOf(final));
    expect(rec.of("partial")).toEqual([]);
    expect(rec.of("error")).toEqual([]);
  });

  it("order-status.wav: a final with the words the default model gets ('where is my … one two three four')", async () => {
    const { rec, session } = await openLocal();
    await play(session, noise(500));
    await play(session, clip("order-status.wav"));
    await play(session, noise(1000));
    const final = await rec.waitFor("final");
    expect(final.args[0]).toContain("where is my");
    expect(final.args[0]).toContain("one two three four");
    expect(rec.calls.indexOf(rec.of("speechStarted")[0]!)).toBeLessThan(rec.calls.indexOf(final));
  });

  it("two utterances in one session: one turn each, in order", async () => {
    const { rec, session } = await openLocal();
    // In real time, as a caller speaks: at 4× the second utterance can reach the recognizer while a
    // loaded machine is still finishing the first, which no live call does.
    await play(session, noise(500), 1);
    await play(session, clip("hello.wav"), 1);
    await play(session, noise(1000), 1);
    await play(session, clip("pin.wav"), 1);
    await play(session, noise(1000), 1);
    await rec.waitFor("final", 2);
    const [first, second] = rec.finals();
    expect(first).toContain("hello");
    expect(second).toContain("four five six seven");
    expect(rec.of("speechStarted").length).toBeGreaterThanOrEqual(2);
  });

  it("cough.wav over a noise floor: no speechStarted and no final (fvad and pocketsphinx take it for speech; it has no pitch)", async () => {
    const { rec, session } = await openLocal();
    await play(session, noise(500));
    await play(session, clip("cough.wav"));
    await play(session, noise(1000));
    await sleep(800);
    expect(rec.finals()).toEqual([]);
    expect(rec.of("speechStarted")).toEqual([]);
    expect(rec.of("error")).toEqual([]);
  });

  it("a cough after an utterance adds nothing to the conversation", async () => {
    const { rec, session } = await openLocal();
    await play(session, noise(500));
    await play(session, clip("hello.wav"));
    await play(session, noise(1000));
    await rec.waitFor("final");
    await play(session, clip("cough.wav"));
    await play(session, noise(1000));
    await sleep(800);
    expect(rec.finals()).toHaveLength(1);
    expect(rec.of("speechStarted")).toHaveLength(1);
  });

  it("keyword mode: stop.wav is heard as 'stop'", async () => {
    const { rec, session } = await openLocal({ keywords: ["hello", "stop"] });
    await play(session, noise(500));
    await play(session, clip("stop.wav"));
    await play(session, noise(1000));
    const final = await rec.waitFor("final");
    expect(final.args[0]).toBe("stop");
    expect(final.args[1]).toEqual({ endOfTurn: true });
  });

  it("keyword mode: speech without a keyphrase ends its turn with an empty final", async () => {
    const { rec, session } = await openLocal({ keywords: ["stop"] });
    await play(session, noise(500));
    await play(session, clip("hello.wav"));
    await play(session, noise(1000));
    const final = await rec.waitFor("final");
    expect(final.args).toEqual(["", { endOfTurn: true }]);
    expect(rec.calls.indexOf(rec.of("speechStarted")[0]!)).toBeLessThan(rec.calls.indexOf(final));
  });

  it("grammar mode: stop.wav is decoded within the JSGF grammar", async () => {
    const grammar = [
      "#JSGF V1.0;",
      "grammar commands;",
      "public <command> = <action> [<rest>];",
      "<action> = stop | hello | cancel | repeat;",
      "<rest> = there | wait a second | that;",
    ].join("\n");
    const { rec, session } = await openLocal({ grammar });
    await play(session, noise(500));
    await play(session, clip("stop.wav"));
    await play(session, noise(1000));
    const final = await rec.waitFor("final");
    expect(final.args[0]).toBe("stop wait a second");
  });

  it("finalize() ends the utterance without waiting for the silence (push-to-talk)", async () => {
    const { rec, session } = await openLocal();
    await play(session, noise(300));
    await play(session, clip("hello.wav"));
    // No silence follows the clip, so the VAD never ends the speech: only finalize() can bring the final
    // (no wall-clock bound: how soon depends on the machine's load).
    expect(rec.of("final")).toEqual([]);
    session.finalize();
    const final = await rec.waitFor("final", 1, 10_000);
    expect(final.args[0]).toContain("hello");
  });

  it("no line from pocketsphinx within lineGraceMs of the speech end: the turn ends empty; a late line still counts", async () => {
    const { rec, session: s } = await openLocal({}, { lineGraceMs: 300 });
    await play(s, noise(500));
    await stalled(s, async () => {
      await play(s, clip("hello.wav"));
      await play(s, noise(1000)); // fvad's end comes 500 ms in; the grace ends 300 ms later
      const empty = await rec.waitFor("final");
      expect(empty.args).toEqual(["", { endOfTurn: true }]);
    });
    const late = await rec.waitFor("final", 2);
    expect(late.args[0]).toContain("hello");
  });

  it("a recognizer behind the audio: two utterances' lines, both late, are one turn each (the voice after a line's end is the next line's)", async () => {
    const { rec, session: s } = await openLocal({}, { lineGraceMs: 60_000 });
    await play(s, noise(500));
    // fvad judges both utterances before pocketsphinx has printed a line.
    await stalled(s, async () => {
      for (const name of ["hello.wav", "pin.wav"]) {
        await play(s, clip(name));
        await play(s, noise(1000));
      }
      expect(rec.of("speechStarted")).toHaveLength(2);
      expect(rec.of("final")).toEqual([]);
    });
    await rec.waitFor("final", 2);
    const finals = rec.of("final").map((call) => call.args[0] as string);
    expect(finals[0]).toContain("hello");
    expect(finals[1]).toContain("four five six seven");
  });

  it("close(): pocketsphinx ends, the shell reaps it and cat, closed({expected:true}); nothing is left", async () => {
    const { rec, session: s } = await openLocal();
    await play(s, noise(200));
    const shell = s.pid!;
    const recognizer = recognizerPid(s);
    const children = descendantsOf(shell);
    expect(children.map(commandOf).sort()).toEqual(["cat", "pocketsphinx_co", "sh"]); // cat | (sh: pocketsphinx)
    await s.close();
    session = undefined;
    expect(rec.of("closed").map((c) => c.args[0])).toEqual([{ expected: true }]);
    for (const pid of [shell, ...children]) expect(exists(pid), `pid ${pid} (recognizer ${recognizer})`).toBe(false);
    expect(rec.of("error")).toEqual([]);
    s.sendAudio(noise(20)); // ignored after close
    await s.close(); // idempotent
    expect(rec.of("closed")).toHaveLength(1);
  });

  it("close() mid-utterance: pocketsphinx's last hypothesis is still reported, then closed; nothing is left", async () => {
    const { rec, session: s } = await openLocal();
    await play(s, noise(300));
    await play(s, clip("hello.wav"));
    const shell = s.pid!;
    const children = descendantsOf(shell);
    await s.close();
    session = undefined;
    expect(rec.finals().join(" ")).toContain("hello");
    expect(rec.of("closed").map((c) => c.args[0])).toEqual([{ expected: true }]);
    for (const pid of [shell, ...children]) expect(exists(pid)).toBe(false);
  });

  it("a recognizer that dies unexpectedly: error(recoverable) + closed({expected:false}), and the shell and cat are reaped", async () => {
    const { rec, session: s } = await openLocal();
    await play(s, noise(200));
    const shell = s.pid!;
    const children = descendantsOf(shell);
    process.kill(recognizerPid(s), "SIGKILL"); // and no audio after: cat is ended by the shell, not by a write
    const closed = await rec.waitFor("closed", 1, 1000);
    expect(closed.args[0]).toEqual({ expected: false });
    const error = rec.of("error")[0]!;
    expect(error.args[0]).toBeInstanceOf(GatewayError);
    expect((error.args[0] as Error).message).toMatch(/pocketsphinx exited unexpectedly/);
    expect(error.args[1]).toEqual({ recoverable: true });
    expect(rec.calls.indexOf(error)).toBeLessThan(rec.calls.indexOf(closed));
    for (const pid of [shell, ...children]) expect(exists(pid)).toBe(false);
    s.sendAudio(noise(20)); // no throw after the drop
    await s.close();
  });

  it("close() of a recognizer that ignores the end of its input: SIGTERM after closeTimeoutMs; the shell reaps it", async () => {
    // A stand-in binary: passes the configuration check (`-infile /dev/null`), then hangs.
    const binary = fakeRecognizer(`case "$*" in *"-infile /dev/stdin"*) exec sleep 30;; esac; exit 0`);
    const { rec, session: s } = await openLocal({ binary }, { closeTimeoutMs: 200 });
    const shell = s.pid!;
    const children = descendantsOf(shell);
    const started = Date.now();
    await s.close();
    session = undefined;
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(650); // before the SIGKILL, 500 ms later
    expect(rec.of("closed").map((c) => c.args[0])).toEqual([{ expected: true }]);
    for (const pid of [shell, ...children]) expect(exists(pid)).toBe(false);
  });

  it("a recognizer that fails at start reports its exit code and last stderr line", async () => {
    // (After 50 ms, as a real one takes to start: see PIPELINE in local.ts for one that dies at once.)
    const binary = fakeRecognizer(`case "$*" in *"-infile /dev/stdin"*) sleep 0.05; echo "model went away" >&2; exit 3;; esac; exit 0`);
    const { rec } = await openLocal({ binary });
    const closed = await rec.waitFor("closed");
    expect(closed.args[0]).toEqual({ expected: false });
    expect((rec.of("error")[0]!.args[0] as Error).message).toMatch(/exit code 3.*model went away/);
  });

  it("a throwing event handler never breaks the session", async () => {
    const rec = recorder();
    const throwing: SttEvents = { ...rec.events, speechStarted: () => { throw new Error("boom"); }, final: () => { throw new Error("boom"); } };
    session = await localStt({ kind: "local", options: {} }).open(OPEN, throwing);
    await play(session, noise(300));
    await play(session, clip("hello.wav"));
    await play(session, noise(900));
    await sleep(300);
    await session.close();
    expect(rec.of("closed").map((c) => c.args[0])).toEqual([{ expected: true }]);
    session = undefined;
  });

  it("drops (and counts) audio once the recognizer's stdin backlog passes 1 MiB", async () => {
    const { session: s } = await openLocal();
    const stalled = descendantsOf(s.pid!); // cat and pocketsphinx (and its shell) stop reading
    for (const pid of stalled) process.kill(pid, "SIGSTOP");
    try {
      const second = new Uint8Array(32000);
      for (let i = 0; i < 80; i++) s.sendAudio(second); // 2.56 MB
      expect(s.droppedBytes).toBeGreaterThan(0);
      expect(s.droppedBytes % second.byteLength).toBe(0);
    } finally {
      for (const pid of stalled) process.kill(pid, "SIGCONT");
    }
  });
});

// ---- the design comparison (numbers in local.ts) ----

const MODEL = ["-hmm", `${LOCAL_STT_MODEL_DIR}/en-us`, "-lm", `${LOCAL_STT_MODEL_DIR}/en-us.lm.bin`, "-dict", `${LOCAL_STT_MODEL_DIR}/cmudict-en-us.dict`, "-samprate", "16000", "-inmic", "no", "-logfn", "/dev/null"];
const PIPELINE = `cat | pocketsphinx_continuous "$@" -infile /dev/stdin; times >&2`;

/** A bench recognizer (`cat | pocketsphinx_continuous`): its lines, and at exit its text and the CPU (s) it used, via sh's `times`. */
function utteranceRecognizer() {
  const child = spawn("sh", ["-c", PIPELINE, "sh", ...MODEL], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const lines: { text: string; at: number }[] = [];
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    for (const line of d.toString().split("\n").slice(0, -1)) lines.push({ text: line.trim(), at: Date.now() });
  });
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ text: string; at: number; cpuS: number }>((resolve) =>
    child.on("close", () => {
      const at = Date.now();
      const times = err.trim().split("\n").at(-1)?.match(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/);
      const cpuS = times === null || times === undefined ? NaN : Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4]);
      resolve({ text: out.trim(), at, cpuS });
    }),
  );
  const session = { sendAudio: (pcm: Uint8Array) => child.stdin.write(Buffer.from(pcm)) } as unknown as SttSession;
  return { child, session, done, lines };
}

/** Where fvad + SpeechDetector (500 ms) say the clip's speech ends (ms into the clip). */
async function speechEndMs(pcm: Uint8Array): Promise<number> {
  const vad = await createVad({ sampleRate: 16000 });
  const detector = new SpeechDetector({ minSilenceMs: 500 });
  const lead = noise(1000);
  const all = new Uint8Array(lead.byteLength + pcm.byteLength + 32000);
  all.set(lead);
  all.set(pcm, lead.byteLength);
  const end = detector.pushAll(vad.push(all)).find((e) => e.type === "end");
  vad.close();
  if (end === undefined) throw new Error("no speech end");
  return end.atMs - 1000;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100)
}

describe.runIf(installed && process.env.STT_LOCAL_BENCH === "1")("bench: end of speech → final, per design", () => {
  const clips = ["hello.wav", "order-status.wav", "stop.wav", "pin.wav"];
  const rounds = Number(process.env.STT_LOCAL_BENCH_ROUNDS ?? 3);
  const summary = (xs: number[]): string => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mean = Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    return `median ${sorted[Math.floor(sorted.length / 2)]} ms, mean ${mean} ms, range ${sorted[0]}–${sorted.at(-1)} ms (n=${xs.length})`;
  };

  // The designs take turns clip by clip, so that load from elsewhere on the machine hits them alike.
  it("A (this adapter) vs B (spawn per utterance) vs C (warm process per utterance) vs D (shared warm process, flushed)", { timeout: 600_000 }, async () => {
    const { rec, session: s } = await openLocal();
    const shared = utteranceRecognizer();
    await sleep(1000); // models loaded
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    const d: number[] = [];
    const cpuPerUtterance: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const name of clips) {
        const pcm = clip(name);
        const endMs = await speechEndMs(pcm);

        // A: one recognizer per session, fed everything; it segments the stream itself.
        let spokenAt = 0;
        const before = rec.of("final").length;
        await play(s, noise(1000), 1);
        await play(s, pcm, 1, (ms) => {
          if (spokenAt === 0 && ms >= endMs) spokenAt = Date.now();
        });
        await play(s, noise(1500), 1);
        const final = await rec.waitFor("final", before + 1);
        a.push(final.at - spokenAt);

        // What fvad cuts: 200 ms pre-roll + the clip up to its speech end + the 500 ms of silence that ended it.
        const speech = pcm.subarray(0, endMs * 32);
        const utterance = new Uint8Array(6400 + speech.byteLength + 16000);
        utterance.set(noise(200));
        utterance.set(speech, 6400);
        utterance.set(noise(500, 11), 6400 + speech.byteLength);

        // B: spawned once fvad's 500 ms of silence have passed; gets the utterance at once.
        const bStart = Date.now();
        const spawned = utteranceRecognizer();
        spawned.child.stdin.end(Buffer.from(utterance));
        const bDone = await spawned.done;
        b.push(500 + (bDone.at - bStart));
        cpuPerUtterance.push(bDone.cpuS);

        // C: pre-spawned and loaded; fed in real time from the pre-roll on; stdin closed at fvad's end.
        const warm = utteranceRecognizer();
        await sleep(1000);
        spokenAt = 0;
        await play(warm.session, utterance, 1, (ms) => {
          if (spokenAt === 0 && ms >= 200 + endMs) spokenAt = Date.now();
        });
        warm.child.stdin.end();
        const cDone = await warm.done;
        c.push(cDone.at - spokenAt);

        // D: one long-lived process shared by sessions (a pool of one): the utterance streamed in real
        // time, then at fvad's end 800 ms of zeros, after which its VAD closes the utterance.
        spokenAt = 0;
        const heard = shared.lines.length;
        await play(shared.session, utterance, 1, (ms) => {
          if (spokenAt === 0 && ms >= 200 + endMs) spokenAt = Date.now();
        });
        shared.session.sendAudio(new Uint8Array(25600));
        while (shared.lines.length === heard) await sleep(2);
        const dLine = shared.lines[heard]!;
        d.push(dLine.at - spokenAt);
        console.log(`${name}: A ${a.at(-1)} ms "${String(final.args[0])}" | B ${b.at(-1)} ms "${bDone.text}" | C ${c.at(-1)} ms "${cDone.text}" | D ${d.at(-1)} ms "${dLine.text}"`);
      }
    }
    const sessionCpu = cpuSeconds(recognizerPid(s));
    const load = utteranceRecognizer();
    load.child.stdin.end();
    const loadCpu = (await load.done).cpuS;
    console.log(`A ${summary(a)}`);
    console.log(`B ${summary(b)}`);
    console.log(`C ${summary(c)}`);
    console.log(`D ${summary(d)}`);
    shared.child.stdin.end();
    await shared.done;
    console.log(
      `CPU: model load ${loadCpu.toFixed(2)} s; a per-utterance process (load + decode) ${cpuPerUtterance.map((x) => x.toFixed(2)).join(", ")} s; ` +
        `the session's recognizer, all ${rounds * clips.length} utterances + ${(rounds * clips.length * 2.5).toFixed(0)} s of noise floor: ${sessionCpu.toFixed(2)} s`,
    );
  });
});

describe("local STT: pocketsphinx is looked for at every session", () => {
  it("a binary that was missing is found once it is installed, with no restart (absence is never cached)", async () => {
    const binary = join(scratch, "installed-later", "pocketsphinx_continuous");
    expect(await localSttAvailable(binary)).toBe(false);
    const provider = localStt({ kind: "local", options: { binary } });
    const refused: unknown = await provider.open(OPEN, recorder().events).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSttUnavailable(refused)).toBe(true);
    expect((refused as Error).message).toContain(`the local STT needs pocketsphinx (${binary} was not found)`);
    // "apt-get install pocketsphinx": the binary appears; the next session's check finds it.
    const { mkdirSync, renameSync } = await import("node:fs");
    mkdirSync(join(scratch, "installed-later"));
    renameSync(fakeRecognizer("echo usage >&2; exit 0"), binary);
    expect(await localSttAvailable(binary)).toBe(true);
  });

  it("SWITCHBOARD_POCKETSPHINX (through resolveStt) names the binary a session runs; the descriptor's options.binary still wins", async () => {
    const { resolveStt } = await import("../../../src/pipeline/providers/stt/index.js");
    const missing = join(scratch, "no-such-dir", "pocketsphinx_continuous");
    const refusal = (options: Record<string, unknown>): Promise<unknown> =>
      resolveStt({ kind: "local", options }, { SWITCHBOARD_POCKETSPHINX: missing })
        .open(OPEN, recorder().events)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
    const error = await refusal({});
    expect(isSttUnavailable(error)).toBe(true);
    expect((error as Error).message).toMatch(/^the local STT needs pocketsphinx \(.*no-such-dir\/pocketsphinx_continuous was not found\); install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us$/);
    const named = await refusal({ binary: "switchboard-no-such-pocketsphinx" });
    expect((named as Error).message).toContain("(switchboard-no-such-pocketsphinx was not found)");
  });
});
