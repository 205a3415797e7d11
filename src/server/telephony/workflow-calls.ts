/**
 * `ctx.calls` on the gateway's side (docs/workflows.md "Calling out"): a workflow's step places a
 * call through the same core as `POST /v1/calls` (outbound-calls.ts: the same checks, budget and
 * placements), pointed at the agent's own voice webhook under `SWITCHBOARD_PUBLIC_URL` (there is no
 * request to take a base URL from), with the carrier's status callback on. The call's session sees
 * the run (`sessionContext({ outbound })`); its outcome goes back to the run through the engine's
 * `deliver`, under the token the run listens on (call-reports.ts says which outcome, when).
 *
 * Only Twilio and Telnyx: they report a call nobody answered (`no-answer`, `busy`, …) to a URL the
 * request names, signed; the gateway reads no such report from Plivo or Vonage yet, so it refuses
 * them here rather than leave a run waiting for an outcome that cannot come.
 */
import { PermanentStepError, type CallOutcome, type CallRequest, type OutboundCall, type PlacedCall } from "../../manifest/index.js";
import { E164 } from "../../manifest/index.js";
import type { Logger } from "../../log.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { CallPlacement, CallPlacer, EnginePort } from "../../workflows/engine.js";
import type { CallPlacing } from "./outbound-calls.js";

/** The carriers a workflow can call through: their status callbacks report the calls nobody answered. */
export const REPORTING_CARRIERS: readonly CarrierName[] = ["twilio", "telnyx"];

const REQUEST_FIELDS = ["to", "from", "carrier", "why", "context"];
/** `why`, in characters. */
export const MAX_WHY_CHARS = 500;
/** `context`, as JSON (bytes). */
export const MAX_CALL_CONTEXT_BYTES = 8 * 1024;

export interface WorkflowCallsDeps {
  readonly log: Logger;
  readonly place: CallPlacing;
  /** The carriers the agent's `telephony` mounts. */
  readonly mounted: readonly CarrierName[];
  /** `SWITCHBOARD_PUBLIC_URL`: where the carrier reaches the gateway. */
  readonly publicUrl: URL | undefined;
  /** `SWITCHBOARD_CALLS_FROM`: the number to call from when a request names none. */
  readonly from: string | undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A refusal no retry changes: the step fails at once with it. */
function refuse(field: string, message: string): never {
  throw new PermanentStepError(`ctx.calls.place: ${field}: ${message}`);
}

export class WorkflowCalls implements CallPlacer {
  readonly #deps: WorkflowCallsDeps;
  #port: EnginePort | undefined;

  constructor(deps: WorkflowCallsDeps) {
    this.#deps = deps;
  }

  attach(port: EnginePort | undefined): void {
    this.#port = port;
  }

