// One peer's flood is its own problem (issue 14 item 5): each connection is held to its input
// budget (the gateway stops reading it), and what it makes the gateway log is throttled. These
// check outcomes — the flood is throttled, the neighbour is answered, the log stays small — never
// wall-clock bounds; `npm run bench:fairness` measures the latency.
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { connect } from "../helpers/ws-client.js";

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(): Promise<{ ws: string; lines: string[] }> {
  const lines: string[] = [];
  const logger = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
  const def = agent({ name: "echo", mode: "text", greeting: "Hello.", llm: { kind: "scripted", options: {} } });
  gateway = createGateway({ agent: def, logger, processMetrics: false, env: {} });
  const { url } = await gateway.listen(0);
  return { ws: `${url.replace(/^http/, "ws")}/websocket`, lines };
}

describe("a flooding neighbour", () => {
  it("20 000 invalid JSON frames cost a line of log, not 20 000, and the neighbour is answered meanwhile", async () => {
    const { ws, lines } = await start();
    const flooder = await connect(ws);
    const victim = await connect(ws);
    await victim.next("reply.completed", 0);
    for (let i = 0; i < 20_000; i++) flooder.ws.send(`{not json ${i}`);
    for (let turn = 0; turn < 5; turn++) await victim.say(`turn ${turn}`);
    expect(victim.of("error.reported")).toEqual([]);
    const invalid = lines.filter((l) => l.includes("client sent invalid json"));
    expect(invalid.length).toBeGreaterThanOrEqual(1);
    expect(invalid.length).toBeLessThanOrEqual(2);
    flooder.close();
    victim.close();
  }, 30_000);

  it("a cancel flood is held to the budget: the flooder's socket stops being read, so its cancels are answered at its budget's pace", async () => {
    const { ws } = await start();
    const flooder = await connect(ws);
    const victim = await connect(ws);
    await Promise.all([flooder.next("reply.completed", 0), victim.next("reply.completed", 0)]);
    const before = flooder.of("reply.cancelled").length;
    for (let i = 0; i < 5000; i++) flooder.send({ type: "cancel" });
    for (let turn = 0; turn < 5; turn++) await victim.say(`turn ${turn}`);
    // Each cancel is answered with reply.cancelled: by the time the neighbour's turns are done, well under 5000 (200 a second, bursts of 400).
    const answered = flooder.of("reply.cancelled").length - before;
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThan(5000);
    flooder.close();
    victim.close();
  }, 30_000);

  it("a client that sends audio faster than real time is slowed to its budget, and loses nothing it sent within it", async () => {
    const { ws } = await start();
    const client = await connect(ws);
    await client.next("reply.completed", 0);
    // 1 s of 16 kHz PCM16 in 20 ms frames, sent at once: within the 2 s burst, so all of it is read.
    for (let i = 0; i < 50; i++) client.ws.send(Buffer.alloc(640));
    client.send({ type: "user_text", text: "still reading me?" });
    await client.next("agent-transcript.committed", 1);
    expect(client.of("error.reported").filter((e) => /over budget/.test(e.message))).toEqual([]);
    client.close();
  }, 30_000);
});
