// `switchboard console --voice`'s devices on their own: which audio tools it picks, and the
// microphone and speaker child processes (stand-in tools: sh scripts). test/e2e/console.test.ts
// drives them inside the command.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findAudioTools, Microphone, Speaker, VOICE_INSTALL_HINT, voiceRefusal, type AudioTool } from "../../../src/cli/console-audio.js";

describe("--voice's audio tools", () => {
  const root = mkdtempSync(join(tmpdir(), "sb-console-tools-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let dirs = 0;
  /** A directory holding executables of these names. */
  function bin(...names: string[]): string {
    const dir = join(root, String(++dirs));
    mkdirSync(dir);
    for (const name of names) {
      writeFileSync(join(dir, name), "#!/bin/sh\nexit 0\n");
      chmodSync(join(dir, name), 0o755);
    }
    return dir;
  }

  it("sox first: rec at 16 kHz out, play at 24 kHz in, raw PCM16 mono little-endian", () => {
    const tools = findAudioTools([bin("arecord", "aplay"), bin("rec", "play")].join(delimiter));
    expect(tools.recorder).toEqual({ command: "rec", args: ["-q", "-t", "raw", "-r", "16000", "-e", "signed-integer", "-b", "16", "-c", "1", "-L", "-"] });
    expect(tools.player).toEqual({ command: "play", args: ["-q", "-t", "raw", "-r", "24000", "-e", "signed-integer", "-b", "16", "-c", "1", "-L", "-"] });
    expect(voiceRefusal(tools)).toBeUndefined();
  });

  it("ALSA when sox is absent, each direction on its own", () => {
    const tools = findAudioTools([bin("arecord", "aplay")].join(delimiter));
    expect(tools.recorder).toEqual({ command: "arecord", args: ["-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1"] });
    expect(tools.player).toEqual({ command: "aplay", args: ["-q", "-t", "raw", "-f", "S16_LE", "-r", "24000", "-c", "1", "-"] });
    expect(findAudioTools([bin("arecord"), bin("play")].join(delimiter))).toMatchObject({ recorder: { command: "arecord" }, player: { command: "play" } });
  });

  it("neither: the refusal names what is missing and the one install command; a file that is not executable does not count", () => {
    const plain = join(root, "plain");
    mkdirSync(plain);
    writeFileSync(join(plain, "rec"), "not a program");
    const tools = findAudioTools([plain, join(root, "nowhere")].join(delimiter));
    expect(tools).toEqual({});
    expect(voiceRefusal(tools)).toBe(
      `--voice needs the microphone and speaker through sox (rec, play) or ALSA (arecord, aplay), and a recorder (rec or arecord) and a player (play or aplay) are not on PATH; ${VOICE_INSTALL_HINT}. Without --voice the console talks in text.`,
    );
    expect(VOICE_INSTALL_HINT).toBe("install sox: sudo apt-get install sox (macOS: brew install sox)");
    expect(voiceRefusal(findAudioTools(bin("rec")))).toMatch(/and a player \(play or aplay\) is not on PATH/);
  });
});

/** A stand-in recorder or player: `sh -c script`. */
const shell = (script: string): AudioTool => ({ command: "sh", args: ["-c", script] });

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the microphone", () => {
  it("resolves at the first audio and cuts the recorder's stdout into 20 ms frames (640 bytes), holding the rest", async () => {
    const frames: number[] = [];
    const failures: string[] = [];
    const mic = new Microphone(shell("head -c 2000 /dev/zero; exec sleep 10"));
    await mic.start((frame) => frames.push(frame.byteLength), (why) => failures.push(why));
    await until(() => frames.length === 3);
    mic.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(frames).toEqual([640, 640, 640]);
    expect(failures).toEqual([]); // stopped by us: not a failure
  });

  it("a recorder that ends before any audio: start() rejects with its last stderr line", async () => {
    const mic = new Microphone(shell("echo 'rec: no default audio device' >&2; exit 1"));
    await expect(mic.start(() => undefined, () => undefined)).rejects.toThrow("the microphone could not be opened (sh: rec: no default audio device)");
  });

  it("a recorder that stops after its audio began: the failure says why", async () => {
    const failures: string[] = [];
    const mic = new Microphone(shell("head -c 640 /dev/zero; sleep 0.1; echo 'device unplugged' >&2; exit 1"));
    await mic.start(() => undefined, (why) => failures.push(why));
    await until(() => failures.length > 0);
    expect(failures).toEqual(["the microphone stopped (sh: device unplugged)"]);
  });
});

describe("the speaker", () => {
  const root = mkdtempSync(join(tmpdir(), "sb-console-speaker-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let runs = 0;
  /** A player appending what it plays to `out` and a line per start to `starts`. */
  function player(): { tool: AudioTool; out: string; starts: () => number } {
    const dir = join(root, String(++runs));
    mkdirSync(dir);
    const out = join(dir, "out");
    const log = join(dir, "starts");
    const starts = (): number => (existsSync(log) ? readFileSync(log, "utf8").split("\n").length - 1 : 0);
    return { tool: shell(`echo started >> ${log}; exec cat >> ${out}`), out, starts };
  }

  it("plays PCM16 through the player's stdin", async () => {
    const { tool, out } = player();
    const speaker = new Speaker(tool, () => undefined);
    speaker.write(new Int16Array([1, -1, 256]));
    await until(() => existsSync(out) && readFileSync(out).byteLength === 6);
    expect([...readFileSync(out)]).toEqual([1, 0, 255, 255, 0, 1]);
    speaker.close();
  });

  it("a flush restarts the player (what it held is dropped); a flush with nothing written since is nothing", async () => {
    const failures: string[] = [];
    const { tool, out, starts } = player();
    const speaker = new Speaker(tool, (why) => failures.push(why));
    await until(() => starts() === 1);
    speaker.flush();
    speaker.write(new Int16Array([7]));
    await until(() => existsSync(out) && readFileSync(out).byteLength === 2);
    expect(starts()).toBe(1);
    speaker.flush();
    speaker.write(new Int16Array([8]));
    await until(() => starts() === 2 && readFileSync(out).byteLength === 4);
    speaker.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(failures).toEqual([]); // ours: neither the flush's nor the close's exit is a failure
  });

  it("a player that dies: the failure says why, with its last stderr line", async () => {
    const failures: string[] = [];
    const speaker = new Speaker(shell("echo 'play: no sound card' >&2; exit 2"), (why) => failures.push(why));
    await until(() => failures.length > 0);
    expect(failures).toEqual(["the speaker stopped (sh: play: no sound card)"]);
    speaker.close();
  });
});
