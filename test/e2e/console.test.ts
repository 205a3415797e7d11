// `switchboard console <agent>`, process by process: typed turns on piped stdin get the streamed
// reply, the tool call with its line and result, and a latency line; /quit and end of input exit
// 0; --voice runs through the microphone and speaker tools it finds on PATH — here a fake `rec`
// that plays a fixture in real time and a fake `play` that keeps what it is given (this machine
// has no audio device) — and refuses, exit 1, with the install command when it finds none.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { ServerEvent } from "../../src/transport/protocol.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(root, "src", "cli.ts");
const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;
const pocketsphinx = existsSync("/usr/bin/pocketsphinx_continuous");
const NO_KEYS = { OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "", CARTESIA_API_KEY: "" };

interface Console {
  /** Resolves once stdout matches (rejects at the timeout, with what was printed). */
  readonly output: (pattern: RegExp, timeoutMs?: number) => Promise<string>;
  readonly type: (line: string) => void;
  readonly endInput: () => void;
  readonly exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `switchboard console <args…>` with a pipe for stdin. */
function runConsole(args: readonly string[], env: NodeJS.ProcessEnv = {}): Console {
  const child = spawn(process.execPath, ["--import", tsx, cli, "console", ...args], { cwd: root, env: { ...process.env, ...NO_KEYS, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  return {
    output: async (pattern, timeoutMs = 60_000) => {
      const until = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`no ${String(pattern)} in:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return stdout;
    },
    type: (line) => child.stdin.write(`${line}\n`),
    endInput: () => child.stdin.end(),
    exited,
  };
}

/** A text agent on the scripted model, with a slow tool that has a start line. */
async function deskAgent(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sb-console-"));
  const index = JSON.stringify(pathToFileURL(join(root, "src", "index.ts")).href);
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(dir, "agent.ts"), `import { agent } from ${index};\nexport default agent({ name: "desk", mode: "text", greeting: "Desk here.", llm: { kind: "scripted", options: {} } });\n`);
  mkdirSync(join(dir, "tools"));
  await writeFile(
    join(dir, "tools", "find_item.ts"),
    `import { tool } from ${index};\nexport default tool({ description: "Find an item", messages: { start: "One moment." }, execute: async () => { await new Promise((r) => setTimeout(r, 300)); return "Shelf four."; } });\n`,
  );
  await writeFile(
    join(dir, "offline.json"),
    JSON.stringify({ rules: [{ when: "\\bfind\\b", call: { tool: "find_item", args: {} }, then: "It is on {result} Anything else?" }, { when: "\\bhi\\b", say: "Hello from the desk." }], fallback: "I only find things." }),
  );
  return dir;
}

/** A directory with a fake `rec` (a fixture, in real time, after 300 ms of silence, then silence) and a fake `play` (appends to played.raw). */
async function fakeAudioTools(fixture: string): Promise<{ bin: string; played: string; args: (tool: "rec" | "play") => string }> {
  const bin = await mkdtemp(join(tmpdir(), "sb-console-audio-"));
  await writeFile(
    join(bin, "fake-rec.mjs"),
    `import { readFileSync } from "node:fs";
const pcm = readFileSync(${JSON.stringify(fixture)}).subarray(44);
const frame = 640, silence = Buffer.alloc(frame), start = Date.now();
let n = 0;
process.stdout.on("error", () => process.exit(0));
const tick = () => {
  const at = (n - 15) * frame;
  process.stdout.write(n >= 15 && at < pcm.length ? Buffer.concat([pcm.subarray(at, at + frame), silence]).subarray(0, frame) : silence);
  n++;
  setTimeout(tick, Math.max(0, start + n * 20 - Date.now()));
};
tick();
`,
  );
  const script = (name: string, body: string): Promise<void> => writeFile(join(bin, name), `#!/bin/sh\necho "$@" > ${JSON.stringify(join(bin, `${name}.args`))}\n${body}\n`, { mode: 0o755 });
  await script("rec", `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(bin, "fake-rec.mjs"))}`);
  await script("play", `exec cat >> ${JSON.stringify(join(bin, "played.raw"))}`);
  chmodSync(join(bin, "rec"), 0o755);
  chmodSync(join(bin, "play"), 0o755);
  return { bin, played: join(bin, "played.raw"), args: (tool) => readFileSync(join(bin, `${tool}.args`), "utf8").trim() };
}

describe("switchboard console, typed", () => {
  it("a turn with a tool: the tool call, its line and its result once each, the reply streamed onto one line, a latency line; end of input exits 0", async () => {
    const desk = await deskAgent();
    const session = runConsole([desk]);
    await session.output(/agent: Desk here\.\n/);
    session.type("please find my keys");
    session.type("hi");
    session.endInput(); // Ctrl-D: the turns typed before it are answered, then the console leaves
    const { code, stdout, stderr } = await session.exited;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.split("\n");
    const turn = lines.indexOf("you:   please find my keys");
    expect(turn).toBeGreaterThan(0);
    expect(lines.slice(turn + 1, turn + 6)).toEqual([
      "tool:  find_item({})",
      'tool:  (start) "One moment."',
      "tool:  → Shelf four.",
      "agent: It is on Shelf four. Anything else?",
      expect.stringMatching(/^ {7}latency: first text \d+ ms · llm first token \d+ ms$/) as string,
    ]);
    expect(stdout.match(/One moment\./g)).toHaveLength(1);
    expect(lines.slice(lines.indexOf("you:   hi") + 1, lines.indexOf("you:   hi") + 3)).toEqual([
      "agent: Hello from the desk.",
      expect.stringMatching(/^ {7}latency: first text \d+ ms · llm first token \d+ ms$/) as string,
    ]);
  }, 60_000);

  it("/reset starts over with the greeting, an unknown /command is named, /quit leaves; --json prints every event as a JSON line", async () => {
    const desk = await deskAgent();
    const session = runConsole([desk, "--json"]);
    await session.output(/"type":"reply\.completed"/);
    session.type("hi");
    session.type("/reset");
    session.type("/quit");
    session.type("hi"); // after /quit: never sent
    const { code, stdout } = await session.exited;
    expect(code).toBe(0);
    const events = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ServerEvent);
    expect(events[0]?.type).toBe("session.configured");
    expect(events.filter((e) => e.type === "user-transcript.committed")).toHaveLength(1);
    const reset = events.findIndex((e) => e.type === "session.reset");
    expect(reset).toBeGreaterThan(0);
    expect(events.slice(reset + 1).find((e) => e.type === "agent-transcript.committed")).toMatchObject({ text: "Desk here." });
    expect(events.some((e) => e.type === "metrics.turn")).toBe(true);
  }, 60_000);

  it("the demo agent (examples/support, offline): a typed turn gets the tool call, the streamed reply once, and a latency line; /quit exits 0", async () => {
    const session = runConsole(["examples/support", "--offline"]);
    await session.output(/agent: Hi, this is order support\. Say your PIN, or ask me where your order is\.\n/);
    session.type("my pin is 4567");
    await session.output(/latency: .*\n/);
    session.type("/quit");
    const { code, stdout } = await session.exited;
    expect(code).toBe(0);
    expect(stdout).toContain('you:   my pin is 4567\ntool:  verify_caller({"pin":"4567"})\ntool:  → The caller is verified.\nagent: The caller is verified. Now ask me where your order is.\n');
    expect(stdout).toMatch(/ {7}latency: first text \d+ ms · llm first token \d+ ms · tts first audio \d+ ms · first audio \d+ ms\n/);
    expect(stdout.match(/Now ask me where your order is/g)).toHaveLength(1);
  }, 90_000);
});

describe("switchboard console --voice", () => {
  it("without sox or ALSA on PATH: exit 1 at once, with the install command", async () => {
    const empty = await mkdtemp(join(tmpdir(), "sb-console-nopath-"));
    const { code, stdout, stderr } = await runConsole(["examples/support", "--voice"], { PATH: empty }).exited;
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("--voice needs the microphone and speaker through sox (rec, play) or ALSA (arecord, aplay)");
    expect(stderr).toContain("install sox: sudo apt-get install sox (macOS: brew install sox)");
  }, 30_000);

  it("on a text agent: exit 1, it has nothing to hear with", async () => {
    const { bin } = await fakeAudioTools(join(root, "fixtures", "audio", "hello.wav"));
    const { code, stderr } = await runConsole([await deskAgent(), "--voice"], { PATH: [bin, process.env.PATH].join(delimiter) }).exited;
    expect(code).toBe(1);
    expect(stderr).toMatch(/--voice needs a voice agent: desk is a text agent/);
  }, 30_000);

  it("without pocketsphinx (SWITCHBOARD_POCKETSPHINX pointing nowhere): exit 1 fast, with the install command and the key of the agent's own STT", async () => {
    const { bin } = await fakeAudioTools(join(root, "fixtures", "audio", "hello.wav"));
    const started = Date.now();
    const { code, stderr } = await runConsole(["examples/support", "--voice"], { PATH: [bin, process.env.PATH].join(delimiter), SWITCHBOARD_POCKETSPHINX: "/nonexistent/pocketsphinx_continuous" }).exited;
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(stderr).toContain("the local STT needs pocketsphinx (/nonexistent/pocketsphinx_continuous was not found); install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us (or set DEEPGRAM_API_KEY to use deepgram)");
  }, 30_000);

  it.skipIf(!pocketsphinx)("hears the microphone (a fake rec playing hello.wav), answers, and plays the reply through the speaker (a fake play)", async () => {
    const tools = await fakeAudioTools(join(root, "fixtures", "audio", "hello.wav"));
    const session = runConsole(["examples/support", "--voice"], { PATH: [tools.bin, process.env.PATH].join(delimiter) });
    await session.output(/Voice: rec → the agent → play\./);
    const stdout = await session.output(/you: {3}hello[^\n]*\nagent: Hello! Say your PIN to get started\.\n {7}latency: endpoint \d+ ms · llm first token \d+ ms · tts first audio \d+ ms · voice-to-voice \d+ ms\n/, 60_000);
    expect(stdout).toContain("agent: Hi, this is order support.");
    session.type("/quit");
    const { code } = await session.exited;
    expect(code).toBe(0);
    expect(tools.args("rec")).toBe("-q -t raw -r 16000 -e signed-integer -b 16 -c 1 -L -");
    expect(tools.args("play")).toBe("-q -t raw -r 24000 -e signed-integer -b 16 -c 1 -L -");
    // The greeting and the reply, at 24 kHz: seconds of audio, not silence.
    const played = readFileSync(tools.played);
    expect(played.byteLength / 2 / 24000).toBeGreaterThan(3);
    const samples = new Int16Array(played.buffer, played.byteOffset, Math.floor(played.byteLength / 2));
    expect(samples.some((s) => Math.abs(s) > 1000)).toBe(true);
  }, 90_000);
});
