import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { answerTwilio, FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { connect } from "../helpers/ws-client.js";

const API_KEY = "sk-gateway-SECRET-0001";
const OPENAI_KEY = "sk-openai-SECRET-0002";
const TWILIO_TOKEN = "twilio-SECRET-0003";
const PLIVO_TOKEN = "plivo-SECRET-0004";
const VONAGE_SECRET = "vonage-SECRET-0005";

let service: FakeOpenAiRealtime | undefined;
let gateway: Gateway | undefined;
let carrier: FakeCarrier | undefined;
afterEach(async () => {
  carrier?.close();
  await gateway?.close();
  await service?.close();
});

describe("logs", () => {
  it("never contain a key, a token or a signature secret, through a whole session and a phone call at debug level", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    service = await startFakeOpenAiRealtime({ apiKey: OPENAI_KEY });
    const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["twilio", "plivo", "vonage"] });
    const env = { OPENAI_API_KEY: OPENAI_KEY, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, PLIVO_AUTH_TOKEN: PLIVO_TOKEN, VONAGE_SIGNATURE_SECRET: VONAGE_SECRET };
    gateway = createGateway({ agent: def, logger, processMetrics: false, apiKey: API_KEY, env });
    const { port } = await gateway.listen(0);
    const base = `http://127.0.0.1:${port}`;

    // A browser session with a minted token (and one refused with a wrong key).
    expect((await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: "Bearer wrong-key" } })).status).toBe(401);
    const minted = (await (await fetch(`${base}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}` } })).json()) as { token: string };
    service.enqueue({ say: "Hello.", audioMs: 100 });
    const client = await connect(`ws://127.0.0.1:${port}/websocket?token=${minted.token}`);
    await client.next("reply.completed", 0);
    await service.userSays("what time is it");
    client.close();
    await client.closed;

    // A phone call: signed webhook, then the signed stream with the call ticket the webhook minted.
    const answered = await answerTwilio(base, TWILIO_TOKEN, "CA1");
    const callToken = answered.url.split("/").at(-1) ?? "";
    expect(callToken).toMatch(/^[A-Za-z0-9_-]{24}$/);
    service.enqueue({ say: "Hello.", audioMs: 100 });
    carrier = await FakeCarrier.dial({ url: answered.url, headers: answered.headers, callId: "CA1" });
    await carrier.until(() => carrier!.audio.length > 0, "the greeting");
    carrier.hangUp();
    await carrier.closed;
    await new Promise((r) => setTimeout(r, 100));

    // Forged Plivo and Vonage webhooks: refused and logged, without the secrets they were checked with.
    expect((await fetch(`${base}/telephony/plivo/voice`, { method: "POST", headers: { "x-plivo-signature-v3": "forged", "x-plivo-signature-v3-nonce": "1" }, body: "CallUUID=x" })).status).toBe(403);
    expect((await fetch(`${base}/telephony/vonage/voice`, { headers: { authorization: "Bearer a.b.c" } })).status).toBe(403);

    const log = lines.join("");
    expect(lines.length).toBeGreaterThan(10);
    expect(log).toContain("telephony webhook refused");
    for (const secret of [API_KEY, OPENAI_KEY, TWILIO_TOKEN, PLIVO_TOKEN, VONAGE_SECRET, minted.token, callToken]) expect(log, secret.slice(0, 12)).not.toContain(secret);
  }, 30_000);
});
