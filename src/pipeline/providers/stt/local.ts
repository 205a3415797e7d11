/**
 * Offline STT (`stt: {kind: "local"}`): Debian's pocketsphinx 0.8+5prealpha
 * (`pocketsphinx_continuous`) with the `pocketsphinx-en-us` model, driven as a child process.
 *
 * Design: one long-lived recognizer per session, fed ALL of the session's audio as a raw stream.
 * pocketsphinx segments the stream with its own VAD (`-vad_postspeech 50`: an utterance ends after
 * 500 ms of silence) and prints one line per utterance, its hypothesis; each line becomes
 * `final(text, {endOfTurn: true})` (this STT endpoints turns itself). The session also runs fvad
 * (`createVad`) + `SpeechDetector` (500 ms end silence) on the same audio, plus a voicing check
 * (pitch-range autocorrelation) on fvad's speech frames (`VoicedSpeech`, local-voicing.ts), for
 * two things pocketsphinx does not give: `speechStarted()` (once fvad's start has 60 ms of voiced
 * frames), and a gate — a line is only reported when that much voiced speech came since the
 * previous line and before its utterance's end (pocketsphinx's word times, `-time yes`:
 * local-lines.ts; fvad runs ahead of the recognizer, so speech after that end is the next line's). Both fvad and pocketsphinx's energy VAD take a cough for speech (over a noise
 * floor pocketsphinx hears "if"); a cough has no pitch, so it neither starts a turn (no barge-in)
 * nor produces a final. No pre-roll is needed: the recognizer hears everything.
 * pocketsphinx_continuous prints no partial hypotheses, so there are no `partial` events. Under
 * the port's transcript contract (stt-port.ts) each utterance is then one segment: its line,
 * delivered once as the final that ends the turn (`""` when the turn ends with no line).
 *
 * Measured on this machine (2 vCPU shared with other work, load 1–2; the flite fixtures hello,
 * order-status, stop and pin played in real time in 20 ms frames over a ±20 LSB noise floor,
 * 3 rounds, the designs taking turns clip by clip; "end of speech" = the end of fvad's last speech
 * frame). Reproduce: STT_LOCAL_BENCH=1 npx vitest run test/unit/pipeline/stt-local.test.ts -t bench
 *                                                         end of speech → final: median (range)
 *   A. this design: one process per session, fed everything, its VAD segments    543 ms (447–680)
 *   B. a process spawned per utterance at fvad's end, the utterance written at
 *      once (spawn + model load ≈ 300 ms, then all of the decoding)               1194 ms (1048–1303)
 *   C. a pre-spawned warm process per utterance, the utterance streamed from
 *      fvad's start (200 ms pre-roll), stdin closed at fvad's end                  561 ms (546–594)
 *   D. one warm process shared by sessions (a pool), the utterance streamed,
 *      800 ms of zeros at fvad's end                                              503 ms (417–583)
 * All but B are bound by the ~500 ms of end-of-utterance silence: C waits for fvad's 500 ms and
 * then ≈ 50 ms of final pass; in A and D pocketsphinx's own VAD closes the utterance 417–680 ms
 * after the speech (fvad: 500–520 ms), so its segmentation is as quick as fvad's, and on these
 * clips the same (one utterance each; "Stop. Wait a second." stays one).
 * CPU (user+sys): a model load is 0.28 s; B and C pay it per utterance (0.52–0.79 s per utterance
 * with the decoding), A per session (its recognizer: 4.99 s for the 12 utterances and 30 s of
 * noise floor, ≈ 0.4 s per utterance). Memory: ≈ 93 MB private (dictionary, LM) per process
 * (Private_Dirty in /proc/<pid>/smaps_rollup of a running recognizer), whichever design.
 * Chosen: A — within 40 ms of the fastest (D, the same mechanism), a model load per session
 * rather than per utterance, no warm spares to manage. D needs fewer processes than sessions, but
 * a checkout per utterance, and it carries one caller's noise and cepstral-mean state into the
 * next; it is the way to go if one ≈ 95 MB process per open session is too much.
 *
 * Constraints:
 * - Node's stdio pipes are socketpairs, which `/dev/stdin` cannot reopen, and the recognizer only
 *   reads files; so the child is `sh -c 'cat | pocketsphinx_continuous … -infile /dev/stdin'`,
 *   spawned detached (its own process group). The shells ignore SIGTERM and cat and pocketsphinx
 *   restore it, so a SIGTERM to the group kills those two while the shells reap them and exit:
 *   no orphans, no zombies (see PIPELINE).
 * - pocketsphinx reads 2048 samples (128 ms) at a time: the stream's granularity. `finalize()`
 *   writes 800 ms of zeros so its VAD closes the utterance at once (push-to-talk).
 * - The en-us model takes 16 kHz audio; sessions at other rates are refused. `prompt` (vocabulary
 *   biasing) and `language` are not used. The utterance end (500 ms) is fixed, not
 *   `minSilenceMs`: command-style agents want quick turns.
 * - `open()` checks, once per provider, that the configuration loads (a run with
 *   `-infile /dev/null`: a bad grammar or a keyword missing from the dictionary fails `open()`
 *   with pocketsphinx's message, instead of a recognizer that dies on every session).
 *
 * Options: `grammar` (JSGF text, `#JSGF V1.0; grammar …; public <…> = …;`) or `keywords`
 * (keyphrases spotted with threshold 1e-20; the line is the phrases heard), for command-style
 * agents; `hmm`/`lm`/`dict` (model paths), `binary` (default `pocketsphinx_continuous`).
 * When the binary or the default model is missing, `open()` rejects with an `SttUnavailableError`
 * (`unavailable: true`, see `isSttUnavailable`), and the session falls back to typed input (`call`
 * and `console --voice`, which cannot type, turn it into a fatal error: src/server/call.ts). Both
 * are looked for at every `open()`, nothing cached, so installing pocketsphinx needs no restart.
 * The binary: `options.binary`, else the runtime's `binary` (`resolveStt` passes
 * `SWITCHBOARD_POCKETSPHINX`), else `pocketsphinx_continuous` on PATH.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { systemClock, type Clock, type Timer } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { type SttEvents, type SttOpenOptions, type SttProvider, type SttSession } from "../../stt-port.js";
import { createVad, type Vad } from "../../vad.js";
import { NO_LOG, type ProviderLog } from "../../../providers/provider-log.js";
import { shieldSttEvents } from "../provider-runtime.js";
import { throwIfAborted } from "../stt-socket.js";
import {
  checkConfiguration,
  LOCAL_STT_BINARY,
  LOCAL_STT_INSTALL_HINT,
  LOCAL_STT_SAMPLE_RATE,
  localSttAvailable,
  missingDefaultModel,
  readSettings,
  recognizerArgs,
  removeDir,
  SttUnavailableError,
  writeSearchFiles,
  type LocalSttSettings,
  type SearchFiles,
} from "./local-setup.js";
import { UtteranceLines, type Utterance } from "./local-lines.js";
import { VoicedSpeech } from "./local-voicing.js";
import { MAX_PROVIDER_BACKLOG_BYTES } from "../../../providers/ws-backlog.js";


/** PCM16 mono at LOCAL_STT_SAMPLE_RATE: bytes per ms of audio. */
const BYTES_PER_MS = (LOCAL_STT_SAMPLE_RATE * 2) / 1000;
/** Zeros `finalize()` writes: 500 ms for the VAD, plus two 128 ms reads of slack. */
const FLUSH_BYTES = (800 * LOCAL_STT_SAMPLE_RATE * 2) / 1000;
/**
 * The shell in front of the recognizer ($0 = the binary, "$@" = its arguments). The shell and the
 * recognizer's subshell ignore SIGTERM, cat and the recognizer get it back; when the recognizer
 * ends, its subshell TERMs the group, so cat (blocked reading the session's audio) goes too and
 * the shell exits with the recognizer's status at once, whether or not audio is flowing. (A
 * recognizer that dies within a millisecond of being forked can beat cat's subshell to restoring
 * SIGTERM — a shell builtin standing in for it did, 3 times in 40; pocketsphinx failing on a bad
 * model path, 0 in 40. cat then ends at the next audio write, on SIGPIPE, or at `close()`.)
 */
