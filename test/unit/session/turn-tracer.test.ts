import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, tool, withTools } from "../../../src/manifest/index.js";
import { textSession } from "../../../src/testing/text-session.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  execute: ({ orderId }) => (orderId === "X" ? { text: "No such order.", isError: true } : `Order ${orderId} ships Friday.`),
});
const script = { rules: [{ when: "order (?<orderId>\\w+)", call: { tool: "lookup", args: { orderId: "{orderId}" } }, then: "Found: {result}" }] };

describe("OpenTelemetry traces of a session", () => {
  it("spans each turn, with a child span per tool call and per measured stage", async () => {
    exporter.reset();
    const def = withTools(agent({ name: "shop", mode: "text", greeting: "" }), { lookup });
    const { say, session } = textSession(def, { script });
    await say("where is order A17");
    await say("and order X");
    await session.end();
    const spans = exporter.getFinishedSpans();
    const turns = spans.filter((s) => s.name === "switchboard.turn");
    expect(turns).toHaveLength(2);
    expect(turns[0]?.attributes).toMatchObject({ "switchboard.agent": "shop", "switchboard.mode": "text", "switchboard.session.id": session.id });
    const tools = spans.filter((s) => s.name === "switchboard.tool lookup");
    expect(tools).toHaveLength(2);
    expect(tools.map((s) => s.parentSpanContext?.spanId)).toEqual(turns.map((t) => t.spanContext().spanId));
    expect(tools[0]?.status.code).toBe(0);
    expect(tools[1]?.status).toMatchObject({ code: 2, message: "No such order." });
    const stages = spans.filter((s) => s.name === "switchboard.stage llm_first_token");
    expect(stages.map((s) => s.parentSpanContext?.spanId)).toEqual(turns.map((t) => t.spanContext().spanId));
    expect(typeof turns[0]?.attributes["switchboard.turn.llm_first_token_ms"]).toBe("number");
  });
});
