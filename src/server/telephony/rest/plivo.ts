/**
 * Plivo's Voice API (`https://api.plivo.com`, Basic auth with the Auth ID and token, JSON bodies).
 *
 * Transfer: `POST /v1/Account/{auth_id}/Call/{call_uuid}/` with `legs: "aleg"` and `aleg_url`:
 * Plivo fetches XML from that URL (signed, as the answer URL is) and runs it on the caller's leg in
 * place of the running `<Stream>` — the gateway serves a `<Dial>` there.
 *
 * Placing a call ("Make an outbound call"): `POST /v1/Account/{auth_id}/Call/` with `from`, `to`
 * (the country code and the number, no "+"), `answer_url` (Plivo fetches the call's XML there,
 * signed, once the callee answers) and `answer_method`. Answering-machine detection rides on it:
 * `machine_detection: "true"` (detect and carry on; `"hangup"` would hang up on a machine itself),
 * `machine_detection_time` (ms, 2000–10000), and `machine_detection_url` /
 * `machine_detection_method`: with a URL the detection is asynchronous — the call runs meanwhile
 * and the verdict (`Machine`, `CallUUID`, …) is posted there, signed. Plivo answers
 * `{message: "call fired", request_uuid, api_id}`: the `request_uuid` is not the `CallUUID` the
 * answer URL will name, so no call id is returned.
 */
import { basicAuth, envValue, send, type RestContext } from "./request.js";

export const PLIVO_API = "https://api.plivo.com";

/** Plivo's bounds on `machine_detection_time` (ms). */
const DETECTION_MS = { min: 2000, max: 10_000 } as const;

function account(ctx: RestContext): { id: string; token: string } | undefined {
  const id = envValue(ctx.env, "PLIVO_AUTH_ID");
  const token = envValue(ctx.env, "PLIVO_AUTH_TOKEN");
  return id === undefined || token === undefined ? undefined : { id, token };
}

export function plivoConfigured(ctx: RestContext): boolean {
  return account(ctx) !== undefined;
}

function credentials(ctx: RestContext): { id: string; token: string } {
  const creds = account(ctx);
  if (creds === undefined) throw new Error("PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN are not set");
  return creds;
}

function post(ctx: RestContext, what: string, url: string, creds: { id: string; token: string }, body: Record<string, unknown>): Promise<void> {
  return send(ctx, what, url, { method: "POST", headers: { authorization: basicAuth(creds.id, creds.token), "content-type": "application/json" }, body: JSON.stringify(body) });
}

export async function transferPlivoCall(ctx: RestContext, base: string, callUuid: string, alegUrl: string): Promise<void> {
  const creds = credentials(ctx);
  await post(ctx, "Plivo transfer", `${base}/v1/Account/${encodeURIComponent(creds.id)}/Call/${encodeURIComponent(callUuid)}/`, creds, { legs: "aleg", aleg_url: alegUrl, aleg_method: "POST" });
}

/** A call to place (checked by the caller: E.164 numbers, the gateway's own URLs). */
export interface PlivoCallOrder {
  readonly to: string;
  readonly from: string;
  /** Where Plivo fetches the call's XML once answered. */
  readonly url: string;
  /** Plivo's asynchronous machine detection: where its verdict goes, and how long it may take (s). */
  readonly amd?: { readonly callbackUrl: string; readonly timeoutS: number } | undefined;
}

/** Place a call. Throws without credentials, or when Plivo refuses. */
export async function createPlivoCall(ctx: RestContext, base: string, order: PlivoCallOrder): Promise<void> {
  const creds = credentials(ctx);
  const body: Record<string, unknown> = { from: order.from.replace(/^\+/, ""), to: order.to.replace(/^\+/, ""), answer_url: order.url, answer_method: "POST" };
  if (order.amd !== undefined) {
    Object.assign(body, {
      machine_detection: "true",
      machine_detection_time: Math.min(DETECTION_MS.max, Math.max(DETECTION_MS.min, Math.round(order.amd.timeoutS * 1000))),
      machine_detection_url: order.amd.callbackUrl,
      machine_detection_method: "POST",
    });
  }
  await post(ctx, "Plivo call", `${base}/v1/Account/${encodeURIComponent(creds.id)}/Call/`, creds, body);
}
