import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs an ES module snippet in a fresh Node process at the package root (self-reference). */
async function node(source: string): Promise<string> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source], { cwd: root });
  return stdout.trim();
}

describe("the built package", () => {
  beforeAll(async () => {
    // The package's own build (scripts/build.ts), as `npm run build` runs it.
    await run(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: root });
  }, 120_000);

  it("exports the manifest barrel at switchboard/manifest", async () => {
    const out = await node(`
      import { composeToolsets, toAgentConfig, toolset, tool, HOST_ONLY_AGENT_FIELDS } from "switchboard/manifest";
      const weather = tool({ description: "Weather", execute: () => "Sunny." });
      const table = composeToolsets([toolset("files", { weather })]);
      console.log(JSON.stringify({ mode: toAgentConfig({ name: "x" }).mode, tools: table.tools.map((t) => t.name), n: HOST_ONLY_AGENT_FIELDS.length }));
    `);
    expect(JSON.parse(out)).toEqual({ mode: "pipeline", tools: ["weather"], n: 13 });
  });

  it("exports toAiTool at switchboard/ai and the authoring API at the root", async () => {
    const out = await node(`
      import { toAiTool, toAiTools } from "switchboard/ai";
      import { tool, agent } from "switchboard";
      import { callTool } from "switchboard/testing";
      const t = tool({ description: "Ping", execute: () => "pong" });
      const outcome = await callTool(t, {});
      console.log(JSON.stringify({ ai: typeof toAiTool(t).execute, all: Object.keys(toAiTools({ t })), name: agent({ name: "a" }).name, outcome }));
    `);
    expect(JSON.parse(out)).toEqual({ ai: "function", all: ["t"], name: "a", outcome: { status: "ok", result: { text: "pong" } } });
  });

  /**
   * What a gateway serving `agentSource` (an `agent(...)` expression) loads by the time it listens,
   * then has run `then` (statements; `port` is its port): packages, and the package's own modules (`dist/…`).
   */
  async function loadedBy(agentSource: string, then = ""): Promise<{ readonly packages: Set<string>; readonly modules: Set<string> }> {
    // A resolve hook in the child lists every package and every module of the package the import pulls in.
    const hook = `data:text/javascript,${encodeURIComponent(`
      export async function resolve(specifier, context, next) {
        const resolved = await next(specifier, context);
        const tail = resolved.url.split("node_modules/")[1];
        if (tail !== undefined) {
          const [scope, name] = tail.split("/");
          process.stderr.write("PKG " + (scope.startsWith("@") ? scope + "/" + name : scope) + "\\n");
        } else if (resolved.url.includes("/dist/")) process.stderr.write("MOD " + resolved.url.split("/dist/").at(-1) + "\\n");
        return resolved;
      }`)}`;
    const source = `
      import { register } from "node:module";
      register(${JSON.stringify(hook)});
      const { createGateway, agent } = await import("switchboard");
      const gateway = createGateway({ agent: ${agentSource}, env: { OPENAI_API_KEY: "k" }, processMetrics: false });
      const { port } = await gateway.listen(0);
      ${then}
      await gateway.close();
      // Packages required (CommonJS, or ES through require) bypass the resolve hook: list them from the require cache.
      const { createRequire } = await import("node:module");
      for (const file of Object.keys(createRequire(import.meta.url).cache)) {
        const tail = file.split("node_modules/").at(-1);
        if (tail !== file) process.stderr.write("PKG " + tail.split("/").slice(0, tail.startsWith("@") ? 2 : 1).join("/") + "\\n");
      }
    `;
    const { stderr } = await run(process.execPath, ["--input-type=module", "-e", source], { cwd: root });
    const lines = (kind: string): Set<string> => new Set([...stderr.matchAll(new RegExp(`^${kind} (\\S+)$`, "gm"))].map((m) => m[1] ?? ""));
    return { packages: lines("PKG"), modules: lines("MOD") };
  }

  it("loads no provider SDK, AI SDK, Redis client, workflow SDK, database or S3 client, schema validator, statechart library or TypeScript loader until one is used", async () => {
    const { packages: loaded, modules } = await loadedBy('agent({ name: "idle", greeting: "", llm: { kind: "openai", options: { model: "m" } } })');
    expect(loaded.has("ws")).toBe(true);
    expect(loaded.has("sonic-boom"), "the require cache is read").toBe(true);
    // A pipeline agent: listen imported its mode ahead of the first session, with the resampler.
    expect(modules.has("session/pipeline-mode.js")).toBe(true);
    expect(loaded.has("@echogarden/speex-resampler-wasm")).toBe(true);
    // The workflow SDK alone is about 40 MiB of an idle process, TypeBox about 7, ajv about 2, xstate (dialogs) about 0.6 (docs/benchmarks.md "Idle memory").
    const lazy = ["ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "ioredis", "tsx", "@modelcontextprotocol/sdk", "@workflow/core", "@workflow/world-local", "@workflow/world-postgres", "pg", "graphile-worker", "@aws-sdk/client-s3", "@sinclair/typebox", "ajv", "xstate"];
    for (const name of lazy) expect(loaded.has(name), name).toBe(false);
  });

  it("a text agent's gateway holds no voice mode, speech adapter, resampler or Realtime front door", async () => {
    const { packages, modules } = await loadedBy('agent({ name: "idle", text: true, greeting: "", llm: { kind: "openai", options: { model: "m" } } })');
    expect(modules.has("session/modes.js")).toBe(true);
    for (const module of ["session/pipeline-mode.js", "session/s2s-mode.js", "session/voice-runner.js", "session/s2s-runner.js", "pipeline/providers/stt/index.js", "pipeline/providers/tts/index.js", "s2s/providers/index.js", "server/realtime-route.js", "realtime/connection.js", "realtime/client-events.js"]) {
      expect(modules.has(module), module).toBe(false);
    }
    expect(packages.has("@echogarden/speex-resampler-wasm")).toBe(false);
  });

  it("a gateway that mounts no carrier does not load what answers carriers; one that does loads it ahead of the first call", async () => {
    const answering = ["server/telephony/answering.js", "transport/carrier-bridge.js", "server/telephony/transfers.js", "server/telephony/callbacks.js"];
    // A request the gateway does not route (a 404) is no telephony webhook either.
    const { modules: idle } = await loadedBy('agent({ name: "idle", text: true, greeting: "", llm: { kind: "openai", options: { model: "m" } } })', 'await (await fetch(`http://127.0.0.1:${port}/favicon.ico`)).text();');
    expect(idle.has("server/telephony/index.js")).toBe(true);
    for (const module of answering) expect(idle.has(module), module).toBe(false);
    const { modules: phone } = await loadedBy('agent({ name: "phone", greeting: "", llm: { kind: "openai", options: { model: "m" } }, telephony: ["twilio"] })');
    for (const module of answering) expect(phone.has(module), module).toBe(true);
  });

  it("ships declarations for every export path", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      exports: Record<string, { types?: string }>;
    };
    for (const [path, target] of Object.entries(pkg.exports)) {
      if (target.types === undefined) continue;
      await expect(readFile(new URL(`../../${target.types}`, import.meta.url), "utf8"), path).resolves.toContain("export");
    }
  });

  it("has a switchboard bin: help exits cleanly, check validates an agent directory", async () => {
    expect((await run(process.execPath, ["dist/cli.js", "help"], { cwd: root })).stdout).toMatch(/^Usage: switchboard <command>/);
    const { stdout } = await run(process.execPath, ["dist/cli.js", "check", "examples/support"], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "", CARTESIA_API_KEY: "" },
    });
    expect(stdout).toMatch(/^support: pipeline agent\ntools:\n/);
    expect(stdout).toMatch(/\n {2}lookup_order +tools\/lookup_order\.ts {2}messages: start, delayed, complete {2}\(gated\)\n/);
    expect(stdout).toMatch(/\n {2}start_return +tools\/start_return\.ts {2}\(dialog returns: choose_order\)\n/);
    expect(stdout).toMatch(/\ndialogs:\n {2}returns +3 states from choose_order to booked; tools: confirm_return, start_return\n/);
    expect(stdout).toMatch(/ {2}calculate +builtin/);
    expect(stdout).toMatch(/llm {2}openai {2}— needs OPENAI_API_KEY/);
    const bad = await run(process.execPath, ["dist/cli.js", "serve"], { cwd: root }).catch((error: { code: number; stderr: string }) => error);
    // A command used wrongly exits 2 (README "Exit codes").
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("serve needs an agent directory or file") as string });
  }, 30_000);
});

