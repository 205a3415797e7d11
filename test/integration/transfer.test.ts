// transfer_call end to end (docs/telephony.md "Transfer"): on a Twilio call the gateway answered,
// the model asks for an allow-listed destination, the agent's line plays out on the line, and only
// then does the gateway update the call over Twilio's REST API (a loopback fake that checks the
// request as Twilio documents it) with a <Dial> to that destination; the stream closes with no
// hang-up. Warm transfers on Twilio, Plivo and Vonage: the whisper and the outcome callback, each
// signed as its carrier signs and answered once; nobody answering brings the caller back to the same
// session. A browser session gets transfer.requested after the line, and then the socket closes.
import { generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, type AgentDef } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { carrierClient } from "../../src/server/telephony/carrier-client.js";
import { twilioSignature } from "../../src/server/telephony/signatures.js";
import type { GatewayOptions } from "../../src/server/gateway-types.js";
import { answerTwilio, FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { startFakeOpenAiServer } from "../../fakes/openai-chat.js";
import { carrierRestFake } from "../helpers/carrier-rest-fake.js";
import { plivoPost as signedPlivoPost, vonageAuthorization } from "../helpers/carrier-signing.js";
import { connect } from "../helpers/ws-client.js";
import { askForTheDesk, expectBackWithTheAgent, restoredLog, SUMMARY, telnyxSigner } from "../helpers/warm-transfer.js";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const transfer = {
  destinations: [
    { name: "sales", number: "+14155550123", description: "new orders" },
    { name: "desk", sip: "sip:desk@pbx.example.com", mode: "warm" as const },
  ],
};

async function serve(def: AgentDef, options: Partial<Omit<GatewayOptions, "agent">> = {}): Promise<{ base: string; ws: string }> {
  const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, ...options });
  const { port } = await gateway.listen(0);
  closers.push(() => gateway.close());
  return { base: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}` };
}

describe("transfer_call on a Twilio call", () => {
  it("updates the call with <Dial> to the allow-listed number only after the agent's line has played, then closes the stream without hanging up", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const probe: { line?: FakeCarrier } = {};
    // Each request is stamped with how much agent audio the line still had to play when it came.
    const api = await carrierRestFake({ basic: { user: "AC1", password: "twilio-token" }, now: () => probe.line?.bufferedMs ?? -1 });
    closers.push(() => api.close());
    const env = { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: "twilio-token", TWILIO_ACCOUNT_SID: "AC1" };
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["twilio"], builtinTools: ["transfer_call"], transfer });
    const { base } = await serve(def, { env, carrierClient: carrierClient({ env, twilioBaseUrl: api.url }) });

    service.enqueue({ say: "Hello.", audioMs: 100 });
    const answered = await answerTwilio(base, "twilio-token", "CA-ours");
    const line = await FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: "CA-ours", playbackDelayMs: 300 });
    probe.line = line;
    closers.push(() => line.close());
    await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");

    const tool = service.connections[0]?.session?.tools as { name: string; parameters: { properties: { destination: { enum?: string[]; anyOf?: { const: string }[] } } } }[] | undefined;
    const offered = tool?.find((t) => t.name === "transfer_call")?.parameters.properties.destination;
    expect(offered?.enum ?? offered?.anyOf?.map((c) => c.const)).toEqual(["sales", "desk"]);

    service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "sales" } } }, { say: "Putting you through to sales now.", audioMs: 800 });
    void service.userSays("I want to place an order");
    const request = await api.next();
    // The line had played everything the agent said when Twilio was asked.
    expect(request.at).toBe(0);
    expect(line.playedMs).toBeGreaterThan(100 + 800 - 40);
    expect(request).toMatchObject({ method: "POST", path: "/2010-04-01/Accounts/AC1/Calls/CA-ours.json", contentType: "application/x-www-form-urlencoded" });
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      Twiml: '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>+14155550123</Number></Dial></Response>',
    });
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
    // No hang-up followed: the one request was the transfer.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(api.seen).toHaveLength(1);
  }, 30_000);

  it("without TWILIO_ACCOUNT_SID the gateway has no REST API on the call: transfer_call answers that it is not supported, and nothing is sent", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const api = await carrierRestFake({});
    closers.push(() => api.close());
    const env = { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: "twilio-token", TWILIO_ACCOUNT_SID: "AC1" };
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["twilio"], builtinTools: ["transfer_call"], transfer });
    const { base } = await serve(def, { env, carrierClient: carrierClient({ env: { ...env, TWILIO_ACCOUNT_SID: "" }, twilioBaseUrl: api.url }) });
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const answered = await answerTwilio(base, "twilio-token", "CA-1");
    const line = await FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: "CA-1" });
    closers.push(() => line.close());
    await line.until(() => line.audio.length > 0, "the greeting");
    // Without TWILIO_ACCOUNT_SID the gateway has no REST API on this call: transfer_call says so.
    service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "sales" } } }, { say: "Sorry, I cannot transfer you.", audioMs: 100 });
    void service.userSays("put me through to sales");
    await line.until(() => service.messages.some((m) => m.message.type === "conversation.item.create" && JSON.stringify(m.message).includes("not supported on this connection")), "the refusal");
    expect(api.seen).toEqual([]);
  }, 30_000);
});

describe("a warm transfer on a Twilio call", () => {
  async function warmCall() {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const api = await carrierRestFake({ basic: { user: "AC1", password: "twilio-token" } });
    closers.push(() => api.close());
    const env = { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: "twilio-token", TWILIO_ACCOUNT_SID: "AC1" };
    const restored: { sessionId: string; messages: string[] }[] = [];
    const def = agent({
      name: "phone",
      greeting: "Hello.",
      s2s: { kind: "openai-realtime", options: { url: service.url } },
      telephony: ["twilio"],
      builtinTools: ["transfer_call"],
      transfer,
      events: { "history.restored": (event, info) => void restored.push({ sessionId: info.sessionId, messages: event.messages.map((m) => m.text) }) },
    });
    const { base } = await serve(def, { env, carrierClient: carrierClient({ env, twilioBaseUrl: api.url }) });
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const answered = await answerTwilio(base, "twilio-token", "CA-warm");
    const line = await FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: "CA-warm" });
    closers.push(() => line.close());
    await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");
    askForTheDesk(service);
    const request = await api.next();
    const twiml = new URLSearchParams(request.body).get("Twiml") ?? "";
    const whisperUrl = /<Sip url="([^"]+)"/.exec(twiml)?.[1] ?? "";
    const actionUrl = /<Dial action="([^"]+)"/.exec(twiml)?.[1] ?? "";
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
    /** A POST signed as Twilio signs its requests: HMAC-SHA1 over the URL and the sorted parameters. */
    const twilioPost = (url: string, params: Record<string, string>): Promise<Response> =>
      fetch(url, { method: "POST", headers: { "x-twilio-signature": twilioSignature("twilio-token", url, Object.entries(params)) }, body: new URLSearchParams(params) });
    return { service, base, twiml, whisperUrl, actionUrl, twilioPost, restored };
  }

  it("dials the desk with a whisper of the summary for whoever answers, and hangs up after the two talked", async () => {
    const { base, twiml, whisperUrl, actionUrl, twilioPost } = await warmCall();
    expect(twiml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response><Dial action="[^"]+" method="POST" timeout="20"><Sip url="[^"]+" method="POST">sip:desk@pbx.example.com<\/Sip><\/Dial><\/Response>$/);
    expect(whisperUrl.startsWith(`${base}/telephony/twilio/transfer/`)).toBe(true);
    expect(actionUrl.startsWith(`${base}/telephony/twilio/dialed/`)).toBe(true);
    // Unsigned: refused.
    expect((await fetch(whisperUrl, { method: "POST", body: new URLSearchParams({ CallSid: "CA-desk" }) })).status).toBe(403);
    const whisper = await twilioPost(whisperUrl, { CallSid: "CA-desk" });
    expect(await whisper.text()).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Say>${SUMMARY}</Say></Response>`);
    const ended = await twilioPost(actionUrl, { CallSid: "CA-warm", DialCallStatus: "completed" });
    expect(await ended.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    // Each is answered once.
    expect((await twilioPost(actionUrl, { CallSid: "CA-warm", DialCallStatus: "completed", Again: "1" })).status).toBe(404);
  }, 30_000);

  it("nobody answers: the caller comes back to the same conversation, and the agent says so first", async () => {
    const { service, actionUrl, twilioPost, restored } = await warmCall();
    service.enqueue({ say: "I'm sorry, nobody at desk could take your call just now.", audioMs: 200 });
    const back = await twilioPost(actionUrl, { CallSid: "CA-warm", DialCallStatus: "no-answer" });
    const twiml = await back.text();
    const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)?.[1] ?? "";
    expect(streamUrl).toMatch(/\/telephony\/twilio\/[A-Za-z0-9_-]{24}$/);
    const line = await FakeCarrier.dial({ url: streamUrl, headers: { "x-twilio-signature": twilioSignature("twilio-token", streamUrl, []) }, callId: "CA-warm" });
    closers.push(() => line.close());
    await expectBackWithTheAgent(line, service, restored);
  }, 30_000);
});

