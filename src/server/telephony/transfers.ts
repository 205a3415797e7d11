/**
 * Handing a call the gateway answered to a person (`transfer_call`, docs/telephony.md "Transfer"):
 * per carrier, what the stream's bridge may offer and the order sent to the carrier's REST API.
 * The REST API acts only on the call a verified webhook named (a `CallRef` from its ticket), and
 * only dials an allow-listed destination (the target was resolved from the agent's `transfer`).
 *
 * Plivo fetches its new instructions from a URL: the gateway keeps the `<Dial>` document under a
 * single-use, unguessable ticket (`/telephony/plivo/transfer/<ticket>`, 2 minutes) and serves it
 * once to a request whose Plivo signature verifies.
 *
 * Warm (Twilio, Plivo, Vonage): the dial names a whisper, kept as a document the same way (the
 * summary, heard by the person who answered before the caller is put through: Twilio `<Number url>`
 * / `<Sip url>`, Plivo `confirmSound`, Vonage `onAnswer`), and an outcome callback
 * (`/telephony/<carrier>/dialed/<ticket>`, kept for the ring time and a margin: Twilio and Plivo
 * `<Dial action>`, Vonage's synchronous `connect` `eventUrl`). When the dial ends with nobody having
 * taken the call, the callback reconnects the caller to a fresh stream that resumes the session,
 * which says so first.
 *
 * Warm on Telnyx TeXML: a conference. Telnyx documents `url` on `<Number>`/`<Sip>` for a document
 * holding `<Gather>` and `<Hangup>` (screening), not a spoken whisper, so the gateway moves the caller
 * into a room of its own (update call: `texmlConferenceWait`), then places the person's call through
 * TeXML's outbound-call API (`Url`: the whisper document, a `<Say>` of the summary, then the room;
 * `StatusCallback`: the outcome ticket). The person joining the room (the conference's `join` event)
 * takes the call; the call ending first (`no-answer`, `busy`, `failed`, `canceled`, or `completed`
 * by a person who hung up before joining) brings the caller back: Telnyx does not run what a status
 * callback answers, so the gateway updates the caller's call to a fresh ticketed stream itself.
 */
import { randomBytes } from "node:crypto";
import type { TransferMode, TransferTarget } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import type { Logger } from "../../log.js";
import { TICKET, type CallTickets } from "./answered-calls.js";
import type { CallRef, CarrierClient, TransferOrder } from "./carrier-client.js";
import {
  dialTwiml,
  plivoDialXml,
  plivoWhisperXml,
  texmlConferenceWait,
  texmlWhisperConference,
  vonageConnectNcco,
  vonageWhisperNcco,
  whisperTwiml,
  type WarmUrls,
} from "./transfer-instructions.js";
import { spread } from "../../spread.js";

/** How long a transfer document waits for its carrier's fetch (ms): the carrier asks within seconds of the REST call. */
export const TRANSFER_DOCUMENT_TTL_MS = 120_000;

/** What a carrier can do (docs/telephony.md "Transfer"); Exotel has no API that moves a call out of a Voicebot stream. */
export const TRANSFER_MODES: Readonly<Record<CarrierName, readonly TransferMode[]>> = {
  twilio: ["cold", "warm"],
  telnyx: ["cold", "warm"],
  plivo: ["cold", "warm"],
  vonage: ["cold", "warm"],
  exotel: [],
};

/** Why `carrier` cannot take `target` although it offers its mode (Vonage whispers only to a phone number); undefined when it can. */
export function transferRefusal(carrier: CarrierName, target: TransferTarget): string | undefined {
  if (carrier === "vonage" && target.mode === "warm" && target.address.kind === "sip") {
    return `A warm transfer to "${target.name}" is not possible on this call: its carrier reads a summary only to a phone number, not to a SIP address.`;
  }
  return undefined;
}

/** The carrier's requests a transfer makes: `/telephony/<carrier>/transfer/<ticket>` (a kept document), `/telephony/<carrier>/dialed/<ticket>` (a warm dial's outcome). */
export const TRANSFER_PATH = /^\/telephony\/(twilio|telnyx|plivo|vonage)\/(transfer|dialed)\/([^/]+)$/;

