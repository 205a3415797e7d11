/**
 * Telnyx's REST API (v2, `Authorization: Bearer TELNYX_API_KEY`) on a TeXML call the gateway answered.
 * Hang-up: Call Control `POST /v2/calls/{call_control_id}/actions/hangup` (a TeXML `CallSid` is a
 * call control id). Transfer: TeXML's own update-call endpoint,
 * `POST /v2/texml/Accounts/{account_sid}/Calls/{call_sid}` (form-encoded, CamelCase keys) with
 * `Texml=<Response><Dial>…`: the new TeXML replaces the running document (the `<Pause>` that held
 * the call), so the caller is not hung up when the old document's time runs out. (Call Control's
 * `actions/transfer` would bridge the caller while the TeXML `<Pause>`/`<Hangup>` kept running.)
 */
import { envValue, send, type RestContext } from "./request.js";

export const TELNYX_API = "https://api.telnyx.com";

export function telnyxConfigured(ctx: RestContext): boolean {
  return envValue(ctx.env, "TELNYX_API_KEY") !== undefined;
}

export async function hangUpTelnyxCall(ctx: RestContext, base: string, callControlId: string): Promise<void> {
  const key = envValue(ctx.env, "TELNYX_API_KEY");
  if (key === undefined) return;
  await send(ctx, "Telnyx hang-up", `${base}/v2/calls/${encodeURIComponent(callControlId)}/actions/hangup`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: "{}",
  });
}

/** Replace the TeXML call's instructions with `texml`. */
export async function updateTexmlCall(ctx: RestContext, base: string, accountSid: string, callSid: string, texml: string): Promise<void> {
  const key = envValue(ctx.env, "TELNYX_API_KEY");
  if (key === undefined) throw new Error("TELNYX_API_KEY is not set");
  await send(ctx, "Telnyx TeXML update", `${base}/v2/texml/Accounts/${encodeURIComponent(accountSid)}/Calls/${encodeURIComponent(callSid)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ Texml: texml }).toString(),
  });
}
