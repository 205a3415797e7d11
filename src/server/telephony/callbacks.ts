/**
 * The requests a carrier makes back to the gateway about a call it already knows, each signed by
 * the carrier and answered once: an answering-machine verdict on a call the gateway placed
 * (docs/telephony.md "Voicemail and answering machines"), a status report on a call a workflow
 * placed (docs/telephony.md "Placing calls"), and what a transfer asks for (docs/telephony.md
 * "Transfer"). The telephony endpoints (index.ts) route them here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../log.js";
import type { CallOutcome } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import { carrierVerdict } from "../../voicemail/answered-by.js";
import type { Coordinator } from "../coordination.js";
import type { CarrierVerdicts } from "./amd-verdicts.js";
import { amdReport } from "./amd-reports.js";
import type { CallReports } from "./call-reports.js";
import { callStatusReport } from "./call-status.js";
import { firstUse, type CallTickets } from "./answered-calls.js";
import { send } from "./http.js";
import type { PlacedCalls } from "./placed-calls.js";
import { hangupTwiml } from "./transfer-instructions.js";
import { dialReport, type CallTransfers } from "./transfers.js";
import { spread } from "../../spread.js";

export interface CarrierCallbackDeps {
  readonly log: Logger;
  readonly coordinator: Coordinator;
  readonly tickets: CallTickets;
  readonly transfers: CallTransfers;
  readonly placements: PlacedCalls;
  readonly verdicts: CarrierVerdicts;
  readonly reports: CallReports;
  /** Deliver a workflow call's outcome to the run listening on `token`. */
  readonly report: (token: string, outcome: CallOutcome) => Promise<boolean>;
  /** How long a placed call's verdict may be bound to it (ms): the call's limit and a minute. */
  readonly bindMs: number;
  /** The callback's body and signature once verified; undefined once refused (answered already). */
  readonly signed: (req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName, method: string) => Promise<{ body: string; signature: string } | undefined>;
  /** Answer `status` with `why`, logged (throttled). */
  readonly refused: (res: ServerResponse, carrier: string, status: number, why: string) => void;
  /** The public base URL (`https://gw.example.com`) the carrier reached the gateway at. */
  readonly httpBase: (req: IncomingMessage) => string;
  /** Answer with the instructions that stream the call to the stream URL `ticket` opens. */
  readonly streamTo: (req: IncomingMessage, res: ServerResponse, carrier: CarrierName, ticket: string) => void;
}

export class CarrierCallbacks {
  readonly #deps: CarrierCallbackDeps;

  constructor(deps: CarrierCallbackDeps) {
    this.#deps = deps;
  }

