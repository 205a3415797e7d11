/**
 * Twilio's REST API on a call the gateway answered: the Calls resource
 * (`POST https://api.twilio.com/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json`, form-encoded,
 * Basic auth with the account SID and auth token). `Status=completed` hangs up; `Twiml=<Response>…`
 * replaces the call's instructions — on a `<Connect><Stream>` call that ends the stream, and the
 * new TwiML (a `<Dial>`) runs: the transfer.
 *
 * Placing a call: `POST …/Accounts/{AccountSid}/Calls.json` with `To`, `From` and `Url` (Twilio
 * fetches the call's TwiML there, signed, once the callee answers). Answering-machine detection
 * rides on it ("Answering Machine Detection"): `MachineDetection=Enable` (a verdict as soon as
 * Twilio knows: `human` or `machine_start`), `AsyncAmd=true` (the call runs meanwhile) and
 * `AsyncAmdStatusCallback` (where the verdict is POSTed, signed), `MachineDetectionTimeout`
 * 3–59 s. The answer is the call resource; its `sid` is the call's `CallSid`. The call's end is
 * reported to `StatusCallback` (`StatusCallbackEvent` `completed`, Twilio's default event: one
 * signed POST when the call ends, its `CallStatus` `completed`, `busy`, `no-answer`, `failed` or
 * `canceled`), after at most `Timeout` seconds of ringing (Twilio: 5–600, default 60).
 */
import { basicAuth, envValue, send, sendForJson, type RestContext } from "./request.js";

export const TWILIO_API = "https://api.twilio.com";

/** The account and token, or undefined when either is missing (no REST then). */
function account(ctx: RestContext): { sid: string; token: string } | undefined {
  const sid = envValue(ctx.env, "TWILIO_ACCOUNT_SID");
  const token = envValue(ctx.env, "TWILIO_AUTH_TOKEN");
  return sid === undefined || token === undefined ? undefined : { sid, token };
}

export function twilioConfigured(ctx: RestContext): boolean {
  return account(ctx) !== undefined;
}

/** Update the call (`params`: `Status`, `Twiml`, …); nothing without credentials. */
export async function updateTwilioCall(ctx: RestContext, base: string, callSid: string, params: Record<string, string>, what: string): Promise<void> {
  const creds = account(ctx);
  if (creds === undefined) return;
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(creds.sid)}/Calls/${encodeURIComponent(callSid)}.json`;
  await send(ctx, what, url, {
    method: "POST",
    headers: { authorization: basicAuth(creds.sid, creds.token), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
}

/** A call to place (the values are checked by the caller: E.164 numbers, the gateway's own URLs). */
export interface TwilioCallOrder {
  readonly to: string;
  readonly from: string;
  /** Where Twilio fetches the call's TwiML once answered. */
  readonly url: string;
  /** Twilio's AMD: where its verdict goes, and how long it may take (s, 3–59). */
  readonly amd?: { readonly callbackUrl: string; readonly timeoutS: number } | undefined;
  /** Where Twilio reports the call's end, and how long it rings first (s). */
  readonly status?: { readonly callbackUrl: string; readonly timeoutS: number } | undefined;
}

/** Place a call; its `CallSid` (undefined when Twilio's answer names none). Throws without credentials, or when Twilio refuses. */
export async function createTwilioCall(ctx: RestContext, base: string, order: TwilioCallOrder): Promise<string | undefined> {
  const creds = account(ctx);
  if (creds === undefined) throw new Error("TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are not set");
  const params: Record<string, string> = { To: order.to, From: order.from, Url: order.url, Method: "POST" };
  if (order.amd !== undefined) {
    Object.assign(params, {
      MachineDetection: "Enable",
      AsyncAmd: "true",
      AsyncAmdStatusCallback: order.amd.callbackUrl,
      AsyncAmdStatusCallbackMethod: "POST",
      MachineDetectionTimeout: String(Math.min(59, Math.max(3, Math.round(order.amd.timeoutS)))),
    });
  }
  if (order.status !== undefined) {
    Object.assign(params, {
      StatusCallback: order.status.callbackUrl,
      StatusCallbackEvent: "completed",
      StatusCallbackMethod: "POST",
      Timeout: String(Math.min(600, Math.max(5, Math.round(order.status.timeoutS)))),
    });
  }
  const answer = await sendForJson(ctx, "Twilio call", `${base}/2010-04-01/Accounts/${encodeURIComponent(creds.sid)}/Calls.json`, {
    method: "POST",
    headers: { authorization: basicAuth(creds.sid, creds.token), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
  return typeof answer.sid === "string" ? answer.sid : undefined;
}
