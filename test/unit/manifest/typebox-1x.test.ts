// TypeBox 1.x (the `typebox` package) beside the 0.34 line (`@sinclair/typebox`): seed 002 —
// "The TypeBox schema goes in as it is" — so a schema from either line is a tool's `parameters`
// end to end: validation, the wire declaration, toAiTool and a running session.
import { Type as Type034 } from "@sinclair/typebox";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Type, type Static } from "typebox";
import { describe, expect, expectTypeOf, it } from "vitest";
import { toAiTool } from "../../../src/ai.js";
import { agent, agentToolsToSchemas, clientTool, ToolDefinitionError, tool, toolset, withTools } from "../../../src/manifest/index.js";
import { callTool } from "../../../src/testing/index.js";
import { textSession } from "../../../src/testing/text-session.js";

const Order = Type.Object({
  orderId: Type.String({ minLength: 3 }),
  rush: Type.Optional(Type.Boolean()),
  items: Type.Array(Type.Object({ sku: Type.String(), qty: Type.Integer({ minimum: 1 }) })),
  channel: Type.Union([Type.Literal("phone"), Type.Literal("web")]),
});

// Built per test, so that each test reports on its own.
const makeLookup = () =>
  tool({
    description: "Look up an order",
    parameters: Order,
    execute: ({ orderId, items }) => ({ text: `Order ${orderId} has ${items.length} lines.`, details: { orderId } }),
  });

const good = { orderId: "A123", items: [{ sku: "X", qty: 2 }], channel: "phone" };

describe("TypeBox 1.x parameters", () => {
  it("are accepted as they are, and advertise the plain JSON Schema (no ~ marks)", () => {
    const lookup = makeLookup();
    expect(lookup.parameters.json).toEqual({
      type: "object",
      required: ["orderId", "items", "channel"],
      properties: {
        orderId: { type: "string", minLength: 3 },
        rush: { type: "boolean" },
        items: {
          type: "array",
          items: { type: "object", required: ["sku", "qty"], properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } } },
        },
        channel: { anyOf: [{ type: "string", const: "phone" }, { type: "string", const: "web" }] },
      },
    });
    expect(JSON.stringify(lookup.parameters.json)).not.toContain("~");
  });

  it("the wire declaration is the same bytes as the 0.34 schema's", () => {
    const v1 = tool({ description: "Weather", parameters: Type.Object({ city: Type.String() }), execute: () => "" });
    const v034 = tool({ description: "Weather", parameters: Type034.Object({ city: Type034.String() }), execute: () => "" });
    const [a] = agentToolsToSchemas([toolset("files", { weather: v1 })]);
    const [b] = agentToolsToSchemas([toolset("files", { weather: v034 })]);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).toBe(
      '{"type":"function","name":"weather","description":"Weather","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}}',
    );
  });

  it("validates arguments before execute, one line per field", async () => {
    const lookup = makeLookup();
    expect(lookup.parameters.validate(good)).toEqual({ ok: true, value: good });
    const bad = lookup.parameters.validate({ ...good, orderId: "A1", items: [{ sku: "X", qty: 0 }] });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.errors).toContain("orderId: must NOT have fewer than 3 characters");
      expect(bad.errors).toContain("items.0.qty: must be >= 1");
    }
    const missing = lookup.parameters.validate({});
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors[0]).toMatch(/^arguments: must have required property/);
    await expect(callTool(lookup, good, undefined, "lookup")).resolves.toMatchObject({ status: "ok", result: { text: "Order A123 has 1 lines." } });
    await expect(callTool(lookup, { ...good, channel: "fax" }, undefined, "lookup")).resolves.toMatchObject({
      status: "invalid",
      result: { isError: true, text: expect.stringMatching(/^Invalid arguments for lookup: channel: /) as string },
    });
  });

  it("infers the arguments TypeBox 1.x's own Static infers", () => {
    type Args = Parameters<NonNullable<ReturnType<typeof makeLookup>["execute"]>>[0];
    expectTypeOf<Args>().toEqualTypeOf<Static<typeof Order>>();
    const Pick = Type.Object({
      palette: Type.Enum(["warm", "cool"]),
      n: Type.Null(),
      tag: Type.Readonly(Type.String()),
      note: Type.Optional(Type.Readonly(Type.String())),
      pair: Type.Tuple([Type.String(), Type.Number()]),
      scores: Type.Record(Type.String(), Type.Number()),
      both: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]),
    });
    const picked = clientTool({ description: "Pick", parameters: Pick });
    type PickArgs = Parameters<NonNullable<typeof picked.execute>>[0];
    expectTypeOf<PickArgs>().toEqualTypeOf<Static<typeof Pick>>();
    expectTypeOf<PickArgs["palette"]>().toEqualTypeOf<"warm" | "cool">();
    // …and the tuple, record and intersection JSON forms check what those types say.
    const value: PickArgs = { palette: "warm", n: null, tag: "t", pair: ["a", 1], scores: { x: 1 }, both: { a: "a", b: 2 } };
    expect(picked.parameters.validate(value).ok).toBe(true);
    expect(picked.parameters.validate({ ...value, pair: ["a", "b"] }).ok).toBe(false);
    expect(picked.parameters.validate({ ...value, scores: { x: "1" } }).ok).toBe(false);
    expect(picked.parameters.validate({ ...value, both: { a: "a" } }).ok).toBe(false);
  });

  it("a pattern written as a RegExp goes out as its source and is checked", () => {
    const code = tool({ description: "Code", parameters: Type.Object({ code: Type.String({ pattern: /^[A-Z]{3}$/ }) }), execute: () => "" });
    expect(code.parameters.json).toEqual({ type: "object", required: ["code"], properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } });
    expect(code.parameters.validate({ code: "ABC" }).ok).toBe(true);
    expect(code.parameters.validate({ code: "abc" }).ok).toBe(false);
  });

  it("cyclic schemas ($defs, $ref) validate, and two tools may use the same $id", () => {
    const tree = (id: typeof Type.String | typeof Type.Integer) =>
      Type.Object({ root: Type.Cyclic({ Node: Type.Object({ id: id(), nodes: Type.Array(Type.Ref("Node")) }) }, "Node") }, { $id: "Tree" });
    const a = tool({ description: "A", parameters: tree(Type.String), execute: () => "" });
    const b = tool({ description: "B", parameters: tree(Type.Integer), execute: () => "" });
    expect(a.parameters.validate({ root: { id: "1", nodes: [{ id: "2", nodes: [] }] } }).ok).toBe(true);
    expect(a.parameters.validate({ root: { id: "1", nodes: [{ id: 2, nodes: [] }] } }).ok).toBe(false);
    expect(b.parameters.validate({ root: { id: 1, nodes: [{ id: 2, nodes: [] }] } }).ok).toBe(true);
  });

  it("refuses a non-object top level, naming the fix", () => {
    expect(() => tool({ description: "x", parameters: Type.String() as never, execute: () => "" })).toThrow(/must describe an object of named arguments.*Wrap it/);
  });

  it("refuses what has no JSON Schema form, naming the field and the fix", () => {
    const refined = Type.Object({ day: Type.Refine(Type.String(), (v) => v.length === 10) });
    const coded = Type.Object({ at: Type.Codec(Type.String()).Decode((v) => new Date(v)).Encode((d) => d.toISOString()) });
    const big = Type.Object({ order: Type.Object({ total: Type.BigInt() }) });
    const flagged = Type.Object({ name: Type.String({ pattern: /^bob$/i }) });
    const refuse = (parameters: unknown): string => {
      try {
        tool({ description: "x", parameters: parameters as never, execute: () => "" });
      } catch (error) {
        expect(error).toBeInstanceOf(ToolDefinitionError);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refuse(refined)).toMatch(/^tool\(\): parameters\.day: Type\.Refine .*check it in execute/);
    expect(refuse(coded)).toMatch(/^tool\(\): parameters\.at: Type\.Codec /);
    expect(refuse(big)).toMatch(/^tool\(\): parameters\.order\.total: Type\.BigInt has no JSON Schema form/);
    expect(refuse(flagged)).toMatch(/^tool\(\): parameters\.name: the RegExp pattern's flags \(i\)/);
  });
});

