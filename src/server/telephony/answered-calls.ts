/**
 * The calls this gateway answered, and nobody else's (issue 14 items 3 and 6). A carrier's voice
 * webhook, once its signature verifies, names the call (Twilio/Telnyx `CallSid`, Plivo
 * `CallUUID`, Vonage `uuid`); the gateway mints a single-use ticket bound to that call and puts it
 * in the stream URL it answers with. The stream upgrade must redeem the ticket, and the REST API
 * (hang-up) is only ever called with the call id the ticket carries — never with one a stream
 * claims for itself. A signed webhook seen once is refused when it comes again (a replay).
 */
import { createHash, randomBytes } from "node:crypto";
import type { OutboundCall } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { lineNumber } from "./caller-numbers.js";

/** A call the gateway answered: its carrier and, when the webhook named them, its call id (and Telnyx TeXML's `AccountSid`, which its REST API needs). */
export interface AnsweredCall {
  readonly carrier: CarrierName;
  readonly callId?: string | undefined;
  readonly accountId?: string | undefined;
  /** Telnyx TeXML: the gateway's own number on this call (E.164; the webhook's `To`, or `From` on a call it placed), a warm transfer's caller id. */
  readonly line?: string | undefined;
  /**
   * The numbers on the call (`SessionInfo.phone`): the signed webhook's on a call the carrier
   * brought (caller-numbers.ts), the placement's on one the gateway placed.
   */
  readonly phone?: CallNumbers | undefined;
  /** A caller coming back from a warm transfer nobody answered: the session to resume, and what it says first. */
  readonly resume?: { readonly sessionId: string; readonly notice: string } | undefined;
  /**
   * The gateway placed this call (`POST /v1/calls`, a workflow's `ctx.calls.place`);
   * `carrierDetection`: the carrier's AMD verdict will come for it; `outbound`: the workflow's
   * call, its session sees it; `report`: the placement ticket its session's end reports under.
   */
  readonly placed?: { readonly carrierDetection: boolean; readonly outbound?: OutboundCall | undefined; readonly report?: string | undefined } | undefined;
}

/** A call's numbers as a ticket carries them: each kept only as `lineNumber` allows. */
export interface CallNumbers {
  readonly direction: "inbound" | "outbound";
  readonly from?: string | undefined;
  readonly to?: string | undefined;
}

/** How long a minted ticket waits for its stream (ms): carriers connect within seconds of the answer. */
export const CALL_TICKET_TTL_MS = 120_000;

/** A ticket: 18 random bytes, base64url (24 characters, 144 bits). */
export const TICKET = /^[A-Za-z0-9_-]{24}$/;

/** Call ids as carriers make them (Twilio `CA…`, Telnyx `v3:…`, UUIDs); anything else is not kept. */
const CALL_ID = /^[A-Za-z0-9:._-]{1,128}$/;

/** A phone number in E.164. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

export class CallTickets {
  readonly #coordinator: Coordinator;
  readonly #ttlMs: number;

  constructor(coordinator: Coordinator, ttlMs = CALL_TICKET_TTL_MS) {
    this.#coordinator = coordinator;
    this.#ttlMs = ttlMs;
  }

  /** Mint a ticket for `call`; undefined when the coordinator could not keep it. */
  async issue(call: AnsweredCall): Promise<string | undefined> {
    const ticket = randomBytes(18).toString("base64url");
    const callId = call.callId !== undefined && CALL_ID.test(call.callId) ? call.callId : undefined;
    const accountId = call.accountId !== undefined && CALL_ID.test(call.accountId) ? call.accountId : undefined;
    const line = call.line !== undefined && E164.test(call.line) ? call.line : undefined;
    const kept = await this.#coordinator.hold(`ticket:${ticket}`, JSON.stringify({ carrier: call.carrier, callId, accountId, line, phone: numbersOf(call.carrier, call.phone), resume: call.resume, placed: call.placed }), this.#ttlMs);
    return kept ? ticket : undefined;
  }

  /** Redeem `ticket` for a stream of `carrier`: the call it was minted for, once; undefined after that, or for anything else. */
  async redeem(carrier: CarrierName, ticket: string): Promise<AnsweredCall | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    const held = await this.#coordinator.take(`ticket:${ticket}`);
    if (held === undefined) return undefined;
    let call: { carrier?: unknown; callId?: unknown; accountId?: unknown; line?: unknown; phone?: unknown; resume?: { sessionId?: unknown; notice?: unknown }; placed?: { carrierDetection?: unknown; outbound?: unknown; report?: unknown } };
    try {
      call = JSON.parse(held) as typeof call;
    } catch {
      return undefined;
    }
    if (call.carrier !== carrier) return undefined;
    const { resume } = call;
    const phone = numbersOf(carrier, call.phone);
    return {
      carrier,
      callId: typeof call.callId === "string" ? call.callId : undefined,
      accountId: typeof call.accountId === "string" ? call.accountId : undefined,
      line: typeof call.line === "string" ? call.line : undefined,
      ...(phone === undefined ? {} : { phone }),
      resume: typeof resume?.sessionId === "string" && typeof resume.notice === "string" ? { sessionId: resume.sessionId, notice: resume.notice } : undefined,
      placed: call.placed === undefined ? undefined : placedOf(call.placed),
    };
  }
}

