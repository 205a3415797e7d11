// The CLI's conventions, process by process: a port in use names the flag that picks another
// (exit 1), a command used wrongly exits 2, and `.env` files are loaded below the real
// environment, reported by name, never by value.
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:net";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { serve, type Served } from "../helpers/serve.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(root, "src", "cli.ts");
const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;

/** `switchboard <args…>` in `cwd`: its exit code and output, whether it succeeded or not. */
async function switchboard(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["--import", tsx, cli, ...args], { cwd: options.cwd ?? root, env: options.env ?? process.env, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

async function textAgent(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sb-cli-"));
  await writeFile(join(dir, "agent.mjs"), 'export default { name: "echo", mode: "text", greeting: "Hello.", llm: { kind: "scripted", options: {} } };\n');
  return dir;
}

let blocker: Server | undefined;
let served: Served | undefined;
afterEach(async () => {
  served?.kill();
  await new Promise<void>((resolve) => (blocker === undefined ? resolve() : blocker.close(() => resolve())));
  blocker = undefined;
});

describe("the switchboard CLI", () => {
  it("exits 1 on a port in use, saying to pass --port (serve and dev)", async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker?.listen(0, "127.0.0.1", () => resolve((blocker?.address() as { port: number }).port)));
    const agent = await textAgent();
    for (const command of ["serve", "dev"]) {
      const result = await switchboard([command, agent, "--port", String(port)]);
      expect(result, command).toMatchObject({ code: 1, stderr: `switchboard: cannot listen on 127.0.0.1:${port}: the port is in use; pass --port <n> (0 picks a free one)\n` });
    }
  }, 60_000);

  it("exits 2 when used wrongly and 1 when the command fails", async () => {
    const agent = await textAgent();
    const cases: [readonly string[], number, RegExp][] = [
      [["serve", agent, "--port", "http"], 2, /--port must be a port number \(got http\)/],
      [["serve", agent, "--workers", "0"], 2, /--workers must be a whole number/],
      [["dev"], 2, /dev needs an agent directory or file/],
      [["dev", agent, "--port", "99999"], 2, /--port must be a port number/],
      [["dev", agent, "--workers", "2"], 2, /Unknown option '--workers'/],
      [["call", agent, "in.wav", "--timeout", "soon"], 2, /--timeout must be a positive number of ms/],
      [["dev", join(agent, "missing")], 1, /Cannot load agent/],
    ];
    for (const [args, code, message] of cases) {
      const result = await switchboard(args);
      expect(result.code, args.join(" ")).toBe(code);
      expect(result.stderr, args.join(" ")).toMatch(message);
    }
  }, 120_000);

  it("loads ./.env and <agent>/.env below the real environment, naming the files only", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "sb-dotenv-"));
    await mkdir(join(cwd, "agent"));
    await writeFile(join(cwd, "agent", "agent.mjs"), 'export default { name: "voice" };\n');
    await writeFile(join(cwd, ".env"), "OPENAI_API_KEY=from-cwd\n");
    await writeFile(join(cwd, "agent", ".env"), "DEEPGRAM_API_KEY=from-agent\nCARTESIA_API_KEY=from-agent\n");
    const env: NodeJS.ProcessEnv = { ...process.env, CARTESIA_API_KEY: "" };
    delete env.OPENAI_API_KEY;
    delete env.DEEPGRAM_API_KEY;
    const { code, stdout, stderr } = await switchboard(["check", "agent"], { cwd, env });
    expect(code).toBe(0);
    expect(stderr).toContain(`loaded ${join("agent", ".env")}, .env\n`);
    expect(stdout).toMatch(/stt {2}deepgram\n/);
    expect(stdout).toMatch(/llm {2}openai\n/);
    // Set (to nothing) in the real environment: the .env file does not replace it.
    expect(stdout).toMatch(/tts {2}cartesia {2}— needs CARTESIA_API_KEY/);
  }, 60_000);

  it("serve turns auth on from an agent's .env, and logs the file's name without its values", async () => {
    const agent = await textAgent();
    await writeFile(join(agent, ".env"), "SWITCHBOARD_API_KEY=sk-dotenv-SECRET-0001\n");
    served = await serve([agent], { LOG_LEVEL: "info", SWITCHBOARD_METRICS_TOKEN: "m" });
    expect(served.output()).not.toMatch(/unauthenticated:/);
    const loaded = served
      .output()
      .split("\n")
      .filter((line) => line.includes("loaded .env files"))
      .map((line) => JSON.parse(line) as { files: string[]; variables: number });
    expect(loaded).toEqual([expect.objectContaining({ files: [expect.stringMatching(/sb-cli-.*\/\.env$/) as string], variables: 1 })]);
    expect(served.output()).not.toContain("SECRET-0001");
  }, 60_000);

  it("loads only the module of the command it runs; help loads them all", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sb-cli-"));
    // A module hook after tsx's, noting every module of src/cli the process loads (hooks run on a thread of their own: into a file).
    const hook = `import { appendFileSync } from "node:fs"; export async function load(url, context, next) { if (url.includes("/src/cli")) appendFileSync(process.env.SB_LOADED, url + "\\n"); return next(url, context); }`;
    const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    const loaded = async (args: readonly string[]): Promise<string[]> => {
      const file = join(dir, `${args.join("-")}.txt`);
      await run(process.execPath, ["--import", tsx, "--import", `data:text/javascript,${encodeURIComponent(register)}`, cli, ...args], { cwd: root, env: { ...process.env, SB_LOADED: file }, timeout: 60_000 });
      const text = await readFile(file, "utf8");
      return [...new Set(text.split("\n").filter((line) => line !== "").map((url) => url.slice(url.indexOf("/src/") + 1)))].sort();
    };
    expect(await loaded(["serve", "--help"])).toEqual(["src/cli.ts", "src/cli/command.ts", "src/cli/env.ts", "src/cli/serve.ts"]);
    expect(await loaded(["--help"])).toEqual(expect.arrayContaining(["src/cli/call.ts", "src/cli/check.ts", "src/cli/console.ts", "src/cli/dev.ts", "src/cli/init.ts", "src/cli/serve.ts"]));
  }, 60_000);

  it("serve says, once, when ws masks frames in JavaScript, and why", async () => {
    const running = await serve([await textAgent()], { WS_NO_BUFFER_UTIL: "1" });
    served = running;
    // stderr's lines may arrive after the banner on stdout.
    await vi.waitFor(() => expect(running.output()).toContain("ws masks WebSocket frames in JavaScript"), { timeout: 5_000 });
    const said = running
      .output()
      .split("\n")
      .filter((line) => line.includes("ws masks WebSocket frames in JavaScript"))
      .map((line) => JSON.parse(line) as { level: number; why: string });
    expect(said).toEqual([expect.objectContaining({ level: 40, why: "WS_NO_BUFFER_UTIL is set" })]);
  }, 60_000);
});
