/**
 * `switchboard console --voice`'s audio devices: which recorder and player the machine has (sox
 * `rec`/`play`, else ALSA `arecord`/`aplay`, found on PATH), and the two child processes — the
 * microphone (16 kHz PCM16 mono out of the recorder, cut into 20 ms frames) and the speaker (24 kHz
 * PCM16 mono into the player, restarted to drop what it holds). A device that fails says why, with
 * the tool's last stderr line.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE } from "../audio/rates.js";
import { spread } from "../spread.js";

/** 20 ms of 16 kHz PCM16: the frames mic audio is sent in. */
const MIC_FRAME_BYTES = (MIC_SAMPLE_RATE / 50) * 2;
/** How long the microphone may take to deliver its first audio before --voice gives up (ms). */
const MIC_START_MS = 3000;

export const VOICE_INSTALL_HINT = "install sox: sudo apt-get install sox (macOS: brew install sox)";

// ---- audio tools ----

/** A recorder or player: the command and its arguments for raw PCM16 mono on stdin/stdout. */
export interface AudioTool {
  readonly command: string;
  readonly args: readonly string[];
}

export interface AudioTools {
  /** 16 kHz PCM16 mono little-endian on stdout. */
  readonly recorder?: AudioTool;
  /** 24 kHz PCM16 mono little-endian on stdin. */
  readonly player?: AudioTool;
}

function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** The audio tools on PATH: sox's `rec`/`play` first, else ALSA's `arecord`/`aplay` (each direction on its own). */
export function findAudioTools(path: string | undefined): AudioTools {
  const sox = (rate: number): string[] => ["-q", "-t", "raw", "-r", String(rate), "-e", "signed-integer", "-b", "16", "-c", "1", "-L", "-"];
  const alsa = (rate: number): string[] => ["-q", "-t", "raw", "-f", "S16_LE", "-r", String(rate), "-c", "1"];
  const recorder = onPath("rec", path) ? { command: "rec", args: sox(MIC_SAMPLE_RATE) } : onPath("arecord", path) ? { command: "arecord", args: alsa(MIC_SAMPLE_RATE) } : undefined;
  const player = onPath("play", path) ? { command: "play", args: sox(PLAYBACK_SAMPLE_RATE) } : onPath("aplay", path) ? { command: "aplay", args: [...alsa(PLAYBACK_SAMPLE_RATE), "-"] } : undefined;
  return spread(recorder === undefined ? {} : { recorder }, player === undefined ? {} : { player });
}

/** Why --voice cannot run with these tools, or undefined when it can. */
export function voiceRefusal(tools: AudioTools): string | undefined {
  const missing = [...(tools.recorder === undefined ? ["a recorder (rec or arecord)"] : []), ...(tools.player === undefined ? ["a player (play or aplay)"] : [])];
  if (missing.length === 0) return undefined;
  return `--voice needs the microphone and speaker through sox (rec, play) or ALSA (arecord, aplay), and ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not on PATH; ${VOICE_INSTALL_HINT}. Without --voice the console talks in text.`;
}

// ---- the devices ----

/** The last line a child wrote to stderr. */
function lastLine(text: string): string {
  return (
    text
      .trim()
      .split("\n")
      .filter((l) => l.trim() !== "")
      .at(-1) ?? ""
  );
}

/** The microphone: the recorder's stdout, cut into 20 ms frames. */
export class Microphone {
  readonly #tool: AudioTool;
  #child: ChildProcessByStdio<null, Readable, Readable> | undefined;
  #stopped = false;

  constructor(tool: AudioTool) {
    this.#tool = tool;
  }

  /** Resolves at the first audio; rejects (with the recorder's complaint) if it ends first or stays silent for MIC_START_MS. */
  start(onFrame: (frame: Uint8Array) => void, onFailure: (why: string) => void): Promise<void> {
    const child = spawn(this.#tool.command, [...this.#tool.args], { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    let stderr = "";
    let pending: Buffer = Buffer.alloc(0);
    let started = false;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the microphone gave no audio within ${MIC_START_MS / 1000} s (${this.#tool.command})`)), MIC_START_MS);
      child.stdout.on("data", (chunk: Buffer) => {
        if (!started) {
          started = true;
          clearTimeout(timer);
          resolve();
        }
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let at = 0;
        for (; at + MIC_FRAME_BYTES <= pending.length; at += MIC_FRAME_BYTES) onFrame(new Uint8Array(pending.subarray(at, at + MIC_FRAME_BYTES)));
        pending = pending.subarray(at);
      });
      const ended = (why: string): void => {
        clearTimeout(timer);
        if (!started) reject(new Error(`the microphone could not be opened (${this.#tool.command}: ${why})`));
        else if (!this.#stopped) onFailure(`the microphone stopped (${this.#tool.command}: ${why})`);
      };
      child.once("error", (error) => ended(error.message));
      child.once("exit", (code, signal) => ended(lastLine(stderr) || (signal === null ? `exit code ${String(code)}` : `signal ${signal}`)));
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#child?.kill("SIGTERM");
  }
}

/** The speaker: the player's stdin. A flush (barge-in, cancel, reset) restarts the player, dropping what it still holds. */
export class Speaker {
  readonly #tool: AudioTool;
  readonly #onFailure: (why: string) => void;
  #child: ChildProcessByStdio<Writable, null, Readable> | undefined;
  #written = false;
  #closed = false;

  constructor(tool: AudioTool, onFailure: (why: string) => void) {
    this.#tool = tool;
    this.#onFailure = onFailure;
    this.#child = this.#spawn();
  }

  write(pcm: Int16Array): void {
    if (this.#closed) return;
    this.#child ??= this.#spawn();
    this.#written = true;
    this.#child.stdin.write(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }

  flush(): void {
    if (!this.#written || this.#closed) return;
    this.#stop();
    this.#written = false;
  }

  close(): void {
    this.#closed = true;
    this.#stop();
  }

  #stop(): void {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    child.removeAllListeners("exit");
    child.stdin.destroy();
    child.kill("SIGTERM");
  }

  #spawn(): ChildProcessByStdio<Writable, null, Readable> {
    const child = spawn(this.#tool.command, [...this.#tool.args], { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.stdin.on("error", () => {}); // EPIPE when the player is gone: its exit says why
    child.once("error", (error) => this.#onFailure(`the speaker could not be opened (${this.#tool.command}: ${error.message})`));
    child.once("exit", (code, signal) => {
      if (this.#child !== child || this.#closed) return;
      this.#child = undefined;
      this.#onFailure(`the speaker stopped (${this.#tool.command}: ${lastLine(stderr) || (signal === null ? `exit code ${String(code)}` : `signal ${signal}`)})`);
    });
    return child;
  }
}