/**
 * How long a signed webhook is remembered, so that the same one coming again is refused (ms).
 * Telnyx and Vonage sign a timestamp they check to ±300 s, so 600 s covers every instant their
 * signature is valid. Twilio and Plivo sign no time at all: their signatures never expire, so
 * the gateway remembers them for an hour (the window bounds the memory it costs); a copy replayed
 * later than that still needs the webhook's own secret-signed bytes, and its call has ended.
 */
export const REPLAY_WINDOW_MS: Readonly<Record<CarrierName, number>> = {
  telnyx: 600_000,
  vonage: 600_000,
  twilio: 3_600_000,
  plivo: 3_600_000,
  exotel: 0,
};

/**
 * True the first time this signature (with its nonce, for Plivo) is presented within its window;
 * false for a replay. Keys are hashes: the signatures themselves are not kept.
 */
export function firstUse(coordinator: Coordinator, carrier: CarrierName, signature: string): Promise<boolean> {
  const key = createHash("sha256").update(`${carrier}\n${signature}`).digest("base64url");
  return coordinator.hold(`seen:${key}`, "1", REPLAY_WINDOW_MS[carrier]);
}

/** The call id a carrier's voice webhook names, from its form body, JSON body or query; undefined when it names none. */
export function webhookCallId(carrier: CarrierName, url: URL, body: string): string | undefined {
  return webhookField(carrier === "plivo" ? "CallUUID" : carrier === "vonage" ? "uuid" : "CallSid", url, body);
}

/** The account a Telnyx TeXML webhook names (`AccountSid`): its update-call endpoint is under it. Other carriers: undefined. */
export function webhookAccountId(carrier: CarrierName, url: URL, body: string): string | undefined {
  return carrier === "telnyx" ? webhookField("AccountSid", url, body) : undefined;
}

/** The gateway's own number a Telnyx TeXML webhook names: `To` on a call it answered, `From` on one it placed. Other carriers: undefined. */
export function webhookLine(carrier: CarrierName, url: URL, body: string, placed: boolean): string | undefined {
  return carrier === "telnyx" ? webhookField(placed ? "From" : "To", url, body) : undefined;
}

/** A webhook parameter, from its query, JSON body or form body. */
export function webhookField(name: string, url: URL, body: string): string | undefined {
  const fromQuery = url.searchParams.get(name);
  if (fromQuery !== null && fromQuery !== "") return fromQuery;
  const trimmed = body.trimStart();
  if (trimmed.startsWith("{")) {
    try {
      const value = (JSON.parse(trimmed) as Record<string, unknown>)[name];
      return typeof value === "string" && value !== "" ? value : undefined;
    } catch {
      return undefined;
    }
  }
  const fromForm = new URLSearchParams(body).get(name);
  return fromForm === null || fromForm === "" ? undefined : fromForm;
}

/** A call's numbers, checked (minted from a webhook, or read back from a stored ticket): undefined without a direction; a number `lineNumber` refuses is left out. */
export function numbersOf(carrier: CarrierName, value: unknown): CallNumbers | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { direction, from, to } = value as Partial<Record<keyof CallNumbers, unknown>>;
  if (direction !== "inbound" && direction !== "outbound") return undefined;
  const kept = (number: unknown): string | undefined => (typeof number === "string" ? lineNumber(carrier, number) : undefined);
  const [keptFrom, keptTo] = [kept(from), kept(to)];
  return { direction, ...(keptFrom === undefined ? {} : { from: keptFrom }), ...(keptTo === undefined ? {} : { to: keptTo }) };
}

function placedOf(placed: { carrierDetection?: unknown; outbound?: unknown; report?: unknown }): NonNullable<AnsweredCall["placed"]> {
  const outbound = outboundOf(placed.outbound);
  return {
    carrierDetection: placed.carrierDetection === true,
    ...(outbound === undefined ? {} : { outbound }),
    ...(typeof placed.report === "string" && TICKET.test(placed.report) ? { report: placed.report } : {}),
  };
}

/** A placement's or ticket's `outbound`, read back (the gateway's own JSON, checked as any stored value is). */
export function outboundOf(value: unknown): OutboundCall | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const o = value as Partial<Record<keyof OutboundCall, unknown>>;
  const strings = [o.runId, o.workflow, o.carrier, o.to, o.from].every((field) => typeof field === "string");
  if (!strings || typeof o.context !== "object" || o.context === null || Array.isArray(o.context) || (o.why !== undefined && typeof o.why !== "string")) return undefined;
  return value as OutboundCall;
}
