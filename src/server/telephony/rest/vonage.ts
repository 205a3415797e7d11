/**
 * Vonage's Voice API: `PUT https://api.nexmo.com/v1/calls/{uuid}` with
 * `{"action":"transfer","destination":{"type":"ncco","ncco":[…]}}` moves the caller's leg to a
 * new NCCO (a `connect` to the person). Authenticated with an application JWT: RS256 over
 * `{application_id, iat, exp, jti}`, signed with the application's private key
 * (`VONAGE_APPLICATION_ID`, `VONAGE_PRIVATE_KEY`); node:crypto signs it, no library needed.
 */
import { createPrivateKey, randomUUID, sign, type KeyObject } from "node:crypto";
import { envValue, send, type RestContext } from "./request.js";

export const VONAGE_API = "https://api.nexmo.com";

/** A token lives this long (s): one request. */
const JWT_TTL_S = 300;

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString("base64url");
}

/** The application and its key; undefined when either is missing. Throws naming the variable when the key is not a PEM private key. */
export function vonageApplication(env: RestContext["env"]): { id: string; key: KeyObject } | undefined {
  const id = envValue(env, "VONAGE_APPLICATION_ID");
  const pem = envValue(env, "VONAGE_PRIVATE_KEY");
  if (id === undefined || pem === undefined) return undefined;
  try {
    // A key pasted into one line of an env file keeps its newlines as "\n".
    return { id, key: createPrivateKey(pem.replace(/\\n/g, "\n")) };
  } catch {
    throw new Error("VONAGE_PRIVATE_KEY is not a PEM private key: paste the private.key file the Vonage dashboard gave the application");
  }
}

/** An application JWT (RS256) for the Voice API, issued `nowMs`. */
export function vonageJwt(application: { id: string; key: KeyObject }, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify({ application_id: application.id, iat, exp: iat + JWT_TTL_S, jti: randomUUID() }));
  const signature = sign("sha256", Buffer.from(`${header}.${payload}`), application.key);
  return `${header}.${payload}.${base64url(signature)}`;
}

export async function transferVonageCall(ctx: RestContext, base: string, application: { id: string; key: KeyObject } | undefined, uuid: string, ncco: unknown[], nowMs: number): Promise<void> {
  if (application === undefined) throw new Error("VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY are not set");
  await send(ctx, "Vonage transfer", `${base}/v1/calls/${encodeURIComponent(uuid)}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${vonageJwt(application, nowMs)}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "transfer", destination: { type: "ncco", ncco } }),
  });
}
