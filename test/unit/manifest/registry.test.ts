import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it, vi } from "vitest";
import { configIssues } from "../../helpers/config-issues.js";
import { loadAgent } from "../../../src/server/loader.js";
import {
  agent,
  clientTool,
  ConfigError,
  tool,
  ToolDefinitionError,
  toolNameOf,
  toolRegistry,
  withTools,
  withWorkflows,
  workflow,
  workflowRegistry,
} from "../../../src/manifest/index.js";

const weather = tool({ description: "Weather", parameters: Type.Object({ city: Type.String() }), execute: () => "Sunny." });
const pick = clientTool({ description: "Pick on the page" });


describe("toolRegistry", () => {
  it("names each tool after its file under tools/", () => {
    const registry = toolRegistry({
      "./tools/weather.ts": { default: weather },
      "/srv/agents/support/tools/pick_colour.mjs": { default: pick },
    });
    expect(Object.keys(registry)).toEqual(["weather", "pick_colour"]);
    expect(registry.weather).toBe(weather);
  });

  it("reports nested, misnamed, duplicate and non-tool modules, each naming its file, all at once", () => {
    const issues = configIssues(() =>
      toolRegistry({
        "./tools/weather.ts": { default: weather },
        "./tools/weather.js": { default: weather },
        "./tools/admin/reset.ts": { default: weather },
        "./tools/Look-Up.ts": { default: weather },
        "./tools/helpers.ts": { format: () => "" },
        "./tools/config.ts": { default: { description: "not a tool" } },
        "./tools/readme.md": {},
        "./lib/other.ts": { default: weather },
      }),
    );
    expect(issues).toEqual([
      { path: "./tools/weather.js", message: 'declares tool "weather" again (also ./tools/weather.ts); keep one file per tool.' },
      { path: "./tools/admin/reset.ts", message: "nested inside tools/admin/; tools are files directly in tools/ — move it to tools/reset.ts." },
      { path: "./tools/Look-Up.ts", message: expect.stringContaining('"Look-Up" is not a valid name: use lower_snake_case') as string },
      { path: "./tools/helpers.ts", message: "must default-export tool({...}) or clientTool({...}) (found no default export)." },
      { path: "./tools/config.ts", message: "must default-export tool({...}) or clientTool({...}) (found an object that is not a tool())." },
      { path: "./tools/readme.md", message: "must end in .ts, .mts, .js, .mjs." },
      { path: "./lib/other.ts", message: "not inside a tools/ folder; put it at tools/<name>.ts." },
    ]);
    expect(issues[2]?.message).toContain("Rename it tools/look_up.ts.");
  });

  it("suggests the snake_case name for a PascalCase, camelCase, kebab-case or spaced file name", () => {
    const issues = configIssues(() =>
      toolRegistry({
        "./tools/LookupOrder.ts": { default: weather },
        "./tools/getOrderStatus.mjs": { default: weather },
        "./tools/cancel-order.js": { default: weather },
        "./tools/HTTPStatus.ts": { default: weather },
        "./tools/Refund Order.mts": { default: weather },
      }),
    );
    expect(issues.map((issue) => /Rename it (\S+)\.$/.exec(issue.message)?.[1])).toEqual([
      "tools/lookup_order.ts",
      "tools/get_order_status.mjs",
      "tools/cancel_order.js",
      "tools/http_status.ts",
      "tools/refund_order.mts",
    ]);
  });

  it("skips co-located spec and declaration files, whatever they export", () => {
    const registry = toolRegistry({
      "./tools/echo.ts": { default: weather },
      "./tools/echo.test.ts": {},
      "./tools/echo.spec.ts": { default: weather },
      "./tools/echo.test.js": {},
      "./tools/echo.spec.mjs": {},
      "./tools/echo.test.mts": {},
      "./tools/echo.spec.cjs": {},
      "./tools/echo.test.tsx": {},
      "./tools/echo.d.ts": {},
    });
    expect(registry).toEqual({ echo: weather });
  });

  it("refuses a barrel, naming the file and the fix", () => {
    for (const module of [{ default: weather }, { weather }]) {
      expect(configIssues(() => toolRegistry({ "./tools/weather.ts": { default: weather }, "./tools/index.ts": module }))).toEqual([
        {
          path: "./tools/index.ts",
          message:
            "is a barrel, not a tool: each file in tools/ is one tool named after its file, and they are found without an index. Delete tools/index.ts (or, if it is a tool, rename it tools/<name>.ts).",
        },
      ]);
    }
  });

  it("refuses a name longer than the providers' 64-character cap, naming the file", () => {
    const long = `lookup_${"x".repeat(58)}`; // 65 characters
    const ok = `lookup_${"x".repeat(57)}`; // 64
    expect(Object.keys(toolRegistry({ [`./tools/${ok}.ts`]: { default: weather } }))).toEqual([ok]);
    expect(configIssues(() => toolRegistry({ [`./tools/${long}.ts`]: { default: weather } }))).toEqual([
      {
        path: `./tools/${long}.ts`,
        message: `"${long}" is 65 characters; model providers take a tool name of at most 64 (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$), so every request would be refused. Rename the file to a name of 64 characters or fewer.`,
      },
    ]);
  });
});