describe("transfer_call on a Telnyx TeXML call", () => {
  it("replaces the call's TeXML through the update-call endpoint under the AccountSid its signed webhook named", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const api = await carrierRestFake({ bearer: "telnyx-key" });
    closers.push(() => api.close());
    const telnyx = telnyxSigner();
    const env = { OPENAI_API_KEY: "test-key", TELNYX_PUBLIC_KEY: telnyx.publicKey, TELNYX_API_KEY: "telnyx-key" };
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["telnyx"], builtinTools: ["transfer_call"], transfer });
    const { base, ws } = await serve(def, { env, carrierClient: carrierClient({ env, telnyxBaseUrl: api.url }) });
    // The TeXML webhook, signed as Telnyx signs it: Ed25519 over "timestamp|body".
    const answer = await (await telnyx.post(`${base}/telephony/telnyx/voice`, { CallSid: "v3:call-1", AccountSid: "61bf923e-5e4d-4595-a110-56190ea18a1b", From: "+13125550100" })).text();
    const streamUrl = (/<Stream url="([^"]+)"/.exec(answer)?.[1] ?? "").replace(/&amp;/g, "&");
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const line = await FakeCarrier.dial({ url: streamUrl.replace(/^wss?:\/\/[^/]+/, ws), dialect: "telnyx", callId: "v3:call-1" });
    closers.push(() => line.close());
    await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");

    service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "sales" } } }, { say: "Putting you through.", audioMs: 200 });
    void service.userSays("sales please");
    const request = await api.next();
    expect(request).toMatchObject({
      method: "POST",
      path: "/v2/texml/Accounts/61bf923e-5e4d-4595-a110-56190ea18a1b/Calls/v3%3Acall-1",
      authorization: "Bearer telnyx-key",
      contentType: "application/x-www-form-urlencoded",
    });
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      Texml: '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>+14155550123</Number></Dial></Response>',
    });
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
    // No Call Control hang-up followed: the new TeXML holds the call now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(api.seen).toHaveLength(1);
  }, 30_000);
});

