// Placing calls through Plivo and Vonage, and their answering-machine detection, end to end
// (docs/telephony.md "Placing calls", "Voicemail and answering machines"): `POST /v1/calls` asks the
// carrier's REST API (a loopback fake that checks the request as Plivo's "Make an outbound call" and
// Vonage's "Create an outbound call" document it), the carrier comes back to the signed voice webhook
// the request named, the stream runs, and the carrier's signed detection callback — Plivo's
// `machine_detection_url`, Vonage's `event_url` — reaches the session: a machine is hung up on, or
// left the message once Vonage reports its beep. Unsigned, replayed, misplaced or misdirected
// callbacks are refused and change nothing.
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { agent, type AgentDef } from "../../src/manifest/index.js";
import { carrierClient } from "../../src/server/telephony/carrier-client.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { placingHarness } from "../helpers/placing.js";
import { plivoPost, vonageAuthorization, vonagePost } from "../helpers/carrier-signing.js";


const API_KEY = "sk-gateway";
const placing = placingHarness(API_KEY);
const { serve, rest, closing } = placing;
const MESSAGE = "Hi, this is Ann from Example Clinic. Please call us back at 555 0100.";
const PLIVO_TOKEN = "plivo-token";
const VONAGE_SECRET = "vonage-secret";
const CALL_UUID = "55a1e0e2-3f2c-4f5b-9a0e-1c2d3e4f5a6b";
const VONAGE_UUID = "63f61863-4a51-4f6b-86e1-46edebcf9356";
const numbers = { agent: "caller", to: "+14155550123", from: "+14155550100" };
const plivoEnv = { OPENAI_API_KEY: "test-key", PLIVO_AUTH_ID: "MA1", PLIVO_AUTH_TOKEN: PLIVO_TOKEN, SWITCHBOARD_API_KEY: API_KEY };
const vonageKeys = generateKeyPairSync("rsa", { modulusLength: 2048 });
const vonageEnv = {
  OPENAI_API_KEY: "test-key",
  VONAGE_SIGNATURE_SECRET: VONAGE_SECRET,
  VONAGE_APPLICATION_ID: "app-1",
  VONAGE_PRIVATE_KEY: vonageKeys.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  SWITCHBOARD_API_KEY: API_KEY,
};

/** A call to `numbers.to` placed through `carrier`. */
function place(base: string, carrier: string): Promise<Response> {
  return placing.place(base, { ...numbers, carrier });
}

async function refusal(response: Promise<Response>): Promise<[number, string]> {
  const answer = await response;
  return [answer.status, (await answer.text()).trim()];
}

/** An agent that places calls on `carrier`, with the realtime fake as its voice; `voicemail.detected` events collected. */
async function caller(carrier: "plivo" | "vonage", voicemail: AgentDef["voicemail"]) {
  const service = await startFakeOpenAiRealtime({ paceMs: 5 });
  closing(service);
  const detected: unknown[] = [];
  const def = agent({
    name: "caller",
    greeting: "Hello, this is Ann from Example Clinic.",
    s2s: { kind: "openai-realtime", options: { url: service.url } },
    telephony: [carrier],
    ...(voicemail === undefined ? {} : { voicemail }),
    events: { "voicemail.detected": (event) => void detected.push(event) },
  });
  return { service, detected, def };
}

