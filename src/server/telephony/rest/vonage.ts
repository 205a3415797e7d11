/**
 * Vonage's Voice API: `PUT https://api.nexmo.com/v1/calls/{uuid}` with
 * `{"action":"transfer","destination":{"type":"ncco","ncco":[…]}}` moves the caller's leg to a
 * new NCCO (a `connect` to the person). Authenticated with an application JWT: RS256 over
 * `{application_id, iat, exp, jti}`, signed with the application's private key
 * (`VONAGE_APPLICATION_ID`, `VONAGE_PRIVATE_KEY`); node:crypto signs it, no library needed.
 *
 * Placing a call ("Create an outbound call"): `POST /v1/calls` (JSON) with
 * `to: [{type: "phone", number}]`, `from: {type: "phone", number}` (digits, no "+"),
 * `answer_url: [url]` / `answer_method` (Vonage fetches the call's NCCO there, signed, once the
 * callee answers). Answering-machine detection: `advanced_machine_detection` with
 * `behavior: "continue"`, `mode: "default"` — the asynchronous mode: the NCCO (the stream) runs at
 * once and the detection's events follow (`detect` and `detect_beep` are synchronous: the NCCO
 * would wait for the detection, the callee hearing silence) — and `beep_timeout` (s; 45–120 fits
 * both the API reference's 30–120 and the SDKs' 45–120). Its events go to `event_url: [url]`,
 * signed: `status: "human" | "machine"` (with `call_uuid`), then for a machine `sub_state:
 * "beep_start"` when the beep sounds, or `"beep_timeout"`. Setting `event_url` sends every event of
 * this call there instead of the application's event URL. Vonage answers 201 `{uuid, status,
 * direction, conversation_uuid}`: `uuid` is the call's, as its webhooks name it.
 */
import { createPrivateKey, randomUUID, sign, type KeyObject } from "node:crypto";
import { envValue, send, sendForJson, type RestContext } from "./request.js";

export const VONAGE_API = "https://api.nexmo.com";

/** A token lives this long (s): one request. */
const JWT_TTL_S = 300;

/** `beep_timeout` bounds (s). */
const BEEP_TIMEOUT_S = { min: 45, max: 120 } as const;

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

/** A call to place (checked by the caller: E.164 numbers, the gateway's own URLs). */
export interface VonageCallOrder {
  readonly to: string;
  readonly from: string;
  /** Where Vonage fetches the call's NCCO once answered. */
  readonly url: string;
  /** Advanced machine detection: where its events go, and how long to wait for a beep (s). */
  readonly amd?: { readonly callbackUrl: string; readonly beepWaitS: number } | undefined;
}

/** Place a call; its `uuid` when Vonage's answer names one. Throws without the application, or when Vonage refuses. */
export async function createVonageCall(ctx: RestContext, base: string, application: { id: string; key: KeyObject } | undefined, order: VonageCallOrder, nowMs: number): Promise<string | undefined> {
  if (application === undefined) throw new Error("VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY are not set");
  const body: Record<string, unknown> = {
    to: [{ type: "phone", number: order.to.replace(/^\+/, "") }],
    from: { type: "phone", number: order.from.replace(/^\+/, "") },
    answer_url: [order.url],
    answer_method: "POST",
  };
  if (order.amd !== undefined) {
    const beepTimeout = Math.min(BEEP_TIMEOUT_S.max, Math.max(BEEP_TIMEOUT_S.min, Math.ceil(order.amd.beepWaitS)));
    Object.assign(body, { event_url: [order.amd.callbackUrl], event_method: "POST", advanced_machine_detection: { behavior: "continue", mode: "default", beep_timeout: beepTimeout } });
  }
  const answer = await sendForJson(ctx, "Vonage call", `${base}/v1/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${vonageJwt(application, nowMs)}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return typeof answer.uuid === "string" ? answer.uuid : undefined;
}