describe("transfer_call on a Plivo call", () => {
  it("asks Plivo to fetch a <Dial> from a ticketed URL, which answers once, and only to Plivo's signature", async () => {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const api = await carrierRestFake({ basic: { user: "MA1", password: "plivo-token" } });
    closers.push(() => api.close());
    const publicUrl = "https://gw.example.com";
    const env = { OPENAI_API_KEY: "test-key", PLIVO_AUTH_ID: "MA1", PLIVO_AUTH_TOKEN: "plivo-token", SWITCHBOARD_PUBLIC_URL: publicUrl };
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["plivo"], builtinTools: ["transfer_call"], transfer });
    const { base, ws } = await serve(def, { env, carrierClient: carrierClient({ env, plivoBaseUrl: api.url }) });
    /** A request signed as Plivo signs: V3 over the public URL, the POST parameters and a nonce. */
    const signed = (path: string, params: Record<string, string>, nonce: string): Promise<Response> => signedPlivoPost(`${base}${path}`, "plivo-token", params, nonce, `${publicUrl}${path}`);

    const callUuid = "55a1e0e2-3f2c-4f5b-9a0e-1c2d3e4f5a6b";
    const answer = await (await signed("/telephony/plivo/voice", { CallUUID: callUuid, From: "14155550100" }, "n1")).text();
    const streamUrl = /<Stream[^>]*>([^<]+)<\/Stream>/.exec(answer)?.[1]?.replace("wss://gw.example.com", ws).replace(/&amp;/g, "&");
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const line = await FakeCarrier.dial({ url: streamUrl ?? "", dialect: "plivo", callId: callUuid });
    closers.push(() => line.close());
    await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");

    service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "sales" } } }, { say: "Putting you through.", audioMs: 300 });
    void service.userSays("sales please");
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: `/v1/Account/MA1/Call/${callUuid}/`, contentType: "application/json" });
    const body = JSON.parse(request.body) as { legs: string; aleg_url: string; aleg_method: string };
    expect(body).toMatchObject({ legs: "aleg", aleg_method: "POST" });
    expect(body.aleg_url).toMatch(/^https:\/\/gw\.example\.com\/telephony\/plivo\/transfer\/[A-Za-z0-9_-]{24}$/);
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });

    const path = new URL(body.aleg_url).pathname;
    const params = { CallUUID: callUuid };
    expect((await fetch(`${base}${path}`, { method: "POST", body: new URLSearchParams(params) })).status).toBe(403);
    const fetched = await signed(path, params, "n2");
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>14155550123</Number></Dial></Response>');
    expect((await signed(path, params, "n3")).status).toBe(404);
  }, 30_000);
});