describe("agents and projects outside the repository (the built CLI)", () => {
  const cli = (args: readonly string[], cwd = root) =>
    run(process.execPath, [join(root, "dist/cli.js"), ...args], { cwd }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  let dir = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "switchboard-outside-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a .ts agent in a CommonJS scope with the fix, and loads it as .mts", async () => {
    // What `npm init -y` (npm 11) writes: tsx then compiles agent.ts as CommonJS, and Node says
    // only "Cannot require() ES Module … in a cycle".
    const agentDir = join(dir, "commonjs");
    await mkdir(agentDir);
    await writeFile(join(agentDir, "package.json"), '{ "name": "commonjs", "type": "commonjs" }\n');
    const source = 'export default { name: "plain", mode: "text", llm: { kind: "scripted", options: {} } };\n';
    await writeFile(join(agentDir, "agent.ts"), source);
    const refused = await cli(["check", agentDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('agent.ts: is loaded as CommonJS (');
    expect(refused.stderr).toContain('package.json has no "type": "module"), but agents are ES modules: add "type": "module" to');
    expect(refused.stderr).toContain("(npm pkg set type=module), or name the file .mts.");
    await rm(join(agentDir, "agent.ts"));
    await writeFile(join(agentDir, "agent.mts"), source);
    expect((await cli(["check", agentDir])).stdout).toMatch(/^plain: text agent\n/);
  }, 30_000);

  it("a file in a CommonJS scope that fails for its own reasons keeps its own error, not the scope's", async () => {
    const agentDir = join(dir, "commonjs-throws");
    await mkdir(agentDir);
    await writeFile(join(agentDir, "package.json"), "{}\n");
    // Plain JavaScript, so it runs untranslated in CommonJS and fails at its own top level.
    await writeFile(join(agentDir, "agent.ts"), "const entries = {};\nconsole.log(entries.x.d);\n");
    const refused = await cli(["check", agentDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Cannot read properties of undefined (reading 'd')");
    expect(refused.stderr).not.toContain("CommonJS");
  }, 30_000);

  it("init scaffolds a project depending on this checkout, refuses a non-empty directory and needs a directory", async () => {
    const target = join(dir, "my-agent");
    const made = await cli(["init", target], dir);
    expect(made).toMatchObject({ code: 0, stdout: expect.stringContaining("Next:\n  cd my-agent\n  npm install\n") as string });
    expect((await readdir(target, { recursive: true })).sort()).toEqual(
      [".env.example", ".gitignore", "README.md", "agent.test.ts", "agent.ts", "offline.json", "package.json", "tools", "tools/check_weather.ts", "tsconfig.json"].sort(),
    );
    const pkg = JSON.parse(await readFile(join(target, "package.json"), "utf8")) as { name: string; type: string; dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg).toMatchObject({ name: "my-agent", type: "module", scripts: { dev: "switchboard dev .", check: "switchboard check .", test: "vitest run" } });
    // Run from a checkout, the dependency is the checkout itself (npm links a file: directory).
    expect(pkg.dependencies).toEqual({ "@sinclair/typebox": expect.stringMatching(/^\^0\.34\./) as string, switchboard: `file:${relative(target, root).split("\\").join("/").replace(/\/$/, "")}` });
    expect(await readFile(join(target, "agent.ts"), "utf8")).toContain('name: "my-agent"');
    expect((await readFile(join(target, "README.md"), "utf8")).trimEnd().split("\n")).toHaveLength(4);
    // docs/testing.md opens with this very test (test/e2e/package-install.test.ts runs it).
    const guide = await readFile(join(root, "docs/testing.md"), "utf8");
    expect(guide).toContain(`\`\`\`ts\n// agent.test.ts\n${await readFile(join(target, "agent.test.ts"), "utf8")}\`\`\`\n`);

    const again = await cli(["init", target], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty \(\.env\.example, \.gitignore, README\.md, …\): init writes only into a new or empty directory.*switchboard init my-agent-2/);
    expect(await cli(["init"], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining("init needs a directory to create") as string });
  }, 30_000);
});
