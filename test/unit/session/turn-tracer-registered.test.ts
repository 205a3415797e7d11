// A session looks for an OpenTelemetry SDK once, as it starts (docs/deploy.md "OpenTelemetry"):
// with none it does no tracing work; one registered later traces the sessions that start after it.
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import { agent } from "../../../src/manifest/index.js";
import { tracingRegistered } from "../../../src/session/turn-tracer.js";
import { textSession } from "../../../src/testing/text-session.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

const script = { rules: [{ when: ".*", say: "Sure." }] };
const def = agent({ name: "shop", mode: "text", greeting: "" });

describe("a session's tracer", () => {
  it("is made only when an SDK was registered before the session started", async () => {
    trace.disable();
    expect(tracingRegistered()).toBe(false);
    const before = textSession(def, { script });
    await before.say("hello");
    trace.setGlobalTracerProvider(provider);
    expect(tracingRegistered()).toBe(true);
    await before.say("still there");
    await before.session.end();
    expect(exporter.getFinishedSpans()).toEqual([]);

    const after = textSession(def, { script });
    await after.say("hello");
    await after.session.end();
    const turns = exporter.getFinishedSpans().filter((s) => s.name === "switchboard.turn");
    expect(turns).toHaveLength(1);
    expect(turns[0]?.attributes["switchboard.session.id"]).toBe(after.session.id);

    // Unregistered and registered again (the API makes a new global proxy): the next session is traced too.
    exporter.reset();
    trace.disable();
    trace.setGlobalTracerProvider(provider);
    const again = textSession(def, { script });
    await again.say("hello");
    await again.session.end();
    expect(exporter.getFinishedSpans().filter((s) => s.name === "switchboard.turn")).toHaveLength(1);
  });

  it("counts a provider another copy of the API registered (not this copy's proxy) as registered", () => {
    trace.disable();
    // The global slot every copy of @opentelemetry/api 1.x shares (its api/global-utils): a second
    // copy registers its own proxy there, an object this copy's `instanceof` does not know.
    const slot = Symbol.for("opentelemetry.js.api.1");
    const globals = globalThis as unknown as Record<symbol, unknown>;
    globals[slot] = { version: "1.9.1", trace: { getTracer: () => provider.getTracer("other copy") } };
    expect(tracingRegistered()).toBe(true);
    trace.disable();
    expect(tracingRegistered()).toBe(false);
  });
});
