// A warm transfer on a Telnyx TeXML call (docs/telephony.md "Transfer"), end to end against a
// loopback fake of Telnyx's REST API that checks the requests as Telnyx documents them: once the
// announcement has been heard, the caller's call is updated into a conference room of its own, and
// the person's call is placed through TeXML's outbound-call API, its `Url` the whisper (the summary,
// then the room) and its `StatusCallback` the outcome. Every callback is signed as Telnyx signs its
// webhooks (Ed25519) and answered once; the person joining takes the call, the call ending first
// brings the caller back to the same session through the update-call endpoint.
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { carrierClient } from "../../src/server/telephony/carrier-client.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { carrierRestFake, type SeenRequest } from "../helpers/carrier-rest-fake.js";
import { askForTheDesk, expectBackWithTheAgent, restoredLog, SUMMARY, telnyxSigner } from "../helpers/warm-transfer.js";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const publicUrl = "https://gw.example.com";
const account = "61bf923e-5e4d-4595-a110-56190ea18a1b";
const transfer = { destinations: [{ name: "desk", sip: "sip:desk@pbx.example.com", mode: "warm" as const }] };
const TICKETED = "[A-Za-z0-9_-]{24}";
const texmlOf = (request: SeenRequest | undefined): string => new URLSearchParams(request?.body).get("Texml") ?? "";

/** A call the gateway answered; `to`: the webhook's `To` (our number), absent when empty; `refusing`: what the REST fake refuses. */
async function telnyxCall(options: { env?: Record<string, string>; refusing?: Parameters<typeof carrierRestFake>[0]; to?: string } = {}) {
  const { env = { TELNYX_TEXML_APPLICATION_ID: "app-9" }, refusing = {}, to = "+13125550199" } = options;
  const service = await startFakeOpenAiRealtime({ paceMs: 5 });
  closers.push(() => service.close());
  const api = await carrierRestFake({ bearer: "telnyx-key", ...refusing });
  closers.push(() => api.close());
  const telnyx = telnyxSigner();
  const allEnv = { OPENAI_API_KEY: "test-key", TELNYX_PUBLIC_KEY: telnyx.publicKey, TELNYX_API_KEY: "telnyx-key", SWITCHBOARD_PUBLIC_URL: publicUrl, ...env };
  const { restored, events } = restoredLog();
  const def = agent({ name: "phone", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: ["telnyx"], builtinTools: ["transfer_call"], transfer, events });
  const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, env: allEnv, carrierClient: carrierClient({ env: allEnv, telnyxBaseUrl: api.url }) });
  const { port } = await gateway.listen(0);
  closers.push(() => gateway.close());
  const base = `http://127.0.0.1:${port}`;
  /** A callback to one of the gateway's public URLs, signed as Telnyx signs it. */
  const post = (url: string, params: Record<string, string>): Promise<Response> => telnyx.post(`${base}${new URL(url).pathname}`, params);
  /** The caller's line, streaming to the `<Stream url>` a TeXML document names. */
  const dial = async (texml: string): Promise<FakeCarrier> => {
    const url = (/<Stream url="([^"]+)"/.exec(texml)?.[1] ?? "").replace(/&amp;/g, "&").replace("wss://gw.example.com", `ws://127.0.0.1:${port}`);
    const line = await FakeCarrier.dial({ url, dialect: "telnyx", callId: "v3:caller" });
    closers.push(() => line.close());
    return line;
  };
  // The caller dialled our number (+13125550199); the webhook names it as `To`.
  const webhook = { CallSid: "v3:caller", AccountSid: account, From: "+13125550100", ...(to === "" ? {} : { To: to }) };
  const answer = await (await post(`${publicUrl}/telephony/telnyx/voice`, webhook)).text();
  service.enqueue({ say: "Hello.", audioMs: 100 });
  const line = await dial(answer);
  await line.until(() => line.playedMs >= 100 && line.bufferedMs === 0, "the greeting played");
  return { service, api, base, post, dial, line, restored };
}

/** The desk is asked for: the caller's call goes into a room, then the person's call is placed. */
async function warmCall() {
  const call = await telnyxCall();
  const { service, api, line } = call;
  askForTheDesk(service);
  const update = await api.next();
  expect(update).toMatchObject({ method: "POST", path: `/v2/texml/Accounts/${account}/Calls/v3%3Acaller`, authorization: "Bearer telnyx-key", contentType: "application/x-www-form-urlencoded" });
  const wait = texmlOf(update);
  const room = /<Conference[^>]*>([^<]+)<\/Conference>/.exec(wait)?.[1] ?? "";
  expect(wait).toBe(
    `<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">${room}</Conference></Dial><Hangup/></Response>`,
  );
  expect(room).toMatch(/^switchboard-[A-Za-z0-9_-]{16}$/);
  const placed = await api.next();
  expect(placed).toMatchObject({ method: "POST", path: `/v2/texml/Accounts/${account}/Calls`, authorization: "Bearer telnyx-key", contentType: "application/json" });
  const order = JSON.parse(placed.body) as { Url: string; StatusCallback: string };
  expect(order).toEqual({
    ApplicationSid: "app-9",
    To: "sip:desk@pbx.example.com",
    From: "+13125550199",
    Url: expect.stringMatching(new RegExp(`^https://gw\\.example\\.com/telephony/telnyx/transfer/${TICKETED}$`)) as string,
    UrlMethod: "POST",
    StatusCallback: expect.stringMatching(new RegExp(`^https://gw\\.example\\.com/telephony/telnyx/dialed/${TICKETED}$`)) as string,
    StatusCallbackEvent: "completed",
    StatusCallbackMethod: "POST",
    Timeout: 20,
  });
  expect(await line.closed).toEqual({ code: 1000, reason: "call transferred" });
  return { ...call, room, whisperUrl: order.Url, outcomeUrl: order.StatusCallback };
}

