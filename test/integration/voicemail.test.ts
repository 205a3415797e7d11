// Placing calls and answering machines end to end (docs/telephony.md "Placing calls", "Voicemail
// and answering machines"): `POST /v1/calls` places the call through the carrier's REST API (a
// loopback fake that checks the request as Twilio and Telnyx document it), the carrier comes back
// to the signed voice webhook the request named, the stream runs, and the signed AMD callback's
// verdict reaches the session: a person is greeted; a machine is left the agent's message verbatim
// once its beep has played, and the call is then hung up — or hung up at once.
import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { encodeMulaw } from "../../src/audio/g711.js";
import { silentLogger } from "../../src/log.js";
import { agent, type AgentDef } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { carrierClient } from "../../src/server/telephony/carrier-client.js";
import { twilioSignature } from "../../src/server/telephony/signatures.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import type { CarrierRestFake } from "../helpers/carrier-rest-fake.js";
import { placingHarness, twilioPlacingForm } from "../helpers/placing.js";
import { startPipelineFakes } from "../helpers/pipeline-fakes.js";
import { answerTwilio } from "../../fakes/carrier.js";


const TOKEN = "twilio-token";
const API_KEY = "sk-gateway";
const placing = placingHarness(API_KEY);
const { serve, place, closing } = placing;
const SID = "CA0123456789abcdef0123456789abcdef";
const MESSAGE = "Hi, this is Ann from Example Clinic. Please call us back at 555 0100.";
const twilioEnv = { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: TOKEN, TWILIO_ACCOUNT_SID: "AC1", SWITCHBOARD_API_KEY: API_KEY };

/** The Twilio REST API, faked; Twilio's credentials unless `options` says otherwise. */
function rest(options: Parameters<typeof placing.rest>[0] = { basic: { user: "AC1", password: TOKEN } }): Promise<CarrierRestFake> {
  return placing.rest(options);
}

/** A POST signed as Twilio signs its requests. */
function twilioPost(url: string, params: Record<string, string>, token = TOKEN): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "x-twilio-signature": twilioSignature(token, url, Object.entries(params)) }, body: new URLSearchParams(params) });
}

/** A 1 kHz beep of `ms`, μ-law at 8 kHz, as the machine plays it. */
function beep(ms: number): Buffer {
  return Buffer.from(encodeMulaw(Int16Array.from({ length: ms * 8 }, (_, i) => Math.round(0.3 * Math.sin((2 * Math.PI * 1000 * i) / 8000) * 32767))));
}

const call = { agent: "caller", carrier: "twilio", to: "+14155550123", from: "+14155550100" };

