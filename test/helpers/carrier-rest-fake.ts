/**
 * A loopback stand-in for the carriers' REST APIs, modelling what their docs say each endpoint
 * takes and answers: it records every request, checks the authentication the carrier requires
 * (answering 401 as the carrier would without it), and answers with the documented status.
 *
 * - Twilio `POST /2010-04-01/Accounts/{sid}/Calls/{callSid}.json`: Basic `sid:token`, form body; 200 with the call resource.
 * - Twilio `POST /2010-04-01/Accounts/{sid}/Calls.json` (create): Basic, form body with `To`, `From` and `Url`; 201 with the
 *   call resource (`sid`), 400 (code 21201/21205) when one is missing.
 * - Telnyx `POST /v2/texml/Accounts/{account}/Calls` (create, JSON with `ApplicationSid`, `To`, `From`): Bearer; 200
 *   `{from, to, status: "queued"}` as its documented example (no call id), 422 when one is missing, or a `Timeout`
 *   outside 5–120 s or a `StatusCallbackEvent` that is not initiated/ringing/answered/completed.
 * - Telnyx `POST /v2/calls/{id}/actions/hangup` (JSON) and `POST /v2/texml/Accounts/{account}/Calls/{callSid}` (form): Bearer key; 200.
 * - Plivo `POST /v1/Account/{authId}/Call/{uuid}/`: Basic `authId:token`, JSON; 202 `{"message":"call transferred"}`.
 * - Plivo `POST /v1/Account/{authId}/Call/` (make a call): Basic, JSON with `from`, `to` (digits: the country code and
 *   the number) and `answer_url`; 201 `{"message":"call fired","request_uuid","api_id"}`, 400 `{"error"}` otherwise.
 * - Vonage `PUT /v1/calls/{uuid}`: Bearer RS256 application JWT; 204 No Content.
 * - Vonage `POST /v1/calls` (create): the JWT, JSON with `to: [{type: "phone", number}]` (7–15 digits), `from` the same
 *   shape, and `answer_url` (an array) or `ncco`; 201 `{uuid, status: "started", direction: "outbound", conversation_uuid}`,
 *   400 with `invalid_parameters` otherwise.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { verify, type KeyObject } from "node:crypto";

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
  /** When it arrived (the test's clock, if given). */
  readonly at: number;
}

export interface CarrierRestFake {
  readonly url: string;
  readonly seen: SeenRequest[];
  /** Resolves with the next request not yet taken by `next` (at once if it came already). */
  next(): Promise<SeenRequest>;
  close(): Promise<void>;
}

export interface CarrierRestFakeOptions {
  /** Basic credentials Twilio and Plivo requests must carry. */
  readonly basic?: { readonly user: string; readonly password: string };
  /** The Bearer key Telnyx requests must carry. */
  readonly bearer?: string;
  /** The public key a Vonage JWT must verify against. */
  readonly vonagePublicKey?: KeyObject;
  /** The `sid` Twilio's create answers with (default a CA… of 34 characters). */
  readonly createdCallSid?: string;
  /** The `uuid` Vonage's create answers with. */
  readonly createdCallUuid?: string;
  /** Answer this status instead (a refusal). */
  readonly status?: number;
  /** Only to requests whose path this matches (default: every request). */
  readonly statusFor?: RegExp;
  readonly now?: () => number;
}

