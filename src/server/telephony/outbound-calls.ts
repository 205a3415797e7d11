/**
 * `POST /v1/calls`: the gateway places a call for its agent through the carrier's REST API and
 * points it at its own voice webhook, so the call then runs as an answered one does (a signed
 * webhook, a ticket, a signed stream) — see docs/telephony.md "Placing calls".
 *
 * Every refusal names the field and the fix: the API key (`Authorization: Bearer`, as
 * `POST /v1/sessions` takes it; placing calls is off while auth is off, since anyone who reaches
 * the port could then call any number on the operator's bill), the agent (the one this gateway
 * serves), the carrier (enabled by the agent's `telephony`, able to place calls, signed, with its
 * REST credentials), the numbers (E.164). Calls are budgeted: at most `perMinute` placed a minute
 * by the whole deployment (the coordinator's bucket), besides the per-address connection budget.
 *
 * The placing itself (`callPlacing`) is one code path for this handler and for a workflow's
 * `ctx.calls.place` (workflow-calls.ts): the same refusals, checks, budget and placements.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../log.js";
import { CARRIERS, E164, type AgentConfig, type ResolvedVoicemail } from "../../manifest/index.js";
import type { OutboundCall } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import { bearer, keyMatches } from "../auth.js";
import type { Coordinator } from "../coordination.js";
import { json } from "../json-reply.js";
import { PLACING_CARRIERS, type CarrierClient } from "./carrier-client.js";
import { SECRET_VARIABLE, type CarrierAccess } from "./entry-points.js";
import type { PlacedCalls } from "./placed-calls.js";
import type { CallReports } from "./call-reports.js";
import { CarrierRefusal } from "./rest/request.js";
import { readBody } from "./http.js";

/** A call request is a small JSON object (bytes). */
export const MAX_CALL_REQUEST_BYTES = 8 * 1024;
/** Calls the deployment places a minute by default (`SWITCHBOARD_CALLS_PER_MINUTE`). */
export const DEFAULT_CALLS_PER_MINUTE = 30;

const FIELDS = ["agent", "carrier", "to", "from"] as const;

/** Why Exotel cannot (its "Connect Number to Call Flow" API). */
const EXOTEL_WHY =
  ": Exotel's connect-call API sends the callee to a flow built in its dashboard (Url = its start_voice/<app_id>), not to a URL the gateway names, so the call could carry no placement, and Exotel signs nothing the gateway could bind it with";

/** What placing a call takes, whoever asks (the HTTP handler, a workflow). */
export interface PlacingDeps {
  readonly log: Logger;
  readonly config: AgentConfig;
  readonly voicemail: ResolvedVoicemail | undefined;
  readonly mounted: ReadonlySet<string>;
  readonly access: Readonly<Partial<Record<CarrierName, CarrierAccess>>>;
  readonly client: CarrierClient;
  readonly placements: PlacedCalls;
  readonly coordinator: Coordinator;
  readonly perMinute: number;
  readonly draining: () => boolean;
  /** Where a call's status reports wait for it (a workflow's calls). */
  readonly reports: CallReports;
}

export interface OutboundCallsDeps {
  /** `SWITCHBOARD_API_KEY`; undefined: auth is off, and so is placing calls. */
  readonly apiKey: string | undefined;
  readonly config: AgentConfig;
  readonly log: Logger;
  readonly place: CallPlacing;
  /** The public base URL carriers reach the gateway at (`https://gw.example.com`), for this request. */
  readonly httpBase: (req: IncomingMessage) => string;
}

/** What a call to place names, unchecked (a stranger's request body, or a workflow's). */
export interface CallFields {
  readonly carrier: unknown;
  readonly to: unknown;
  readonly from: unknown;
}

export interface PlacingOptions {
  /** The public base URL the carrier reaches the gateway at (`https://gw.example.com`). */
  readonly httpBase: string;
  /** A workflow's call: its session sees this (`sessionContext({ outbound })`). */
  readonly outbound?: OutboundCall;
  /** The engine token its outcome goes to: the carrier then reports the call's end to `/telephony/<carrier>/status/<ticket>`. */
  readonly reportTo?: string;
  /** With `reportTo`: how long the callee's phone rings (s). */
  readonly ringS?: number;
}