describe("POST /v1/calls on Plivo", () => {
  it("places the call with asynchronous machine detection, as Plivo documents Make an outbound call", async () => {
    const api = await rest({ basic: { user: "MA1", password: PLIVO_TOKEN } });
    const { def } = await caller("plivo", { action: "hangup", windowMs: 5000 });
    const base = await serve(def, { env: plivoEnv, carrierClient: carrierClient({ env: plivoEnv, plivoBaseUrl: api.url }) });
    const response = await place(base, "plivo");
    expect(response.status).toBe(201);
    // Plivo answers a request_uuid, not the CallUUID its answer URL will name: no callId.
    expect(await response.json()).toEqual({ ...numbers, carrier: "plivo", answeringMachineDetection: "both" });
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: "/v1/Account/MA1/Call/", contentType: "application/json" });
    expect(JSON.parse(request.body)).toEqual({
      from: "14155550100",
      to: "14155550123",
      answer_url: expect.stringMatching(new RegExp(`^${base}/telephony/plivo/voice\\?placed=[A-Za-z0-9_-]{24}$`)),
      answer_method: "POST",
      machine_detection: "true",
      machine_detection_time: 5000,
      machine_detection_url: expect.stringMatching(new RegExp(`^${base}/telephony/plivo/amd/[A-Za-z0-9_-]{24}$`)),
      machine_detection_method: "POST",
    });
  });

  it("asks for no detection without a carrier verdict to wait for, and answers 502 with Plivo's refusal", async () => {
    const api = await rest({ basic: { user: "MA1", password: PLIVO_TOKEN } });
    const { def } = await caller("plivo", { action: "hangup", detection: "local" });
    const base = await serve(def, { env: plivoEnv, carrierClient: carrierClient({ env: plivoEnv, plivoBaseUrl: api.url }) });
    expect((await place(base, "plivo")).status).toBe(201);
    expect(Object.keys(JSON.parse((await api.next()).body) as object)).toEqual(["from", "to", "answer_url", "answer_method"]);
    const wrong = await rest({ basic: { user: "MA1", password: "another-token" } });
    const other = await serve(def, { env: plivoEnv, carrierClient: carrierClient({ env: plivoEnv, plivoBaseUrl: wrong.url }) });
    const refused = await place(other, "plivo");
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: string }).error).toMatch(/^plivo did not place the call: Plivo call answered 401/);
  });
});

describe("a placed Plivo call that a machine answers", () => {
  async function placedCall() {
    const api = await rest({ basic: { user: "MA1", password: PLIVO_TOKEN } });
    const { service, detected, def } = await caller("plivo", { action: "hangup" });
    const base = await serve(def, { env: plivoEnv, carrierClient: carrierClient({ env: plivoEnv, plivoBaseUrl: api.url }) });
    expect((await place(base, "plivo")).status).toBe(201);
    const order = JSON.parse((await api.next()).body) as { answer_url: string; machine_detection_url: string };
    // The callee picks up: Plivo fetches the call's XML from the answer URL, signed.
    const answered = await plivoPost(order.answer_url, PLIVO_TOKEN, { CallUUID: CALL_UUID, From: "14155550100", To: "14155550123", Direction: "outbound" }, "n-answer");
    expect(answered.status).toBe(200);
    const streamUrl = (/<Stream[^>]*>([^<]+)<\/Stream>/.exec(await answered.text())?.[1] ?? "").replace(/&amp;/g, "&");
    const line = await FakeCarrier.dial({ url: streamUrl, dialect: "plivo", callId: CALL_UUID });
    closing(line);
    return { service, line, base, amdUrl: order.machine_detection_url, detected };
  }
  /** The parameters Plivo posts to `machine_detection_url` ("Asynchronous machine detection"). */
  const detection = (machine: string, callUuid = CALL_UUID): Record<string, string> => ({
    From: "14155550100",
    Machine: machine,
    To: "14155550123",
    RequestUUID: "9834029e-58b6-11e1-b8b7-a5bd0e4e126f",
    ALegRequestUUID: "9834029e-58b6-11e1-b8b7-a5bd0e4e126f",
    CallUUID: callUuid,
    IfMachine: "continue",
    Direction: "outbound",
    ALegUUID: callUuid,
    Event: "MachineDetection",
    CallStatus: "in-progress",
  });

  it("refuses unsigned, misplaced, misdirected and malformed verdicts, takes the call's own once, and hangs up on the machine", async () => {
    const { service, line, base, amdUrl, detected } = await placedCall();
    expect(await refusal(plivoPost(amdUrl, "not-the-token", detection("true"), "n1"))).toEqual([403, "X-Plivo-Signature-V3 does not match: check PLIVO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL"]);
    expect(await refusal(plivoPost(`${base}/telephony/plivo/amd/AAAAAAAAAAAAAAAAAAAAAAAA`, PLIVO_TOKEN, detection("true"), "n2"))).toEqual([404, "no call placed by this gateway waits for this verdict (unknown, expired or already reported)"]);
    expect(await refusal(plivoPost(amdUrl, PLIVO_TOKEN, detection("true", "another-call"), "n3"))).toEqual([403, "the verdict names another call than the one its callback was bound to"]);
    expect(await refusal(plivoPost(amdUrl, PLIVO_TOKEN, detection("maybe"), "n4"))).toEqual([400, "Machine is missing or not true or false"]);
    expect(detected).toEqual([]);
    const verdict = detection("true");
    expect((await plivoPost(amdUrl, PLIVO_TOKEN, verdict, "n5")).status).toBe(204);
    expect(await refusal(plivoPost(amdUrl, PLIVO_TOKEN, verdict, "n5"))).toEqual([403, "this signed callback was already answered: a replay is not acted on"]);
    expect(await line.closed).toEqual({ code: 1000, reason: "answering machine" });
    expect(detected).toEqual([expect.objectContaining({ type: "voicemail.detected", source: "carrier", answeredBy: "machine_start", action: "hangup" })]);
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
  }, 30_000);

  it("greets a person when Plivo says no machine", async () => {
    const { service, line, amdUrl, detected } = await placedCall();
    service.enqueue({ say: "Hello, this is Ann from Example Clinic.", audioMs: 200 });
    expect((await plivoPost(amdUrl, PLIVO_TOKEN, detection("false"), "n1")).status).toBe(204);
    await line.until(() => line.playedMs >= 150, "the greeting");
    expect(detected).toEqual([]);
  }, 30_000);
});

