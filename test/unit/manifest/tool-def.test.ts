import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CLIENT_TOOL_TIMEOUT_MS, ToolDefinitionError, clientTool, isClientTool, isToolDef, tool, toToolResult, toolEntry } from "../../../src/manifest/index.js";
import { callTool, toolContext } from "../../../src/testing/index.js";

const typebox = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String({ minLength: 3 }), rush: Type.Optional(Type.Boolean()) }),
  execute: ({ orderId }) => ({ text: `Order ${orderId} shipped.`, details: { orderId, status: "shipped" } }),
});

const zodTool = tool({
  description: "Look up an order",
  parameters: z.object({ orderId: z.string().min(3), rush: z.boolean().optional() }),
  execute: ({ orderId }) => `Order ${orderId} shipped.`,
});

describe("tool parameters", () => {
  it("normalizes TypeBox and zod to the same JSON Schema shape", () => {
    for (const def of [typebox, zodTool]) {
      expect(def.parameters.json).toMatchObject({
        type: "object",
        properties: { orderId: { type: "string", minLength: 3 }, rush: { type: "boolean" } },
        required: ["orderId"],
      });
      expect(def.parameters.json).not.toHaveProperty("$schema");
      expect(Object.getOwnPropertySymbols(def.parameters.json)).toEqual([]);
    }
  });

  it("validates with a compiled validator and reports the field", () => {
    for (const def of [typebox, zodTool]) {
      expect(def.parameters.validate({ orderId: "A1234" })).toEqual({ ok: true, value: { orderId: "A1234" } });
      const bad = def.parameters.validate({ orderId: 42 });
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(bad.errors[0]).toMatch(/^orderId: /);
    }
  });

  it("refuses a non-object or foreign schema, naming the fix", () => {
    expect(() => tool({ description: "x", parameters: Type.String(), execute: () => "" })).toThrow(/must describe an object of named arguments/);
    expect(() => tool({ description: "x", parameters: { type: "object" } as never, execute: () => "" })).toThrow(/TypeBox schema .* or a zod schema/);
    expect(() => tool({ description: "x", parameters: z.object({ at: z.date() }), execute: () => "" })).toThrow(ToolDefinitionError);
  });

  it("takes no parameters when none are declared", () => {
    const ping = tool({ description: "Ping", execute: () => "pong" });
    expect(ping.parameters.json).toEqual({ type: "object", properties: {}, additionalProperties: false });
    expect(ping.parameters.validate(undefined)).toEqual({ ok: true, value: {} });
  });
});

describe("tool declarations", () => {
  it("refuses a missing description, execute or a bad timeout", () => {
    expect(() => tool({ description: " ", execute: () => "" })).toThrow(/`description` must be a non-empty string/);
    expect(() => tool({ description: "x" } as never)).toThrow(/`execute` must be a function.*clientTool/);
    expect(() => tool({ description: "x", timeoutMs: -5, execute: () => "" })).toThrow(/`timeoutMs` must be a positive integer/);
  });

  it("normalizes messages at declaration, and leaves them off when none are declared", () => {
    expect(tool({ description: "x", messages: { start: "One sec." }, execute: () => "" }).messages).toEqual({ start: [{ content: "One sec." }] });
    expect(typebox).not.toHaveProperty("messages");
    expect(() => tool({ description: "x", messages: { delayed: [{ afterMs: -1, content: "x" }] }, execute: () => "" })).toThrow(ToolDefinitionError);
  });

  it("brands a clientTool so toolEntry classifies it as executed by the page", () => {
    const pick = clientTool({ description: "Pick a colour on the page", parameters: Type.Object({ palette: Type.String() }) });
    expect(isToolDef(pick)).toBe(true);
    expect(isClientTool(pick)).toBe(true);
    expect(isClientTool(typebox)).toBe(false);
    expect(toolEntry(pick)).toEqual({ def: pick, executor: "client", timeoutMs: CLIENT_TOOL_TIMEOUT_MS });
    expect(toolEntry(typebox)).toEqual({ def: typebox, executor: "host" });
    expect(toolEntry(clientTool({ description: "x", timeoutMs: 5000 })).timeoutMs).toBe(5000);
  });
});

describe("tool results", () => {
  it("normalizes strings, result objects and plain JSON", () => {
    expect(toToolResult("ok")).toEqual({ text: "ok" });
    expect(toToolResult({ text: "ok", details: { n: 1 } })).toEqual({ text: "ok", details: { n: 1 } });
    expect(toToolResult({ text: "no", isError: true })).toEqual({ text: "no", isError: true });
    expect(toToolResult({ count: 3 })).toEqual({ details: { count: 3 } });
    expect(toToolResult({ text: "shadowed", other: 1 })).toEqual({ details: { text: "shadowed", other: 1 } });
    expect(toToolResult([1, 2])).toEqual({ details: [1, 2] });
    expect(toToolResult(undefined)).toEqual({ text: "Done." });
  });

  it("callTool validates, gates, runs and normalizes like the gateway", async () => {
    expect(await callTool(typebox, { orderId: "A1234" })).toEqual({
      status: "ok",
      result: { text: "Order A1234 shipped.", details: { orderId: "A1234", status: "shipped" } },
    });
    expect((await callTool(typebox, { orderId: 1 }, undefined, "lookup_order")).result.text).toMatch(/^Invalid arguments for lookup_order: orderId: /);

    const gated = tool<undefined, unknown, { verified: boolean }>({
      description: "Refund",
      gate: (ctx) => (ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Verify them first." }),
      execute: () => "Refunded.",
    });
    expect(await callTool(gated, {}, toolContext({ session: { verified: false } }), "refund")).toEqual({
      status: "refused",
      result: { text: "refund cannot run now: the caller is not verified. Verify them first.", isError: true },
    });
    expect((await callTool(gated, {}, toolContext({ session: { verified: true } }))).status).toBe("ok");

    const broken = tool({ description: "x", onError: "The system is down, try again later.", execute: () => { throw new Error("ECONNRESET"); } });
    expect(await callTool(broken, {})).toEqual({ status: "failed", result: { text: "The system is down, try again later.", isError: true } });
  });
});

describe("plain JSON Schema parameters", () => {
  it("compiles once with a validator and names the field", async () => {
    const { compileJsonSchema } = await import("../../../src/manifest/index.js");
    const schema = compileJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"] });
    const search = tool({ description: "Search", parameters: schema, execute: ({ q }) => `found ${String(q)}` });
    expect(search.parameters.json).toEqual({ type: "object", properties: { q: { type: "string" } }, required: ["q"] });
    expect(search.parameters.validate({ q: 1 })).toEqual({ ok: false, errors: ["q: must be string"] });
    expect(search.parameters.validate({})).toEqual({ ok: false, errors: ["arguments: must have required property 'q'"] });
    expect((await callTool(search, { q: "x" })).result.text).toBe("found x");
    expect(() => compileJsonSchema({ type: "object", properties: { q: { type: "nonsense" as never } } })).toThrow(ToolDefinitionError);
  });
});
