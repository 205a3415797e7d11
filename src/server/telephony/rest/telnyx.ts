/**
 * Telnyx's REST API (v2, `Authorization: Bearer TELNYX_API_KEY`) on a TeXML call the gateway answered.
 * Hang-up: Call Control `POST /v2/calls/{call_control_id}/actions/hangup` (a TeXML `CallSid` is a
 * call control id). Transfer: TeXML's own update-call endpoint,
 * `POST /v2/texml/Accounts/{account_sid}/Calls/{call_sid}` (form-encoded, CamelCase keys) with
 * `Texml=<Response><Dial>…`: the new TeXML replaces the running document (the `<Pause>` that held
 * the call), so the caller is not hung up when the old document's time runs out. (Call Control's
 * `actions/transfer` would bridge the caller while the TeXML `<Pause>`/`<Hangup>` kept running.)
 *
 * Placing a call (`POST /v2/texml/Accounts/{account_sid}/Calls`, "Initiate an outbound call", JSON):
 * `ApplicationSid`, `To` (E.164 or a SIP URI), `From`, `Url` (where Telnyx fetches its TeXML once
 * answered), and optionally `AsyncAmd…` (AMD) or `StatusCallback` with `StatusCallbackEvent`
 * (`completed`: one report when the call ends, its `CallStatus` `completed`, `busy`, `no-answer`,
 * `failed` or `canceled`) and `Timeout` (5–120 s of ringing; default 30).
 */
import { envValue, send, sendForJson, type RestContext } from "./request.js";

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

/**
 * The key, account and TeXML application that place calls, or the variables missing for it.
 * `accountSid`: place under this account (a warm transfer's dial, under its caller's
 * `AccountSid`) instead of `TELNYX_ACCOUNT_SID`.
 */
export function texmlPlacing(ctx: RestContext, accountSid?: string): { key: string; account: string; application: string } | { missing: string } {
  const key = envValue(ctx.env, "TELNYX_API_KEY");
  const account = accountSid ?? envValue(ctx.env, "TELNYX_ACCOUNT_SID");
  const application = envValue(ctx.env, "TELNYX_TEXML_APPLICATION_ID");
  const missing = [key === undefined ? "TELNYX_API_KEY" : "", account === undefined ? "TELNYX_ACCOUNT_SID" : "", application === undefined ? "TELNYX_TEXML_APPLICATION_ID" : ""].filter((name) => name !== "");
  if (key === undefined || account === undefined || application === undefined) return { missing: missing.join(", ") };
  return { key, account, application };
}

export interface TexmlCallOrder {
  readonly to: string;
  readonly from: string;
  /** Where Telnyx fetches the call's TeXML once answered. */
  readonly url: string;
  /** Telnyx's AMD: where its verdict goes. */
  readonly amd?: { readonly callbackUrl: string } | undefined;
  /** Where Telnyx reports the call's end (`StatusCallback`, event `completed`), and how long it rings first (`Timeout`, s, 5–120). */
  readonly status?: { readonly callbackUrl: string; readonly timeoutS: number } | undefined;
  /** The account to place it under; default `TELNYX_ACCOUNT_SID`. */
  readonly accountId?: string | undefined;
}

/** Place a TeXML call; its `CallSid` when Telnyx's answer names one. Throws without credentials, or when Telnyx refuses. */
export async function createTexmlCall(ctx: RestContext, base: string, order: TexmlCallOrder): Promise<string | undefined> {
  const placing = texmlPlacing(ctx, order.accountId);
  if ("missing" in placing) throw new Error(`${placing.missing} not set`);
  const body: Record<string, unknown> = { ApplicationSid: placing.application, To: order.to, From: order.from, Url: order.url, UrlMethod: "POST" };
  if (order.amd !== undefined) Object.assign(body, { MachineDetection: "Enable", AsyncAmd: true, AsyncAmdStatusCallback: order.amd.callbackUrl, AsyncAmdStatusCallbackMethod: "POST" });
  if (order.status !== undefined) {
    const timeoutS = Math.min(120, Math.max(5, Math.round(order.status.timeoutS)));
    Object.assign(body, { StatusCallback: order.status.callbackUrl, StatusCallbackEvent: "completed", StatusCallbackMethod: "POST", Timeout: timeoutS });
  }
  const answer = await sendForJson(ctx, "Telnyx TeXML call", `${base}/v2/texml/Accounts/${encodeURIComponent(placing.account)}/Calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${placing.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  // The documented example answers `{from, to, status}`; a `call_sid` (or `data.call_sid`) is taken when present.
  const data = typeof answer.data === "object" && answer.data !== null ? (answer.data as Record<string, unknown>) : answer;
  const sid = data.call_sid ?? data.sid;
  return typeof sid === "string" ? sid : undefined;
}
