import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { connect as tcp } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answerTwilio, FakeCarrier } from "../../fakes/carrier.js";
import { serve, type Served } from "../helpers/serve.js";
import { connect } from "../helpers/ws-client.js";

let served: Served | undefined;

afterEach(() => served?.kill());

/** `switchboard serve --workers 2` on a text agent (or another); resolves with its base URL once it listens. */
async function serveWorkers(agentPath?: string, env: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sb-workers-"));
  await writeFile(join(dir, "agent.mjs"), 'export default { name: "echo", mode: "text", greeting: "Hello.", llm: { kind: "scripted", options: {} } };\n');
  served = await serve([agentPath ?? dir, "--workers", "2"], env);
  return served.url;
}

describe("switchboard serve --workers", () => {
  it("spreads sessions over the workers, aggregates their metrics, and drains them all on SIGTERM", async () => {
    const base = await serveWorkers();
    const clients = await Promise.all(Array.from({ length: 8 }, () => connect(`${base.replace(/^http/, "ws")}/websocket`)));
    await Promise.all(clients.map((c) => c.next("reply.completed", 0)));
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const perWorker = [...metrics.matchAll(/^switchboard_sessions_total\{mode="text",transport="websocket",worker="(\d+)"\} (\d+)$/gm)].map((m) => Number(m[2]));
    // Both workers took sessions (the primary hands connections out round-robin), and the sum is all of them.
    expect(perWorker).toHaveLength(2);
    expect(perWorker.every((n) => n > 0)).toBe(true);
    expect(perWorker.reduce((a, b) => a + b, 0)).toBe(8);
    for (const client of clients) client.close();
    await Promise.all(clients.map((c) => c.closed));
    const exited = new Promise<number | null>((resolve) => served?.child.once("exit", (code) => resolve(code)));
    served?.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);

  it("live calls on every worker survive upgrades whose target the URL parser rejects (each one used to kill its worker)", async () => {
    const base = await serveWorkers();
    const clients = await Promise.all(Array.from({ length: 4 }, () => connect(`${base.replace(/^http/, "ws")}/websocket`)));
    await Promise.all(clients.map((c) => c.next("reply.completed", 0)));
    const port = Number(new URL(base).port);
    const answers = await Promise.all(
      ["//x:99999", "//[", "//x:99999", "//["].map(
        (target) =>
          new Promise<string>((resolve) => {
            const socket = tcp(port, "127.0.0.1", () => socket.write(`GET ${target} HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`));
            let answer = "";
            socket.on("data", (chunk) => (answer += chunk.toString()));
            socket.on("close", () => resolve(answer));
            socket.on("error", () => resolve(answer));
          }),
      ),
    );
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    // Every session still answers: no worker died.
    await Promise.all(clients.map((c) => c.say("still there?")));
    expect(clients.every((c) => c.ws.readyState === c.ws.OPEN)).toBe(true);
    for (const client of clients) client.close();
  }, 60_000);

  it("a call whose signed webhook one worker answered streams to either worker, once (tickets live with the primary)", async () => {
    const token = "twilio-token-workers";
    const base = await serveWorkers("examples/support", { TWILIO_AUTH_TOKEN: token });
    const answered = await Promise.all(Array.from({ length: 6 }, (_, i) => answerTwilio(base, token, `CA${i}`)));
    // Round-robin spreads the webhooks and the upgrades over both workers: every ticket still opens its stream.
    const carriers = await Promise.all(answered.map((a) => FakeCarrier.dial({ ...a, autoStart: false })));
    for (const carrier of carriers) carrier.close();
    // And only once, whichever worker the replay lands on.
    for (const a of answered) await expect(FakeCarrier.dial({ ...a, autoStart: false })).rejects.toThrow(/403/);
  }, 60_000);
});
