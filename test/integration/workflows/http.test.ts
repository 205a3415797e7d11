// The workflows HTTP API through a real gateway (createGateway on 127.0.0.1:0) on an engine over a
// temporary directory: who may call what (API key; with auth off only the listing), bad bodies
// refused naming the field, a long-poll that answers as the run ends (and at its deadline, on a
// virtual clock), the SSE stream (the journal, then live events, then `end`), an event delivered
// to a waiting run, the budgets (runs a minute, streams per address), and a workflow-app agent
// refusing voice sessions. One engine per file: the SDK keeps one world per process.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { agent, workflow } from "../../../src/manifest/index.js";
import type { Gateway, GatewayOptions } from "../../../src/server/gateway-types.js";
import { createGateway, WORKFLOW_APP_REFUSAL } from "../../../src/server/index.js";
import { MAX_STREAMS_PER_ADDRESS } from "../../../src/server/workflow-stream.js";
import { createWorkflowEngine, type WorkflowEngine } from "../../../src/workflows/index.js";

const dir = mkdtempSync(join(tmpdir(), "wf-http-"));
const KEY = "sk-workflows";
const auth = { authorization: `Bearer ${KEY}` };

const workflows = {
  greet: workflow({
    description: "Say hello",
    input: Type.Object({ name: Type.String() }),
    steps: { hello: (name: string) => `hello ${name}` },
  }).body(async (input, ctx) => ctx.steps.hello(input.name)),
  gated: workflow({
    description: "Wait for the gate to open",
    input: Type.Object({ id: Type.String() }),
    steps: { pass: (who: string) => `passed by ${who}` },
  }).body(async (input, ctx) => {
    const opened = await ctx.waitFor<{ by: string }>(`gate:${input.id}`);
    return ctx.steps.pass(opened.status === "received" ? opened.payload.by : "nobody");
  }),
};

const textAgent = agent({ name: "ops", mode: "text", llm: { kind: "scripted", options: {} }, workflows });
const workflowApp = agent({ name: "ops", mode: "workflow-app", workflows });

let engine: WorkflowEngine;
let gateway: Gateway | undefined;