describe("TypeBox 1.x end to end", () => {
  it("toAiTool advertises the same JSON Schema and refuses a bad input before execute", async () => {
    let ran = 0;
    const guarded = tool({
      description: "Guarded",
      parameters: Type.Object({ orderId: Type.String({ minLength: 3 }) }),
      execute: ({ orderId }) => {
        ran += 1;
        return `Order ${orderId}.`;
      },
    });
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: 1, reasoning: undefined },
    };
    const call = (input: unknown) =>
      new MockLanguageModelV4({
        doGenerate: [
          {
            content: [{ type: "tool-call", toolCallId: "c1", toolName: "guarded", input: JSON.stringify(input) }],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: [],
          },
          { content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
        ],
      });
    const okModel = call({ orderId: "A123" });
    const ok = await generateText({ model: okModel, prompt: "x", tools: { guarded: toAiTool(guarded) }, stopWhen: isStepCount(2) });
    expect(okModel.doGenerateCalls[0]?.tools?.[0]).toMatchObject({ name: "guarded", inputSchema: guarded.parameters.json });
    expect(ok.steps[0]?.toolResults[0]?.output).toEqual({ text: "Order A123." });
    const badModel = call({ orderId: 7 });
    const bad = await generateText({ model: badModel, prompt: "x", tools: { guarded: toAiTool(guarded) }, stopWhen: isStepCount(2) });
    expect(ran).toBe(1);
    expect(bad.steps[0]?.content.some((part) => part.type === "tool-error")).toBe(true);
    expect(JSON.stringify(badModel.doGenerateCalls[1]?.prompt)).toContain("orderId: must be string");
  });

  it("a text session runs a 1.x tool", async () => {
    const def = withTools(agent({ name: "shop", mode: "text", greeting: "" }), { lookup: makeLookup() });
    const { link, say } = textSession(def, {
      script: { rules: [{ when: "order", call: { tool: "lookup", args: good }, then: "Found: {result}" }] },
    });
    await say("my order");
    expect(link.of("tool.completed")[0]?.result).toBe("Order A123 has 1 lines.");
  });
});
