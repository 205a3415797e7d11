// The caller's number in the session (docs/telephony.md "The caller's number"): per carrier, the
// numbers a signed, verified voice webhook names reach the agent's `sessionContext` as `phone`
// through the call's ticket; a forged webhook mints nothing, a value that is no number is dropped
// (and logged), and nothing the carrier's stream or an unsigned webhook says is ever taken.
import { generateKeyPairSync } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, silentLogger, type Logger } from "../../src/log.js";
import { agent, type SessionInfo } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { twilioSignature } from "../../src/server/telephony/signatures.js";
import { FakeCarrier, type CarrierDialect } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { closeAfterEach } from "../helpers/cleanups.js";
import { answeredStreamUrl, plivoPost, telnyxPost, vonageAuthorization, vonagePost } from "../helpers/carrier-signing.js";

const closing = closeAfterEach();
const telnyxKeys = generateKeyPairSync("ed25519");
const SECRETS = {
  TWILIO_AUTH_TOKEN: "twilio-token",
  TELNYX_PUBLIC_KEY: telnyxKeys.publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64"),
  PLIVO_AUTH_TOKEN: "plivo-token",
  VONAGE_SIGNATURE_SECRET: "vonage-secret",
};

/** A gateway answering every carrier (signed with `env`), whose agent's `sessionContext` records what it is told. */
async function phoneGateway(env: Record<string, string>, logger: Logger = silentLogger): Promise<{ base: string; sessions: SessionInfo[] }> {
  const service = closing(await startFakeOpenAiRealtime());
  const sessions: SessionInfo[] = [];
  const def = agent({
    name: "desk",
    greeting: "Hello.",
    s2s: { kind: "openai-realtime", options: { url: service.url } },
    telephony: true,
    sessionContext: (info) => {
      sessions.push(info);
      return {};
    },
  });
  const gateway = createGateway({ agent: def, env: { OPENAI_API_KEY: "test-key", ...env }, logger, processMetrics: false });
  const { port } = await gateway.listen(0);
  closing(() => gateway.close());
  return { base: `http://127.0.0.1:${port}`, sessions };
}

/** Stream the call a webhook's answer names, as `dialect`, until its session has started: what `sessionContext` was told. */
async function streamed(answer: Response, dialect: CarrierDialect, sessions: SessionInfo[], callId: string, headers: (url: string) => Record<string, string> = () => ({})): Promise<SessionInfo | undefined> {
  expect(answer.status).toBe(200);
  const url = await answeredStreamUrl(answer);
  const before = sessions.length;
  const line = closing(await FakeCarrier.dial({ url, dialect, callId, headers: headers(url) }));
  await line.until(() => sessions.length > before, "the session");
  return sessions.at(-1);
}

const twilioPost = (url: string, params: Record<string, string>, token = SECRETS.TWILIO_AUTH_TOKEN): Promise<Response> =>
  fetch(url, { method: "POST", headers: { "x-twilio-signature": twilioSignature(token, url, Object.entries(params)) }, body: new URLSearchParams(params) });
const twilioUpgrade = (url: string): Record<string, string> => ({ "x-twilio-signature": twilioSignature(SECRETS.TWILIO_AUTH_TOKEN, url, []) });

