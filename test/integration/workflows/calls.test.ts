// Calling out from a workflow (docs/workflows.md "Calling out"), end to end: a run places a call
// through `ctx.calls.place` (the loopback carrier REST fake checks the request as Twilio and
// Telnyx document it, status callback included), the carrier comes back to the signed voice
// webhook and stream, the session's `sessionContext` sees the run, and the outcome reaches the
// run: the session's end for an answered call (a person, a machine), the signed status callback
// for a call nobody answered. A forged or replayed callback is refused and reaches nothing.
// One engine per file (the SDK keeps one world per process), bound to one gateway.
import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { agent, workflow, type SessionInfo } from "../../../src/manifest/index.js";
import { createGateway } from "../../../src/server/index.js";
import type { Gateway } from "../../../src/server/gateway-types.js";
import { carrierClient } from "../../../src/server/telephony/carrier-client.js";
import { twilioSignature } from "../../../src/server/telephony/signatures.js";
import type { RunInfo, WorkflowEngine } from "../../../src/workflows/index.js";
import { FakeCarrier } from "../../../fakes/carrier.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../../fakes/openai-realtime.js";
import { carrierRestFake, type CarrierRestFake } from "../../helpers/carrier-rest-fake.js";
import { placementUrl, twilioPlacingForm } from "../../helpers/placing.js";
import { freePort } from "../../../fakes/free-port.js";
import { runUntil } from "../../helpers/workflow-runs.js";

const TOKEN = "twilio-token";
const SID = "CA0123456789abcdef0123456789abcdef";
const TO = "+14155550123";
const FROM = "+14155550100";
const dir = mkdtempSync(join(tmpdir(), "wf-calls-"));
const telnyxKeys = generateKeyPairSync("ed25519");
const strangerKeys = generateKeyPairSync("ed25519");
const sessions: SessionInfo[] = [];

let engine: WorkflowEngine;
let gateway: Gateway;
let api: CarrierRestFake;
let telnyxApi: CarrierRestFake;
let service: FakeOpenAiRealtime;
let base: string;

const callback = workflow({
  description: "Call the customer back when the order ships",
  input: Type.Object({ carrier: Type.String() }),
}).body(async (input, ctx) => {
  const call = await ctx.calls.place({ to: TO, from: FROM, carrier: input.carrier, why: "their order shipped", context: { orderId: "o-1" } });
  const outcome = await ctx.calls.outcome(call, { timeout: "5m" });
  return { call, outcome };
});

function twilioPost(url: string, params: Record<string, string>, token = TOKEN): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "x-twilio-signature": twilioSignature(token, url, Object.entries(params)) }, body: new URLSearchParams(params) });
}

/** A form POST signed as Telnyx signs its webhooks: Ed25519 over `timestamp|body`. */
function telnyxPost(url: string, params: Record<string, string>, privateKey = telnyxKeys.privateKey): { send: () => Promise<Response> } {
  const body = new URLSearchParams(params).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");
  return { send: () => fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp }, body }) };
}

/** Resolves when the run ends (heard through onRunEnd). */
function ended(runId: string): Promise<RunInfo | undefined> {
  return new Promise((resolve) => {
    const off = engine.onRunEnd((end) => {
      if (end.runId !== runId) return;
      off();
      void engine.get(runId).then(resolve);
    });
  });
}

/** Until the run is where `ready` says. */
const until = (runId: string, ready: (run: RunInfo) => boolean): Promise<RunInfo> => runUntil(engine, runId, ready);

