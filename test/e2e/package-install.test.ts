// The package as an author gets it: `npm pack` of this repository, installed into an empty
// project with the registry, nothing of the repository's tree reachable from there. On that
// install: the Dockerfile's /app steps and its ENTRYPOINT + CMD (CI has no Docker daemon), and
// `switchboard init` → `npm install` → `check` → `tsc` → `npm test` → `serve` + one text turn over
// the protocol. npm runs with --prefer-offline (npm_config_prefer_offline): what `npm ci` of the
// repository put in the cache serves most of it. About 2 minutes; most of it is the two installs.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClient } from "../helpers/ws-client.js";

const exec = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

/** Keys that would take the agent off the offline stack: unset for every child (a set one, even empty, would win over a .env file). */
const PROVIDER_KEYS = ["OPENAI_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ANTHROPIC_API_KEY", "SWITCHBOARD_API_KEY", "SWITCHBOARD_REDIS_URL"];

/**
 * The environment of every child: no `npm_*` variable of the `npm test` that runs this file (an
 * inherited `npm_config_local_prefix` would point a child npm at this repository), no PATH entry
 * into this repository (the scaffold's own binaries must be the ones found), no provider key.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^npm_/i.test(name) && name !== "INIT_CWD") env[name] = value;
  env.PATH = (process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.startsWith(root)).join(delimiter);
  for (const key of PROVIDER_KEYS) delete env[key];
  return { ...env, LOG_LEVEL: "warn", NO_COLOR: "1", npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
}

async function run(command: string, args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  try {
    return await exec(command, args, { cwd, env: childEnv(), maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** The Dockerfile's instructions: each stage's `WORKDIR`-scoped `RUN` lines, `ENTRYPOINT`, `CMD`. */
interface Dockerfile {
  /** The build stage's RUN commands after `WORKDIR /app`: the runtime install. */
  readonly appSteps: readonly string[];
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
}

async function dockerfile(): Promise<Dockerfile> {
  const text = (await readFile(join(root, "Dockerfile"), "utf8")).replace(/\\\n/g, " ");
  const lines = text.split("\n").map((l) => l.trim());
  const appSteps: string[] = [];
  let inApp = false;
  for (const line of lines) {
    if (line.startsWith("FROM ")) inApp = false;
    if (line.startsWith("WORKDIR ")) inApp = line === "WORKDIR /app";
    if (inApp && line.startsWith("RUN ")) appSteps.push(line.slice(4));
  }
  const array = (instruction: string): string[] => {
    const line = lines.find((l) => l.startsWith(`${instruction} [`));
    if (line === undefined) throw new Error(`the Dockerfile has no ${instruction} [...]`);
    return JSON.parse(line.slice(instruction.length + 1)) as string[];
  };
  return { appSteps, entrypoint: array("ENTRYPOINT"), cmd: array("CMD") };
}

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

/** Start a gateway process; resolves once its banner names the URL. */
function start(command: string, args: readonly string[], cwd: string): Promise<Served> {
  const child = spawn(command, args, { cwd, env: childEnv() });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${out}`)), 60_000);
    child.stdout.on("data", () => {
      const url = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({ child, url, output: () => out });
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited ${String(code)}:\n${out}`));
    });
  });
}

/** Run `command` with these lines on its stdin (all at once: the console reads one per turn); its exit code and output. */
function typed(command: string, args: readonly string[], cwd: string, lines: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd, env: childEnv() });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(lines.map((line) => `${line}\n`).join(""));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

/** One typed turn after the greeting, asking for Paris's weather; the events it produced. */
async function weatherTurn(served: Served): Promise<TestClient> {
  const client = new TestClient(`${served.url.replace(/^http/, "ws")}/websocket`);
  await client.next("session.configured", 0);
  await client.next("reply.completed", 0); // the greeting
  await client.say("What's the weather in Paris?");
  client.close();
  return client;
}