describe("POST /v1/calls on Vonage", () => {
  it("places the call with advanced machine detection, as Vonage documents Create an outbound call", async () => {
    const api = await rest({ vonagePublicKey: vonageKeys.publicKey });
    const { def } = await caller("vonage", { action: "message", message: MESSAGE, beepWaitMs: 60_000 });
    const base = await serve(def, { env: vonageEnv, carrierClient: carrierClient({ env: vonageEnv, vonageBaseUrl: api.url }) });
    const response = await place(base, "vonage");
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ ...numbers, carrier: "vonage", callId: VONAGE_UUID, answeringMachineDetection: "both" });
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: "/v1/calls", contentType: "application/json", authorization: expect.stringMatching(/^Bearer /) });
    expect(JSON.parse(request.body)).toEqual({
      to: [{ type: "phone", number: "14155550123" }],
      from: { type: "phone", number: "14155550100" },
      answer_url: [expect.stringMatching(new RegExp(`^${base}/telephony/vonage/voice\\?placed=[A-Za-z0-9_-]{24}$`))],
      answer_method: "POST",
      event_url: [expect.stringMatching(new RegExp(`^${base}/telephony/vonage/amd/[A-Za-z0-9_-]{24}$`))],
      event_method: "POST",
      advanced_machine_detection: { behavior: "continue", mode: "default", beep_timeout: 60 },
    });
  });

  it("asks for no detection, and keeps the application's event URL, when the agent detects locally", async () => {
    const api = await rest({ vonagePublicKey: vonageKeys.publicKey });
    const { def } = await caller("vonage", { action: "hangup", detection: "local" });
    const base = await serve(def, { env: vonageEnv, carrierClient: carrierClient({ env: vonageEnv, vonageBaseUrl: api.url }) });
    const response = await place(base, "vonage");
    expect(await response.json()).toMatchObject({ callId: VONAGE_UUID, answeringMachineDetection: "local" });
    expect(Object.keys(JSON.parse((await api.next()).body) as object)).toEqual(["to", "from", "answer_url", "answer_method"]);
  });

  it("refuses Vonage without the application's key, and without signed webhooks", async () => {
    const api = await rest({ vonagePublicKey: vonageKeys.publicKey });
    const { def } = await caller("vonage", undefined);
    const noKey = { ...vonageEnv, VONAGE_PRIVATE_KEY: "" };
    const a = await serve(def, { env: noKey, carrierClient: carrierClient({ env: noKey, vonageBaseUrl: api.url }) });
    expect(await (await place(a, "vonage")).json()).toEqual({ field: "carrier", error: "carrier: vonage has no REST credentials to place calls with here: set VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY" });
    const unsigned = { ...vonageEnv, VONAGE_SIGNATURE_SECRET: "" };
    const b = await serve(def, { env: unsigned, carrierClient: carrierClient({ env: unsigned, vonageBaseUrl: api.url }) });
    expect(((await (await place(b, "vonage")).json()) as { error: string }).error).toMatch(/vonage's webhooks are not signed here.*set VONAGE_SIGNATURE_SECRET/);
    expect(api.seen).toEqual([]);
  });
});