describe("transfer_call in a browser session", () => {
  it("sends transfer.requested with the destination and summary after the reply, then closes 1000", async () => {
    const llm = await startFakeOpenAiServer();
    closers.push(() => llm.close());
    const def = agent({ name: "chat", mode: "text", greeting: "Hi.", llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "m" } }, maxRetries: 0, builtinTools: ["transfer_call"], transfer });
    const { ws } = await serve(def, { env: {} });
    llm.enqueue({ toolCalls: [{ name: "transfer_call", args: { destination: "desk", summary: "Ann Lee; order 1234 arrived broken." }, id: "call_1" }] }, { text: "Connecting you to the desk now." });
    const client = await connect(`${ws}/websocket`);
    client.send({ type: "user_text", text: "my order arrived broken, I want a person" });
    const event = await client.next("transfer.requested");
    expect(event).toMatchObject({ destination: "desk", sip: "sip:desk@pbx.example.com", mode: "warm", summary: "Ann Lee; order 1234 arrived broken." });
    const types = client.types();
    expect(types.indexOf("reply.completed", types.indexOf("tool.completed"))).toBeLessThan(types.indexOf("transfer.requested"));
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("Connecting you to the desk now.");
    expect(await client.closed).toEqual({ code: 1000, reason: "call transferred" });
  }, 20_000);
});

