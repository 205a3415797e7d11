/**
 * Where a workflow's placed call reports how it went (docs/telephony.md "Placing calls", "Status
 * reports"): the placement ticket keeps, besides the placement, the engine token the outcome goes
 * to. One outcome per call, taken once:
 *
 * - never answered by the gateway: the carrier's signed status callback (`no-answer`, `busy`,
 *   `failed`, `canceled`; `completed` with no voice webhook answered is a `failed` the gateway
 *   never took) — bound, like the AMD callback, to the call the voice webhook named once it has;
 * - answered: the call's session, when it ends (the carrier's `completed` then decides nothing).
 *
 * Kept by the coordinator, so every process of the deployment agrees (coordination.ts).
 */
import type { CallOutcome } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { TICKET } from "./answered-calls.js";
import { spread } from "../../spread.js";

/** What the ticket's report record holds. */
interface Report {
  readonly carrier: CarrierName;
  readonly token: string;
  /** The voice webhook came: the session reports the outcome. */
  readonly answered: boolean;
  /** The call the voice webhook named. */
  readonly callId?: string;
}

/** A carrier's status report on a placed call, read from its callback (call-status.ts). */
export interface StatusReport {
  readonly callId: string | undefined;
  /** The carrier's `CallStatus`. */
  readonly status: string;
}

/** The statuses a call ends in, as Twilio and Telnyx TeXML name them. */
const ENDED = new Set(["completed", "busy", "no-answer", "failed", "canceled"]);

export type ReportTaken =
  | { readonly kind: "unknown" }
  | { readonly kind: "another call" }
  /** Not the end, or the end of an answered call (its session reports): nothing taken. */
  | { readonly kind: "pending" }
  | { readonly kind: "outcome"; readonly token: string; readonly outcome: CallOutcome };

export class CallReports {
  readonly #coordinator: Coordinator;
  /** How long a report waits (ms): the ringing, then the call's limit. */
  readonly #ttlMs: number;

  constructor(coordinator: Coordinator, ttlMs: number) {
    this.#coordinator = coordinator;
    this.#ttlMs = ttlMs;
  }

  /** The call placed under `ticket` reports to `token`; false when the coordinator could not keep it. */
  open(ticket: string, carrier: CarrierName, token: string): Promise<boolean> {
    return this.#put(ticket, { carrier, token, answered: false });
  }

  /** The carrier refused the call: nothing will report. */
  async drop(ticket: string): Promise<void> {
    await this.#coordinator.take(`report:${ticket}`);
  }

  /** The call's signed voice webhook came, naming `callId`: its session reports from now on. True when the call reports at all. */
  async answered(ticket: string, callId: string | undefined): Promise<boolean> {
    const report = await this.#take(ticket);
    if (report === undefined) return false;
    await this.#put(ticket, spread(report, { answered: true, ...(callId === undefined ? {} : { callId }) }));
    return true;
  }

  /** A signed status callback for `ticket`: the outcome, once, when it ends a call nobody answered. */
  async status(ticket: string, carrier: CarrierName, report: StatusReport): Promise<ReportTaken> {
    const held = await this.#take(ticket);
    if (held === undefined || held.carrier !== carrier) {
      if (held !== undefined) await this.#put(ticket, held);
      return { kind: "unknown" };
    }
    if (held.callId !== undefined && report.callId !== held.callId) {
      await this.#put(ticket, held);
      return { kind: "another call" };
    }
    if (!ENDED.has(report.status) || held.answered) {
      await this.#put(ticket, held);
      return { kind: "pending" };
    }
    const callId = report.callId === undefined ? {} : { callId: report.callId };
    const outcome: CallOutcome =
      report.status === "completed"
        ? { status: "failed", ...callId, reason: "the call connected, but the gateway never answered its voice webhook" }
        : { status: report.status as "no-answer" | "busy" | "failed" | "canceled", ...callId };
    return { kind: "outcome", token: held.token, outcome };
  }

  /** The answered call's session ended: the token its outcome goes to, once. */
  async sessionEnded(ticket: string): Promise<{ token: string; callId?: string } | undefined> {
    const held = await this.#take(ticket);
    return held === undefined ? undefined : { token: held.token, ...(held.callId === undefined ? {} : { callId: held.callId }) };
  }

  async #take(ticket: string): Promise<Report | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    const held = await this.#coordinator.take(`report:${ticket}`);
    if (held === undefined) return undefined;
    try {
      const report = JSON.parse(held) as Partial<Report>;
      if (typeof report.carrier !== "string" || typeof report.token !== "string" || typeof report.answered !== "boolean") return undefined;
      return { carrier: report.carrier, token: report.token, answered: report.answered, ...(typeof report.callId === "string" ? { callId: report.callId } : {}) };
    } catch {
      return undefined;
    }
  }

  #put(ticket: string, report: Report): Promise<boolean> {
    return this.#coordinator.hold(`report:${ticket}`, JSON.stringify(report), this.#ttlMs);
  }
}