beforeAll(async () => {
  service = await startFakeOpenAiRealtime({ paceMs: 5 });
  api = await carrierRestFake({ basic: { user: "AC1", password: TOKEN }, createdCallSid: SID });
  telnyxApi = await carrierRestFake({ bearer: "KEY1" });
  const raw = telnyxKeys.publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64");
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    OPENAI_API_KEY: "test-key",
    TWILIO_AUTH_TOKEN: TOKEN,
    TWILIO_ACCOUNT_SID: "AC1",
    TELNYX_PUBLIC_KEY: raw,
    TELNYX_API_KEY: "KEY1",
    TELNYX_ACCOUNT_SID: "acc-1",
    TELNYX_TEXML_APPLICATION_ID: "app-9",
    SWITCHBOARD_API_KEY: "sk-gateway",
    SWITCHBOARD_PUBLIC_URL: base,
    SWITCHBOARD_WORKFLOWS_DIR: dir,
  };
  const def = agent({
    name: "caller",
    greeting: "Hello, this is Ann from Example Shop.",
    s2s: { kind: "openai-realtime", options: { url: service.url } },
    telephony: ["twilio", "telnyx"],
    voicemail: { action: "hangup", windowMs: 5000 },
    sessionContext: (info) => {
      sessions.push(info);
      return {};
    },
    workflows: { callback },
  });
  gateway = createGateway({ agent: def, env, logger: silentLogger, processMetrics: false, carrierClient: carrierClient({ env, twilioBaseUrl: api.url, telnyxBaseUrl: telnyxApi.url }) });
  // The gateway opens the agent's engine on listen, with its calls.
  await gateway.listen(port);
  if (gateway.workflows === undefined) throw new Error("the gateway opened no workflow engine");
  engine = gateway.workflows;
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([api.close(), telnyxApi.close(), service.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The run starts; the carrier's API is asked for the call, and the callee answers it: the call's stream. */
async function answeredTwilioCall(): Promise<{ runId: string; done: Promise<RunInfo | undefined>; line: FakeCarrier; form: URLSearchParams }> {
  const { runId } = await engine.start("callback", { carrier: "twilio" });
  const done = ended(runId);
  const form = new URLSearchParams((await api.next()).body);
  const answered = await twilioPost(form.get("Url") ?? "", { CallSid: SID, From: FROM, To: TO, Direction: "outbound-api" });
  expect(answered.status).toBe(200);
  const streamUrl = /<Stream url="([^"]+)"/.exec(await answered.text())?.[1] ?? "";
  const line = await FakeCarrier.dial({ url: streamUrl, headers: { "x-twilio-signature": twilioSignature(TOKEN, streamUrl, []) }, callId: SID });
  return { runId, done, line, form };
}

describe("a workflow's call", () => {
  it("is placed through Twilio with its status callback, its session sees the run, and a person's call's end returns to the run", async () => {
    const { runId, done, line, form } = await answeredTwilioCall();
    expect(Object.fromEntries(form)).toEqual({
      ...twilioPlacingForm(base, TO, FROM, 5),
      StatusCallback: placementUrl(base, "/telephony/twilio/status/"),
      StatusCallbackEvent: "completed",
      StatusCallbackMethod: "POST",
      Timeout: "30",
    });
    await line.until(() => sessions.length === 1, "the session");
    expect(sessions[0]?.outbound).toEqual({ runId, workflow: "callback", carrier: "twilio", to: TO, from: FROM, why: "their order shipped", context: { orderId: "o-1" } });
    // Its line is the placement's: from the gateway's number, to the callee; outbound.
    expect(sessions[0]?.phone).toEqual({ carrier: "twilio", direction: "outbound", from: FROM, to: TO, callId: SID });
    expect((await until(runId, (run) => run.status === "waiting")).waitingFor).toBe(`call:${runId}:1`);
    service.enqueue({ say: "Hello, this is Ann from Example Shop.", audioMs: 200 });
    expect((await twilioPost(form.get("AsyncAmdStatusCallback") ?? "", { CallSid: SID, AnsweredBy: "human" })).status).toBe(204);
    await line.until(() => line.playedMs >= 150, "the greeting");
    line.hangUp();
    const result = await done;
    expect(result?.status).toBe("completed");
    expect(result?.output).toEqual({
      call: { token: `call:${runId}:1`, carrier: "twilio", to: TO, from: FROM, callId: SID },
      outcome: { status: "answered", answeredBy: "human", sessionId: expect.any(String), callId: SID },
    });
  }, 30_000);

  it("returns a machine's verdict to the run once the call it hung up has ended", async () => {
    const { done, line, form } = await answeredTwilioCall();
    expect((await twilioPost(form.get("AsyncAmdStatusCallback") ?? "", { CallSid: SID, AnsweredBy: "machine_start" })).status).toBe(204);
    expect(await line.closed).toEqual({ code: 1000, reason: "answering machine" });
    const result = await done;
    expect(result?.output).toMatchObject({ outcome: { status: "answered", answeredBy: "machine", callId: SID } });
    // The machine was hung up over REST.
    expect(Object.fromEntries(new URLSearchParams((await api.next()).body))).toEqual({ Status: "completed" });
  }, 30_000);

  it("returns Telnyx's signed no-answer to the run; a forged, replayed or unknown report is refused and reaches nothing", async () => {
    const { runId } = await engine.start("callback", { carrier: "telnyx" });
    const done = ended(runId);
    const request = await telnyxApi.next();
    expect(request).toMatchObject({ method: "POST", path: "/v2/texml/Accounts/acc-1/Calls", authorization: "Bearer KEY1" });
    const order = JSON.parse(request.body) as Record<string, unknown>;
    expect(order).toMatchObject({
      ApplicationSid: "app-9",
      To: TO,
      From: FROM,
      Url: expect.stringMatching(/\/telephony\/telnyx\/voice\?placed=[A-Za-z0-9_-]{24}$/),
      StatusCallback: expect.stringMatching(new RegExp(`^${base}/telephony/telnyx/status/[A-Za-z0-9_-]{24}$`)),
      StatusCallbackEvent: "completed",
      StatusCallbackMethod: "POST",
      Timeout: 30,
    });
    const statusUrl = order.StatusCallback as string;
    const noAnswer = { CallSid: "v3:placed-1", AccountSid: "acc-1", CallStatus: "no-answer" };
    // Signed with another key: refused, nothing taken.
    expect((await telnyxPost(statusUrl, noAnswer, strangerKeys.privateKey).send()).status).toBe(403);
    // A report for no placement (other bytes: Telnyx signs the body, not the URL, so the same bytes anywhere are a replay).
    expect((await telnyxPost(`${base}/telephony/telnyx/status/AAAAAAAAAAAAAAAAAAAAAAAA`, { ...noAnswer, CallSid: "v3:other" }).send()).status).toBe(404);
    await until(runId, (run) => run.status === "waiting");
    // Still ringing: nothing decided.
    expect((await telnyxPost(statusUrl, { ...noAnswer, CallStatus: "ringing" }).send()).status).toBe(204);
    expect((await engine.get(runId))?.status).toBe("waiting");
    const report = telnyxPost(statusUrl, noAnswer);
    expect((await report.send()).status).toBe(204);
    const result = await done;
    expect(result?.output).toMatchObject({ call: { carrier: "telnyx", token: `call:${runId}:1` }, outcome: { status: "no-answer", callId: "v3:placed-1" } });
    // The same signed report again: a replay.
    expect((await report.send()).status).toBe(403);
  }, 30_000);

  it("fails the run with the refusal when the call cannot be placed, and dials nothing", async () => {
    const { runId } = await engine.start("callback", { carrier: "plivo" });
    const result = await ended(runId);
    expect(result?.status).toBe("failed");
    expect(result?.error?.message).toMatch(/ctx\.calls\.place: carrier: must be twilio or telnyx/);
    // Only the two Twilio calls of the tests before: none for this run.
    expect(api.seen.filter((seen) => seen.path.endsWith("/Calls.json"))).toHaveLength(2);
  }, 30_000);
});