describe("the agent loader's tools/ scan", () => {
  async function agentDir(tools: Readonly<Record<string, string>>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "switchboard-loader-"));
    await mkdir(join(dir, "tools"));
    const manifest = new URL("../../../src/manifest/index.ts", import.meta.url).href;
    await writeFile(join(dir, "agent.ts"), `import { agent } from ${JSON.stringify(manifest)};\nexport default agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } });\n`);
    const toolSource = `import { tool } from ${JSON.stringify(manifest)};\nexport default tool({ description: "Echo", execute: () => "echo" });\n`;
    for (const [file, source] of Object.entries(tools)) await writeFile(join(dir, "tools", file), source === "tool" ? toolSource : source);
    return dir;
  }

  it("never imports a co-located spec, and refuses a barrel like toolRegistry", async () => {
    const dir = await agentDir({
      "echo.ts": "tool",
      "echo.test.ts": 'throw new Error("a spec must never be imported by the loader");\n',
      "echo.spec.js": 'throw new Error("a spec must never be imported by the loader");\n',
      "index.ts": "tool",
    });
    try {
      const error = await loadAgent(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues).toEqual([{ path: "tools/index.ts", message: expect.stringMatching(/^is a barrel, not a tool/) as string }]);
      await rm(join(dir, "tools", "index.ts"));
      expect(Object.keys((await loadAgent(dir)).def.tools)).toEqual(["echo"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("withTools", () => {
  it("returns a new def and leaves its input untouched", () => {
    const base = agent({ name: "support" });
    const registry = toolRegistry({ "tools/weather.ts": { default: weather } });
    const attached = withTools(base, registry);
    expect(attached).not.toBe(base);
    expect(base.tools).toEqual({});
    expect(attached.tools).toEqual({ weather });
    expect(attached.name).toBe("support");
  });

  it("records each def's name for specs handed the def alone", () => {
    const fresh = tool({ description: "Fresh", execute: () => "" });
    expect(toolNameOf(fresh)).toBeUndefined();
    withTools(agent({ name: "x" }), { fresh_name: fresh });
    expect(toolNameOf(fresh)).toBe("fresh_name");
  });

  it("refuses a name the def already holds", () => {
    const once = withTools(agent({ name: "x" }), { weather });
    expect(configIssues(() => withTools(once, { weather }))).toEqual([
      { path: "tools.weather", message: 'the agent already has a tool named "weather"; a tool is declared once — remove one of them.' },
    ]);
  });

  it("refuses a name declared as a builtin", () => {
    const def = agent({ name: "x", builtinTools: ["calculate"] });
    expect(configIssues(() => withTools(def, { calculate: weather }))[0]?.message).toContain('"calculate" is also listed in builtinTools');
  });

  it("refuses a value that is not a tool, naming the key and what a tool is", () => {
    const refuse = (registry: unknown): string => {
      try {
        withTools(agent({ name: "x" }), registry as never);
      } catch (error) {
        expect(error).toBeInstanceOf(ToolDefinitionError);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refuse({ weather, lookup: { description: "Look up", execute: () => "" }, ping: () => "pong" })).toBe(
      "withTools(): tools.lookup is an object, not a tool; tools.ping is a function, not a tool. A tool is what tool({ description, execute }) or clientTool({ description }) returns — pass those, keyed by the name the model calls.",
    );
    expect(refuse([weather])).toMatch(/^withTools\(\): the registry is an array; pass a record keyed by tool name/);
    expect(refuse(undefined)).toMatch(/^withTools\(\): the registry is undefined; pass a record keyed by tool name/);
  });

  it("refuses a hand-built registry name over the providers' 64-character cap", () => {
    const long = "x".repeat(65);
    expect(configIssues(() => withTools(agent({ name: "x" }), { [long]: weather, ["y".repeat(64)]: weather }))).toEqual([
      { path: `tools.${long}`, message: expect.stringContaining("is 65 characters; model providers take a tool name of at most 64") as string },
    ]);
  });

  it("agent() refuses a tools argument, pointing to files and withTools", () => {
    expect(configIssues(() => agent({ name: "x", tools: { weather } } as never))[0]?.message).toMatch(/tools\/<name>\.ts.*withTools/);
  });
});

describe("workflows", () => {
  const digest = workflow({ description: "Daily digest", input: Type.Object({ day: Type.String() }) }).body(({ day }) => `digest for ${day}`);
  const nightly = workflow({ description: "Nightly" }).body(() => "ok");

  it("registers defs by file name and skips modules that export none", () => {
    const registry = workflowRegistry({
      "./workflows/digest.ts": { default: digest },
      "./workflows/shared.ts": { helper: () => 1 },
      "./workflows/util/format.ts": { default: "not a workflow" },
    });
    expect(registry).toEqual({ digest });
  });

  it("refuses a bodyless declaration naming .body(), and misplaced defs naming the file", () => {
    const issues = configIssues(() =>
      workflowRegistry({
        "./workflows/draft.ts": { default: workflow({ description: "Draft" }) },
        "./workflows/deep/nightly.ts": { default: nightly },
        "./workflows/Nightly.ts": { default: nightly },
        "./workflows/digest.ts": { default: digest },
        "./workflows/digest.mjs": { default: digest },
      }),
    );
    expect(issues.map((i) => i.path)).toEqual(["./workflows/draft.ts", "./workflows/deep/nightly.ts", "./workflows/Nightly.ts", "./workflows/digest.mjs"]);
    expect(issues[0]?.message).toContain(".body(");
  });

  it("withWorkflows: same def under the same name is silent", () => {
    const warn = vi.fn();
    const registry = workflowRegistry({ "./workflows/digest.ts": { default: digest } });
    const def = withWorkflows({ name: "x", workflows: { digest } }, registry, { warn });
    expect(def.workflows).toEqual({ digest });
    expect(warn).not.toHaveBeenCalled();
  });

  it("withWorkflows: a different def under a declared name keeps the declared one and warns naming the file", () => {
    const warn = vi.fn();
    const registry = workflowRegistry({ "./workflows/digest.ts": { default: digest } });
    const def = withWorkflows({ name: "x", workflows: { digest: nightly } }, registry, { warn });
    expect(def.workflows).toEqual({ digest: nightly });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^\.\/workflows\/digest\.ts: .*declares a different workflow as "digest"/));
  });

  it("withWorkflows: the same def declared under another name registers once, under the declared name", () => {
    const warn = vi.fn();
    const registry = workflowRegistry({ "./workflows/digest.ts": { default: digest } });
    const source = { name: "x", workflows: { morning: digest } };
    const def = withWorkflows(source, registry, { warn });
    expect(def.workflows).toEqual({ morning: digest });
    expect(def).not.toBe(source);
    expect(source.workflows).toEqual({ morning: digest });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('declared as "morning"'));
  });

  it("withWorkflows: an undeclared file is added", () => {
    const registry = workflowRegistry({ "./workflows/digest.ts": { default: digest } });
    expect(withWorkflows({ name: "x" }, registry, { warn: () => {} }).workflows).toEqual({ digest });
  });
});

describe("withTools and provider tool names", () => {
  it("refuses a key no provider takes as a function name, suggesting one", () => {
    const echo = tool({ description: "Echo", parameters: Type.Object({}), execute: () => "ok" });
    expect(() => withTools(agent({ name: "a", mode: "text" }), { "order.lookup": echo })).toThrow(/"order.lookup" is not a name model providers take for a tool .*e\.g\. "order_lookup"/);
    expect(() => withTools(agent({ name: "a", mode: "text" }), { "Order-Lookup_2": echo })).not.toThrow();
  });
});
