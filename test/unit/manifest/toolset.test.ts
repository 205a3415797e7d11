import { Type } from "@sinclair/typebox";
import { describe, expect, it, vi } from "vitest";
import {
  agentToolsToSchemas,
  agentToolsets,
  composeToolsets,
  gateToolset,
  tool,
  toolset,
  withTools,
  agent,
  type ToolGate,
} from "../../../src/manifest/index.js";
import { toolContext } from "../../../src/testing/index.js";

const plain = tool({
  description: "Get the weather",
  parameters: Type.Object({ city: Type.String() }),
  execute: ({ city }) => `Sunny in ${city}.`,
});
const other = tool({ description: "Another weather", execute: () => "Rain." });
const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check.", delayed: [{ afterMs: 3000, content: "Still checking." }] },
  ui: { title: "Order lookup" },
  effect: "read",
  execute: () => "Shipped.",
});

describe("composeToolsets", () => {
  it("keeps the first set's tool of a name and reports the shadowed one", () => {
    const files = toolset("files", { weather: plain, lookup });
    const mcp = toolset("mcp", { weather: other, extra: other });
    const onShadowed = vi.fn();
    const table = composeToolsets([files, mcp], onShadowed);
    expect(table.tools.map((t) => [t.name, t.toolset.source])).toEqual([
      ["weather", "files"],
      ["lookup", "files"],
      ["extra", "mcp"],
    ]);
    expect(table.resolve("weather")?.entry.def).toBe(plain);
    expect(table.resolve("missing")).toBeUndefined();
    // Seed 000: `onShadowed?: (name, kept, dropped) => void` — the name, then the winning and
    // the losing source.
    expect(onShadowed.mock.calls).toEqual([["weather", "files", "mcp"]]);
  });

  it("the order is the precedence", () => {
    const a = toolset("files", { weather: plain });
    const b = toolset("builtin", { weather: other });
    expect(composeToolsets([b, a]).resolve("weather")?.entry.def).toBe(other);
  });
});

describe("gates", () => {
  const calls: string[] = [];
  const gate = (label: string, refuse: boolean): ToolGate => () => {
    calls.push(label);
    return refuse ? { reason: `${label} says no` } : undefined;
  };

  it("evaluates the def's own gate, then the set's, then each layered gate in order", () => {
    calls.length = 0;
    const own = tool({ description: "x", gate: () => (calls.push("own"), undefined), execute: () => "" });
    const set = gateToolset(toolset("files", { x: own }, gate("set", false)), [gate("first", false), gate("second", true), gate("third", true)]);
    expect(set.gate("x", toolContext())).toEqual({ reason: "second says no" });
    expect(calls).toEqual(["own", "set", "first", "second"]);
  });

  it("the set's own refusal wins and stops the chain", () => {
    calls.length = 0;
    const set = gateToolset(toolset("files", { weather: plain }, gate("set", true)), [gate("layer", true)]);
    expect(set.gate("weather", toolContext())).toEqual({ reason: "set says no" });
    expect(calls).toEqual(["set"]);
  });

  it("a gated set still advertises every tool: gating is at call time", () => {
    const set = gateToolset(toolset("files", { weather: plain, lookup }), [() => ({ reason: "closed" })]);
    expect(Object.keys(set.list())).toEqual(["weather", "lookup"]);
    expect(agentToolsToSchemas([set]).map((s) => s.name)).toEqual(["weather", "lookup"]);
  });

  it("execute runs the body with already-validated arguments, ungated", async () => {
    const set = gateToolset(toolset("files", { weather: plain }), [() => ({ reason: "closed" })]);
    await expect(set.execute("weather", { city: "Oslo" }, toolContext())).resolves.toBe("Sunny in Oslo.");
    await expect(set.execute("nope", {}, toolContext())).rejects.toThrow(/no tool named `nope`/);
  });
});

describe("agentToolsets and agentToolsToSchemas", () => {
  it("lists files first, then attached toolsets", () => {
    const def = { ...withTools(agent({ name: "x" }), { weather: plain }), toolsets: [toolset("mcp", { weather: other, extra: other })] };
    const sets = agentToolsets(def);
    expect(sets.map((s) => s.source)).toEqual(["files", "mcp"]);
    expect(agentToolsToSchemas(sets).map((s) => s.name)).toEqual(["weather", "extra"]);
  });

  it("an ordinary tool's wire declaration is byte-identical: no messages, ui or effect keys", () => {
    const [schema] = agentToolsToSchemas([toolset("files", { weather: plain })]);
    expect(JSON.stringify(schema)).toBe(
      '{"type":"function","name":"weather","description":"Get the weather","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}}',
    );
  });

  it("carries normalized messages, ui and effect when declared", () => {
    const [schema] = agentToolsToSchemas([toolset("files", { lookup })]);
    expect(schema).toEqual({
      type: "function",
      name: "lookup",
      description: "Look up an order",
      parameters: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
      effect: "read",
      messages: { start: [{ content: "Let me check." }], delayed: [{ afterMs: 3000, content: "Still checking." }] },
      ui: { title: "Order lookup" },
    });
  });
});