function jsonObject(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A Vonage phone endpoint as its create call documents it: `{type: "phone", number}`, 7–15 digits. */
function vonagePhone(value: unknown): boolean {
  const endpoint = value as { type?: unknown; number?: unknown } | undefined;
  return typeof endpoint === "object" && endpoint !== null && endpoint.type === "phone" && typeof endpoint.number === "string" && /^\d{7,15}$/.test(endpoint.number);
}

/** Why a Vonage create-call body is not as documented, or undefined. */
function vonageCreateProblem(fields: Record<string, unknown>): string | undefined {
  if (!Array.isArray(fields.to) || fields.to.length === 0 || !fields.to.every(vonagePhone)) return "to";
  if (!vonagePhone(fields.from)) return "from";
  if (!(Array.isArray(fields.answer_url) && fields.answer_url.every((url) => typeof url === "string")) && !Array.isArray(fields.ncco)) return "answer_url";
  return undefined;
}

function vonageJwtValid(authorization: string | undefined, key: KeyObject): boolean {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
  const [header, payload, signature] = token?.split(".") ?? [];
  if (header === undefined || payload === undefined || signature === undefined) return false;
  const alg = (JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: string }).alg;
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { application_id?: string; iat?: number; jti?: string };
  return alg === "RS256" && typeof claims.application_id === "string" && typeof claims.iat === "number" && typeof claims.jti === "string" && verify("sha256", Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"));
}

export async function carrierRestFake(options: CarrierRestFakeOptions = {}): Promise<CarrierRestFake> {
  const seen: SeenRequest[] = [];
  const waiters: ((request: SeenRequest) => void)[] = [];
  let taken = 0;
  const now = options.now ?? Date.now;
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const request: SeenRequest = { method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization, contentType: req.headers["content-type"], body, at: now() };
      seen.push(request);
      const waiter = waiters.shift();
      if (waiter !== undefined) {
        taken += 1;
        waiter(request);
      }
      const basic = options.basic === undefined ? undefined : `Basic ${Buffer.from(`${options.basic.user}:${options.basic.password}`).toString("base64")}`;
      const path = request.path;
      let status = 404;
      let answer = '{"message":"The requested resource was not found"}';
      if (/^\/2010-04-01\/Accounts\/[^/]+\/Calls\.json$/.test(path) && req.method === "POST") {
        const form = new URLSearchParams(body);
        const missing = ["To", "From", "Url"].find((name) => (form.get(name) ?? "") === "");
        const sid = options.createdCallSid ?? "CA0123456789abcdef0123456789abcdef";
        if (basic !== undefined && request.authorization !== basic) [status, answer] = [401, '{"code":20003,"message":"Authenticate"}'];
        else if (missing !== undefined) [status, answer] = [400, JSON.stringify({ code: missing === "Url" ? 21205 : 21201, message: `No '${missing}' number is specified` })];
        else [status, answer] = [201, JSON.stringify({ sid, status: "queued", to: form.get("To"), from: form.get("From") })];
      } else if (/^\/v2\/texml\/Accounts\/[^/]+\/Calls$/.test(path) && req.method === "POST") {
        let fields: Record<string, unknown> = {};
        try {
          fields = JSON.parse(body) as Record<string, unknown>;
        } catch {
          fields = {};
        }
        // Documented bounds: `Timeout` 5–120 s; `StatusCallbackEvent` space-separated initiated, ringing, answered, completed.
        const timeout = fields.Timeout;
        const events = fields.StatusCallbackEvent;
        const invalid =
          (timeout !== undefined && (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 5 || timeout > 120)) ||
          (events !== undefined && (typeof events !== "string" || !events.split(" ").every((e) => ["initiated", "ringing", "answered", "completed"].includes(e))));
        const missing = invalid ? "Timeout or StatusCallbackEvent" : ["ApplicationSid", "To", "From"].find((name) => typeof fields[name] !== "string" || fields[name] === "");
        if (options.bearer !== undefined && request.authorization !== `Bearer ${options.bearer}`) [status, answer] = [401, '{"errors":[{"code":"10009"}]}'];
        else if (missing !== undefined || req.headers["content-type"] !== "application/json") [status, answer] = [422, JSON.stringify({ errors: [{ detail: `${missing ?? "body"} is invalid` }] })];
        else [status, answer] = [200, JSON.stringify({ from: fields.From, to: fields.To, status: "queued" })];
      } else if (/^\/2010-04-01\/Accounts\/[^/]+\/Calls\/[^/]+\.json$/.test(path) && req.method === "POST") {
        [status, answer] = basic !== undefined && request.authorization !== basic ? [401, '{"code":20003,"message":"Authenticate"}'] : [200, '{"sid":"CA42","status":"in-progress"}'];
      } else if (/^\/v2\/(calls\/[^/]+\/actions\/hangup|texml\/Accounts\/[^/]+\/Calls\/[^/]+)$/.test(path) && req.method === "POST") {
        [status, answer] = options.bearer !== undefined && request.authorization !== `Bearer ${options.bearer}` ? [401, '{"errors":[{"code":"10009"}]}'] : [200, '{"data":{"result":"ok"}}'];
      } else if (/^\/v1\/Account\/[^/]+\/Call\/[^/]+\/$/.test(path) && req.method === "POST") {
        [status, answer] = basic !== undefined && request.authorization !== basic ? [401, '{"error":"authentication failed"}'] : [202, '{"message":"call transferred","api_id":"1"}'];
      } else if (/^\/v1\/Account\/[^/]+\/Call\/$/.test(path) && req.method === "POST") {
        const fields = jsonObject(body);
        const missing = ["from", "to", "answer_url"].find((name) => typeof fields[name] !== "string" || fields[name] === "");
        const badNumber = ["from", "to"].find((name) => typeof fields[name] === "string" && !/^\d{7,15}$/.test(fields[name]));
        if (basic !== undefined && request.authorization !== basic) [status, answer] = [401, '{"error":"authentication failed"}'];
        else if (missing !== undefined || badNumber !== undefined || req.headers["content-type"] !== "application/json") [status, answer] = [400, JSON.stringify({ api_id: "1", error: `${missing ?? badNumber ?? "body"} is invalid` })];
        else [status, answer] = [201, JSON.stringify({ message: "call fired", request_uuid: "9834029e-58b6-11e1-b8b7-a5bd0e4e126f", api_id: "97ceeb52-58b6-11e1-86da-77300b68f8bb" })];
      } else if (path === "/v1/calls" && req.method === "POST") {
        const problem = vonageCreateProblem(jsonObject(body));
        if (options.vonagePublicKey !== undefined && !vonageJwtValid(request.authorization, options.vonagePublicKey)) [status, answer] = [401, '{"title":"Unauthorized"}'];
        else if (problem !== undefined || req.headers["content-type"] !== "application/json") [status, answer] = [400, JSON.stringify({ title: "Bad Request", invalid_parameters: [{ name: problem ?? "body", reason: "is invalid" }] })];
        else [status, answer] = [201, JSON.stringify({ uuid: options.createdCallUuid ?? "63f61863-4a51-4f6b-86e1-46edebcf9356", status: "started", direction: "outbound", conversation_uuid: "CON-f972836a-550f-45fa-956c-12a2ab5b7d22" })];
      } else if (/^\/v1\/calls\/[^/]+$/.test(path) && req.method === "PUT") {
        [status, answer] = options.vonagePublicKey !== undefined && !vonageJwtValid(request.authorization, options.vonagePublicKey) ? [401, '{"title":"Unauthorized"}'] : [204, ""];
      }
      if (options.status !== undefined && (options.statusFor === undefined || options.statusFor.test(path))) [status, answer] = [options.status, '{"errors":[{"detail":"refused"}]}'];
      res.writeHead(status, { "content-type": "application/json" });
      res.end(status === 204 ? undefined : answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    next: () => {
      const ready = seen[taken];
      if (ready !== undefined) {
        taken += 1;
        return Promise.resolve(ready);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
