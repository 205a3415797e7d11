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
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../log.js";
import { CARRIERS, E164, type AgentConfig, type ResolvedVoicemail } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import { bearer, keyMatches } from "../auth.js";
import type { Coordinator } from "../coordination.js";
import { json } from "../json-reply.js";
import { PLACING_CARRIERS, type CarrierClient } from "./carrier-client.js";
import { SECRET_VARIABLE, type CarrierAccess } from "./entry-points.js";
import type { PlacedCalls } from "./placed-calls.js";
import { readBody } from "./http.js";

/** A call request is a small JSON object (bytes). */
export const MAX_CALL_REQUEST_BYTES = 8 * 1024;
/** Calls the deployment places a minute by default (`SWITCHBOARD_CALLS_PER_MINUTE`). */
export const DEFAULT_CALLS_PER_MINUTE = 30;

const FIELDS = ["agent", "carrier", "to", "from"] as const;

/** Why Exotel cannot (its "Connect Number to Call Flow" API). */
const EXOTEL_WHY =
  ": Exotel's connect-call API sends the callee to a flow built in its dashboard (Url = its start_voice/<app_id>), not to a URL the gateway names, so the call could carry no placement, and Exotel signs nothing the gateway could bind it with";

export interface OutboundCallsDeps {
  readonly log: Logger;
  readonly config: AgentConfig;
  readonly voicemail: ResolvedVoicemail | undefined;
  /** `SWITCHBOARD_API_KEY`; undefined: auth is off, and so is placing calls. */
  readonly apiKey: string | undefined;
  readonly mounted: ReadonlySet<string>;
  readonly access: Readonly<Partial<Record<CarrierName, CarrierAccess>>>;
  readonly client: CarrierClient;
  readonly placements: PlacedCalls;
  readonly coordinator: Coordinator;
  readonly perMinute: number;
  readonly draining: () => boolean;
  /** The public base URL carriers reach the gateway at (`https://gw.example.com`), for this request. */
  readonly httpBase: (req: IncomingMessage) => string;
}

/** `SWITCHBOARD_CALLS_PER_MINUTE`: a whole number ≥ 1; throws naming the variable and the fix. */
export function parseCallsPerMinute(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_CALLS_PER_MINUTE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`SWITCHBOARD_CALLS_PER_MINUTE: ${JSON.stringify(value)} is not a whole number ≥ 1; set how many calls the gateway may place a minute (default ${DEFAULT_CALLS_PER_MINUTE})`);
  return n;
}

type Checked = { readonly carrier: CarrierName; readonly to: string; readonly from: string } | { readonly status: number; readonly error: string; readonly field?: string };

/** The request's fields checked against the agent and the carrier; the first refusal. */
function check(deps: OutboundCallsDeps, body: Record<string, unknown>): Checked {
  const unknown = Object.keys(body).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) return { status: 400, field: unknown[0] as string, error: `${unknown.join(", ")}: not a field of a call; send { agent, carrier, to, from }` };
  const { agent, carrier, to, from } = body;
  const name = deps.config.name;
  if (typeof agent !== "string") return { status: 400, field: "agent", error: `agent: required, the agent's name ("${name}")` };
  if (agent !== name) return { status: 404, field: "agent", error: `agent: no agent ${JSON.stringify(agent)} here; this gateway serves "${name}"` };
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

/** The `POST /v1/calls` handler. */
export function outboundCalls(deps: OutboundCallsDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { log } = deps;
  const carrierDetection = deps.voicemail !== undefined && deps.voicemail.detection !== "local";
  return async (req, res) => {
    if (deps.apiKey === undefined) return json(res, 403, { error: "placing calls is off while auth is off (anyone could call any number on your bill): set SWITCHBOARD_API_KEY" });
    if (!keyMatches(deps.apiKey, bearer(req.headers.authorization))) {
      log.warn({ remote: req.socket.remoteAddress }, "call refused: bad api key");
      return json(res, 401, { error: "send your API key as Authorization: Bearer <key>" }, { "www-authenticate": "Bearer" });
    }
    const text = await readBody(req, MAX_CALL_REQUEST_BYTES);
    if (text === undefined) return json(res, 413, { error: `the request is over ${MAX_CALL_REQUEST_BYTES} bytes; send { agent, carrier, to, from }` });
    if (deps.draining()) return json(res, 503, { error: "gateway draining: place the call on another instance" });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return json(res, 400, { error: "the body must be a JSON object: { agent, carrier, to, from }" });
    const checked = check(deps, body as Record<string, unknown>);
    if ("status" in checked) return json(res, checked.status, { error: checked.error, ...(checked.field === undefined ? {} : { field: checked.field }) });
    const admitted = await deps.coordinator.admit("calls placed", deps.perMinute).catch(() => false);
    if (!admitted) return json(res, 429, { error: `more than ${deps.perMinute} calls placed a minute (SWITCHBOARD_CALLS_PER_MINUTE); retry later` }, { "retry-after": "60" });
    const { carrier, to, from } = checked;
    const ticket = await deps.placements.open({ carrier, carrierDetection });
    if (ticket === undefined) return json(res, 503, { error: "the gateway could not keep the call's placement now; try again" });
    const base = `${deps.httpBase(req)}/telephony/${carrier}`;
    const windowS = (deps.voicemail?.windowMs ?? 0) / 1000;
    let callId: string | undefined;
    try {
      callId = await deps.client.placeCall?.({
        carrier,
        to,
        from,
        url: `${base}/voice?placed=${ticket}`,
        ...(carrierDetection ? { amd: { callbackUrl: `${base}/amd/${ticket}`, timeoutS: windowS, beepWaitS: (deps.voicemail?.beepWaitMs ?? 0) / 1000 } } : {}),
      });
    } catch (err) {
      await deps.placements.cancel(ticket);
      log.warn({ carrier, err }, "call not placed: the carrier refused");
      return json(res, 502, { error: `${carrier} did not place the call: ${err instanceof Error ? err.message : String(err)}` });
    }
    log.info({ carrier, callId, carrierDetection }, "call placed");
    return json(res, 201, {
      agent: deps.config.name,
      carrier,
      to,
      from,
      ...(callId === undefined ? {} : { callId }),
      answeringMachineDetection: deps.voicemail === undefined ? "off" : deps.voicemail.detection,
    });
  };
}