const PIPELINE = `trap '' TERM; (trap - TERM; exec cat) | (trap '' TERM; (trap - TERM; exec "$0" "$@"); s=$?; kill -TERM 0; exit $s)`;

/** Runtime knobs (not user config). */
export interface LocalSttOptions {
  readonly log?: ProviderLog;
  /** The recognizer to run when the descriptor sets no `options.binary`. Default `pocketsphinx_continuous` (on PATH). */
  readonly binary?: string;
  readonly clock?: Clock;
  /** After `close()` ends the audio, wait this long for pocketsphinx to exit before SIGTERM (then SIGKILL). Default 1000. */
  readonly closeTimeoutMs?: number;
  /**
   * After fvad's speech end (or `finalize()`), wait this long for pocketsphinx's line before
   * ending the turn with an empty final (its VAD may never have started). Default 1500.
   */
  readonly lineGraceMs?: number;
}

// ---- the session ----

type Phase = "open" | "closing" | "closed";

/** One session's recognizer. `pid` (the shell's, leading the process group) is for diagnostics and tests. */
export class LocalSttSession implements SttSession {
  readonly endpointing = true;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #events: SttEvents;
  /** fvad + voicing: when the caller's turn starts, when its speech ends, and which lines count. */
  readonly #voiced: VoicedSpeech;
  readonly #log: ProviderLog;
  readonly #clock: Clock;
  readonly #closeTimeoutMs: number;
  readonly #lineGraceMs: number;
  readonly #tempDir: string | undefined;
  #phase: Phase = "open";
  #dropped = 0;
  /** pocketsphinx's output (`-time yes`), read into utterances and where each ends. */
  readonly #lines = new UtteranceLines();
  #stderr = "";
  /** `speechStarted` was reported and no end-of-turn final yet. */
  #turnOpen = false;
  #lineTimer: Timer | undefined;
  #killTimer: Timer | undefined;
  readonly #exited: Promise<void>;
  #resolveExited!: () => void;

