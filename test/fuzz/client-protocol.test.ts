import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { connect } from "../helpers/ws-client.js";
import { report, runs, SEED } from "./figures.js";

let gateway: Gateway;
let url: string;

beforeAll(async () => {
  const def = agent({ name: "fuzz", mode: "text", greeting: "Hi.", llm: { kind: "scripted", options: {} } });
  gateway = createGateway({
    agent: def,
    script: { rules: [{ when: "final check", say: "FINAL-OK" }, { when: ".", say: "Okay." }] },
    logger: silentLogger,
    processMetrics: false,
    env: {},
  });
  const { port } = await gateway.listen(0);
  url = `ws://127.0.0.1:${port}/websocket`;
});
afterAll(async () => {
  await gateway.close();
});

/** A frame a client might send, and whether the gateway may answer it with a (non-fatal) error. */
interface Frame {
  readonly data: string | Uint8Array;
  readonly mayError: boolean;
}

const valid = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }).map((text) => ({ type: "user_text", text })),
  fc.constantFrom({ type: "cancel" }, { type: "reset" }, { type: "audio_ready" }, { type: "user_turn_start" }, { type: "user_turn_commit" }, { type: "user_turn_clear" }),
  fc.integer({ min: 0, max: 600_000 }).map((bufferedMs) => ({ type: "playback_progress", bufferedMs })),
);
const frame: fc.Arbitrary<Frame> = fc.oneof(
  valid.map((command) => ({ data: JSON.stringify(command), mayError: false })),
  // A result for a call nobody made: answered with a protocol error.
  fc.string({ maxLength: 10 }).map((id) => ({ data: JSON.stringify({ type: "tool_result", toolCallId: id, result: "x" }), mayError: true })),
  // Wrong field types, unknown types, extra junk, cut JSON, plain text, binary, oversized text.
  fc.record({ type: fc.constantFrom("user_text", "playback_progress", "tool_result", "nope", ""), text: fc.anything(), bufferedMs: fc.anything(), toolCallId: fc.anything() }, { requiredKeys: ["type"] }).map((c) => ({ data: JSON.stringify(c), mayError: true })),
  fc.tuple(valid, fc.nat()).map(([c, cut]) => {
    const text = JSON.stringify(c);
    return { data: text.slice(0, cut % text.length), mayError: true };
  }),
  fc.string({ maxLength: 100 }).map((data) => ({ data, mayError: true })),
  fc.uint8Array({ minLength: 1, maxLength: 2000 }).map((data) => ({ data, mayError: true })),
  fc.constant({ data: JSON.stringify({ type: "user_text", text: "x".repeat(300 * 1024) }), mayError: true }),
);

describe("the client protocol, fuzzed", () => {
  it("never crashes, answers each bad frame with at most one non-fatal error, and keeps the session answering", async () => {
    const n = runs(25);
    let frames = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 15 }), async (sequence) => {
        const client = await connect(url);
        try {
          for (const f of sequence) client.ws.send(f.data, { binary: typeof f.data !== "string" });
          frames += sequence.length;
          client.send({ type: "user_text", text: "final check" });
          const deadline = Date.now() + 10_000;
          while (!client.events.some((e) => e.type === "agent-transcript.committed" && e.text === "FINAL-OK")) {
            if (Date.now() > deadline) throw new Error(`no answer after ${JSON.stringify(sequence.map((f) => (typeof f.data === "string" ? f.data.slice(0, 60) : `<${f.data.byteLength} bytes>`)))}`);
            await new Promise((r) => setTimeout(r, 10));
          }
          const errors = client.events.filter((e) => e.type === "error.reported");
          expect(errors.every((e) => e.type === "error.reported" && !e.fatal)).toBe(true);
          expect(errors.length).toBeLessThanOrEqual(sequence.filter((f) => f.mayError).length);
          expect(client.ws.readyState).toBe(client.ws.OPEN);
        } finally {
          client.close();
          await client.closed;
        }
      }),
      { seed: SEED, numRuns: n },
    );
    report({ property: "client protocol: random frames per session", runs: n, inputs: frames, unit: "frames" });
  }, 120_000);
});
