// examples/order-desk (docs/workflows.md "Example: the order desk"), on the offline brain and the
// real engine: the gateway's own (one engine per file, the SDK keeps one world per process), on a
// temporary directory, with Twilio's REST API faked on loopback. A watch started by a tool is found
// by the caller's key; shipped while the caller is on the line, the session hears it; shipped
// after, the run calls the caller back through Twilio and the call's outcome returns to the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import type { PhoneLine } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import type { Gateway } from "../../../src/server/gateway-types.js";
import { createGateway } from "../../../src/server/index.js";
import { loadAgent, type LoadedAgent } from "../../../src/server/loader.js";
import { carrierClient } from "../../../src/server/telephony/carrier-client.js";
import { twilioSignature } from "../../../src/server/telephony/signatures.js";
import { textSession } from "../../../src/testing/text-session.js";
import type { RunInfo, WorkflowEngine } from "../../../src/workflows/index.js";
import { carrierRestFake, type CarrierRestFake } from "../../helpers/carrier-rest-fake.js";
import { freePort } from "../../../fakes/free-port.js";
import { runUntil } from "../../helpers/workflow-runs.js";
import { checked } from "../../helpers/run-check.js";

const example = fileURLToPath(new URL("../../../examples/order-desk", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "order-desk-"));
const TOKEN = "twilio-token";
const API_KEY = "sk-gateway";
const SID = "CA0123456789abcdef0123456789abcdef";
const CALLER = "+14155550123";
const DESK = "+14155550100";

let loaded: LoadedAgent;
let gateway: Gateway;
let engine: WorkflowEngine;
let api: CarrierRestFake;
let base: string;

beforeAll(async () => {
  loaded = await loadAgent(example);
  api = await carrierRestFake({ basic: { user: "AC1", password: TOKEN }, createdCallSid: SID });
  base = `http://127.0.0.1:${await freePort()}`;
  const env = { TWILIO_AUTH_TOKEN: TOKEN, TWILIO_ACCOUNT_SID: "AC1", SWITCHBOARD_PUBLIC_URL: base, SWITCHBOARD_WORKFLOWS_DIR: dir, SWITCHBOARD_CALLS_FROM: DESK };
  gateway = createGateway({ agent: loaded.def, script: loaded.script, offline: true, env, apiKey: API_KEY, logger: silentLogger, processMetrics: false, carrierClient: carrierClient({ env, twilioBaseUrl: api.url }) });
  await gateway.listen(Number(new URL(base).port));
  if (gateway.workflows === undefined) throw new Error("the gateway opened no workflow engine");
  engine = gateway.workflows;
});