/** A call placed, or why not: `status` the HTTP status the refusal maps to; `carrier` when the carrier's API refused or could not be reached. */
export type Placing =
  | { readonly ok: true; readonly carrier: CarrierName; readonly to: string; readonly from: string; readonly callId?: string; readonly answeringMachineDetection: string }
  | {
      readonly ok: false;
      readonly status: number;
      readonly error: string;
      readonly field?: string;
      readonly carrier?: "refused" | "unreachable";
      /** The same request may succeed later (the budget, the coordinator, the carrier's own 5xx or 429). */
      readonly retryable?: true;
    };

/** Place one call: the whole check, the budget, the placement, the carrier's REST request. */
export type CallPlacing = (fields: CallFields, options: PlacingOptions) => Promise<Placing>;

/** `SWITCHBOARD_CALLS_PER_MINUTE`: a whole number ≥ 1; throws naming the variable and the fix. */
export function parseCallsPerMinute(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_CALLS_PER_MINUTE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`SWITCHBOARD_CALLS_PER_MINUTE: ${JSON.stringify(value)} is not a whole number ≥ 1; set how many calls the gateway may place a minute (default ${DEFAULT_CALLS_PER_MINUTE})`);
  return n;
}

type Checked = { readonly carrier: CarrierName; readonly to: string; readonly from: string } | { readonly status: number; readonly error: string; readonly field?: string };

/** A request's own fields (the agent), before the call's: the first refusal, or undefined. */
function checkRequest(config: AgentConfig, body: Record<string, unknown>): { readonly status: number; readonly error: string; readonly field?: string } | undefined {
  const unknown = Object.keys(body).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) return { status: 400, field: unknown[0] as string, error: `${unknown.join(", ")}: not a field of a call; send { agent, carrier, to, from }` };
  const { agent } = body;
  const name = config.name;
  if (typeof agent !== "string") return { status: 400, field: "agent", error: `agent: required, the agent's name ("${name}")` };
  if (agent !== name) return { status: 404, field: "agent", error: `agent: no agent ${JSON.stringify(agent)} here; this gateway serves "${name}"` };
  return undefined;
}

/** The call's fields checked against the agent and the carrier; the first refusal. */
function check(deps: PlacingDeps, fields: CallFields): Checked {
  const { carrier, to, from } = fields;
  const name = deps.config.name;
  if (typeof carrier !== "string" || !(CARRIERS as readonly string[]).includes(carrier)) return { status: 400, field: "carrier", error: `carrier: must be one of ${CARRIERS.join(", ")}` };
  const named = carrier as CarrierName;
  if (!deps.mounted.has(named)) return { status: 400, field: "carrier", error: `carrier: ${named} is not enabled for agent ${name}: add it to the agent's telephony field` };
  if (!PLACING_CARRIERS.includes(named) || deps.client.placeCall === undefined) {
    return { status: 400, field: "carrier", error: `carrier: ${named} cannot place calls from this gateway${named === "exotel" ? EXOTEL_WHY : ""} (${PLACING_CARRIERS.join(", ")} can; see docs/telephony.md "Placing calls")` };
  }
  // The call comes back through the voice webhook (and its AMD verdict through a callback): both must verify.
  if (deps.access[named] !== "signed") return { status: 400, field: "carrier", error: `carrier: ${named}'s webhooks are not signed here, so the call could not be told from a stranger's: set ${SECRET_VARIABLE[named]}` };
  const missing = deps.client.placingRefusal?.(named);
  if (missing !== undefined) return { status: 400, field: "carrier", error: `carrier: ${named} has no REST credentials to place calls with here: ${missing}` };
  if (typeof to !== "string" || !E164.test(to)) return { status: 400, field: "to", error: 'to: must be an E.164 number: "+", the country code and the number, digits only, e.g. "+14155550123"' };
  if (typeof from !== "string" || !E164.test(from)) return { status: 400, field: "from", error: 'from: must be an E.164 number the carrier lets you call from, e.g. "+14155550100"' };
  return { carrier: named, to, from };
}

