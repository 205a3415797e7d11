/**
 * Plivo's "Transfer a call" API: `POST https://api.plivo.com/v1/Account/{auth_id}/Call/{call_uuid}/`
 * (Basic auth with the Auth ID and token, JSON body) with `legs: "aleg"` and `aleg_url`: Plivo
 * fetches XML from that URL (signed, as the answer URL is) and runs it on the caller's leg in place
 * of the running `<Stream>` — the gateway serves a `<Dial>` there.
 */
import { basicAuth, envValue, send, type RestContext } from "./request.js";

export const PLIVO_API = "https://api.plivo.com";

function account(ctx: RestContext): { id: string; token: string } | undefined {
  const id = envValue(ctx.env, "PLIVO_AUTH_ID");
  const token = envValue(ctx.env, "PLIVO_AUTH_TOKEN");
  return id === undefined || token === undefined ? undefined : { id, token };
}

export function plivoConfigured(ctx: RestContext): boolean {
  return account(ctx) !== undefined;
}

export async function transferPlivoCall(ctx: RestContext, base: string, callUuid: string, alegUrl: string): Promise<void> {
  const creds = account(ctx);
  if (creds === undefined) throw new Error("PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN are not set");
  await send(ctx, "Plivo transfer", `${base}/v1/Account/${encodeURIComponent(creds.id)}/Call/${encodeURIComponent(callUuid)}/`, {
    method: "POST",
    headers: { authorization: basicAuth(creds.id, creds.token), "content-type": "application/json" },
    body: JSON.stringify({ legs: "aleg", aleg_url: alegUrl, aleg_method: "POST" }),
  });
}