describe("POST /v1/calls", () => {
  it("places a Twilio call with async AMD, as Twilio documents the Calls resource", async () => {
    const api = await rest();
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["twilio"], voicemail: { action: "hangup", windowMs: 5000 } });
    const base = await serve(def, { env: twilioEnv, carrierClient: carrierClient({ env: twilioEnv, twilioBaseUrl: api.url }) });
    const response = await place(base, call);
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ agent: "caller", carrier: "twilio", to: "+14155550123", from: "+14155550100", callId: SID, answeringMachineDetection: "both" });
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: "/2010-04-01/Accounts/AC1/Calls.json", contentType: "application/x-www-form-urlencoded" });
    const form = Object.fromEntries(new URLSearchParams(request.body));
    expect(form).toEqual(twilioPlacingForm(base, "+14155550123", "+14155550100", 5));
  });

  it("places a Telnyx TeXML call with AMD, as Telnyx documents its outbound-call API", async () => {
    const { publicKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64");
    const api = await rest({ bearer: "KEY1" });
    const env = { OPENAI_API_KEY: "k", TELNYX_PUBLIC_KEY: raw, TELNYX_API_KEY: "KEY1", TELNYX_ACCOUNT_SID: "acc-1", TELNYX_TEXML_APPLICATION_ID: "app-9", SWITCHBOARD_API_KEY: API_KEY };
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["telnyx"], voicemail: { action: "message", message: MESSAGE } });
    const base = await serve(def, { env, carrierClient: carrierClient({ env, telnyxBaseUrl: api.url }) });
    const response = await place(base, { ...call, carrier: "telnyx" });
    expect(response.status).toBe(201);
    // Telnyx's documented answer names no call id: the voice webhook will.
    expect(await response.json()).not.toHaveProperty("callId");
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: "/v2/texml/Accounts/acc-1/Calls", authorization: "Bearer KEY1", contentType: "application/json" });
    expect(JSON.parse(request.body)).toEqual({
      ApplicationSid: "app-9",
      To: "+14155550123",
      From: "+14155550100",
      Url: expect.stringMatching(/\/telephony\/telnyx\/voice\?placed=[A-Za-z0-9_-]{24}$/),
      UrlMethod: "POST",
      MachineDetection: "Enable",
      AsyncAmd: true,
      AsyncAmdStatusCallback: expect.stringMatching(/\/telephony\/telnyx\/amd\/[A-Za-z0-9_-]{24}$/),
      AsyncAmdStatusCallbackMethod: "POST",
    });
  });

  it("asks for no carrier detection when the agent detects locally, or has no voicemail setting", async () => {
    const api = await rest();
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["twilio"] });
    const base = await serve(def, { env: twilioEnv, carrierClient: carrierClient({ env: twilioEnv, twilioBaseUrl: api.url }) });
    expect((await place(base, call)).status).toBe(201);
    expect(Object.keys(Object.fromEntries(new URLSearchParams((await api.next()).body)))).toEqual(["To", "From", "Url", "Method"]);
  });

  it("refuses each bad request with a 4xx naming the field and the fix, and places nothing", async () => {
    const api = await rest();
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["twilio", "plivo", "telnyx", "exotel"] });
    const env = { ...twilioEnv, PLIVO_AUTH_TOKEN: "p" };
    const base = await serve(def, { env, carrierClient: carrierClient({ env, twilioBaseUrl: api.url }) });
    const refusal = async (body: unknown, key?: string): Promise<[number, { error: string; field?: string }]> => {
      const response = await place(base, body, key);
      return [response.status, (await response.json()) as { error: string; field?: string }];
    };
    expect(await refusal(call, "wrong")).toEqual([401, { error: "send your API key as Authorization: Bearer <key>" }]);
    expect(await refusal({ ...call, agent: "other" })).toEqual([404, { field: "agent", error: 'agent: no agent "other" here; this gateway serves "caller"' }]);
    expect(await refusal({ ...call, carrier: "vonage" })).toEqual([400, { field: "carrier", error: "carrier: vonage is not enabled for agent caller: add it to the agent's telephony field" }]);
    expect(await refusal({ ...call, carrier: "plivo" })).toEqual([400, { field: "carrier", error: "carrier: plivo has no REST credentials to place calls with here: set PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN" }]);
    expect((await refusal({ ...call, carrier: "exotel" }))[1]).toMatchObject({
      field: "carrier",
      error: expect.stringMatching(/^carrier: exotel cannot place calls from this gateway: Exotel's connect-call API sends the callee to a flow built in its dashboard.*\(twilio, telnyx, plivo, vonage can; see docs\/telephony\.md "Placing calls"\)$/),
    });
    expect((await refusal({ ...call, carrier: "telnyx" }))[1]).toMatchObject({ field: "carrier", error: expect.stringMatching(/webhooks are not signed here.*set TELNYX_PUBLIC_KEY/) });
    expect(await refusal({ ...call, to: "4155550123" })).toEqual([400, { field: "to", error: expect.stringMatching(/^to: must be an E\.164 number/) }]);
    expect((await refusal({ ...call, from: 14155550100 }))[1].field).toBe("from");
    expect(await refusal({ ...call, url: "https://evil.example" })).toEqual([400, { field: "url", error: "url: not a field of a call; send { agent, carrier, to, from }" }]);
    expect((await refusal("call me"))[0]).toBe(400);
    expect(api.seen).toEqual([]);
  });

  it("refuses a carrier without REST credentials, placing calls with auth off, and calls over the per-minute budget", async () => {
    const api = await rest();
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["twilio"] });
    const noSid = { ...twilioEnv, TWILIO_ACCOUNT_SID: "" };
    const a = await serve(def, { env: noSid, carrierClient: carrierClient({ env: noSid, twilioBaseUrl: api.url }) });
    expect(await (await place(a, call)).json()).toEqual({ field: "carrier", error: "carrier: twilio has no REST credentials to place calls with here: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN" });
    const open = { ...twilioEnv, SWITCHBOARD_API_KEY: "" };
    const b = await serve(def, { env: open, carrierClient: carrierClient({ env: open, twilioBaseUrl: api.url }) });
    const off = await place(b, call);
    expect(off.status).toBe(403);
    expect(await off.json()).toEqual({ error: "placing calls is off while auth is off (anyone could call any number on your bill): set SWITCHBOARD_API_KEY" });
    const budgeted = { ...twilioEnv, SWITCHBOARD_CALLS_PER_MINUTE: "2" };
    const c = await serve(def, { env: budgeted, carrierClient: carrierClient({ env: budgeted, twilioBaseUrl: api.url }) });
    expect([(await place(c, call)).status, (await place(c, call)).status, (await place(c, call)).status]).toEqual([201, 201, 429]);
    expect(api.seen).toHaveLength(2);
    expect(() => createGateway({ agent: def, logger: silentLogger, processMetrics: false, env: { ...twilioEnv, SWITCHBOARD_CALLS_PER_MINUTE: "lots" } })).toThrow(/SWITCHBOARD_CALLS_PER_MINUTE: "lots" is not a whole number ≥ 1/);
  });

  it("answers 502 with the carrier's refusal, and the placement is dropped", async () => {
    const api = await rest({ basic: { user: "AC1", password: "another-token" } });
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime" }, telephony: ["twilio"] });
    const base = await serve(def, { env: twilioEnv, carrierClient: carrierClient({ env: twilioEnv, twilioBaseUrl: api.url }) });
    const response = await place(base, call);
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: string }).error).toMatch(/^twilio did not place the call: Twilio call answered 401/);
  });
});