describe("a phone session's numbers come from its carrier's signed voice webhook", () => {
  it("Twilio: From and To reach sessionContext as phone, inbound, with the CallSid", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await twilioPost(`${base}/telephony/twilio/voice`, { CallSid: "CA1", From: "+14155550123", To: "+14155550100", Direction: "inbound" });
    const info = await streamed(answer, "twilio", sessions, "CA1", twilioUpgrade);
    expect(info?.phone).toEqual({ carrier: "twilio", direction: "inbound", from: "+14155550123", to: "+14155550100", callId: "CA1" });
    expect(info?.outbound).toBeUndefined();
  }, 20_000);

  it("Twilio: a Voice SDK client and a SIP URI are kept as Twilio documents them", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await twilioPost(`${base}/telephony/twilio/voice`, { CallSid: "CA2", From: "client:alice_1", To: "sip:desk@pbx.example.com" });
    expect((await streamed(answer, "twilio", sessions, "CA2", twilioUpgrade))?.phone).toEqual({ carrier: "twilio", direction: "inbound", from: "client:alice_1", to: "sip:desk@pbx.example.com", callId: "CA2" });
  }, 20_000);

  it("Telnyx TeXML: From and To from the signed form body", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await telnyxPost(`${base}/telephony/telnyx/voice`, { CallSid: "v3:abc", AccountSid: "acc-1", From: "+13125550100", To: "+13125550199" }, telnyxKeys.privateKey);
    expect((await streamed(answer, "telnyx", sessions, "v3:abc"))?.phone).toEqual({ carrier: "telnyx", direction: "inbound", from: "+13125550100", to: "+13125550199", callId: "v3:abc" });
  }, 20_000);

  it("Telnyx: numbers in the URL's query (which its signature does not cover) are not taken", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await telnyxPost(`${base}/telephony/telnyx/voice?From=%2B19995550000`, { CallSid: "v3:q", To: "+13125550199" }, telnyxKeys.privateKey);
    expect((await streamed(answer, "telnyx", sessions, "v3:q"))?.phone).toEqual({ carrier: "telnyx", direction: "inbound", to: "+13125550199", callId: "v3:q" });
  }, 20_000);

  it("Plivo: its numbers without + (the country code and the number) become E.164", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await plivoPost(`${base}/telephony/plivo/voice`, SECRETS.PLIVO_AUTH_TOKEN, { CallUUID: "c0ffee00-0000-4000-8000-000000000001", From: "14155550123", To: "14155550100", Direction: "inbound" }, "41");
    expect((await streamed(answer, "plivo", sessions, "c0ffee00-0000-4000-8000-000000000001"))?.phone).toEqual({
      carrier: "plivo",
      direction: "inbound",
      from: "+14155550123",
      to: "+14155550100",
      callId: "c0ffee00-0000-4000-8000-000000000001",
    });
  }, 20_000);

  it("Vonage: from and to of the signed JSON body become E.164; a GET answer's query (unsigned) gives none", async () => {
    const { base, sessions } = await phoneGateway(SECRETS);
    const answer = await vonagePost(`${base}/telephony/vonage/voice`, SECRETS.VONAGE_SIGNATURE_SECRET, { uuid: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab", conversation_uuid: "CON-1", from: "447700900000", to: "442079460000" });
    expect((await streamed(answer, "vonage", sessions, "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"))?.phone).toEqual({
      carrier: "vonage",
      direction: "inbound",
      from: "+447700900000",
      to: "+442079460000",
      callId: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
    });
    // Vonage's JWT signs the body's hash, not the URL: a GET answer's numbers are not its signature's.
    const got = await fetch(`${base}/telephony/vonage/voice?uuid=u-2&from=447700900000&to=442079460000`, { headers: { authorization: vonageAuthorization(SECRETS.VONAGE_SIGNATURE_SECRET, "") } });
    expect((await streamed(got, "vonage", sessions, "u-2"))?.phone).toEqual({ carrier: "vonage", direction: "inbound", callId: "u-2" });
  }, 20_000);

  it("a value that is no number is dropped, and logged naming the field, never the value", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    const { base, sessions } = await phoneGateway(SECRETS, logger);
    const answer = await twilioPost(`${base}/telephony/twilio/voice`, { CallSid: "CA3", From: "<script>+1 (415) 555", To: `sip:${"a".repeat(300)}@example.com` });
    expect((await streamed(answer, "twilio", sessions, "CA3", twilioUpgrade))?.phone).toEqual({ carrier: "twilio", direction: "inbound", callId: "CA3" });
    const warned = lines.filter((line) => line.includes("was dropped"));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0] ?? "{}")).toMatchObject({ carrier: "twilio", fields: ["from", "to"] });
    expect(lines.join("")).not.toContain("script");
  }, 20_000);

  it("a forged webhook mints nothing; an open carrier's and Exotel's sessions have no phone, whatever their stream says", async () => {
    const signed = await phoneGateway(SECRETS);
    const forged = await twilioPost(`${signed.base}/telephony/twilio/voice`, { CallSid: "CA4", From: "+14155550123" }, "not-the-token");
    expect(forged.status).toBe(403);
    expect(await forged.text()).not.toContain("/telephony/twilio/");
    // Nothing signs these: the webhook's numbers and the stream's are a stranger's.
    const open = await phoneGateway({});
    for (const dialect of ["twilio", "exotel"] as const) {
      const answer = dialect === "twilio" ? await fetch(`${open.base}/telephony/twilio/voice`, { method: "POST", body: new URLSearchParams({ CallSid: "CA5", From: "+14155550123" }) }) : await fetch(`${open.base}/telephony/exotel/voice?CallFrom=04412345678`);
      const url = dialect === "twilio" ? await answeredStreamUrl(answer) : ((await answer.json()) as { url: string }).url;
      const before = open.sessions.length;
      const line = closing(await FakeCarrier.dial({ url, dialect, callId: "CA5", customParameters: { From: "+14155550123" } }));
      await line.until(() => open.sessions.length > before, "the session");
      expect(open.sessions.at(-1)?.phone).toBeUndefined();
    }
    expect(signed.sessions).toEqual([]);
  }, 20_000);
});