  /** A carrier's POSTed callback, signed and seen for the first time: its body; else answered (405, the signature's refusal, 403 for a replay) and undefined. */
  async #signedOnce(req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName): Promise<string | undefined> {
    const { signed, refused, coordinator } = this.#deps;
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" });
      res.end();
      return undefined;
    }
    const verified = await signed(req, res, url, carrier, "POST");
    if (verified === undefined) return undefined;
    if (await firstUse(coordinator, carrier, verified.signature)) return verified.body;
    refused(res, carrier, 403, "this signed callback was already answered: a replay is not acted on");
    return undefined;
  }

  /**
   * A carrier's answering-machine verdict on a call the gateway placed (amd-reports.ts: Twilio's and
   * Telnyx TeXML's `AsyncAmdStatusCallback`, Plivo's `machine_detection_url`, Vonage's `event_url`):
   * signed, seen once, for the call its placement was bound to; then on to that call's session
   * (amd-verdicts.ts). A machine verdict leaves room for one more: its greeting's end (Vonage's beep).
   * Vonage's other events of the call come here too: answered 204, nothing taken.
   */
  async amd(req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName, ticket: string): Promise<void> {
    const { refused, placements, verdicts, log, bindMs } = this.#deps;
    const body = await this.#signedOnce(req, res, url, carrier);
    if (body === undefined) return;
    const report = amdReport(carrier, url, body);
    if (report.kind === "invalid") return refused(res, carrier, 400, report.why);
    if (report.kind === "progress") {
      res.writeHead(204);
      res.end();
      return;
    }
    const { answeredBy, callId } = report;
    const verdict = carrierVerdict(answeredBy);
    const greetingEnd = verdict.kind === "machine" && verdict.greetingEnded;
    const bound = await placements.amdFor(ticket, callId, bindMs, greetingEnd);
    if (bound === "unknown" || callId === undefined) return refused(res, carrier, 404, "no call placed by this gateway waits for this verdict (unknown, expired or already reported)");
    if (bound === "another call") return refused(res, carrier, 403, "the verdict names another call than the one its callback was bound to");
    if (verdict.kind === "machine" && !greetingEnd && !(await placements.expectGreetingEnd(ticket, callId, bindMs))) {
      log.warn({ carrier }, "a machine's greeting end could not be awaited: the message waits for the gateway's own signs of it");
    }
    const outcome = await verdicts.deliver(callId, verdict);
    log.info({ carrier, answeredBy, delivered: outcome }, "answering-machine verdict");
    res.writeHead(204);
    res.end();
  }

  /**
   * A carrier's status callback on a call a workflow placed (Twilio's and Telnyx TeXML's
   * `StatusCallback`, event `completed`): signed, seen once, for the placement it names and the
   * call its voice webhook named; the end of a call nobody answered becomes the run's outcome.
   * Any other status (the call still going, or answered: its session reports) takes nothing: 204.
   */
  async status(req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName, ticket: string): Promise<void> {
    const { refused, reports, report, log } = this.#deps;
    const body = await this.#signedOnce(req, res, url, carrier);
    if (body === undefined) return;
    const parsed = callStatusReport(carrier, url, body);
    if ("invalid" in parsed) return refused(res, carrier, 400, parsed.invalid);
    const taken = await reports.status(ticket, carrier, parsed);
    if (taken.kind === "unknown") return refused(res, carrier, 404, "no call placed by this gateway waits for this report (unknown, expired or already reported)");
    if (taken.kind === "another call") return refused(res, carrier, 403, "the report names another call than the one its callback was bound to");
    if (taken.kind === "outcome") {
      const delivered = await report(taken.token, taken.outcome);
      log.info({ carrier, status: taken.outcome.status, delivered }, "placed call ended unanswered");
    }
    res.writeHead(204);
    res.end();
  }

  /**
   * A carrier's request a transfer made (docs/telephony.md "Transfer"), signed by the carrier and
   * answered once: a kept document (Plivo's `aleg_url`; a warm dial's whisper: Twilio `<Number url>`,
   * Plivo `confirmSound`, Vonage `onAnswer`, the `Url` of Telnyx's call to the person), or a warm
   * dial's outcome (Twilio and Plivo `<Dial action>`, Vonage's synchronous `eventUrl`, Telnyx's
   * conference `join` and call `StatusCallback`): hang up, or reconnect the caller to the session it
   * left. Vonage and Telnyx may report states that decide nothing: answered 204, taking nothing.
   */
  async transfer(req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName, kind: string, ticket: string): Promise<void> {
    const { signed, refused, transfers, tickets, log, streamTo, httpBase } = this.#deps;
    const verified = await signed(req, res, url, carrier, req.method ?? "GET");
    if (verified === undefined) return;
    const { body } = verified;
    if (kind === "transfer") {
      const document = await transfers.document(ticket);
      if (document === undefined) return refused(res, carrier, 404, "the transfer document is unknown, expired or already fetched");
      return send(res, 200, carrier === "vonage" ? "application/json; charset=utf-8" : "text/xml; charset=utf-8", document);
    }
    const report = dialReport(carrier, body);
    if (report === "pending") {
      res.writeHead(204);
      res.end();
      return;
    }
    const outcome = await transfers.dialed(ticket, report);
    if (outcome === undefined) return refused(res, carrier, 404, "the dial outcome is unknown, expired or already reported");
    if (outcome.kind === "taken") {
      log.info({ carrier }, "warm transfer taken");
      if (carrier === "twilio" || carrier === "plivo") return send(res, 200, "text/xml; charset=utf-8", hangupTwiml());
      // Vonage: the connect goes on; when it ends the NCCO has nothing more, and the call ends. Telnyx: the room's end ends the call.
      res.writeHead(204);
      res.end();
      return;
    }
    log.info({ carrier }, "warm transfer not taken: the caller comes back to the agent");
    if (carrier === "telnyx") {
      // A status callback's answer is not run: the REST API puts the caller on the fresh stream.
      try {
        await transfers.bringBack(outcome.call, outcome.resume, httpBase(req));
      } catch (error) {
        log.error({ carrier, err: error }, "warm transfer: the caller could not be brought back");
        return send(res, 502, "text/plain; charset=utf-8", "the caller could not be brought back\n");
      }
      res.writeHead(204);
      res.end();
      return;
    }
    const back = await tickets.issue(spread(outcome.call, { resume: outcome.resume }));
    if (back === undefined) return send(res, 503, "text/plain; charset=utf-8", "the gateway could not take this call back now\n");
    streamTo(req, res, carrier, back);
  }
}