describe("a placed Twilio call that a machine answers", () => {
  async function placedCall(voicemail: NonNullable<AgentDef["voicemail"]>) {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closing(service);
    const api = await rest();
    const detected: unknown[] = [];
    const def = agent({
      name: "caller",
      greeting: "Hello, this is Ann from Example Clinic.",
      s2s: { kind: "openai-realtime", options: { url: service.url } },
      telephony: ["twilio"],
      voicemail,
      events: { "voicemail.detected": (event) => void detected.push(event) },
    });
    const base = await serve(def, { env: twilioEnv, carrierClient: carrierClient({ env: twilioEnv, twilioBaseUrl: api.url }) });
    expect((await place(base, call)).status).toBe(201);
    const form = new URLSearchParams((await api.next()).body);
    const voiceUrl = form.get("Url") ?? "";
    const amdUrl = form.get("AsyncAmdStatusCallback") ?? "";
    // The callee picks up: Twilio fetches the call's TwiML from the URL the request named, signed.
    const answered = await twilioPost(voiceUrl, { CallSid: SID, From: call.from, To: call.to, Direction: "outbound-api" });
    expect(answered.status).toBe(200);
    const streamUrl = /<Stream url="([^"]+)"/.exec(await answered.text())?.[1] ?? "";
    const line = await FakeCarrier.dial({ url: streamUrl, headers: { "x-twilio-signature": twilioSignature(TOKEN, streamUrl, []) }, callId: SID });
    closing(line);
    return { service, api, line, amdUrl, voiceUrl, detected };
  }

  it("stays silent while detection is pending, then leaves the message verbatim after the beep, and hangs up once it has played", async () => {
    const { service, api, line, amdUrl, detected } = await placedCall({ action: "message", message: MESSAGE });
    line.say(Buffer.alloc(8000, 0xff));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // No greeting over the machine's: nothing was asked of the service, nothing played.
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
    expect(line.audio).toEqual([]);
    const verdict = await twilioPost(amdUrl, { CallSid: SID, AccountSid: "AC1", AnsweredBy: "machine_start", MachineDetectionDuration: "2100" });
    expect(verdict.status).toBe(204);
    await line.until(() => detected.length === 1, "voicemail.detected");
    expect(detected[0]).toMatchObject({ type: "voicemail.detected", source: "carrier", answeredBy: "machine_start", action: "message" });
    // Still silent: the message waits for the beep.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
    service.enqueue({ say: MESSAGE, audioMs: 600 });
    line.say(Buffer.concat([beep(400), Buffer.alloc(800, 0xff)]));
    await line.until(() => service.messages.some((m) => m.message.type === "response.create"), "the message asked for", 5000);
    const asked = service.messages.find((m) => m.message.type === "response.create")?.message as { response?: { instructions?: string } };
    expect(asked.response?.instructions).toContain(`"${MESSAGE}"`);
    expect(await line.closed).toEqual({ code: 1000, reason: "voicemail message left" });
    // Hung up only once the message had played.
    expect(line.playedMs).toBeGreaterThan(600 - 40);
    const hangUp = await api.next();
    expect(hangUp).toMatchObject({ path: `/2010-04-01/Accounts/AC1/Calls/${SID}.json` });
    expect(Object.fromEntries(new URLSearchParams(hangUp.body))).toEqual({ Status: "completed" });
  }, 30_000);

  it("hangs up at once on a machine with action hangup, saying nothing", async () => {
    const { service, api, line, amdUrl, detected } = await placedCall({ action: "hangup" });
    expect((await twilioPost(amdUrl, { CallSid: SID, AnsweredBy: "machine_start" })).status).toBe(204);
    expect(await line.closed).toEqual({ code: 1000, reason: "answering machine" });
    expect(detected).toHaveLength(1);
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
    expect(Object.fromEntries(new URLSearchParams((await api.next()).body))).toEqual({ Status: "completed" });
  }, 30_000);

  it("greets a person as soon as the carrier says so", async () => {
    const { service, line, amdUrl, detected } = await placedCall({ action: "hangup" });
    service.enqueue({ say: "Hello, this is Ann from Example Clinic.", audioMs: 200 });
    expect((await twilioPost(amdUrl, { CallSid: SID, AnsweredBy: "human" })).status).toBe(204);
    await line.until(() => line.playedMs >= 150, "the greeting");
    expect(detected).toEqual([]);
  }, 30_000);

  it("refuses a verdict that is unsigned, malformed, for no placement, for another call or replayed; and a placement answered twice", async () => {
    const { service, line, amdUrl, voiceUrl, detected } = await placedCall({ action: "hangup" });
    const base = new URL(amdUrl).origin;
    const refusal = async (response: Promise<Response>): Promise<[number, string]> => {
      const answer = await response;
      return [answer.status, (await answer.text()).trim()];
    };
    const params = { CallSid: SID, AnsweredBy: "human" };
    expect(await refusal(twilioPost(amdUrl, params, "not-the-token"))).toEqual([403, "X-Twilio-Signature does not match: check TWILIO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL"]);
    expect((await refusal(twilioPost(amdUrl, { ...params, AnsweredBy: "robot" })))[0]).toBe(400);
    expect(await refusal(twilioPost(`${base}/telephony/twilio/amd/AAAAAAAAAAAAAAAAAAAAAAAA`, params))).toEqual([404, "no call placed by this gateway waits for this verdict (unknown, expired or already reported)"]);
    expect(await refusal(twilioPost(amdUrl, { ...params, CallSid: "CA-someone-else" }))).toEqual([403, "the verdict names another call than the one its callback was bound to"]);
    // The placement was answered once: a second webhook for it is refused.
    expect((await twilioPost(voiceUrl, { CallSid: SID, From: call.from, To: call.to, Direction: "outbound-api", Extra: "1" })).status).toBe(403);
    // The call's own verdict still gets through, once.
    service.enqueue({ say: "Hello, this is Ann from Example Clinic.", audioMs: 200 });
    expect((await twilioPost(amdUrl, params)).status).toBe(204);
    expect(await refusal(twilioPost(amdUrl, params))).toEqual([403, "this signed callback was already answered: a replay is not acted on"]);
    await line.until(() => line.playedMs >= 150, "the greeting");
    expect(detected).toEqual([]);
  }, 30_000);
});

