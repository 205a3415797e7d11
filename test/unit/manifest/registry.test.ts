import { Type } from "@sinclair/typebox";
import { describe, expect, it, vi } from "vitest";
import { configIssues } from "../../helpers/config-issues.js";
import {
  agent,
  clientTool,
  tool,
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
