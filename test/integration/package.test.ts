import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs an ES module snippet in a fresh Node process at the package root (self-reference). */
async function node(source: string): Promise<string> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source], { cwd: root });
  return stdout.trim();
}

describe("the built package", () => {
  beforeAll(async () => {
    await run(process.execPath, [fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url)), "-p", "tsconfig.build.json"], {
      cwd: root,
    });
  }, 120_000);

  it("exports the manifest barrel at switchboard/manifest", async () => {
    const out = await node(`
      import { composeToolsets, toAgentConfig, toolset, tool, HOST_ONLY_AGENT_FIELDS } from "switchboard/manifest";
      const weather = tool({ description: "Weather", execute: () => "Sunny." });
      const table = composeToolsets([toolset("files", { weather })]);
      console.log(JSON.stringify({ mode: toAgentConfig({ name: "x" }).mode, tools: table.tools.map((t) => t.name), n: HOST_ONLY_AGENT_FIELDS.length }));
    `);
    expect(JSON.parse(out)).toEqual({ mode: "pipeline", tools: ["weather"], n: 12 });
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

  it("loads no provider SDK, AI SDK, Redis client or TypeScript loader until one is used", async () => {
    // A resolve hook in the child lists every package the import pulls in.
    const hook = `data:text/javascript,${encodeURIComponent(`
      export async function resolve(specifier, context, next) {
        const resolved = await next(specifier, context);
        const tail = resolved.url.split("node_modules/")[1];
        if (tail !== undefined) {
          const [scope, name] = tail.split("/");
          process.stderr.write("PKG " + (scope.startsWith("@") ? scope + "/" + name : scope) + "\\n");
        }
        return resolved;
      }`)}`;
    const source = `
      import { register } from "node:module";
      register(${JSON.stringify(hook)});
      const { createGateway, agent } = await import("switchboard");
      const gateway = createGateway({ agent: agent({ name: "idle", greeting: "", llm: { kind: "openai", options: { model: "m" } } }), env: { OPENAI_API_KEY: "k" }, processMetrics: false });
      await gateway.listen(0);
      await gateway.close();
    `;
    const { stderr } = await run(process.execPath, ["--input-type=module", "-e", source], { cwd: root });
    const loaded = new Set([...stderr.matchAll(/^PKG (\S+)$/gm)].map((m) => m[1]));
    expect(loaded.has("ws")).toBe(true);
    for (const lazy of ["ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "ioredis", "tsx", "@modelcontextprotocol/sdk"]) expect(loaded.has(lazy), lazy).toBe(false);
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
    expect(stdout).toMatch(/^support: pipeline agent\ntools:\n {2}lookup_order +tools\/lookup_order {2}messages: start, delayed, complete {2}\(gated\)/);
    expect(stdout).toMatch(/ {2}calculate +builtin/);
    expect(stdout).toMatch(/llm {2}openai {2}— needs OPENAI_API_KEY/);
    const bad = await run(process.execPath, ["dist/cli.js", "serve"], { cwd: root }).catch((error: { code: number; stderr: string }) => error);
    // A command used wrongly exits 2 (README "Exit codes").
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("serve needs an agent directory or file") as string });
  }, 30_000);
});