describe("a placed Telnyx call", () => {
  it("takes Telnyx's signed AMD verdict for the call its TeXML webhook named, and hangs a machine up through Call Control", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closing(service);
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64");
    const api = await rest({ bearer: "KEY1" });
    const env = { OPENAI_API_KEY: "test-key", TELNYX_PUBLIC_KEY: raw, TELNYX_API_KEY: "KEY1", TELNYX_ACCOUNT_SID: "acc-1", TELNYX_TEXML_APPLICATION_ID: "app-9", SWITCHBOARD_API_KEY: API_KEY };
    const def = agent({ name: "caller", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["telnyx"], voicemail: { action: "hangup" } });
    const base = await serve(def, { env, carrierClient: carrierClient({ env, telnyxBaseUrl: api.url }) });
    expect((await place(base, { ...call, carrier: "telnyx" })).status).toBe(201);
    const order = JSON.parse((await api.next()).body) as { Url: string; AsyncAmdStatusCallback: string };
    /** A form POST signed as Telnyx signs its webhooks: Ed25519 over `timestamp|body`. */
    const telnyxPost = (url: string, params: Record<string, string>): Promise<Response> => {
      const body = new URLSearchParams(params).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");
      return fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp }, body });
    };
    const callSid = "v3:placed-call-1";
    const answered = await telnyxPost(order.Url, { CallSid: callSid, AccountSid: "acc-1", From: call.from, To: call.to });
    expect(answered.status).toBe(200);
    const streamUrl = (/<Stream url="([^"]+)"/.exec(await answered.text())?.[1] ?? "").replace(/&amp;/g, "&");
    const line = await FakeCarrier.dial({ url: streamUrl, dialect: "telnyx", callId: callSid });
    closing(line);
    expect((await telnyxPost(order.AsyncAmdStatusCallback, { CallSid: callSid, AccountSid: "acc-1", AnsweredBy: "machine_start" })).status).toBe(204);
    expect(await line.closed).toEqual({ code: 1000, reason: "answering machine" });
    const hangUp = await api.next();
    expect(hangUp).toMatchObject({ method: "POST", path: `/v2/calls/${encodeURIComponent(callSid)}/actions/hangup`, authorization: "Bearer KEY1" });
    expect(service.messages.filter((m) => m.message.type === "response.create")).toEqual([]);
  }, 30_000);
});

