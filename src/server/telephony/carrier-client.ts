/**
 * Hanging up through the carriers' REST APIs, after the gateway closed a call's stream (end_call,
 * idle timeout, call limit). Twilio, Plivo and Vonage end the call when the stream closes (their
 * instructions run out); Telnyx TeXML holds it in `<Pause>`, so it needs the API. A network
 * client, injectable: codecs never call it. It acts with the operator's credentials, so it is
 * only ever given a call the gateway answered itself (the id a verified webhook named, see
 * answered-calls.ts).
 */
import type { CarrierName } from "../../transport/carriers/index.js";

/** A call to act on: the carrier and the id its verified webhook named. */
export interface CallRef {
  readonly carrier: CarrierName;
  readonly callId: string;
}

export interface CarrierClient {
  /** Hang the call up; resolves when the carrier accepted the request. */
  hangUp(call: CallRef): Promise<void>;
}

export interface CarrierClientOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** API base URLs (tests point them at a loopback fake). */
  readonly twilioBaseUrl?: string;
  readonly telnyxBaseUrl?: string;
  readonly fetch?: typeof fetch;
  /** Per request (ms). */
  readonly timeoutMs?: number;
}

async function expectOk(response: Response, what: string): Promise<void> {
  if (response.ok) return;
  const body = (await response.text().catch(() => "")).slice(0, 200);
  throw new Error(`${what} answered ${response.status}: ${body}`);
}

/**
 * The default client, from the environment: Twilio with `TWILIO_ACCOUNT_SID` + `TWILIO_AUTH_TOKEN`
 * (`POST /2010-04-01/Accounts/{sid}/Calls/{callSid}.json`, `Status=completed`), Telnyx with
 * `TELNYX_API_KEY` (`POST /v2/calls/{call_control_id}/actions/hangup`). Other carriers, or missing
 * credentials: nothing to do (closing the stream was the hang-up).
 */
export function carrierClient(options: CarrierClientOptions): CarrierClient {
  const { env } = options;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  return {
    async hangUp(call) {
      if (call.carrier === "twilio") {
        const sid = env.TWILIO_ACCOUNT_SID;
        const token = env.TWILIO_AUTH_TOKEN;
        if (sid === undefined || sid === "" || token === undefined || token === "") return;
        const base = options.twilioBaseUrl ?? "https://api.twilio.com";
        const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Calls/${encodeURIComponent(call.callId)}.json`;
        const response = await doFetch(url, {
          method: "POST",
          headers: {
            authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString("base64")}`,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: "Status=completed",
          signal: AbortSignal.timeout(timeoutMs),
        });
        return expectOk(response, "Twilio hang-up");
      }
      if (call.carrier === "telnyx") {
        const key = env.TELNYX_API_KEY;
        if (key === undefined || key === "") return;
        const base = options.telnyxBaseUrl ?? "https://api.telnyx.com";
        const response = await doFetch(`${base}/v2/calls/${encodeURIComponent(call.callId)}/actions/hangup`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: "{}",
          signal: AbortSignal.timeout(timeoutMs),
        });
        return expectOk(response, "Telnyx hang-up");
      }
    },
  };
}