/** A warm dial's outcome callback waits this long past the ring time (ms): the whisper and the talk come first. */
const DIALED_MARGIN_MS = 4 * 3600_000;

/** Twilio `DialCallStatus` values that mean the person took the call; anything else (busy, no-answer, failed, canceled) comes back. */
const TWILIO_TAKEN = new Set(["completed", "answered"]);
/** Vonage `connect` states in which the NCCO its event URL answers replaces the call's: the dial failed. */
const VONAGE_FAILED = new Set(["timeout", "unanswered", "busy", "rejected", "failed"]);
/** Telnyx TeXML `CallStatus` values of a call that has ended (its `completed` status callback). */
const TELNYX_ENDED = new Set(["completed", "busy", "no-answer", "failed", "canceled"]);

/**
 * What a carrier's report on a warm dial says (pure; a body that says nothing usable is `pending`
 * on Vonage, which reports every state, and `back` elsewhere, whose one report ends the dial):
 * - Twilio `<Dial action>`, form `DialCallStatus`: `completed`/`answered` → taken.
 * - Plivo `<Dial action>`, form `DialStatus`: `completed` → taken.
 * - Vonage `eventUrl`, JSON `status`: `answered` → taken; a failed state → back; any other
 *   (`started`, `ringing`, `completed` after an answer) → pending: nothing to do.
 * - Telnyx, form: the conference's `StatusCallbackEvent=participant-join` → taken; the person's
 *   call's `CallStatus` once ended → back (had they joined, the join took the outcome already);
 *   anything else → pending.
 */
export function dialReport(carrier: CarrierName, body: string): "taken" | "back" | "pending" {
  switch (carrier) {
    case "twilio":
      return TWILIO_TAKEN.has(new URLSearchParams(body).get("DialCallStatus") ?? "") ? "taken" : "back";
    case "plivo":
      return new URLSearchParams(body).get("DialStatus") === "completed" ? "taken" : "back";
    case "vonage": {
      let status: unknown;
      try {
        status = (JSON.parse(body) as { status?: unknown } | null)?.status;
      } catch {
        return "pending";
      }
      if (status === "answered") return "taken";
      return typeof status === "string" && VONAGE_FAILED.has(status) ? "back" : "pending";
    }
    case "telnyx": {
      const form = new URLSearchParams(body);
      if (form.get("StatusCallbackEvent") === "participant-join") return "taken";
      return TELNYX_ENDED.has(form.get("CallStatus") ?? "") ? "back" : "pending";
    }
    case "exotel":
      return "back";
  }
}

/** What the agent says to a caller back from a warm transfer nobody took. */
export function notTakenNotice(destination: string): string {
  return `I'm sorry, nobody at ${destination} could take your call just now. I'm still here: how else can I help?`;
}

/** What runs after a warm dial: hang up (the two talked), or the caller comes back to the session. */
export type DialOutcome = { readonly kind: "taken" } | { readonly kind: "back"; readonly call: CallRef; readonly resume: { readonly sessionId: string; readonly notice: string } };

export interface CallTransfersDeps {
  readonly client: CarrierClient;
  readonly coordinator: Coordinator;
  readonly tickets: CallTickets;
  readonly log: Logger;
  /** Telnyx TeXML that streams the call to the gateway reached at `httpBase`, under `ticket`. */
  readonly telnyxStream: (httpBase: string, ticket: string) => string;
}

/** The bridge's side of a transfer: what it offers, what it refuses, and how it runs. */
export interface CallTransferPort {
  readonly modes: readonly TransferMode[];
  /** Why this call cannot take `target` although it offers its mode; undefined when it can. */
  refusal(target: TransferTarget): string | undefined;
  run(target: TransferTarget, sessionId: string): Promise<void>;
}

export class CallTransfers {
  readonly #deps: CallTransfersDeps;

  constructor(deps: CallTransfersDeps) {
    this.#deps = deps;
  }

