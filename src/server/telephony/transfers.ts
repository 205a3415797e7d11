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
 * which says so first. Telnyx TeXML documents `<Dial action>` but no whisper, so it offers cold only.
 */
import { randomBytes } from "node:crypto";
import type { TransferMode, TransferTarget } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { TICKET } from "./answered-calls.js";
import type { CallRef, CarrierClient, TransferOrder } from "./carrier-client.js";
import { dialTwiml, plivoDialXml, plivoWhisperXml, vonageConnectNcco, vonageWhisperNcco, whisperTwiml, type WarmUrls } from "./transfer-instructions.js";

/** How long a transfer document waits for its carrier's fetch (ms): the carrier asks within seconds of the REST call. */
export const TRANSFER_DOCUMENT_TTL_MS = 120_000;

/** What a carrier can do (docs/telephony.md "Transfer"); Exotel has no API that moves a call out of a Voicebot stream. */
export const TRANSFER_MODES: Readonly<Record<CarrierName, readonly TransferMode[]>> = {
  twilio: ["cold", "warm"],
  telnyx: ["cold"],
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
export const TRANSFER_PATH = /^\/telephony\/(twilio|plivo|vonage)\/(transfer|dialed)\/([^/]+)$/;

/** A warm dial's outcome callback waits this long past the ring time (ms): the whisper and the talk come first. */
const DIALED_MARGIN_MS = 4 * 3600_000;

/** Twilio `DialCallStatus` values that mean the person took the call; anything else (busy, no-answer, failed, canceled) comes back. */
const TWILIO_TAKEN = new Set(["completed", "answered"]);
/** Vonage `connect` states in which the NCCO its event URL answers replaces the call's: the dial failed. */
const VONAGE_FAILED = new Set(["timeout", "unanswered", "busy", "rejected", "failed"]);

/**
 * What a carrier's report on a warm dial says (pure; a body that says nothing usable is `pending`
 * on Vonage, which reports every state, and `back` elsewhere, whose one report ends the dial):
 * - Twilio `<Dial action>`, form `DialCallStatus`: `completed`/`answered` → taken.
 * - Plivo `<Dial action>`, form `DialStatus`: `completed` → taken.
 * - Vonage `eventUrl`, JSON `status`: `answered` → taken; a failed state → back; any other
 *   (`started`, `ringing`, `completed` after an answer) → pending: nothing to do.
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
    case "telnyx":
    case "exotel":
      return "back";
  }
}

/** What the agent says to a caller back from a warm transfer nobody took. */
export function notTakenNotice(destination: string): string {
  return `I'm sorry, nobody at ${destination} could take your call just now. I'm still here: how else can I help?`;
}

/** What runs after a warm dial: hang up (the two talked), or the caller comes back to the session. */
export type DialOutcome = { readonly kind: "taken" } | { readonly kind: "back"; readonly sessionId: string; readonly callId: string; readonly notice: string };

export interface CallTransfersDeps {
  readonly client: CarrierClient;
  readonly coordinator: Coordinator;
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
      refusal: (target) => transferRefusal(call.carrier, target),
      run: async (target, sessionId) => transfer(call, await this.#order(call, target, httpBase, sessionId)),
    };
  }

  async #order(call: CallRef, target: TransferTarget, httpBase: string, sessionId: string): Promise<TransferOrder> {
    const refusal = transferRefusal(call.carrier, target);
    if (refusal !== undefined) throw new Error(refusal);
    const warm = target.mode === "warm";
    switch (call.carrier) {
      case "twilio":
        return { kind: "twiml", twiml: dialTwiml(target, warm ? await this.#warm(call, target, whisperTwiml(target.summary ?? ""), httpBase, sessionId) : undefined) };
      case "telnyx":
        if (warm) throw new Error("Telnyx TeXML offers no whisper: warm transfer is not possible on Telnyx");
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

  /** Keep a warm dial's whisper and its outcome record under fresh tickets: where the carrier asks for them. */
  async #warm(call: CallRef, target: TransferTarget, whisper: string, httpBase: string, sessionId: string): Promise<WarmUrls> {
    const base = `${httpBase}/telephony/${call.carrier}`;
    const whisperTicket = await this.#keep("transfer", whisper, TRANSFER_DOCUMENT_TTL_MS + target.ringTimeoutS * 1000);
    const dialed = JSON.stringify({ sessionId, callId: call.callId, destination: target.name });
    const dialedTicket = await this.#keep("dialed", dialed, target.ringTimeoutS * 1000 + DIALED_MARGIN_MS);
    return { whisperUrl: `${base}/transfer/${whisperTicket}`, actionUrl: `${base}/dialed/${dialedTicket}` };
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
    const { sessionId, callId, destination } = JSON.parse(held) as { sessionId: string; callId: string; destination: string };
    return { kind: "back", sessionId, callId, notice: notTakenNotice(destination) };
  }

  /** The document kept under `ticket`, once; undefined for an unknown, expired or used ticket. */
  async document(ticket: string): Promise<string | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    return this.#deps.coordinator.take(`transfer:${ticket}`);
  }
}