describe("a warm transfer on a Telnyx call", () => {
  it("the person's call whispers the summary, then joins the caller's room; their join takes the call, and nothing more is asked of Telnyx", async () => {
    const { api, base, post, room, whisperUrl, outcomeUrl } = await warmCall();
    // Unsigned: refused, and nothing is used up.
    expect((await fetch(`${base}${new URL(whisperUrl).pathname}`, { method: "POST", body: new URLSearchParams({ CallSid: "v3:desk" }) })).status).toBe(403);
    expect((await fetch(`${base}${new URL(outcomeUrl).pathname}`, { method: "POST", body: new URLSearchParams({ CallStatus: "no-answer" }) })).status).toBe(403);
    const whisper = await post(whisperUrl, { CallSid: "v3:desk", AccountSid: account, From: "+13125550199", To: "sip:desk@pbx.example.com" });
    expect(whisper.headers.get("content-type")).toMatch(/^text\/xml/);
    expect(await whisper.text()).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${SUMMARY}</Say><Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false" statusCallback="${outcomeUrl}" statusCallbackEvent="join" statusCallbackMethod="POST">${room}</Conference></Dial></Response>`,
    );
    expect((await post(whisperUrl, { CallSid: "v3:desk" })).status).toBe(404);
    // Call progress that decides nothing is acknowledged; the join takes the call.
    expect((await post(outcomeUrl, { CallSid: "v3:desk", CallStatus: "in-progress" })).status).toBe(204);
    expect((await post(outcomeUrl, { AccountSid: account, CallSid: "v3:desk", ConferenceSid: "conf-1", FriendlyName: room, StatusCallbackEvent: "participant-join" })).status).toBe(204);
    // When the two are done, the person's call ends: already decided.
    expect((await post(outcomeUrl, { CallSid: "v3:desk", CallStatus: "completed" })).status).toBe(404);
    expect(api.seen).toHaveLength(2);
  }, 30_000);

  for (const status of ["no-answer", "completed"]) {
    it(`the person's call ends (${status}) before they joined: the caller's call is put on a fresh ticketed stream, back in the same conversation, told so first`, async () => {
      const { service, api, post, dial, outcomeUrl, restored } = await warmCall();
      service.enqueue({ say: "I'm sorry, nobody at desk could take your call just now.", audioMs: 200 });
      expect((await post(outcomeUrl, { AccountSid: account, CallSid: "v3:desk", CallStatus: status })).status).toBe(204);
      const update = await api.next();
      expect(update).toMatchObject({ method: "POST", path: `/v2/texml/Accounts/${account}/Calls/v3%3Acaller`, authorization: "Bearer telnyx-key" });
      const back = texmlOf(update);
      expect(back).toMatch(new RegExp(`<Start><Stream url="wss://gw\\.example\\.com/telephony/telnyx/${TICKETED}\\?agent=phone" track="inbound_track" bidirectionalMode="rtp" bidirectionalCodec="PCMU"/></Start>`));
      // Once: a replayed report finds nothing.
      expect((await post(outcomeUrl, { AccountSid: account, CallSid: "v3:desk", CallStatus: status, Again: "1" })).status).toBe(404);
      await expectBackWithTheAgent(await dial(back), service, restored);
    }, 30_000);
  }

  it("Telnyx refuses the person's call: the caller, already in the room, is put back on a fresh stream at once and told so", async () => {
    const { service, api, dial, restored } = await telnyxCall({ refusing: { status: 422, statusFor: /\/Calls$/ } });
    askForTheDesk(service);
    service.enqueue({ say: "I'm sorry, nobody at desk could take your call just now.", audioMs: 200 });
    expect(texmlOf(await api.next())).toMatch(/<Conference startConferenceOnEnter="false"/);
    expect((await api.next()).path).toBe(`/v2/texml/Accounts/${account}/Calls`);
    const back = texmlOf(await api.next());
    expect(back).toMatch(new RegExp(`<Stream url="wss://gw\\.example\\.com/telephony/telnyx/${TICKETED}\\?agent=phone"`));
    await expectBackWithTheAgent(await dial(back), service, restored);
  }, 30_000);

  for (const [why, options] of [
    ["without TELNYX_TEXML_APPLICATION_ID", { env: {} }],
    ["when the webhook named no number of ours (To) to call from", { to: "" }],
  ] as const) {
    it(`${why} the gateway cannot place the person's call: the warm destination is refused to the model, and nothing is sent`, async () => {
      const { service, api, line } = await telnyxCall(options);
      askForTheDesk(service);
      await line.until(() => service.messages.some((m) => m.message.type === "conversation.item.create" && JSON.stringify(m.message).includes("is not possible on this call: the gateway cannot place the call to the person.")), "the refusal");
      expect(api.seen).toEqual([]);
    }, 30_000);
  }
});
