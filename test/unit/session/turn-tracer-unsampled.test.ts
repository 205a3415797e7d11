import { trace, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { AlwaysOffSampler, BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, tool, withTools } from "../../../src/manifest/index.js";
import { textSession } from "../../../src/testing/text-session.js";

/** Every span the session starts, by name, whether or not the sampler records it. */
const started: string[] = [];
const sdk = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
const counting: TracerProvider = {
  getTracer(name, version, options): Tracer {
    const tracer = sdk.getTracer(name, version, options);
    return {
      startSpan: (spanName, spanOptions, ctx) => {
        started.push(spanName);
        return tracer.startSpan(spanName, spanOptions, ctx);
      },
      startActiveSpan: tracer.startActiveSpan.bind(tracer),
    };
  },
};
beforeAll(() => {
  trace.setGlobalTracerProvider(counting);
});
afterAll(async () => {
  trace.disable();
  await sdk.shutdown();
});

const lookup = tool({ description: "Look up an order", parameters: Type.Object({ orderId: Type.String() }), execute: ({ orderId }) => `Order ${orderId} ships Friday.` });
const script = { rules: [{ when: "order (?<orderId>\\w+)", call: { tool: "lookup", args: { orderId: "{orderId}" } }, then: "Found: {result}" }] };

describe("OpenTelemetry traces of a session nobody records", () => {
  it("start one span a turn and nothing under it when the turn's span does not record", async () => {
    const def = withTools(agent({ name: "shop", mode: "text", greeting: "" }), { lookup });
    const { say, session } = textSession(def, { script });
    await say("where is order A17");
    await say("thanks");
    await session.end();
    expect(started).toEqual(["switchboard.turn", "switchboard.turn"]);
  });
});