  /** The port for a call the gateway answered, reached at `httpBase` (`https://gw.example.com`); undefined when it cannot be transferred. */
  port(call: CallRef, httpBase: string): CallTransferPort | undefined {
    const { client } = this.#deps;
    const modes = TRANSFER_MODES[call.carrier];
    if (modes.length === 0 || client.transfer === undefined || client.canTransfer?.(call) !== true) return undefined;
    const transfer = client.transfer.bind(client);
    return {
      modes,
      refusal: (target) => transferRefusal(call.carrier, target) ?? this.#placingRefusal(call, target),
      run: async (target, sessionId) => {
        if (call.carrier === "telnyx" && target.mode === "warm") return this.#telnyxWarm(call, target, httpBase, sessionId);
        return transfer(call, await this.#order(call, target, httpBase, sessionId));
      },
    };
  }

  /**
   * Why a warm transfer on Telnyx cannot place the person's call from here (credentials, or no
   * number of ours on the call), for the model; the operator's fix is logged. Undefined when it can.
   */
  #placingRefusal(call: CallRef, target: TransferTarget): string | undefined {
    if (call.carrier !== "telnyx" || target.mode !== "warm") return undefined;
    const lacking = call.line === undefined ? "the call's webhook named no number of ours (To) to call the person from" : this.#deps.client.placingRefusal?.("telnyx", call.accountId);
    if (lacking === undefined) return undefined;
    this.#deps.log.warn({ carrier: call.carrier, destination: target.name, why: lacking }, "warm transfer refused: the person's call cannot be placed");
    return `A warm transfer to "${target.name}" is not possible on this call: the gateway cannot place the call to the person.`;
  }