  async place(request: CallRequest, placement: CallPlacement): Promise<PlacedCall> {
    const outbound = this.#check(request, placement);
    const { log } = this.#deps;
    const journal = this.#port?.placings;
    // The engine places its calls only while open, so this is a caller that skipped it.
    if (journal === undefined) throw new Error("ctx.calls.place: no workflow engine is open in this process");
    const { carrier, to, from } = outbound;
    const key = placement.idempotencyKey;
    const claim = await journal.claim(key);
    if (claim.state === "placed") return claim.call;
    if (claim.state === "dialing") {
      log.warn({ runId: placement.runId, carrier }, "workflow call not dialled again: an earlier try may have placed it");
      return { token: placement.token, carrier, to, from, uncertain: true };
    }
    const base = (this.#deps.publicUrl as URL).origin + (this.#deps.publicUrl as URL).pathname.replace(/\/$/, "");
    const placing = await this.#deps.place({ carrier, to, from }, { httpBase: base, outbound, reportTo: placement.token });
    if (placing.ok) {
      const call: PlacedCall = { token: placement.token, carrier, to, from, ...(placing.callId === undefined ? {} : { callId: placing.callId }) };
      await journal.settle(key, call);
      return call;
    }
    // No answer from the carrier's API: it may have dialled. The claim stays; a retry answers `uncertain`.
    if (placing.carrier === "unreachable") throw new Error(`ctx.calls.place: ${placing.error}`);
    await journal.release(key);
    if (placing.retryable === true) throw new Error(`ctx.calls.place: ${placing.error}`);
    throw new PermanentStepError(`ctx.calls.place: ${placing.error}`);
  }

  /** Deliver `outcome` to the run listening on `token`; false when none is (the run ended, or is in another process). */
  async report(token: string, outcome: CallOutcome): Promise<boolean> {
    const port = this.#port;
    if (port === undefined) {
      this.#deps.log.warn({ status: outcome.status }, "workflow call outcome not delivered: no workflow engine is open in this process");
      return false;
    }
    try {
      const delivered = await port.deliver(token, outcome);
      this.#deps.log.info({ status: outcome.status, delivered }, "workflow call outcome");
      return delivered;
    } catch (err) {
      this.#deps.log.error({ err }, "workflow call outcome not delivered");
      return false;
    }
  }

  /** The request checked (a body's data: checked as any stranger's), as the call's session will see it. */
  #check(request: CallRequest, placement: CallPlacement): OutboundCall {
    if (!isPlainObject(request)) refuse("request", "must be an object { to, from?, carrier?, why?, context? }");
    const unknown = Object.keys(request).filter((name) => !REQUEST_FIELDS.includes(name));
    if (unknown.length > 0) refuse(unknown[0] as string, `not a field of a call; the fields are ${REQUEST_FIELDS.join(", ")}`);
    const { mounted, publicUrl } = this.#deps;
    const reporting = mounted.filter((name) => REPORTING_CARRIERS.includes(name));
    let carrier = request.carrier;
    if (carrier === undefined) {
      if (reporting.length !== 1) refuse("carrier", reporting.length === 0 ? "the agent's telephony mounts neither twilio nor telnyx, the carriers a workflow can call through" : `required: the agent mounts ${reporting.join(" and ")}`);
      carrier = reporting[0];
    }
    if (typeof carrier !== "string" || !REPORTING_CARRIERS.includes(carrier as CarrierName)) {
      refuse("carrier", `must be ${REPORTING_CARRIERS.join(" or ")}: their status callbacks report a call nobody answered back to the run (this gateway reads no such report from ${JSON.stringify(carrier)})`);
    }
    if (publicUrl === undefined) refuse("SWITCHBOARD_PUBLIC_URL", "not set: a workflow's call has no request to take the gateway's address from; set it to the https:// address carriers reach this gateway at");
    const to = request.to;
    if (typeof to !== "string" || !E164.test(to)) refuse("to", 'must be an E.164 number: "+", the country code and the number, digits only, e.g. "+14155550123"');
    const from = request.from ?? this.#deps.from;
    if (from === undefined) refuse("from", "required: name the number to call from, or set SWITCHBOARD_CALLS_FROM");
    if (typeof from !== "string" || !E164.test(from)) refuse("from", 'must be an E.164 number the carrier lets you call from, e.g. "+14155550100"');
    const why = request.why;
    if (why !== undefined && (typeof why !== "string" || why.length > MAX_WHY_CHARS)) refuse("why", `must be a sentence of at most ${MAX_WHY_CHARS} characters`);
    const context = request.context ?? placement.context;
    if (!isPlainObject(context)) refuse("context", "must be an object of plain JSON data");
    let json: string | undefined;
    try {
      json = JSON.stringify(context);
    } catch {
      json = undefined;
    }
    if (json === undefined) refuse("context", "must be plain JSON data");
    if (Buffer.byteLength(json) > MAX_CALL_CONTEXT_BYTES) refuse("context", `is ${Buffer.byteLength(json)} bytes as JSON; at most ${MAX_CALL_CONTEXT_BYTES}`);
    return {
      runId: placement.runId,
      workflow: placement.workflow,
      carrier,
      to,
      from,
      ...(why === undefined ? {} : { why }),
      context: JSON.parse(json) as OutboundCall["context"],
    };
  }
}
