/**
 * Twilio's REST API on a call the gateway answered: the Calls resource
 * (`POST https://api.twilio.com/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json`, form-encoded,
 * Basic auth with the account SID and auth token). `Status=completed` hangs up; `Twiml=<Response>…`
 * replaces the call's instructions — on a `<Connect><Stream>` call that ends the stream, and the
 * new TwiML (a `<Dial>`) runs: the transfer.
 */
import { basicAuth, envValue, send, type RestContext } from "./request.js";

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