  constructor(child: ChildProcessWithoutNullStreams, vad: Vad, tempDir: string | undefined, events: SttEvents, runtime: Required<Omit<LocalSttOptions, "binary">>) {
    this.#child = child;
    this.#tempDir = tempDir;
    this.#log = runtime.log;
    this.#clock = runtime.clock;
    this.#closeTimeoutMs = runtime.closeTimeoutMs;
    this.#lineGraceMs = runtime.lineGraceMs;
    this.#events = shieldSttEvents(events, runtime.log);
    this.#voiced = new VoicedSpeech(vad, runtime.log, {
      started: () => {
        this.#lineTimer?.cancel();
        this.#turnOpen = true;
        this.#events.speechStarted();
      },
      // pocketsphinx's line should follow; if it never does, the turn ends empty.
      ended: () => {
        if (this.#turnOpen) this.#armLineTimer();
      },
    });
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.#onUtterances(this.#lines.push(chunk)));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (this.#stderr = (this.#stderr + chunk).slice(-2000)));
    // EPIPE and the like when the child is gone: its exit is reported by `close`.
    child.stdin.on("error", (error) => this.#log.debug({ err: messageOf(error) }, "local stt stdin error"));
    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => this.#onExit(code, signal));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get droppedBytes(): number {
    return this.#dropped;
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#phase !== "open" || pcm.byteLength === 0) return;
    this.#voiced.push(pcm);
    if (this.#child.stdin.writableLength > MAX_PROVIDER_BACKLOG_BYTES) {
      this.#dropped += pcm.byteLength;
      return;
    }
    // A copy: the caller may reuse its buffer before the pipe takes it.
    this.#child.stdin.write(Buffer.from(pcm));
  }