describe("a warm transfer on a Plivo call", () => {
  const publicUrl = "https://gw.example.com";
  const callUuid = "55a1e0e2-3f2c-4f5b-9a0e-1c2d3e4f5a6b";

  async function warmCall() {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const api = await carrierRestFake({ basic: { user: "MA1", password: "plivo-token" } });
    closers.push(() => api.close());
    const env = { OPENAI_API_KEY: "test-key", PLIVO_AUTH_ID: "MA1", PLIVO_AUTH_TOKEN: "plivo-token", SWITCHBOARD_PUBLIC_URL: publicUrl };
    const { restored, events } = restoredLog();
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["plivo"], builtinTools: ["transfer_call"], transfer, events });
    const { base, ws } = await serve(def, { env, carrierClient: carrierClient({ env, plivoBaseUrl: api.url }) });
    let nonce = 0;
    /** A POST signed as Plivo signs its requests: V3 over the public URL, the POST parameters and a fresh nonce. */
    const plivoPost = (url: string, params: Record<string, string>): Promise<Response> => {
      const path = new URL(url).pathname;
      return signedPlivoPost(`${base}${path}`, "plivo-token", params, `n${(nonce += 1)}`, `${publicUrl}${path}`);
    };
    const streamOf = (xml: string): string => /<Stream[^>]*>([^<]+)<\/Stream>/.exec(xml)?.[1]?.replace(publicUrl.replace("https", "wss"), ws).replace(/&amp;/g, "&") ?? "";

    const answer = await (await plivoPost(`${publicUrl}/telephony/plivo/voice`, { CallUUID: callUuid, From: "14155550100" })).text();
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const line = await FakeCarrier.dial({ url: streamOf(answer), dialect: "plivo", callId: callUuid });
    closers.push(() => line.close());
    await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");
    askForTheDesk(service);
    const request = await api.next();
    expect(request).toMatchObject({ method: "POST", path: `/v1/Account/MA1/Call/${callUuid}/`, contentType: "application/json" });
    const { aleg_url: alegUrl } = JSON.parse(request.body) as { aleg_url: string };
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
    // Plivo fetches the aleg_url (signed) and runs its <Dial> on the caller's leg.
    const dial = await (await plivoPost(alegUrl, { CallUUID: callUuid })).text();
    const attribute = (name: string): string => new RegExp(`<Dial[^>]* ${name}="([^"]+)"`).exec(dial)?.[1]?.replace(/&amp;/g, "&") ?? "";
    return { service, base, dial, whisperUrl: attribute("confirmSound"), actionUrl: attribute("action"), plivoPost, streamOf, restored };
  }

  it("dials the desk with a confirmSound whisper of the summary and an action callback; hangs up after the two talked", async () => {
    const { base, dial, whisperUrl, actionUrl, plivoPost } = await warmCall();
    expect(dial).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response><Dial action="[^"]+" method="POST" timeout="20" confirmSound="[^"]+"><User>sip:desk@pbx.example.com<\/User><\/Dial><\/Response>$/);
    expect(whisperUrl).toMatch(/^https:\/\/gw\.example\.com\/telephony\/plivo\/transfer\/[A-Za-z0-9_-]{24}$/);
    expect(actionUrl).toMatch(/^https:\/\/gw\.example\.com\/telephony\/plivo\/dialed\/[A-Za-z0-9_-]{24}$/);
    // Unsigned: refused, and nothing is used up.
    expect((await fetch(`${base}${new URL(whisperUrl).pathname}`, { method: "POST", body: new URLSearchParams({ CallUUID: "b-leg" }) })).status).toBe(403);
    expect((await fetch(`${base}${new URL(actionUrl).pathname}`, { method: "POST", body: new URLSearchParams({ DialStatus: "no-answer" }) })).status).toBe(403);
    const whisper = await plivoPost(whisperUrl, { CallUUID: "b-leg" });
    expect(await whisper.text()).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Speak>${SUMMARY}</Speak></Response>`);
    const ended = await plivoPost(actionUrl, { DialStatus: "completed", DialALegUUID: callUuid, DialBLegUUID: "b-leg", DialRingStatus: "true", DialHangupCause: "NORMAL_CLEARING" });
    expect(await ended.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    // Each is answered once.
    expect((await plivoPost(whisperUrl, { CallUUID: "b-leg" })).status).toBe(404);
    expect((await plivoPost(actionUrl, { DialStatus: "no-answer" })).status).toBe(404);
  }, 30_000);

  it("nobody answers: the action answers a <Stream> to a fresh ticket, and the caller is back in the same conversation, told so first", async () => {
    const { service, actionUrl, plivoPost, streamOf, restored } = await warmCall();
    service.enqueue({ say: "I'm sorry, nobody at desk could take your call just now.", audioMs: 200 });
    const back = await (await plivoPost(actionUrl, { DialStatus: "no-answer", DialALegUUID: callUuid, DialBLegUUID: "", DialRingStatus: "true" })).text();
    expect(back).toMatch(/<Stream bidirectional="true" keepCallAlive="true" contentType="audio\/x-mulaw;rate=8000"[^>]*>wss:\/\/gw\.example\.com\/telephony\/plivo\/[A-Za-z0-9_-]{24}\?agent=phone<\/Stream>/);
    const line = await FakeCarrier.dial({ url: streamOf(back), dialect: "plivo", callId: callUuid });
    closers.push(() => line.close());
    await expectBackWithTheAgent(line, service, restored);
  }, 30_000);
});

describe("a warm transfer on a Vonage call", () => {
  const publicUrl = "https://gw.example.com";
  const uuid = "63f61863-4a51-4f6b-86e1-46edebcf9356";
  const warmPhone = { destinations: [{ name: "desk", number: "+14155550199", mode: "warm" as const }, { name: "pbx", sip: "sip:desk@pbx.example.com", mode: "warm" as const }] };

  /** Vonage's signed-webhook JWT with this test's signature secret. */
  const vonageSigned = (body: string): string => vonageAuthorization("vonage-secret", body);

  async function vonageCall() {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closers.push(() => service.close());
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const api = await carrierRestFake({ vonagePublicKey: publicKey });
    closers.push(() => api.close());
    const env = { OPENAI_API_KEY: "test-key", VONAGE_SIGNATURE_SECRET: "vonage-secret", VONAGE_APPLICATION_ID: "app-1", VONAGE_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), SWITCHBOARD_PUBLIC_URL: publicUrl };
    const { restored, committed, events } = restoredLog();
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["vonage"], builtinTools: ["transfer_call"], transfer: warmPhone, events });
    const { base, ws } = await serve(def, { env, carrierClient: carrierClient({ env, vonageBaseUrl: api.url }) });
    const local = (url: string): string => `${base}${new URL(url).pathname}${new URL(url).search}`;
    /** A request signed as Vonage signs its webhooks: GET with the values in the query, POST with a JSON body. */
    const vonageGet = (url: string): Promise<Response> => fetch(local(url), { headers: { authorization: vonageSigned("") } });
    const vonagePost = (url: string, event: object): Promise<Response> => {
      const body = JSON.stringify(event);
      return fetch(local(url), { method: "POST", headers: { authorization: vonageSigned(body), "content-type": "application/json" }, body });
    };
    const streamOf = (ncco: unknown): string => ((ncco as { endpoint: { uri: string }[] }[])[0]?.endpoint[0]?.uri ?? "").replace(publicUrl.replace("https", "wss"), ws);

    const answer: unknown = await (await vonageGet(`${publicUrl}/telephony/vonage/voice?uuid=${uuid}&from=14155550100`)).json();
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const line = await FakeCarrier.dial({ url: streamOf(answer), dialect: "vonage" });
    closers.push(() => line.close());
    await line.until(() => line.audio.length > 0, "the greeting");
    return { service, api, base, line, vonageGet, vonagePost, streamOf, restored, committed };
  }

  async function warmCall() {
    const call = await vonageCall();
    const { service, api, line, committed } = call;
    askForTheDesk(service);
    const request = await api.next();
    // Asked of Vonage once the announcement has been heard — not when the greeting was (still playing as the caller spoke, it is
    // cut and not recorded; a slow machine may have played it whole first).
    expect(committed.at(-1)).toBe("Let me get someone from the desk for you.");
    expect(request).toMatchObject({ method: "PUT", path: `/v1/calls/${uuid}`, contentType: "application/json" });
    const body = JSON.parse(request.body) as { action: string; destination: { type: string; ncco: { eventUrl: string[]; endpoint: { onAnswer: { url: string } }[] }[] } };
    expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
    const connect = body.destination.ncco[0];
    return { ...call, body, whisperUrl: connect?.endpoint[0]?.onAnswer.url ?? "", eventUrl: connect?.eventUrl[0] ?? "" };
  }

  it("moves the caller to a synchronous connect whose onAnswer whispers the summary; states that decide nothing are acknowledged; the answer ends it", async () => {
    const { base, body, whisperUrl, eventUrl, vonageGet, vonagePost } = await warmCall();
    expect(body).toEqual({
      action: "transfer",
      destination: {
        type: "ncco",
        ncco: [
          {
            action: "connect",
            randomFromNumber: true,
            timeout: 20,
            eventType: "synchronous",
            eventUrl: [expect.stringMatching(/^https:\/\/gw\.example\.com\/telephony\/vonage\/dialed\/[A-Za-z0-9_-]{24}$/) as string],
            eventMethod: "POST",
            endpoint: [{ type: "phone", number: "14155550199", onAnswer: { url: expect.stringMatching(/^https:\/\/gw\.example\.com\/telephony\/vonage\/transfer\/[A-Za-z0-9_-]{24}$/) as string } }],
          },
        ],
      },
    });
    // Unsigned: refused.
    expect((await fetch(`${base}${new URL(whisperUrl).pathname}`)).status).toBe(403);
    const whisper = await vonageGet(whisperUrl);
    expect(whisper.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await whisper.json()).toEqual([{ action: "talk", text: SUMMARY }]);
    expect((await vonageGet(whisperUrl)).status).toBe(404);
    for (const status of ["started", "ringing"]) expect((await vonagePost(eventUrl, { status, uuid: "b-leg", direction: "outbound" })).status).toBe(204);
    expect((await vonagePost(eventUrl, { status: "answered", uuid: "b-leg", direction: "outbound" })).status).toBe(204);
    // Taken: a later failure report finds nothing to act on.
    expect((await vonagePost(eventUrl, { status: "completed", uuid: "b-leg" })).status).toBe(204);
    expect((await vonagePost(eventUrl, { status: "failed", uuid: "b-leg" })).status).toBe(404);
  }, 30_000);

  it("nobody answers: the event URL answers an NCCO that streams to a fresh ticket, and the caller is back in the same conversation, told so first", async () => {
    const { service, eventUrl, vonagePost, streamOf, restored } = await warmCall();
    service.enqueue({ say: "I'm sorry, nobody at desk could take your call just now.", audioMs: 200 });
    expect((await vonagePost(eventUrl, { status: "ringing", uuid: "b-leg" })).status).toBe(204);
    const back: unknown = await (await vonagePost(eventUrl, { status: "unanswered", uuid: "b-leg", direction: "outbound" })).json();
    expect(back).toEqual([{ action: "connect", endpoint: [{ type: "websocket", uri: expect.stringMatching(/^wss:\/\/gw\.example\.com\/telephony\/vonage\/[A-Za-z0-9_-]{24}\?agent=phone$/) as string, "content-type": "audio/l16;rate=16000", headers: {} }] }]);
    const line = await FakeCarrier.dial({ url: streamOf(back), dialect: "vonage" });
    closers.push(() => line.close());
    await expectBackWithTheAgent(line, service, restored);
  }, 30_000);

  it("a warm destination at a SIP address is refused to the model (Vonage whispers only to a phone), and nothing is sent", async () => {
    const { service, api, line } = await vonageCall();
    service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "pbx", summary: "Ann Lee." } } }, { say: "I can't put you through to that desk.", audioMs: 100 });
    void service.userSays("the pbx desk please");
    await line.until(() => service.messages.some((m) => m.message.type === "conversation.item.create" && JSON.stringify(m.message).includes("reads a summary only to a phone number")), "the refusal");
    expect(api.seen).toEqual([]);
  }, 30_000);
});
