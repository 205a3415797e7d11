import { generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { transferTarget, type TransferConfig } from "../../../../src/manifest/index.js";
import { carrierClient, type CallRef } from "../../../../src/server/telephony/carrier-client.js";
import { vonageJwt } from "../../../../src/server/telephony/rest/vonage.js";
import { dialTwiml, plivoDialXml, plivoWhisperXml, texmlConferenceWait, texmlWhisperConference, vonageConnectNcco, vonageWhisperNcco, whisperTwiml } from "../../../../src/server/telephony/transfer-instructions.js";
import { dialReport, TRANSFER_MODES, transferRefusal } from "../../../../src/server/telephony/transfers.js";
import { carrierRestFake, type CarrierRestFake } from "../../../helpers/carrier-rest-fake.js";

const ALLOWED: TransferConfig = {
  destinations: [
    { name: "sales", number: "+14155550123" },
    { name: "desk", sip: "sip:desk@pbx.example.com" },
  ],
};
const sales = transferTarget(ALLOWED, ALLOWED.destinations[0]!, undefined);
const desk = transferTarget(ALLOWED, ALLOWED.destinations[1]!, undefined);

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function api(options: Parameters<typeof carrierRestFake>[0]): Promise<CarrierRestFake> {
  const fake = await carrierRestFake(options);
  closers.push(() => fake.close());
  return fake;
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("transfer documents", () => {
  it("TwiML/TeXML dial a number or a SIP URI; warm adds the whisper and the outcome callback", () => {
    expect(dialTwiml(sales)).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>+14155550123</Number></Dial></Response>');
    expect(dialTwiml(desk)).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Sip>sip:desk@pbx.example.com</Sip></Dial></Response>');
    expect(dialTwiml(sales, { whisperUrl: "https://gw/w?a=1&b=2", actionUrl: "https://gw/a" })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="https://gw/a" method="POST" timeout="20"><Number url="https://gw/w?a=1&amp;b=2" method="POST">+14155550123</Number></Dial></Response>',
    );
    expect(whisperTwiml("Ann <Lee> & co")).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Say>Ann &lt;Lee&gt; &amp; co</Say></Response>');
  });

  it("Plivo dials digits without the + or a SIP user; Vonage connects a phone or a sip endpoint", () => {
    expect(plivoDialXml(sales)).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>14155550123</Number></Dial></Response>');
    expect(plivoDialXml(desk)).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial><User>sip:desk@pbx.example.com</User></Dial></Response>');
    expect(vonageConnectNcco(sales)).toEqual([{ action: "connect", randomFromNumber: true, endpoint: [{ type: "phone", number: "14155550123" }] }]);
    expect(vonageConnectNcco(desk)).toEqual([{ action: "connect", randomFromNumber: true, endpoint: [{ type: "sip", uri: "sip:desk@pbx.example.com" }] }]);
  });
});

describe("warm transfer documents (Plivo, Vonage)", () => {
  const warm = { whisperUrl: "https://gw/telephony/x/transfer/w?a=1&b=2", actionUrl: "https://gw/telephony/x/dialed/d" };
  const warmSales = transferTarget(ALLOWED, { ...ALLOWED.destinations[0]!, mode: "warm" }, "Ann Lee; order 1234.");
  const warmDesk = transferTarget(ALLOWED, { ...ALLOWED.destinations[1]!, mode: "warm" }, "Ann Lee; order 1234.");

  it("Plivo: <Dial action timeout confirmSound> (no confirmKey: no key press asked); the whisper is a <Speak>", () => {
    expect(plivoDialXml(warmSales, warm)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="https://gw/telephony/x/dialed/d" method="POST" timeout="20" confirmSound="https://gw/telephony/x/transfer/w?a=1&amp;b=2"><Number>14155550123</Number></Dial></Response>',
    );
    expect(plivoDialXml(warmDesk, warm)).toContain("<User>sip:desk@pbx.example.com</User>");
    expect(plivoWhisperXml("Ann <Lee> & co")).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Speak>Ann &lt;Lee&gt; &amp; co</Speak></Response>');
  });

  it("Vonage: a synchronous connect with the ring time, the outcome eventUrl and the phone endpoint's onAnswer whisper; a SIP endpoint has none", () => {
    expect(vonageConnectNcco(warmSales, warm)).toEqual([
      {
        action: "connect",
        randomFromNumber: true,
        timeout: 20,
        eventType: "synchronous",
        eventUrl: ["https://gw/telephony/x/dialed/d"],
        eventMethod: "POST",
        endpoint: [{ type: "phone", number: "14155550123", onAnswer: { url: "https://gw/telephony/x/transfer/w?a=1&b=2" } }],
      },
    ]);
    expect(() => vonageConnectNcco(warmDesk, warm)).toThrow(/only to a phone endpoint/);
    expect(vonageWhisperNcco("Ann Lee; order 1234.")).toEqual([{ action: "talk", text: "Ann Lee; order 1234." }]);
  });

  it("which carriers offer warm, and what Vonage refuses", () => {
    expect(TRANSFER_MODES).toEqual({ twilio: ["cold", "warm"], telnyx: ["cold", "warm"], plivo: ["cold", "warm"], vonage: ["cold", "warm"], exotel: [] });
    expect(transferRefusal("vonage", warmDesk)).toMatch(/A warm transfer to "desk" is not possible on this call: .*only to a phone number/);
    expect(transferRefusal("vonage", warmSales)).toBeUndefined();
    expect(transferRefusal("vonage", desk)).toBeUndefined();
    expect(transferRefusal("plivo", warmDesk)).toBeUndefined();
    expect(transferRefusal("telnyx", warmDesk)).toBeUndefined();
  });

  it("Telnyx warm: the caller waits muted in the room, which the person starts after the summary; either leaving ends it", () => {
    expect(texmlConferenceWait("room-1")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">room-1</Conference></Dial><Hangup/></Response>',
    );
    expect(texmlWhisperConference("Ann <Lee> & co", "room-1", "https://gw/d?a=1&b=2")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Ann &lt;Lee&gt; &amp; co</Say><Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false" statusCallback="https://gw/d?a=1&amp;b=2" statusCallbackEvent="join" statusCallbackMethod="POST">room-1</Conference></Dial></Response>',
    );
  });
});

describe("dialReport: what a carrier's report on a warm dial says", () => {
  it("Twilio DialCallStatus: completed/answered taken, anything else back", () => {
    expect(dialReport("twilio", "CallSid=CA1&DialCallStatus=completed")).toBe("taken");
    expect(dialReport("twilio", "DialCallStatus=answered")).toBe("taken");
    for (const status of ["busy", "no-answer", "failed", "canceled"]) expect(dialReport("twilio", `DialCallStatus=${status}`)).toBe("back");
    expect(dialReport("twilio", "")).toBe("back");
  });

  it("Plivo DialStatus: completed taken, busy/failed/timeout/no-answer back", () => {
    expect(dialReport("plivo", "DialStatus=completed&DialBLegUUID=b1")).toBe("taken");
    for (const status of ["busy", "failed", "timeout", "no-answer"]) expect(dialReport("plivo", `DialStatus=${status}&DialBLegUUID=`)).toBe("back");
  });

  it("Vonage status: answered taken, a failed state back, every other state (or a body that is not one) pending", () => {
    expect(dialReport("vonage", '{"status":"answered","uuid":"b1"}')).toBe("taken");
    for (const status of ["timeout", "unanswered", "busy", "rejected", "failed"]) expect(dialReport("vonage", JSON.stringify({ status }))).toBe("back");
    for (const body of ['{"status":"started"}', '{"status":"ringing"}', '{"status":"completed"}', "null", "[]", "{", "", '{"status":7}']) expect(dialReport("vonage", body)).toBe("pending");
  });

  it("Telnyx: the conference's participant-join taken; the person's call ended (any CallStatus of an end) back; anything else pending", () => {
    expect(dialReport("telnyx", "ConferenceSid=c1&CallSid=v3%3Ab&StatusCallbackEvent=participant-join")).toBe("taken");
    for (const status of ["completed", "busy", "no-answer", "failed", "canceled"]) expect(dialReport("telnyx", `CallSid=v3%3Ab&CallStatus=${status}`)).toBe("back");
    for (const body of ["CallStatus=ringing", "CallStatus=in-progress", "StatusCallbackEvent=participant-leave", "StatusCallbackEvent=conference-start", "", "{}"]) expect(dialReport("telnyx", body)).toBe("pending");
  });
});

describe("carrierClient.transfer", () => {
  it("Twilio: POST the Calls resource with Twiml, Basic auth with the account", async () => {
    const fake = await api({ basic: { user: "AC1", password: "tok" } });
    const client = carrierClient({ env: { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "tok" }, twilioBaseUrl: fake.url });
    const call: CallRef = { carrier: "twilio", callId: "CA42" };
    expect(client.canTransfer?.(call)).toBe(true);
    await client.transfer?.(call, { kind: "twiml", twiml: dialTwiml(sales) });
    const [request] = fake.seen;
    expect(request).toMatchObject({ method: "POST", path: "/2010-04-01/Accounts/AC1/Calls/CA42.json", authorization: basic("AC1", "tok"), contentType: "application/x-www-form-urlencoded" });
    expect(new URLSearchParams(request?.body).get("Twiml")).toBe(dialTwiml(sales));
    expect([...new URLSearchParams(request?.body).keys()]).toEqual(["Twiml"]);
  });

  it("Telnyx: TeXML's update-call endpoint under the webhook's AccountSid, with Texml, Bearer key", async () => {
    const fake = await api({ bearer: "KEY123" });
    const client = carrierClient({ env: { TELNYX_API_KEY: "KEY123" }, telnyxBaseUrl: fake.url });
    const call: CallRef = { carrier: "telnyx", callId: "v3:abc", accountId: "61bf923e-5e4d-4595-a110-56190ea18a1b" };
    expect(client.canTransfer?.(call)).toBe(true);
    expect(client.canTransfer?.({ carrier: "telnyx", callId: "v3:abc" })).toBe(false);
    await client.transfer?.(call, { kind: "texml", texml: dialTwiml(desk) });
    const [request] = fake.seen;
    expect(request).toMatchObject({
      method: "POST",
      path: "/v2/texml/Accounts/61bf923e-5e4d-4595-a110-56190ea18a1b/Calls/v3%3Aabc",
      authorization: "Bearer KEY123",
      contentType: "application/x-www-form-urlencoded",
    });
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ Texml: dialTwiml(desk) });
  });

  it("Telnyx: a warm transfer's call to the person under the caller's account, with its StatusCallback and ring time; refused without the TeXML application", async () => {
    const fake = await api({ bearer: "KEY123" });
    const env = { TELNYX_API_KEY: "KEY123", TELNYX_TEXML_APPLICATION_ID: "app-9" };
    const client = carrierClient({ env, telnyxBaseUrl: fake.url });
    expect(client.placingRefusal?.("telnyx", "acct-1")).toBeUndefined();
    expect(client.placingRefusal?.("telnyx")).toBe("set TELNYX_ACCOUNT_SID");
    expect(carrierClient({ env: { TELNYX_API_KEY: "KEY123" } }).placingRefusal?.("telnyx", "acct-1")).toBe("set TELNYX_TEXML_APPLICATION_ID");
    const order = { carrier: "telnyx" as const, to: "sip:desk@pbx.example.com", from: "+13125550100", url: "https://gw/telephony/telnyx/transfer/w", accountId: "acct-1" };
    await client.placeCall?.({ ...order, status: { callbackUrl: "https://gw/telephony/telnyx/dialed/d", timeoutS: 20 } });
    const [request] = fake.seen;
    expect(request).toMatchObject({ method: "POST", path: "/v2/texml/Accounts/acct-1/Calls", authorization: "Bearer KEY123", contentType: "application/json" });
    expect(JSON.parse(request?.body ?? "")).toEqual({
      ApplicationSid: "app-9",
      To: "sip:desk@pbx.example.com",
      From: "+13125550100",
      Url: "https://gw/telephony/telnyx/transfer/w",
      UrlMethod: "POST",
      StatusCallback: "https://gw/telephony/telnyx/dialed/d",
      StatusCallbackEvent: "completed",
      StatusCallbackMethod: "POST",
      Timeout: 20,
    });
  });

  it("Plivo: Transfer a call with legs=aleg and the aleg_url, Basic auth with the Auth ID", async () => {
    const fake = await api({ basic: { user: "MA1", password: "ptok" } });
    const client = carrierClient({ env: { PLIVO_AUTH_ID: "MA1", PLIVO_AUTH_TOKEN: "ptok" }, plivoBaseUrl: fake.url });
    const call: CallRef = { carrier: "plivo", callId: "55a1e0e2-3f2c-4f5b-9a0e-1c2d3e4f5a6b" };
    expect(client.canTransfer?.(call)).toBe(true);
    await client.transfer?.(call, { kind: "plivo", alegUrl: "https://gw.example.com/telephony/plivo/transfer/T" });
    const [request] = fake.seen;
    expect(request).toMatchObject({ method: "POST", path: "/v1/Account/MA1/Call/55a1e0e2-3f2c-4f5b-9a0e-1c2d3e4f5a6b/", authorization: basic("MA1", "ptok"), contentType: "application/json" });
    expect(JSON.parse(request?.body ?? "")).toEqual({ legs: "aleg", aleg_url: "https://gw.example.com/telephony/plivo/transfer/T", aleg_method: "POST" });
  });

  it("Vonage: PUT the call with action transfer and an inline NCCO, an RS256 application JWT", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const fake = await api({ vonagePublicKey: publicKey });
    // A key pasted into an env file on one line keeps "\n" escapes.
    const client = carrierClient({ env: { VONAGE_APPLICATION_ID: "app-1", VONAGE_PRIVATE_KEY: pem.replace(/\n/g, "\\n") }, vonageBaseUrl: fake.url, now: () => 1_800_000_000_000 });
    const call: CallRef = { carrier: "vonage", callId: "63f61863-4a51-4f6b-86e1-46edebcf9356" };
    expect(client.canTransfer?.(call)).toBe(true);
    await client.transfer?.(call, { kind: "ncco", ncco: vonageConnectNcco(sales) });
    const [request] = fake.seen;
    expect(request).toMatchObject({ method: "PUT", path: "/v1/calls/63f61863-4a51-4f6b-86e1-46edebcf9356", contentType: "application/json" });
    expect(JSON.parse(request?.body ?? "")).toEqual({ action: "transfer", destination: { type: "ncco", ncco: vonageConnectNcco(sales) } });
    const claims = JSON.parse(Buffer.from((request?.authorization ?? "").split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ application_id: "app-1", iat: 1_800_000_000, exp: 1_800_000_300 });
  });

  it("a JWT signed with another key is refused by the fake, as Vonage would", async () => {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const fake = await api({ vonagePublicKey: publicKey });
    const client = carrierClient({ env: { VONAGE_APPLICATION_ID: "app-1", VONAGE_PRIVATE_KEY: other.export({ type: "pkcs8", format: "pem" }).toString() }, vonageBaseUrl: fake.url });
    await expect(client.transfer?.({ carrier: "vonage", callId: "u1" }, { kind: "ncco", ncco: [] })).rejects.toThrow(/Vonage transfer answered 401/);
    expect(vonageJwt({ id: "a", key: other }, 0).split(".")).toHaveLength(3);
  });

  it("cannot transfer without credentials, nor on Exotel; a refusal names the carrier's answer", async () => {
    const client = carrierClient({ env: {} });
    for (const carrier of ["twilio", "telnyx", "plivo", "vonage", "exotel"] as const) expect(client.canTransfer?.({ carrier, callId: "x", accountId: "a" })).toBe(false);
    expect(() => carrierClient({ env: { VONAGE_APPLICATION_ID: "a", VONAGE_PRIVATE_KEY: "not a key" } })).toThrow(/VONAGE_PRIVATE_KEY is not a PEM private key/);
    const fake = await api({ basic: { user: "AC1", password: "right" } });
    const wrong = carrierClient({ env: { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "wrong" }, twilioBaseUrl: fake.url });
    await expect(wrong.transfer?.({ carrier: "twilio", callId: "CA1" }, { kind: "twiml", twiml: dialTwiml(sales) })).rejects.toThrow(/Twilio transfer answered 401: .*Authenticate/);
  });
});