  async #order(call: CallRef, target: TransferTarget, httpBase: string, sessionId: string): Promise<TransferOrder> {
    const refusal = transferRefusal(call.carrier, target);
    if (refusal !== undefined) throw new Error(refusal);
    const warm = target.mode === "warm";
    switch (call.carrier) {
      case "twilio":
        return { kind: "twiml", twiml: dialTwiml(target, warm ? await this.#warm(call, target, whisperTwiml(target.summary ?? ""), httpBase, sessionId) : undefined) };
      case "telnyx":
        return { kind: "texml", texml: dialTwiml(target) };
      case "plivo": {
        const dial = plivoDialXml(target, warm ? await this.#warm(call, target, plivoWhisperXml(target.summary ?? ""), httpBase, sessionId) : undefined);
        return { kind: "plivo", alegUrl: `${httpBase}/telephony/plivo/transfer/${await this.#keep("transfer", dial, TRANSFER_DOCUMENT_TTL_MS)}` };
      }
      case "vonage":
        return { kind: "ncco", ncco: vonageConnectNcco(target, warm ? await this.#warm(call, target, JSON.stringify(vonageWhisperNcco(target.summary ?? "")), httpBase, sessionId) : undefined) };
      case "exotel":
        throw new Error("Exotel cannot transfer a call out of a Voicebot stream");
    }
  }

  /**
   * Warm on Telnyx: the caller into a room of its own (a refusal there leaves the caller with the
   * agent), then the person's call, whose document whispers the summary and joins the room. If the
   * carrier refuses that call, the caller is brought back at once.
   */
  async #telnyxWarm(call: CallRef, target: TransferTarget, httpBase: string, sessionId: string): Promise<void> {
    const { client, log, coordinator } = this.#deps;
    if (client.transfer === undefined || client.placeCall === undefined || call.line === undefined) throw new Error("this call cannot place the person's call");
    const room = `switchboard-${randomBytes(12).toString("base64url")}`;
    const urls = await this.#warm(call, target, (outcomeUrl) => texmlWhisperConference(target.summary ?? "", room, outcomeUrl), httpBase, sessionId);
    await client.transfer(call, { kind: "texml", texml: texmlConferenceWait(room) });
    const to = target.address.kind === "number" ? target.address.number : target.address.uri;
    try {
      await client.placeCall({ carrier: "telnyx", to, from: call.line, url: urls.whisperUrl, status: { callbackUrl: urls.actionUrl, timeoutS: target.ringTimeoutS }, accountId: call.accountId });
    } catch (error) {
      log.warn({ carrier: call.carrier, err: error }, "warm transfer: the person's call was refused; the caller comes back to the agent");
      if ((await coordinator.take(`dialed:${urls.dialedTicket}`)) === undefined) return;
      await this.bringBack(call, { sessionId, notice: notTakenNotice(target.name) }, httpBase).catch(async (back: unknown) => {
        log.error({ carrier: call.carrier, err: back }, "warm transfer: the caller could not be brought back; hanging up");
        await client.hangUp(call).catch(() => undefined);
      });
    }
  }

  /**
   * Telnyx: a caller whose warm transfer nobody took goes back to the session, on a fresh ticketed
   * stream the REST API puts the call on (Telnyx does not run what a status callback answers).
   * Rejects when the ticket cannot be kept or Telnyx refuses.
   */
  async bringBack(call: CallRef, resume: { readonly sessionId: string; readonly notice: string }, httpBase: string): Promise<void> {
    const { client, tickets, telnyxStream } = this.#deps;
    if (client.transfer === undefined) throw new Error("no REST API on this call");
    const ticket = await tickets.issue(spread(call, { resume }));
    if (ticket === undefined) throw new Error("the caller's return could not be kept");
    await client.transfer(call, { kind: "texml", texml: telnyxStream(httpBase, ticket) });
  }

  /**
   * Keep a warm dial's whisper and its outcome record under fresh tickets: where the carrier asks for
   * them. `whisper`: the document, or (Telnyx, whose whisper reports the join) made from the outcome URL.
   */
  async #warm(call: CallRef, target: TransferTarget, whisper: string | ((outcomeUrl: string) => string), httpBase: string, sessionId: string): Promise<WarmUrls & { readonly dialedTicket: string }> {
    const base = `${httpBase}/telephony/${call.carrier}`;
    const dialed = JSON.stringify({ sessionId, call, destination: target.name });
    const dialedTicket = await this.#keep("dialed", dialed, target.ringTimeoutS * 1000 + DIALED_MARGIN_MS);
    const actionUrl = `${base}/dialed/${dialedTicket}`;
    const document = typeof whisper === "string" ? whisper : whisper(actionUrl);
    const whisperTicket = await this.#keep("transfer", document, TRANSFER_DOCUMENT_TTL_MS + target.ringTimeoutS * 1000);
    return { whisperUrl: `${base}/transfer/${whisperTicket}`, actionUrl, dialedTicket };
  }

  /** Keep `value` under a fresh ticket for its carrier's request; the ticket. */
  async #keep(kind: "transfer" | "dialed", value: string, ttlMs: number): Promise<string> {
    const ticket = randomBytes(18).toString("base64url");
    if (!(await this.#deps.coordinator.hold(`${kind}:${ticket}`, value, ttlMs))) throw new Error("the transfer could not be kept");
    return ticket;
  }

  /**
   * A warm dial's carrier reported `report` (`dialReport`): its outcome, once; `pending` takes
   * nothing. Undefined for an unknown, expired or used ticket.
   */
  async dialed(ticket: string, report: "taken" | "back"): Promise<DialOutcome | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    const held = await this.#deps.coordinator.take(`dialed:${ticket}`);
    if (held === undefined) return undefined;
    if (report === "taken") return { kind: "taken" };
    const { sessionId, call, destination } = JSON.parse(held) as { sessionId?: unknown; call?: Partial<CallRef>; destination?: unknown };
    if (typeof sessionId !== "string" || typeof destination !== "string" || call?.carrier === undefined || typeof call.callId !== "string") return undefined;
    return { kind: "back", call: { carrier: call.carrier, callId: call.callId, accountId: call.accountId, line: call.line }, resume: { sessionId, notice: notTakenNotice(destination) } };
  }

  /** The document kept under `ticket`, once; undefined for an unknown, expired or used ticket. */
  async document(ticket: string): Promise<string | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    return this.#deps.coordinator.take(`transfer:${ticket}`);
  }
}