describe("a placed Vonage call that a machine answers", () => {
  it("passes the call's progress events by, takes the machine verdict, waits for the beep Vonage reports, and leaves the message verbatim", async () => {
    const api = await rest({ vonagePublicKey: vonageKeys.publicKey });
    const { service, detected, def } = await caller("vonage", { action: "message", message: MESSAGE });
    const base = await serve(def, { env: vonageEnv, carrierClient: carrierClient({ env: vonageEnv, vonageBaseUrl: api.url }) });
    expect((await place(base, "vonage")).status).toBe(201);
    const order = JSON.parse((await api.next()).body) as { answer_url: [string]; event_url: [string] };
    const [eventUrl] = order.event_url;
    const event = (status: string, extra: object = {}): object => ({ status, uuid: VONAGE_UUID, conversation_uuid: "CON-1", direction: "outbound", timestamp: "2026-12-02T12:00:00.000Z", ...extra });
    // Every state of the call comes to the event URL: before the answer nothing is bound, and nothing is taken.
    for (const status of ["started", "ringing"]) expect((await vonagePost(eventUrl, VONAGE_SECRET, event(status))).status).toBe(204);
    const answered = await vonagePost(order.answer_url[0], VONAGE_SECRET, { uuid: VONAGE_UUID, conversation_uuid: "CON-1", from: "14155550100", to: "14155550123" });
    expect(answered.status).toBe(200);
    const ncco = (await answered.json()) as { endpoint: { uri: string }[] }[];
    const line = await FakeCarrier.dial({ url: ncco[0]?.endpoint[0]?.uri ?? "", dialect: "vonage" });
    closing(line);
    expect((await vonagePost(eventUrl, VONAGE_SECRET, event("answered"))).status).toBe(204);
    /** The human/machine event names the call `call_uuid`. */
    const verdict = (status: string, extra: object = {}): object => ({ call_uuid: VONAGE_UUID, conversation_uuid: "CON-1", from: "14155550100", to: "14155550123", status, timestamp: "2026-12-02T12:00:04.000Z", ...extra });

    expect(await refusal(fetch(eventUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(verdict("machine")) }))).toEqual([
      403,
      "the signed-webhook JWT does not verify (or its iat is over 300 s off, or payload_hash does not match the body): check VONAGE_SIGNATURE_SECRET and enable signed webhooks",
    ]);
    expect(await refusal(vonagePost(eventUrl.replace(/amd\/[^/]+$/, "amd/AAAAAAAAAAAAAAAAAAAAAAAA"), VONAGE_SECRET, verdict("machine")))).toEqual([404, "no call placed by this gateway waits for this verdict (unknown, expired or already reported)"]);
    expect(await refusal(vonagePost(eventUrl, VONAGE_SECRET, verdict("machine", { sub_state: "beep_end" })))).toEqual([400, "sub_state is not beep_start or beep_timeout"]);
    expect((await refusal(vonagePost(eventUrl, VONAGE_SECRET, verdict("machine", { call_uuid: "someone-else" }))))[0]).toBe(403);

    const machine = JSON.stringify(verdict("machine"));
    const authorization = vonageAuthorization(VONAGE_SECRET, machine);
    const post = (): Promise<Response> => fetch(eventUrl, { method: "POST", headers: { authorization, "content-type": "application/json" }, body: machine });
    expect((await post()).status).toBe(204);
    expect(await refusal(post())).toEqual([403, "this signed callback was already answered: a replay is not acted on"]);
    await line.until(() => detected.length === 1, "voicemail.detected");
    expect(detected[0]).toMatchObject({ type: "voicemail.detected", source: "carrier", answeredBy: "machine_start", action: "message" });
    // The message waits for the greeting's end: nothing asked of the service yet.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
    service.enqueue({ say: MESSAGE, audioMs: 600 });
    expect((await vonagePost(eventUrl, VONAGE_SECRET, verdict("machine", { sub_state: "beep_start" }))).status).toBe(204);
    await line.until(() => service.messages.some((m) => m.message.type === "response.create"), "the message asked for", 5000);
    const asked = service.messages.find((m) => m.message.type === "response.create")?.message as { response?: { instructions?: string } };
    expect(asked.response?.instructions).toContain(`"${MESSAGE}"`);
    expect(await line.closed).toEqual({ code: 1000, reason: "voicemail message left" });
    // One greeting end per machine verdict: a second beep report finds nothing bound.
    expect((await vonagePost(eventUrl, VONAGE_SECRET, verdict("machine", { sub_state: "beep_start" }))).status).toBe(404);
    expect((await vonagePost(eventUrl, VONAGE_SECRET, event("completed"))).status).toBe(204);
  }, 30_000);
});