const children: ChildProcess[] = [];
let work = "";
let app = "";
let tarball = "";

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "switchboard-package-"));
  // Pack from a staging copy: the package.json `files` entries, with dist/ compiled into it
  // (never into this repository's dist/, which other test files read and rebuild meanwhile).
  const stage = join(work, "stage");
  await mkdir(stage);
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { files: string[] };
  await cp(join(root, "package.json"), join(stage, "package.json"));
  for (const entry of pkg.files.filter((f) => f !== "dist")) await cp(join(root, entry), join(stage, entry), { recursive: true });
  await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json"), "--outDir", join(stage, "dist")], root);
  const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", work], stage);
  tarball = join(work, packed.stdout.trim().split("\n").at(-1) ?? "");
  // The Dockerfile's /app steps, as written, with the tarball where the image puts it.
  app = join(work, "app");
  await mkdir(app);
  await cp(tarball, join(app, "switchboard.tgz"));
  for (const step of (await dockerfile()).appSteps) await run("sh", ["-c", step], app);
}, 300_000);

// Removing the installed project (a node_modules tree) asserts nothing; on a loaded 2-core machine it took over vitest's 10 s hook default.
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  if (work !== "") await rm(work, { recursive: true, force: true });
}, 120_000);

describe.concurrent("the packed package, installed into an empty project", () => {
  it("installs only what it ships: no src/ or tests, declarations for every export", async () => {
    const installed = join(app, "node_modules", "switchboard");
    const { stdout } = await run("tar", ["tzf", tarball], work);
    const top = new Set(stdout.split("\n").filter(Boolean).map((p) => p.split("/")[1]));
    expect([...top].sort()).toEqual(["README.md", "dist", "docs", "examples", "package.json", "public", "templates"]);
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as { exports: Record<string, { types?: string }> };
    for (const target of Object.values(manifest.exports)) if (target.types !== undefined) await expect(readFile(join(installed, target.types), "utf8")).resolves.toContain("export");
    // The schema libraries an author writes parameters in are peers: installed beside switchboard, one copy.
    await expect(readFile(join(app, "node_modules", "@sinclair", "typebox", "package.json"), "utf8")).resolves.toContain('"version"');
    await expect(readFile(join(app, "node_modules", "zod", "package.json"), "utf8")).resolves.toContain('"version"');
  }, 60_000);

  it("runs the Dockerfile's ENTRYPOINT + CMD: serves the agent at /app/agent, which imports switchboard from /app/node_modules", async () => {
    const { entrypoint, cmd } = await dockerfile();
    expect(entrypoint.slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
    // ENV PATH puts /app/node_modules/.bin first, so the image's `switchboard` is this one.
    const [bin, ...args] = [...entrypoint.slice(2), ...cmd].map((arg) => arg.replace(/^\/app(?=\/|$)/, app));
    const local = args.map((arg, i) => (args[i - 1] === "--host" ? "127.0.0.1" : args[i - 1] === "--port" ? "0" : arg));
    expect(bin).toBe("switchboard");
    const served = await start(join(app, "node_modules", ".bin", "switchboard"), local, app);
    // The demo page comes from the package's public/.
    const page = await fetch(`${served.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    const client = await weatherTurn(served);
    expect(client.of("tool.called").map((e) => e.toolName)).toEqual(["check_weather"]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Today in Paris: sunny, 24 degrees.");
    served.child.kill("SIGTERM");
  }, 120_000);

  it("`switchboard start` serves the bundled demo agent, which imports switchboard by name from the install", async () => {
    const served = await start(join(app, "node_modules", ".bin", "switchboard"), ["start", "--port", "0"], app);
    const client = new TestClient(`${served.url.replace(/^http/, "ws")}/websocket`);
    await client.next("session.configured", 0);
    await client.next("reply.completed", 0); // the greeting
    await client.say("my PIN is four five six seven");
    client.close();
    expect(client.of("tool.called").map((e) => e.toolName)).toEqual(["verify_caller"]);
    expect(client.of("tool.completed").map((e) => e.result)).toEqual(["The caller is verified."]);
    served.child.kill("SIGTERM");
  }, 120_000);

  it("init scaffolds a project that installs, checks, type-checks, passes its own test and serves a text turn", async () => {
    const init = await run("npx", ["switchboard", "init", "my-agent"], app);
    expect(init.stdout).toMatch(/^Created my-agent: package\.json, .*agent\.ts.*tools\/check_weather\.ts/);
    expect(init.stdout).toContain("  cd my-agent\n  npm install\n");
    // The scaffold depends on the very tarball this install came from, re-based on its directory.
    const project = join(app, "my-agent");
    const scaffold = JSON.parse(await readFile(join(project, "package.json"), "utf8")) as { type: string; dependencies: Record<string, string> };
    expect(scaffold.type).toBe("module");
    expect(scaffold.dependencies.switchboard).toBe("file:../switchboard.tgz");
    const again = await run("npx", ["switchboard", "init", "my-agent"], app).then(() => "exit 0", (error: Error) => error.message);
    expect(again).toMatch(/my-agent is not empty \(.*\): init writes only into a new or empty directory.*switchboard init my-agent-2/);

    await run("npm", ["install"], project);
    const check = await run("npx", ["switchboard", "check", "."], project);
    expect(check.stdout).toMatch(/^my-agent: pipeline agent\ntools:\n {2}check_weather +tools\/check_weather(\.ts)? +messages: start, delayed\n/);
    // Every key `check` says the agent needs is listed in .env.example.
    const example = await readFile(join(project, ".env.example"), "utf8");
    const needed = [...check.stdout.matchAll(/needs ([A-Z_]+)/g)].map((m) => m[1]);
    expect(needed.length).toBeGreaterThan(0);
    for (const key of needed) expect(example).toMatch(new RegExp(`^${key}=`, "m"));
    // .env.example says to copy it to .env: `check` (and `serve`) read that file.
    await writeFile(join(project, ".env"), "DEEPGRAM_API_KEY=from-dotenv\n");
    expect((await run("npx", ["switchboard", "check", "."], project)).stdout).not.toContain("needs DEEPGRAM_API_KEY");
    await rm(join(project, ".env"));
    await run("npm", ["run", "typecheck"], project);
    const test = await run("npm", ["test"], project);
    expect(test.stdout).toMatch(/Tests +2 passed/);

    // The `dev` script, run by its binary rather than through npm (whose kill would orphan the gateway).
    const [command = "", ...devArgs] = (JSON.parse(await readFile(join(project, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.dev?.split(" ") ?? [];
    expect(command).toBe("switchboard");
    const served = await start(join(project, "node_modules", ".bin", command), [...devArgs, "--port", "0"], project);
    const client = await weatherTurn(served);
    expect(client.of("tool.message").map((e) => e.text)).toEqual(["Let me check the forecast."]);
    expect(client.of("tool.completed").map((e) => e.result)).toEqual(["Today in Paris: sunny, 24 degrees."]);
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Today in Paris: sunny, 24 degrees.");
    served.child.kill("SIGTERM");

    // And talks to it from the terminal: a typed turn, its tool line, the reply, /quit.
    const talk = await typed(join(project, "node_modules", ".bin", "switchboard"), ["console", "."], project, ["What's the weather in Paris?", "/quit"]);
    expect(talk.code).toBe(0);
    expect(talk.stdout).toContain("tool:  check_weather(");
    expect(talk.stdout).toContain("agent: Today in Paris: sunny, 24 degrees.");
  }, 300_000);

  it("loads an agent directory with no package.json of its own (a bare Docker mount) as an ES module", async () => {
    // Its nearest package.json is /app's, which the Dockerfile writes with "type": "module".
    const bare = join(app, "bare");
    await mkdir(join(bare, "tools"), { recursive: true });
    await writeFile(join(bare, "agent.ts"), 'import { agent } from "switchboard";\nexport default agent({ name: "bare", mode: "text", llm: { kind: "scripted", options: {} } });\n');
    await writeFile(
      join(bare, "tools", "echo.ts"),
      'import { Type } from "@sinclair/typebox";\nimport { tool } from "switchboard";\nexport default tool({ description: "Echo", parameters: Type.Object({ text: Type.String() }), execute: ({ text }) => text });\n',
    );
    const { stdout } = await run(join(app, "node_modules", ".bin", "switchboard"), ["check", "bare"], app);
    expect(stdout).toMatch(/^bare: text agent\ntools:\n {2}echo/);
  }, 60_000);
});

