import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { carrierClient } from "../../../../src/server/telephony/carrier-client.js";
import type { CallRef } from "../../../../src/server/telephony/carrier-client.js";

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A loopback stand-in for the carriers' REST APIs: records requests, answers `status`. */
async function fakeApi(status = 200): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(status === 200 ? "{}" : '{"message":"The requested resource was not found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const call = (carrier: CallRef["carrier"], callId = "CA42"): CallRef => ({ carrier, callId });

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("carrierClient", () => {
  it("hangs a Twilio call up: POST Calls/{sid}.json, Status=completed, Basic auth with the account", async () => {
    const api = await fakeApi();
    closers.push(api.close);
    const client = carrierClient({ env: { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "tok" }, twilioBaseUrl: api.url });
    await client.hangUp(call("twilio"));
    expect(api.seen).toEqual([
      { method: "POST", url: "/2010-04-01/Accounts/AC1/Calls/CA42.json", authorization: `Basic ${Buffer.from("AC1:tok").toString("base64")}`, body: "Status=completed" },
    ]);
  });

  it("hangs a Telnyx call up through Call Control with the API key", async () => {
    const api = await fakeApi();
    closers.push(api.close);
    const client = carrierClient({ env: { TELNYX_API_KEY: "KEY123" }, telnyxBaseUrl: api.url });
    await client.hangUp(call("telnyx", "v3:abc"));
    expect(api.seen).toEqual([{ method: "POST", url: "/v2/calls/v3%3Aabc/actions/hangup", authorization: "Bearer KEY123", body: "{}" }]);
  });

  it("does nothing without credentials, or for carriers whose call ends with the stream", async () => {
    const api = await fakeApi();
    closers.push(api.close);
    const client = carrierClient({ env: {}, twilioBaseUrl: api.url, telnyxBaseUrl: api.url });
    await client.hangUp(call("twilio"));
    await client.hangUp(call("telnyx"));
    await carrierClient({ env: { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "tok" }, twilioBaseUrl: api.url }).hangUp(call("plivo"));
    expect(api.seen).toEqual([]);
  });

  it("reports a refused hang-up with the carrier's status and message", async () => {
    const api = await fakeApi(404);
    closers.push(api.close);
    const client = carrierClient({ env: { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "tok" }, twilioBaseUrl: api.url });
    await expect(client.hangUp(call("twilio"))).rejects.toThrow(/Twilio hang-up answered 404: .*not found/);
  });
});