beforeAll(async () => {
  engine = await createWorkflowEngine({ dir, workflows });
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A gateway on `engine` with auth on (`authOff`: without an API key), plus `options`. */
async function start(options: Partial<GatewayOptions> = {}, authOff = false): Promise<string> {
  gateway = createGateway({ agent: textAgent, logger: silentLogger, env: {}, processMetrics: false, ...(authOff ? {} : { apiKey: KEY }), workflowEngine: engine, ...options });
  return (await gateway.listen(0)).url;
}

async function startRun(base: string, name: string, body: unknown): Promise<string> {
  const answer = await fetch(`${base}/workflows/${name}/runs`, { method: "POST", headers: auth, body: JSON.stringify(body) });
  expect(answer.status).toBe(201);
  return ((await answer.json()) as { runId: string }).runId;
}

/** Reads the run until `ready`: for a state no event announces to a test (a run reaching its wait). */
async function until(base: string, runId: string, ready: (run: { status: string }) => boolean): Promise<void> {
  for (;;) {
    const run = (await (await fetch(`${base}/workflows/runs/${runId}`, { headers: auth })).json()) as { status: string };
    if (ready(run)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface SseMessage {
  readonly id?: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** An SSE stream read message by message; `closed` resolves once the server ends it. */
function sse(url: string): { next(): Promise<SseMessage | undefined>; abort(): void; status: Promise<number> } {
  const controller = new AbortController();
  const response = fetch(url, { headers: auth, signal: controller.signal });
  let buffer = "";
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const decoder = new TextDecoder();
  return {
    status: response.then((r) => r.status),
    abort: () => controller.abort(),
    async next() {
      reader ??= (await response).body?.getReader();
      for (;;) {
        const cut = buffer.indexOf("\n\n");
        if (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.startsWith(":")) continue; // a heartbeat
          const field = (name: string): string | undefined => block.split("\n").find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
          const id = field("id");
          return { ...(id === undefined ? {} : { id }), event: field("event") ?? "", data: JSON.parse(field("data") ?? "null") as Record<string, unknown> };
        }
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) return undefined;
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
  };
}

describe("the workflows HTTP API", () => {
  it("lists the agent's workflows (name, description, input schema, steps) behind the API key", async () => {
    const base = await start();
    const bare = await fetch(`${base}/workflows`);
    expect([bare.status, bare.headers.get("www-authenticate"), await bare.json()]).toEqual([401, "Bearer", { error: "send your API key as Authorization: Bearer <key>" }]);
    expect((await fetch(`${base}/workflows`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const listed = (await (await fetch(`${base}/workflows`, { headers: auth })).json()) as { workflows: { name: string; description: string; input: { properties?: unknown }; steps: string[] }[] };
    expect(listed.workflows.map((w) => [w.name, w.description, w.steps])).toEqual([
      ["greet", "Say hello", ["hello"]],
      ["gated", "Wait for the gate to open", ["pass"]],
    ]);
    expect(listed.workflows[0]?.input).toMatchObject({ type: "object", properties: { name: { type: "string" } }, required: ["name"] });
    const wrongMethod = await fetch(`${base}/workflows`, { method: "DELETE", headers: auth });
    expect([wrongMethod.status, wrongMethod.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    expect((await fetch(`${base}/workflows/greet/nope`, { headers: auth })).status).toBe(404);
  });

  it("with auth off: the listing is public, and starting, reading and delivering are refused 403", async () => {
    const base = await start({}, true);
    expect((await fetch(`${base}/workflows`)).status).toBe(200);
    for (const [method, path] of [
      ["POST", "/workflows/greet/runs"],
      ["GET", "/workflows/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
      ["GET", "/workflows/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV/events"],
      ["POST", "/workflows/events/gate:1"],
    ] as const) {
      const answer = await fetch(`${base}${path}`, { method, ...(method === "POST" ? { body: "{}" } : {}) });
      expect([path, answer.status, ((await answer.json()) as { error: string }).error]).toEqual([path, 403, expect.stringMatching(/set SWITCHBOARD_API_KEY$/) as string]);
    }
    expect(gateway?.entryPoints.filter((e) => e.entry.includes("/workflows")).map((e) => [e.entry, e.open])).toEqual([
      ["GET /workflows", true],
      ["POST /workflows/<name>/runs, GET /workflows/runs/<id>[/events], POST /workflows/events/<token>", false],
    ]);
  });

  it("starts a run (201) and refuses bad bodies naming the field: not JSON, an unknown field, an unknown workflow, a bad input, too big", async () => {
    const base = await start();
    const post = async (name: string, body: string): Promise<[number, unknown]> => {
      const answer = await fetch(`${base}/workflows/${name}/runs`, { method: "POST", headers: auth, body });
      return [answer.status, await answer.json()];
    };
    expect(await post("greet", "not json")).toEqual([400, { error: "the body must be a JSON object: { input, key? }" }]);
    expect(await post("greet", "[1]")).toEqual([400, { error: "the body must be a JSON object: { input, key? }" }]);
    expect(await post("greet", JSON.stringify({ input: { name: "Ada" }, notify: true }))).toEqual([400, { error: "notify: not a field of a run request; send { input, key? }", field: "notify" }]);
    expect(await post("nope", JSON.stringify({ input: {} }))).toEqual([404, { error: 'no workflow "nope"; the workflows are greet, gated', field: "name" }]);
    const [status, bad] = (await post("greet", JSON.stringify({ input: { name: 7 } }))) as [number, { error: string; field: string }];
    expect([status, bad.field, bad.error]).toEqual([400, "input", expect.stringMatching(/^input: .*name/) as string]);
    expect(await post("greet", JSON.stringify({ input: { name: "Ada" }, key: "has space" }))).toEqual([400, { error: "key: must be printable ASCII without spaces", field: "key" }]);
    expect((await post("greet", JSON.stringify({ input: { name: "x".repeat(80 * 1024) } })))[0]).toBe(413);

    const created = await fetch(`${base}/workflows/greet/runs`, { method: "POST", headers: auth, body: JSON.stringify({ input: { name: "Ada" }, key: "+15550100" }) });
    const body = (await created.json()) as { runId: string };
    expect([created.status, created.headers.get("location"), body]).toEqual([
      201,
      `/workflows/runs/${body.runId}`,
      { runId: expect.stringMatching(/^wrun_/) as string, workflow: "greet", key: "+15550100", run: `/workflows/runs/${body.runId}`, events: `/workflows/runs/${body.runId}/events` },
    ]);
    const done = (await (await fetch(`${base}/workflows/runs/${body.runId}?wait=30`, { headers: auth })).json()) as Record<string, unknown>;
    expect(done).toMatchObject({ runId: body.runId, workflow: "greet", status: "completed", ended: true, key: "+15550100", output: "hello Ada" });
    expect(typeof done.createdAt).toBe("number");
    expect(typeof done.completedAt).toBe("number");
    expect((await fetch(`${base}/workflows/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${base}/workflows/runs/${body.runId}?wait=31`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${base}/workflows/runs/${body.runId}?wait=abc`, { headers: auth })).status).toBe(400);
  });

  it("delivers an event to the waiting run (202); the long-poll answers as the run ends; a token no run waits on is 404", async () => {
    const base = await start();
    const runId = await startRun(base, "gated", { input: { id: "1" } });
    await until(base, runId, (run) => run.status === "waiting");
    const waiting = (await (await fetch(`${base}/workflows/runs/${runId}?wait=0`, { headers: auth })).json()) as Record<string, unknown>;
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: "gate:1", ended: false });
    const polled = fetch(`${base}/workflows/runs/${runId}?wait=30`, { headers: auth }).then(async (r) => [r.status, await r.json()] as const);
    const delivered = await fetch(`${base}/workflows/events/${encodeURIComponent("gate:1")}`, { method: "POST", headers: auth, body: JSON.stringify({ by: "Grace" }) });
    expect([delivered.status, await delivered.json()]).toEqual([202, { delivered: true, token: "gate:1" }]);
    const [status, run] = await polled;
    expect([status, run]).toMatchObject([200, { runId, status: "completed", output: "passed by Grace" }]);
    const again = await fetch(`${base}/workflows/events/gate:1`, { method: "POST", headers: auth, body: "{}" });
    expect([again.status, ((await again.json()) as { field: string }).field]).toEqual([404, "token"]);
    expect((await fetch(`${base}/workflows/events/gate:1`, { method: "POST", headers: auth, body: "{nope" })).status).toBe(400);
    expect((await fetch(`${base}/workflows/events/${encodeURIComponent("a b")}`, { method: "POST", headers: auth, body: "1" })).status).toBe(400);
  });

  it("a long-poll on a run that does not end answers its current state at the deadline (virtual clock)", async () => {
    const clock = virtualClock();
    const base = await start({ clock });
    const runId = await startRun(base, "gated", { input: { id: "2" } });
    await until(base, runId, (run) => run.status === "waiting");
    const before = clock.pending();
    const polled = fetch(`${base}/workflows/runs/${runId}?wait=5`, { headers: auth }).then(async (r) => [r.status, await r.json()] as const);
    while (clock.pending() === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await clock.advance(5_000);
    expect(await polled).toMatchObject([200, { runId, status: "waiting", ended: false }]);
    expect(await engine.deliver("gate:2", { by: "cleanup" })).toBe(true);
  });

  it("streams a run's events: the journal so far, then live events, then end, and closes", async () => {
    const base = await start();
    const runId = await startRun(base, "gated", { input: { id: "3" } });
    await until(base, runId, (run) => run.status === "waiting");
    const stream = sse(`${base}/workflows/runs/${runId}/events`);
    expect(await stream.status).toBe(200);
    const seen: SseMessage[] = [];
    for (;;) {
      const message = await stream.next();
      if (message === undefined) throw new Error("the stream closed early");
      seen.push(message);
      if (message.event === "hook_created") break;
    }
    expect(seen[0]).toMatchObject({ event: "run_created", data: { type: "run_created" } });
    expect(seen.at(-1)?.data).toMatchObject({ token: "gate:3" });
    expect(await engine.deliver("gate:3", { by: "Linus" })).toBe(true);
    for (;;) {
      const message = await stream.next();
      if (message === undefined) break;
      seen.push(message);
    }
    const types = seen.map((m) => m.event);
    expect(types.slice(types.indexOf("hook_created"))).toEqual(expect.arrayContaining(["hook_received", "step_completed", "run_completed"]));
    expect(types.at(-2)).toBe("run_completed");
    expect(seen.at(-1)).toEqual({ event: "end", data: { runId, status: "completed" } });
    expect(new Set(seen.filter((m) => m.id !== undefined).map((m) => m.id)).size).toBe(seen.length - 1);

    // An ended run: its whole journal, then end, at once.
    const replay = sse(`${base}/workflows/runs/${runId}/events`);
    const replayed: string[] = [];
    for (let m = await replay.next(); m !== undefined; m = await replay.next()) replayed.push(m.event);
    expect(replayed).toEqual(types);
    expect((await fetch(`${base}/workflows/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV/events`, { headers: auth })).status).toBe(404);
  });

  it(`holds at most ${MAX_STREAMS_PER_ADDRESS} streams per address (429 past it); a client that disconnects frees its stream`, async () => {
    const base = await start();
    const runId = await startRun(base, "gated", { input: { id: "4" } });
    await until(base, runId, (run) => run.status === "waiting");
    const streams = Array.from({ length: MAX_STREAMS_PER_ADDRESS }, () => sse(`${base}/workflows/runs/${runId}/events`));
    expect(await Promise.all(streams.map((s) => s.status))).toEqual(streams.map(() => 200));
    const refused = await fetch(`${base}/workflows/runs/${runId}/events`, { headers: auth });
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([429, `this address already holds ${MAX_STREAMS_PER_ADDRESS} event streams; close one first`]);
    streams[0]?.abort();
    // The server hears the disconnect on its own time: try until the slot is free again.
    for (;;) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${base}/workflows/runs/${runId}/events`, { headers: auth }, (res) => {
          resolve(res.statusCode ?? 0);
          res.destroy();
        });
        req.on("error", reject);
        req.end();
      });
      if (status === 200) break;
      expect(status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const s of streams) s.abort();
    expect(await engine.deliver("gate:4", { by: "cleanup" })).toBe(true);
  });

  it("budgets starts a minute (SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE): past it 429; a bad value is refused by name", async () => {
    const base = await start({ env: { SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE: "2" } });
    const runs = [await startRun(base, "greet", { input: { name: "a" } }), await startRun(base, "greet", { input: { name: "b" } })];
    const third = await fetch(`${base}/workflows/greet/runs`, { method: "POST", headers: auth, body: JSON.stringify({ input: { name: "c" } }) });
    expect([third.status, third.headers.get("retry-after"), await third.json()]).toEqual([
      429,
      "60",
      { error: "more than 2 workflow runs started a minute (SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE); retry later" },
    ]);
    for (const runId of runs) await until(base, runId, (run) => run.status === "completed");
    expect(() => createGateway({ agent: textAgent, logger: silentLogger, env: { SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE: "lots" }, processMetrics: false })).toThrow(/^SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE: "lots" is not a whole number ≥ 1/);
  });

  it("a workflow-app agent serves the API and refuses voice sessions: /websocket 404 with the reason, POST /v1/sessions 404", async () => {
    const base = await start({ agent: workflowApp });
    expect((await fetch(`${base}/workflows`, { headers: auth })).status).toBe(200);
    const upgrade = await new Promise<[number, string]>((resolve, reject) => {
      const req = request(`${base}/websocket`, { headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve([res.statusCode ?? 0, text]));
      });
      req.on("upgrade", () => reject(new Error("upgraded")));
      req.on("error", reject);
      req.end();
    });
    expect(upgrade).toEqual([404, `${WORKFLOW_APP_REFUSAL}\n`]);
    const sessions = await fetch(`${base}/v1/sessions`, { method: "POST", headers: auth });
    expect([sessions.status, await sessions.json()]).toEqual([404, { error: "this agent is a workflow-app: it serves the workflows API (GET /workflows), not sessions" }]);
  });

  it("an agent without workflows answers 404 under /workflows, saying how to add one", async () => {
    gateway = createGateway({ agent: agent({ name: "plain", mode: "text", llm: { kind: "scripted", options: {} } }), logger: silentLogger, env: {}, processMetrics: false, apiKey: KEY });
    const base = (await gateway.listen(0)).url;
    const answer = await fetch(`${base}/workflows`, { headers: auth });
    expect([answer.status, await answer.json()]).toEqual([404, { error: "this agent has no workflows: add workflows/<name>.ts to its directory (docs/workflows.md)" }]);
  });
});