afterAll(async () => {
  await gateway.close();
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A text session of the example on the offline brain and the gateway's engine; `phone`: as a carrier's verified webhook would name the line. */
const session = (phone?: PhoneLine) => textSession(loaded.def, { script: loaded.script as Script, workflows: engine, ...(phone === undefined ? {} : { phone }) });

/** `POST /workflows/events/<token>`, the shipping system's webhook, once the run waits for it. */
async function ship(runId: string, orderId: string, carrier: string): Promise<void> {
  await runUntil(engine, runId, (run) => run.waitingFor === `shipped:${orderId}`);
  const response = await fetch(`${base}/workflows/events/shipped:${orderId}`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}` }, body: JSON.stringify({ carrier }) });
  expect(response.status).toBe(202);
}

const ended = (runId: string): Promise<RunInfo> => runUntil(engine, runId, (run) => run.status === "completed" || run.status === "failed");

describe("examples/order-desk (a durable watch that tells the caller, or calls them back)", () => {
  it("passes check, which lists its workflow; its offline script's workflow_update rule is no mistake", async () => {
    const { code, out, err } = await checked(example);
    expect(code).toBe(0);
    expect(err).not.toContain("offline.json");
    expect(out).toMatch(/\n {2}order_watch +steps: onTheLine — /);
    expect(out).toMatch(/\n {2}watch_order +tools\/watch_order\.ts\n/);
  });

  it("a text session keys the watch by the account the caller gives; shipped while they are on the line, the session hears it", async () => {
    const { say, link, session: live } = session();
    await say("tell me when order A17 ships");
    expect(link.of("tool.completed").at(-1)).toMatchObject({ isError: true, result: expect.stringContaining("account number") as string });
    await say("watch order A17, my account is 42");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Watching order A17: I'll let you know as soon as it ships.");
    const [watch] = await engine.find("account:42");
    expect(watch).toMatchObject({ workflow: "order_watch", key: "account:42" });
    const runId = watch?.runId ?? "";

    const before = link.events.length;
    await ship(runId, "A17", "UPS");
    // Told on the line: no call placed.
    expect((await ended(runId)).output).toEqual({ orderId: "A17", shipped: true, message: "Order A17 has shipped with UPS.", told: "on the line" });
    await link.next("workflow.updated", before);
    await link.next("reply.completed", link.events.findIndex((e) => e.type === "workflow.updated"));
    expect(link.of("workflow.updated")[0]?.runs).toEqual([{ runId, workflow: "order_watch", status: "completed" }]);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toMatch(/^An update just came in\. .*Order A17 has shipped with UPS\./s);
    await live.end();
  });

  it("with the caller gone, the run calls their number back through Twilio; nobody answers, the outcome returns to the run, and their next call hears it", async () => {
    const line: PhoneLine = { carrier: "twilio", direction: "inbound", from: CALLER, to: DESK, callId: "CA-in" };
    const first = session(line);
    await first.say("tell me when order B2 ships");
    const [watch] = await engine.find(CALLER);
    const runId = watch?.runId ?? "";
    expect(watch).toMatchObject({ workflow: "order_watch", key: CALLER, status: expect.stringMatching(/pending|running|waiting/) as string });
    await first.session.end();

    await ship(runId, "B2", "DHL");
    // The run places the call: Twilio's Create a Call, to the caller's number, from the desk's.
    const form = new URLSearchParams((await api.next()).body);
    expect(form.get("To")).toBe(CALLER);
    expect(form.get("From")).toBe(DESK);
    expect(form.get("Url")).toMatch(new RegExp(`^${base}/telephony/twilio/voice\\?placed=`));
    // Nobody answers: Twilio's signed status callback says so, and the run ends with it.
    const status = form.get("StatusCallback") ?? "";
    const report = { CallSid: SID, CallStatus: "no-answer" };
    const reported = await fetch(status, { method: "POST", headers: { "x-twilio-signature": twilioSignature(TOKEN, status, Object.entries(report)) }, body: new URLSearchParams(report) });
    expect(reported.status).toBe(204);
    expect((await ended(runId)).output).toEqual({ orderId: "B2", shipped: true, message: "Order B2 has shipped with DHL.", told: "not yet: the call-back ended no-answer" });

    // They call again: the desk finds the watch by their number.
    const again = session({ ...line, callId: "CA-again" });
    await again.say("any news on my orders?");
    expect(again.link.of("agent-transcript.committed").at(-1)?.text).toBe("Order B2 has shipped with DHL.");
    await again.session.end();
  });

  it("a call-back's session knows why it called (sessionContext reads info.outbound) and says so when the callee answers", async () => {
    const outbound = { runId: "wrun_1", workflow: "order_watch", carrier: "twilio", to: CALLER, from: DESK, why: "your order B2 has shipped with DHL", context: { orderId: "B2" } };
    const callBack = textSession(loaded.def, { script: loaded.script as Script, workflows: engine, outbound, phone: { carrier: "twilio", direction: "outbound", from: DESK, to: CALLER, callId: SID } });
    await callBack.say("hello?");
    expect(callBack.link.of("agent-transcript.committed").at(-1)?.text).toBe("We're calling because your order B2 has shipped with DHL.");
    await callBack.session.end();
    // A caller who called in hears no reason: they called.
    const inbound = session();
    await inbound.say("hello");
    expect(inbound.link.of("agent-transcript.committed").at(-1)?.text).toBe("Hello! I can watch an order and tell you when it ships, or give you the news on orders I am watching.");
    await inbound.session.end();
  });
});