  finalize(): void {
    if (this.#phase !== "open") return;
    if (this.#child.stdin.writableLength <= MAX_PROVIDER_BACKLOG_BYTES) this.#child.stdin.write(Buffer.alloc(FLUSH_BYTES));
    if (this.#turnOpen) this.#armLineTimer();
  }

  /** Ends the audio (pocketsphinx finishes its utterance, prints it and exits), then signals the group if it lingers. */
  close(): Promise<void> {
    if (this.#phase !== "open") return this.#exited;
    this.#phase = "closing";
    this.#lineTimer?.cancel();
    this.#child.stdin.end();
    this.#killTimer = this.#clock.setTimeout(() => {
      this.#signal("SIGTERM");
      this.#killTimer = this.#clock.setTimeout(() => this.#signal("SIGKILL"), 500);
    }, this.#closeTimeoutMs);
    return this.#exited;
  }

  #onUtterances(utterances: readonly Utterance[]): void {
    for (const utterance of utterances) this.#onUtterance(utterance);
  }

  /**
   * One utterance's hypothesis (kws mode: the keyphrases heard). Its end is in pocketsphinx's
   * stream time, which runs behind ours by the audio dropped for a full pipe (`#dropped`).
   */
  #onUtterance(utterance: Utterance): void {
    const text = utterance.text
      .replace(/\(\d+\)/g, "")
      .replace(/\s+/g, " ")
      .trim();
    const untilMs = utterance.endMs === undefined ? undefined : utterance.endMs + this.#dropped / BYTES_PER_MS;
    if (!this.#voiced.takeLine(untilMs)) {
      if (text !== "") this.#log.debug({ text }, "local stt: pocketsphinx heard words in what has no voiced speech; ignored");
      return;
    }
    if (text === "" && !this.#turnOpen) return;
    this.#endTurn(text);
  }

  #endTurn(text: string): void {
    this.#lineTimer?.cancel();
    this.#turnOpen = false;
    this.#events.final(text, { endOfTurn: true });
  }

  /** pocketsphinx's VAD may not have started on what fvad called speech: then no line comes, and the turn ends empty. */
  #armLineTimer(): void {
    this.#lineTimer?.cancel();
    this.#lineTimer = this.#clock.setTimeout(() => {
      if (this.#phase === "open" && this.#turnOpen) this.#endTurn("");
    }, this.#lineGraceMs);
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined || this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    try {
      process.kill(-pid, signal); // the group: sh, cat, pocketsphinx (spawned detached)
    } catch {
      // Already gone.
    }
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#phase === "closed") return;
    this.#onUtterances(this.#lines.end());
    const expected = this.#phase === "closing";
    this.#phase = "closed";
    this.#lineTimer?.cancel();
    this.#killTimer?.cancel();
    this.#voiced.close();
    void removeDir(this.#tempDir);
    if (expected) {
      this.#events.closed({ expected: true });
    } else {
      const how = signal !== null ? `signal ${signal}` : `exit code ${String(code)}`;
      // The shells' own "Terminated" (cat, ended by the recognizer's subshell) says nothing.
      const lines = this.#stderr.split("\n").filter((line) => line.trim() !== "" && line.trim() !== "Terminated");
      const detail = lines.slice(-2).join("; ");
      const error = new GatewayError("stt", `pocketsphinx exited unexpectedly (${how})${detail === "" ? "" : `: ${detail}`}`);
      this.#log.warn({ code, signal }, "local stt recognizer died");
      this.#events.error(error, { recoverable: true });
      this.#events.closed({ expected: false });
    }
    this.#resolveExited();
  }
}

/** Starts `sh -c 'cat | <binary> …'` in its own process group; resolves once it is running. */
function startRecognizer(settings: LocalSttSettings, files: SearchFiles): Promise<ChildProcessWithoutNullStreams> {
  // `-time yes`: each hypothesis is followed by its words' stream times (local-lines.ts).
  const args = [...recognizerArgs(settings, files, "/dev/stdin"), "-time", "yes", "-logfn", "/dev/null"];
  const child = spawn("sh", ["-c", PIPELINE, settings.binary, ...args], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  return new Promise((resolve, reject) => {
    child.once("spawn", () => resolve(child));
    child.once("error", (error) => reject(new GatewayError("stt", `local STT could not start sh: ${messageOf(error)}`, { fatal: true, cause: error })));
  });
}

/**
 * The local (pocketsphinx) STT provider. Options: `grammar` (JSGF text) or `keywords` (phrases),
 * `hmm`, `lm`, `dict` (model paths), `binary`. A bad option throws here (fatal, naming it).
 */
export function localStt(descriptor: ProviderDescriptor, options: LocalSttOptions = {}): SttProvider {
  const settings = readSettings(descriptor, options.binary ?? LOCAL_STT_BINARY);
  const runtime: Required<Omit<LocalSttOptions, "binary">> = {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    closeTimeoutMs: options.closeTimeoutMs ?? 1000,
    lineGraceMs: options.lineGraceMs ?? 1500,
  };
  let checked: Promise<void> | undefined;
  const checkOnce = (): Promise<void> => {
    if (checked === undefined) {
      const attempt = checkConfiguration(settings);
      checked = attempt;
      attempt.catch(() => {
        if (checked === attempt) checked = undefined; // a later open tries again
      });
    }
    return checked;
  };

  return {
    kind: "local",
    async open(open: SttOpenOptions, events: SttEvents): Promise<SttSession> {
      throwIfAborted(open.signal, "local stt");
      if (open.sampleRate !== LOCAL_STT_SAMPLE_RATE) {
        throw new GatewayError("stt", `the local STT takes ${LOCAL_STT_SAMPLE_RATE} Hz audio (the session opened it at ${open.sampleRate} Hz).`, { fatal: true });
      }
      if (!(await localSttAvailable(settings.binary))) {
        throw new SttUnavailableError(`the local STT needs pocketsphinx (${settings.binary} was not found); ${LOCAL_STT_INSTALL_HINT}`);
      }
      const missing = await missingDefaultModel(settings);
      if (missing.length > 0) throw new SttUnavailableError(`the local STT's model is missing (${missing.join(", ")}); ${LOCAL_STT_INSTALL_HINT}`);
      await checkOnce();
      throwIfAborted(open.signal, "local stt");

      const vad = await createVad({ sampleRate: LOCAL_STT_SAMPLE_RATE });
      let files: SearchFiles | undefined;
      try {
        files = await writeSearchFiles(settings.search);
        throwIfAborted(open.signal, "local stt");
        const child = await startRecognizer(settings, files);
        runtime.log.debug({ pid: child.pid, mode: settings.search.mode }, "local stt started");
        return new LocalSttSession(child, vad, files.dir, events, runtime);
      } catch (error) {
        vad.close();
        await removeDir(files?.dir);
        throw error;
      }
    },
  };
}