/** The placing core: `POST /v1/calls` and a workflow's `ctx.calls.place` both place through it. */
export function callPlacing(deps: PlacingDeps): CallPlacing {
  const { log } = deps;
  const carrierDetection = deps.voicemail !== undefined && deps.voicemail.detection !== "local";
  return async (fields, options) => {
    if (deps.draining()) return { ok: false, status: 503, error: "gateway draining: place the call on another instance", retryable: true };
    const checked = check(deps, fields);
    if ("status" in checked) return { ok: false, ...checked };
    const admitted = await deps.coordinator.admit("calls placed", deps.perMinute).catch(() => false);
    if (!admitted) return { ok: false, status: 429, error: `more than ${deps.perMinute} calls placed a minute (SWITCHBOARD_CALLS_PER_MINUTE); retry later`, retryable: true };
    const { carrier, to, from } = checked;
    const ticket = await deps.placements.open({ carrier, carrierDetection, from, to, ...(options.outbound === undefined ? {} : { outbound: options.outbound }) });
    if (ticket === undefined) return { ok: false, status: 503, error: "the gateway could not keep the call's placement now; try again", retryable: true };
    if (options.reportTo !== undefined && !(await deps.reports.open(ticket, carrier, options.reportTo))) {
      await deps.placements.cancel(ticket);
      return { ok: false, status: 503, error: "the gateway could not keep the call's status report now; try again", retryable: true };
    }
    const base = `${options.httpBase}/telephony/${carrier}`;
    const windowS = (deps.voicemail?.windowMs ?? 0) / 1000;
    let callId: string | undefined;
    try {
      callId = await deps.client.placeCall?.({
        carrier,
        to,
        from,
        url: `${base}/voice?placed=${ticket}`,
        ...(carrierDetection ? { amd: { callbackUrl: `${base}/amd/${ticket}`, timeoutS: windowS, beepWaitS: (deps.voicemail?.beepWaitMs ?? 0) / 1000 } } : {}),
        ...(options.reportTo === undefined ? {} : { status: { callbackUrl: `${base}/status/${ticket}`, timeoutS: options.ringS ?? DEFAULT_RING_S } }),
      });
    } catch (err) {
      await deps.placements.cancel(ticket);
      await deps.reports.drop(ticket);
      log.warn({ carrier, err }, "call not placed: the carrier refused");
      const error = `${carrier} did not place the call: ${err instanceof Error ? err.message : String(err)}`;
      if (!(err instanceof CarrierRefusal)) return { ok: false, status: 502, error, carrier: "unreachable" };
      return { ok: false, status: 502, error, carrier: "refused", ...(err.status >= 500 || err.status === 429 ? { retryable: true as const } : {}) };
    }
    log.info({ carrier, callId, carrierDetection, workflow: options.outbound?.workflow }, "call placed");
    return { ok: true, carrier, to, from, ...(callId === undefined ? {} : { callId }), answeringMachineDetection: deps.voicemail === undefined ? "off" : deps.voicemail.detection };
  };
}

/** How long a workflow's call rings before the carrier reports `no-answer` (s): Telnyx's default. */
export const DEFAULT_RING_S = 30;

/** The `POST /v1/calls` handler. */
export function outboundCalls(deps: OutboundCallsDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { log } = deps;
  return async (req, res) => {
    if (deps.apiKey === undefined) return json(res, 403, { error: "placing calls is off while auth is off (anyone could call any number on your bill): set SWITCHBOARD_API_KEY" });
    if (!keyMatches(deps.apiKey, bearer(req.headers.authorization))) {
      log.warn({ remote: req.socket.remoteAddress }, "call refused: bad api key");
      return json(res, 401, { error: "send your API key as Authorization: Bearer <key>" }, { "www-authenticate": "Bearer" });
    }
    const text = await readBody(req, MAX_CALL_REQUEST_BYTES);
    if (text === undefined) return json(res, 413, { error: `the request is over ${MAX_CALL_REQUEST_BYTES} bytes; send { agent, carrier, to, from }` });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return json(res, 400, { error: "the body must be a JSON object: { agent, carrier, to, from }" });
    const fields = body as Record<string, unknown>;
    const refusal = checkRequest(deps.config, fields);
    if (refusal !== undefined) return json(res, refusal.status, { error: refusal.error, ...(refusal.field === undefined ? {} : { field: refusal.field }) });
    const placed = await deps.place({ carrier: fields.carrier, to: fields.to, from: fields.from }, { httpBase: deps.httpBase(req) });
    if (!placed.ok) return json(res, placed.status, { error: placed.error, ...(placed.field === undefined ? {} : { field: placed.field }) }, placed.status === 429 ? { "retry-after": "60" } : {});
    const { ok: _ok, ...answer } = placed;
    return json(res, 201, { agent: deps.config.name, ...answer });
  };
}