describe("an answered call screened in pipeline mode (calls: all, local detection)", () => {
  async function pipelineCall() {
    const fakes = await startPipelineFakes();
    closing(fakes);
    const api = await rest();
    const detected: unknown[] = [];
    const env = { ...fakes.env, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_ACCOUNT_SID: "AC1" };
    const def = agent({
      name: "desk",
      greeting: "Hello, this is the desk.",
      ...fakes.providers,
      telephony: ["twilio"],
      voicemail: { action: "message", message: MESSAGE, calls: "all", detection: "local" },
      events: { "voicemail.detected": (event) => void detected.push(event) },
    });
    const base = await serve(def, { env, carrierClient: carrierClient({ env, twilioBaseUrl: api.url }) });
    const answered = await answerTwilio(base, TOKEN, SID);
    const line = await FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: SID });
    closing(line);
    // The STT's transcripts below stand for what it heard of the callee: send them only once the
    // callee's audio reaches it, which is after the session is live and screening (the carrier's
    // audio is held until then). An open STT socket alone is earlier: a transcript sent then would
    // reach the voice loop before the screen listens (seen on a loaded CI machine).
    line.say(Buffer.alloc(1600, 0xff));
    await line.until(() => (fakes.stt.connections[0]?.audioBytes ?? 0) > 0, "the callee's audio at the STT");
    /** What the agent's TTS was asked to say, all of it. */
    const spoken = (): string => fakes.tts.messages.map((m) => (typeof m.transcript === "string" ? m.transcript : "")).join("");
    return { fakes, api, line, detected, spoken };
  }

  it("judges the greeting's words a machine, answers none of them, and leaves the message after the beep", async () => {
    const { fakes, api, line, detected, spoken } = await pipelineCall();
    line.say(Buffer.alloc(4000, 0xff));
    fakes.stt.speechStarted();
    fakes.stt.partial("Hi, you've reached Dana");
    await line.until(() => detected.length === 1, "voicemail.detected");
    expect(detected[0]).toMatchObject({ type: "voicemail.detected", source: "transcript", reason: "phrase", phrase: "you've reached", action: "message" });
    fakes.stt.final("Hi, you've reached Dana. Please leave a message after the tone.", { speechFinal: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The greeting held and no turn: nothing spoken, the model never asked.
    expect(spoken()).toBe("");
    expect(fakes.llm.requests).toEqual([]);
    line.say(Buffer.concat([beep(300), Buffer.alloc(1600, 0xff)]));
    await line.until(() => spoken().includes(MESSAGE), "the message", 5000);
    expect(spoken().trim()).toBe(MESSAGE);
    expect(await line.closed).toEqual({ code: 1000, reason: "voicemail message left" });
    expect(fakes.llm.requests).toEqual([]);
    expect(Object.fromEntries(new URLSearchParams((await api.next()).body))).toEqual({ Status: "completed" });
  }, 30_000);

  it("greets a person who said hello and waited, and then takes their turns", async () => {
    const { fakes, line, detected, spoken } = await pipelineCall();
    line.say(Buffer.alloc(8000, 0xff));
    fakes.stt.speechStarted();
    fakes.stt.final("Hello?", { speechFinal: true });
    await line.until(() => spoken().includes("Hello, this is the desk."), "the greeting", 5000);
    expect(detected).toEqual([]);
    // "Hello?" made no turn of its own: the model has not been asked.
    expect(fakes.llm.requests).toEqual([]);
  }, 30_000);
});
