import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { encodeMulaw } from "../../src/audio/g711.js";
import { Resampler } from "../../src/audio/resample.js";
import { readWav } from "../../src/audio/wav.js";
import { createLogger, silentLogger } from "../../src/log.js";
import { agent, type AgentDef } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway, GatewayOptions } from "../../src/server/gateway-types.js";
import { twilioSignature } from "../../src/server/telephony/signatures.js";
import { answerTwilio, FakeCarrier } from "../../fakes/carrier.js";
import type { CallRef } from "../../src/server/telephony/carrier-client.js";
import type { FakeCartesia } from "../../fakes/cartesia.js";
import type { FakeDeepgram } from "../../fakes/deepgram.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import type { FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startPipelineFakes } from "../helpers/pipeline-fakes.js";
import { closeAfterEach } from "../helpers/cleanups.js";

const closing = closeAfterEach();

async function gatewayFor(def: AgentDef, options: Partial<Omit<GatewayOptions, "agent">> = {}): Promise<{ gateway: Gateway; base: string; ws: string }> {
  const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, ...options });
  const { port } = await gateway.listen(0);
  closing(() => gateway.close());
  return { gateway, base: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}` };
}

async function dial(url: string, options: Omit<Parameters<typeof FakeCarrier.dial>[0], "url"> = {}): Promise<FakeCarrier> {
  const carrier = await FakeCarrier.dial({ url, ...options });
  closing(() => carrier.close());
  return carrier;
}

/** The caller's voice: the flite fixture (16 kHz PCM16) as 8 kHz μ-law, as a phone line carries it. */
function callerVoice(): Buffer {
  const wav = readWav(new Uint8Array(readFileSync(new URL("../../fixtures/audio/order-status.wav", import.meta.url))));
  const down = new Resampler(16000, 8000);
  return Buffer.from(encodeMulaw(Int16Array.from([...down.process(wav.samples), ...down.flush()])));
}

describe("a phone call to a pipeline agent (Twilio μ-law ↔ 16 kHz STT, 8 kHz TTS)", () => {
  let llm: FakeOpenAiServer;
  let stt: FakeDeepgram;
  let tts: FakeCartesia;

  async function pipelineGateway(extra: Record<string, unknown> = {}): Promise<string> {
    const fakes = await startPipelineFakes();
    ({ llm, stt, tts } = fakes);
    closing(() => fakes.close());
    const def = agent({ name: "phone", greeting: "Thanks for calling the shop.", ...fakes.providers, telephony: true, ...extra });
    const { ws } = await gatewayFor(def, { env: fakes.env });
    return ws;
  }

  it("decodes the caller to 16 kHz for the STT, speaks μ-law at 8 kHz, and holds the reply until the carrier played it", async () => {
    const ws = await pipelineGateway();
    const carrier = await dial(`${ws}/telephony/twilio`, { playbackDelayMs: 400 });
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0 && carrier.audio.length > 0, "the greeting played");
    // The TTS is asked for the line's 8 kHz, so the edge only encodes it (no resample).
    expect(tts.messages.map((m) => m.output_format).find((f) => f !== undefined)).toMatchObject({ sample_rate: 8000 });
    // "Thanks for calling the shop." at 20 ms a character: one μ-law byte per 1/8 ms.
    const greetingMs = carrier.audioBytes().byteLength / 8;
    expect(greetingMs).toBeGreaterThan(28 * 20 - 60);
    expect(greetingMs).toBeLessThanOrEqual(28 * 20 + 20);
    expect(carrier.unstamped).toEqual([]);

    carrier.say(callerVoice().subarray(0, 8000));
    await carrier.said();
    // Each 20 ms μ-law frame (160 bytes) reaches the STT as 20 ms of 16 kHz PCM16 (640 bytes).
    expect(stt.audioBytes).toBeGreaterThan(50 * 640 * 0.9);

    llm.enqueue({ text: "Your order shipped on Friday and arrives on Tuesday." });
    const before = carrier.audio.length;
    stt.final("where is my order", { speechFinal: true });
    await carrier.until(() => carrier.audio.length > before, "the reply's audio");
    await carrier.until(() => carrier.bufferedMs === 0 && carrier.marksEchoed.length >= carrier.marksReceived.length, "the reply played", 15_000);
    expect(llm.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: "user", content: "where is my order" });
    expect(llm.violations).toEqual([]);
  }, 30_000);

  it("a barge-in sends clear and the caller's keypad digits reach the model as a typed turn", async () => {
    const ws = await pipelineGateway();
    const carrier = await dial(`${ws}/telephony/twilio`, { playbackDelayMs: 200 });
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0, "the greeting played");

    llm.enqueue({ text: "Your order shipped on Friday, it is on the truck now, and it should reach you by Tuesday afternoon at the latest." });
    stt.final("where is my order", { speechFinal: true });
    await carrier.until(() => carrier.playedMs > 1200, "part of the reply played", 15_000);
    stt.speechStarted();
    stt.partial("wait");
    carrier.say(callerVoice().subarray(0, 4000));
    stt.final("wait a moment", { speechFinal: true });
    await carrier.until(() => carrier.clears > 0, "clear");
    llm.enqueue({ text: "Sure." });
    await sleep(200);

    llm.enqueue({ text: "Thanks, I have your PIN." });
    for (const digit of ["1", "2", "3", "4"]) carrier.dtmf(digit);
    await carrier.until(() => llm.requests.some((r) => r.messages.some((m) => m.role === "user" && m.content === "The caller pressed 1234")), "the DTMF turn");
    expect(llm.violations).toEqual([]);
  }, 30_000);

  it("ends the call with a spoken notice at maxCallDurationMs, after the notice played", async () => {
    const ws = await pipelineGateway({ maxCallDurationMs: 1500 });
    const carrier = await dial(`${ws}/telephony/twilio`);
    const closed = await carrier.closed;
    expect(closed.code).toBe(1000);
    // The greeting, then the notice: both heard before the stream closed.
    expect(JSON.stringify(tts.messages)).toMatch(/time limit for this call/);
    expect(carrier.bufferedMs).toBe(0);
  }, 30_000);
});

describe("telephony endpoints", () => {
  const s2sAgent = (service: FakeOpenAiRealtime, telephony: true | readonly string[] = true): AgentDef =>
    agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony });

  async function realtime(): Promise<FakeOpenAiRealtime> {
    const service = await startFakeOpenAiRealtime();
    closing(() => service.close());
    return service;
  }

  it("answers each carrier's voice webhook with its call instructions pointing at the stream", async () => {
    const { base } = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key" } });
    const host = base.replace("http://", "");
    const twiml = await (await fetch(`${base}/telephony/twilio/voice`, { method: "POST", body: new URLSearchParams({ CallSid: "CA1" }) })).text();
    expect(twiml).toContain(`<Connect><Stream url="ws://${host}/telephony/twilio"><Parameter name="agent" value="phone"/></Stream></Connect>`);
    const texml = await (await fetch(`${base}/telephony/telnyx/voice`, { method: "POST", body: "" })).text();
    expect(texml).toContain(`<Stream url="ws://${host}/telephony/telnyx?agent=phone"`);
    expect(await (await fetch(`${base}/telephony/plivo/voice`)).text()).toContain(`>ws://${host}/telephony/plivo?agent=phone</Stream>`);
    expect(await (await fetch(`${base}/telephony/vonage/voice`)).json()).toMatchObject([{ action: "connect", endpoint: [{ type: "websocket", uri: `ws://${host}/telephony/vonage?agent=phone` }] }]);
    expect(await (await fetch(`${base}/telephony/exotel/voice`)).json()).toEqual({ url: `ws://${host}/telephony/exotel?sample-rate=8000&agent=phone` });
    // Behind a TLS proxy the instructions say wss://.
    const proxied = await (await fetch(`${base}/telephony/twilio/voice`, { method: "POST", headers: { "x-forwarded-proto": "https", "x-forwarded-host": "gw.example.com" }, body: "" })).text();
    expect(proxied).toContain('<Stream url="wss://gw.example.com/telephony/twilio">');
    expect((await fetch(`${base}/telephony/twilio/voice`)).status).toBe(405);
  });

  it("mounts only the carriers the agent's telephony field names (404 naming the fix otherwise)", async () => {
    const { base, ws } = await gatewayFor(s2sAgent(await realtime(), ["twilio"]), { env: { OPENAI_API_KEY: "test-key" } });
    const refused = await fetch(`${base}/telephony/telnyx/voice`, { method: "POST", body: "" });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toMatch(/add it to the agent's telephony field/);
    await expect(FakeCarrier.dial({ url: `${ws}/telephony/telnyx`, dialect: "telnyx" })).rejects.toThrow(/404/);
  });

  it("an agent that takes no calls answers the telephony paths the same (what answers carriers loads on the first such request)", async () => {
    const { base, ws } = await gatewayFor(agent({ name: "desk", text: true, greeting: "", llm: { kind: "scripted", options: {} } }));
    const [first, second] = await Promise.all([fetch(`${base}/telephony/twilio/voice`, { method: "POST", body: "" }), fetch(`${base}/telephony/vonage/voice`)]);
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(await first.text()).toBe("carrier twilio is not enabled for agent desk: add it to the agent's telephony field\n");
    expect(await second.text()).toMatch(/carrier vonage is not enabled/);
    await expect(FakeCarrier.dial({ url: `${ws}/telephony/twilio` })).rejects.toThrow(/404/);
  });

  it("validates X-Twilio-Signature on the webhook and the stream upgrade, refusing bad ones with 403 and logging no secret", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    const token = "twilio-auth-token-0123456789";
    const { base, ws } = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: token }, logger });
    const body = new URLSearchParams({ CallSid: "CA1", From: "+15550100" });
    const url = `${base}/telephony/twilio/voice`;
    const bad = await fetch(url, { method: "POST", headers: { "x-twilio-signature": "AAAA" }, body });
    expect(bad.status).toBe(403);
    const good = await fetch(url, { method: "POST", headers: { "x-twilio-signature": twilioSignature(token, url, [...body.entries()]) }, body });
    expect(good.status).toBe(200);
    // The stream URL carries the single-use ticket minted for CA1 in its path (Twilio takes no query string).
    const streamUrl = /<Stream url="([^"]+)"/.exec(await good.text())?.[1] ?? "";
    expect(streamUrl).toMatch(new RegExp(`^${ws}/telephony/twilio/[A-Za-z0-9_-]{24}$`));

    await expect(FakeCarrier.dial({ url: streamUrl, headers: { "x-twilio-signature": "AAAA" } })).rejects.toThrow(/403/);
    const carrier = await dial(streamUrl, { headers: { "x-twilio-signature": twilioSignature(token, streamUrl, []) }, callId: "CA1" });
    await carrier.until(() => carrier.audio.length > 0, "the greeting");
    expect(lines.join("")).toContain("telephony webhook refused");
    expect(lines.join("")).not.toContain(token);
  }, 20_000);

  it("a signed carrier's stream is refused at the upgrade without the ticket its webhook minted; a ticket opens one stream, once", async () => {
    const token = "twilio-auth-token-0123456789";
    const { base, ws } = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: token } });
    const signed = (url: string): Record<string, string> => ({ "x-twilio-signature": twilioSignature(token, url, []) });
    // No ticket: refused before any frame (the old path accepted the upgrade and let `start` name any call).
    await expect(FakeCarrier.dial({ url: `${ws}/telephony/twilio`, headers: signed(`${ws}/telephony/twilio`) })).rejects.toThrow(/401/);
    const forged = `${ws}/telephony/twilio/${"A".repeat(24)}`;
    await expect(FakeCarrier.dial({ url: forged, headers: signed(forged) })).rejects.toThrow(/403/);
    const answered = await answerTwilio(base, token, "CA7");
    const caller = await dial(answered.url, { headers: answered.headers, callId: "CA7" });
    await caller.until(() => caller.audio.length > 0, "the greeting");
    // The same signed upgrade again (a replay): the ticket was used.
    await expect(FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: "CA7" })).rejects.toThrow(/403/);
  }, 20_000);

  it("refuses a replayed signed webhook: the second copy mints nothing", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
    const env = { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: "twilio-token", TELNYX_PUBLIC_KEY: raw, PLIVO_AUTH_TOKEN: "plivo-token", VONAGE_SIGNATURE_SECRET: "vonage-secret", SWITCHBOARD_PUBLIC_URL: "https://gw.example.com" };
    const { base } = await gatewayFor(s2sAgent(await realtime()), { env });
    const twice = async (send: () => Promise<Response>): Promise<number[]> => [(await send()).status, (await send()).status];
    // Twilio: the signature never changes for the same request, and signs no time.
    const twilioBody = new URLSearchParams({ CallSid: "CA9" });
    const twilioUrl = "https://gw.example.com/telephony/twilio/voice";
    const twilioSig = twilioSignature("twilio-token", twilioUrl, [...twilioBody.entries()]);
    expect(await twice(() => fetch(`${base}/telephony/twilio/voice`, { method: "POST", headers: { "x-twilio-signature": twilioSig }, body: twilioBody }))).toEqual([200, 403]);
    // Telnyx: within its ±300 s window.
    const telnyxBody = "CallSid=v3%3Aabc";
    const timestamp = String(Math.floor(Date.now() / 1000));
    const telnyxSig = sign(null, Buffer.from(`${timestamp}|${telnyxBody}`), privateKey).toString("base64");
    expect(await twice(() => fetch(`${base}/telephony/telnyx/voice`, { method: "POST", headers: { "telnyx-signature-ed25519": telnyxSig, "telnyx-timestamp": timestamp }, body: telnyxBody }))).toEqual([200, 403]);
    // Plivo: the same nonce again.
    const plivoSig = createHmac("sha256", "plivo-token").update("https://gw.example.com/telephony/plivo/voice?CallUUIDabc.42").digest("base64");
    const plivoHeaders = { "x-plivo-signature-v3": plivoSig, "x-plivo-signature-v3-nonce": "42", "content-type": "application/x-www-form-urlencoded" };
    expect(await twice(() => fetch(`${base}/telephony/plivo/voice`, { method: "POST", headers: plivoHeaders, body: "CallUUID=abc" }))).toEqual([200, 403]);
    // Vonage: the same JWT again.
    const head = `${Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify({ iat: Math.floor(Date.now() / 1000), jti: "1" })).toString("base64url")}`;
    const jwt = `${head}.${createHmac("sha256", "vonage-secret").update(head).digest("base64url")}`;
    expect(await twice(() => fetch(`${base}/telephony/vonage/voice?uuid=u1`, { headers: { authorization: `Bearer ${jwt}` } }))).toEqual([200, 403]);
  });

  it("validates Telnyx's Ed25519 signature on the webhook", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
    const { base } = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key", TELNYX_PUBLIC_KEY: raw } });
    const body = "CallSid=v3%3Aabc&From=%2B13125550100";
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");
    const post = (sig: string, ts: string): Promise<Response> =>
      fetch(`${base}/telephony/telnyx/voice`, { method: "POST", headers: { "telnyx-signature-ed25519": sig, "telnyx-timestamp": ts }, body });
    expect((await post(signature, timestamp)).status).toBe(200);
    expect((await post(signature, String(Number(timestamp) - 600))).status).toBe(403);
    expect((await post(Buffer.alloc(64).toString("base64"), timestamp)).status).toBe(403);
  });

  it("validates Plivo's X-Plivo-Signature-V3 and Vonage's signed-webhook JWT on the webhook", async () => {
    const env = { OPENAI_API_KEY: "test-key", PLIVO_AUTH_TOKEN: "plivo-token", VONAGE_SIGNATURE_SECRET: "vonage-secret", SWITCHBOARD_PUBLIC_URL: "https://gw.example.com" };
    const { base } = await gatewayFor(s2sAgent(await realtime()), { env });
    const body = "CallUUID=abc&From=14155550100";
    const nonce = "1234567890";
    const plivoSig = createHmac("sha256", "plivo-token").update(`https://gw.example.com/telephony/plivo/voice?CallUUIDabcFrom14155550100.${nonce}`).digest("base64");
    const plivo = (sig: string): Promise<Response> =>
      fetch(`${base}/telephony/plivo/voice`, { method: "POST", headers: { "x-plivo-signature-v3": sig, "x-plivo-signature-v3-nonce": nonce, "content-type": "application/x-www-form-urlencoded" }, body });
    expect((await plivo(plivoSig)).status).toBe(200);
    const forged = await plivo(createHmac("sha256", "guess").update("x").digest("base64"));
    expect(forged.status).toBe(403);
    expect(await forged.text()).toMatch(/PLIVO_AUTH_TOKEN/);
    const head = `${Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify({ iat: Math.floor(Date.now() / 1000) })).toString("base64url")}`;
    const token = `${head}.${createHmac("sha256", "vonage-secret").update(head).digest("base64url")}`;
    expect((await fetch(`${base}/telephony/vonage/voice?from=14155550100`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${base}/telephony/vonage/voice?from=14155550100`)).status).toBe(403);
  });

  it("with auth on, no unauthenticated path mints a token that opens a session (Exotel's answer URL did)", async () => {
    const env = { OPENAI_API_KEY: "test-key", EXOTEL_API_KEY: "exo-key", EXOTEL_API_TOKEN: "exo-token", TWILIO_AUTH_TOKEN: "twilio-token" };
    const { base, ws } = await gatewayFor(s2sAgent(await realtime()), { env, apiKey: "gateway-key" });
    const answer = (await (await fetch(`${base}/telephony/exotel/voice?CallSid=x`)).json()) as { url: string };
    const url = new URL(answer.url);
    expect(url.pathname).toBe("/telephony/exotel");
    expect([...url.searchParams.keys()].sort()).toEqual(["agent", "sample-rate"]);
    // What a signed webhook mints is a call ticket for its carrier's stream, never a /websocket token.
    const ticket = (await answerTwilio(base, "twilio-token", "CA1")).url.split("/").at(-1) ?? "";
    for (const token of [ticket, answer.url]) {
      const client = new WebSocket(`${ws}/websocket?token=${encodeURIComponent(token)}`);
      const closed = await new Promise<number>((resolve) => client.once("close", (code) => resolve(code)));
      expect(closed).toBe(1008);
    }
    // Exotel's stream needs its Basic auth.
    await expect(FakeCarrier.dial({ url: `${ws}/telephony/exotel` })).rejects.toThrow(/401/);
  }, 20_000);

  it("with auth on, a carrier nothing authenticates is refused at its webhook and its stream, unless SWITCHBOARD_OPEN_CARRIERS names it", async () => {
    const { base, ws, gateway } = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key" }, apiKey: "gateway-key" });
    const refused = await fetch(`${base}/telephony/twilio/voice`, { method: "POST", body: "CallSid=CA1" });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/set TWILIO_AUTH_TOKEN/);
    await expect(FakeCarrier.dial({ url: `${ws}/telephony/twilio` })).rejects.toThrow(/403/);
    expect(gateway.entryPoints).toContainEqual(expect.objectContaining({ auth: expect.stringMatching(/refused \(auth is on\): set TWILIO_AUTH_TOKEN/) }));

    const open = await gatewayFor(s2sAgent(await realtime()), { env: { OPENAI_API_KEY: "test-key", SWITCHBOARD_OPEN_CARRIERS: "twilio" }, apiKey: "gateway-key" });
    expect((await fetch(`${open.base}/telephony/twilio/voice`, { method: "POST", body: "" })).status).toBe(200);
    const caller = await dial(`${open.ws}/telephony/twilio`);
    await caller.until(() => caller.audio.length > 0, "the greeting");
    expect(open.gateway.entryPoints.filter((e) => e.open).map((e) => e.entry)).toEqual(expect.arrayContaining(["/telephony/twilio/voice", "WS /telephony/twilio"]));
  }, 20_000);
});

describe("one address's budget covers every entry point", () => {
  it("with 5 connections a minute, 5 of 20 Vonage streams from one address start and the webhook counts against the same budget", async () => {
    const service = await startFakeOpenAiRealtime();
    closing(() => service.close());
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["vonage"] });
    const { base, ws } = await gatewayFor(def, { env: { OPENAI_API_KEY: "test-key" }, connectionsPerMinute: 5 });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        FakeCarrier.dial({ url: `${ws}/telephony/vonage`, autoStart: false }).then(
          (carrier) => (closing(() => carrier.close()), "open"),
          (err: Error) => err.message,
        ),
      ),
    );
    expect(outcomes.filter((o) => o === "open")).toHaveLength(5);
    expect(outcomes.filter((o) => /429/.test(o))).toHaveLength(15);
    const webhook = await fetch(`${base}/telephony/vonage/voice`);
    expect(webhook.status).toBe(429);
    expect(webhook.headers.get("retry-after")).toBe("60");
    expect(await webhook.json()).toEqual({ error: "more than 5 connections a minute from this address; retry later" });
    expect((await fetch(`${base}/health`)).status).toBe(200);
  }, 20_000);
});

describe("the REST API acts only on calls the gateway answered", () => {
  const hangUpAgent = (service: FakeOpenAiRealtime): AgentDef =>
    agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: true, builtinTools: ["end_call"] });

  async function withHangUps(env: Record<string, string>): Promise<{ base: string; ws: string; service: FakeOpenAiRealtime; hangUps: CallRef[] }> {
    const service = await startFakeOpenAiRealtime({ paceMs: 5 });
    closing(() => service.close());
    const hangUps: CallRef[] = [];
    const carrierClient = { hangUp: (call: CallRef) => (hangUps.push(call), Promise.resolve()) };
    const { base, ws } = await gatewayFor(hangUpAgent(service), { env: { OPENAI_API_KEY: "test-key", ...env }, carrierClient });
    return { base, ws, service, hangUps };
  }

  it("a forged stream naming someone else's call, ended by the gateway, hangs nothing up (the operator's key was used for any call id)", async () => {
    // Telnyx with its API key but no public key: nothing verifies which calls are ours.
    const { ws, service, hangUps } = await withHangUps({ TELNYX_API_KEY: "telnyx-key" });
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const forged = await dial(`${ws}/telephony/telnyx`, { dialect: "telnyx", callId: "v3:someone-elses-call" });
    await forged.until(() => forged.audio.length > 0, "the greeting");
    service.enqueue({ toolCall: { name: "end_call", args: {} } }, { say: "Goodbye.", audioMs: 100 });
    void service.userSays("bye");
    expect((await forged.closed).code).toBe(1000);
    await sleep(50);
    expect(hangUps).toEqual([]);
  }, 20_000);

  it("hangs up the call its verified webhook named, and refuses a stream whose start names another call, hanging nothing up", async () => {
    const { base, service, hangUps } = await withHangUps({ TWILIO_AUTH_TOKEN: "twilio-token", TWILIO_ACCOUNT_SID: "AC1" });
    const other = await answerTwilio(base, "twilio-token", "CA-answered");
    const mismatched = await dial(other.url, { headers: other.headers, callId: "CA-someone-else" });
    expect((await mismatched.closed).code).toBe(1008);
    await sleep(50);
    expect(hangUps).toEqual([]);

    service.enqueue({ say: "Hello.", audioMs: 100 });
    const answered = await answerTwilio(base, "twilio-token", "CA-ours");
    const caller = await dial(answered.url, { headers: answered.headers, callId: "CA-ours" });
    await caller.until(() => caller.audio.length > 0, "the greeting");
    service.enqueue({ toolCall: { name: "end_call", args: {} } }, { say: "Goodbye.", audioMs: 100 });
    void service.userSays("bye");
    expect((await caller.closed).code).toBe(1000);
    await caller.until(() => hangUps.length > 0, "the hang-up");
    expect(hangUps).toEqual([{ carrier: "twilio", callId: "CA-ours" }]);
  }, 20_000);
});

describe("a Vonage call (binary L16 at 16 kHz)", () => {
  it("hears 640-byte caller frames and speaks exactly 640-byte frames; DTMF arrives as text frames", async () => {
    const service = await startFakeOpenAiRealtime();
    closing(() => service.close());
    service.enqueue({ say: "Hello.", audioMs: 300 });
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["vonage"] });
    const { ws } = await gatewayFor(def, { env: { OPENAI_API_KEY: "test-key" } });
    const socket = new WebSocket(`${ws}/telephony/vonage`);
    closing(() => socket.terminate());
    const frames: number[] = [];
    socket.on("message", (data, isBinary) => {
      if (isBinary) frames.push((data as Buffer).byteLength);
    });
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ event: "websocket:connected", "content-type": "audio/l16;rate=16000" }));
    const timer = setInterval(() => socket.send(Buffer.alloc(640), { binary: true }), 20);
    closing(() => clearInterval(timer));
    const deadline = Date.now() + 10_000;
    while (frames.length < 15 && Date.now() < deadline) await sleep(20);
    // 300 ms of 24 kHz PCM → 16 kHz: 15 frames of 20 ms, the last padded.
    expect(frames).toEqual(Array(15).fill(640));
    // The gateway opened the service with PCM16 (Vonage sends L16, so no passthrough) and heard the caller.
    const update = service.messages.find((m) => m.message.type === "session.update")?.message.session as { audio: { input: { format: unknown } } };
    expect(update.audio.input.format).toEqual({ type: "audio/pcm", rate: 24000 });
    await sleep(200);
    expect(service.connections[0]!.audioIn().byteLength).toBeGreaterThan(0);
    socket.send(JSON.stringify({ event: "websocket:dtmf", digit: "9", duration: 260 }));
    socket.send(JSON.stringify({ event: "websocket:dtmf", digit: "#", duration: 260 }));
    const until = Date.now() + 5000;
    while (!service.messages.some((m) => m.message.type === "conversation.item.create") && Date.now() < until) await sleep(20);
    const item = service.messages.find((m) => m.message.type === "conversation.item.create")?.message.item as { content: { text: string }[] };
    expect(item.content[0]?.text).toBe("The caller pressed 9");
  }, 20_000);
});
