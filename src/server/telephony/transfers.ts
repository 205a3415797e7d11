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
 * Warm, on Twilio: the `<Dial>` names a whisper (`<Number url>`, kept as a document the same way:
 * `<Say>` of the summary, heard by the person who answered before the caller is put through) and an
 * outcome callback (`<Dial action>`, `/telephony/twilio/dialed/<ticket>`, kept for the ring time and
 * a margin). When the dial ends with nobody having taken the call, the callback reconnects the
 * caller to a fresh stream that resumes the session, which says so first.
 */
import { randomBytes } from "node:crypto";
import type { TransferMode, TransferTarget } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { TICKET } from "./answered-calls.js";
import type { CallRef, CarrierClient, TransferOrder } from "./carrier-client.js";
import { dialTwiml, plivoDialXml, vonageConnectNcco, whisperTwiml } from "./transfer-instructions.js";

/** How long a transfer document waits for its carrier's fetch (ms): the carrier asks within seconds of the REST call. */
export const TRANSFER_DOCUMENT_TTL_MS = 120_000;

/** What a carrier can do (docs/telephony.md "Transfer"); Exotel has no API that moves a call out of a Voicebot stream. */
export const TRANSFER_MODES: Readonly<Record<CarrierName, readonly TransferMode[]>> = {
  twilio: ["cold", "warm"],
  telnyx: ["cold"],
  plivo: ["cold"],
  vonage: ["cold"],
  exotel: [],
};

/** The carrier's requests a transfer makes: `/telephony/<carrier>/transfer/<ticket>` (a kept document), `/telephony/twilio/dialed/<ticket>` (a warm dial's outcome). */
export const TRANSFER_PATH = /^\/telephony\/(twilio|plivo)\/(transfer|dialed)\/([^/]+)$/;

/** A warm dial's outcome callback waits this long past the ring time (ms): the whisper and the talk come first. */
const DIALED_MARGIN_MS = 4 * 3600_000;

/** `DialCallStatus` values that mean the person took the call (Twilio `<Dial action>`); anything else (busy, no-answer, failed, canceled) comes back. */
const TAKEN = new Set(["completed", "answered"]);

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

/** The bridge's side of a transfer: what it offers, and how it runs. */
export interface CallTransferPort {
  readonly modes: readonly TransferMode[];
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
    return { modes, run: async (target, sessionId) => transfer(call, await this.#order(call, target, httpBase, sessionId)) };
  }

  async #order(call: CallRef, target: TransferTarget, httpBase: string, sessionId: string): Promise<TransferOrder> {
    switch (call.carrier) {
      case "twilio": {
        if (target.mode !== "warm") return { kind: "twiml", twiml: dialTwiml(target) };
        const whisper = await this.#keep("transfer", whisperTwiml(target.summary ?? ""), TRANSFER_DOCUMENT_TTL_MS + target.ringTimeoutS * 1000);
        const dialed = await this.#keep("dialed", JSON.stringify({ sessionId, callId: call.callId, destination: target.name }), target.ringTimeoutS * 1000 + DIALED_MARGIN_MS);
        const base = `${httpBase}/telephony/twilio`;
        return { kind: "twiml", twiml: dialTwiml(target, { whisperUrl: `${base}/transfer/${whisper}`, actionUrl: `${base}/dialed/${dialed}` }) };
      }
      case "telnyx":
        return { kind: "texml", texml: dialTwiml(target) };
      case "plivo":
        return { kind: "plivo", alegUrl: `${httpBase}/telephony/plivo/transfer/${await this.#keep("transfer", plivoDialXml(target), TRANSFER_DOCUMENT_TTL_MS)}` };
      case "vonage":
        return { kind: "ncco", ncco: vonageConnectNcco(target) };
      case "exotel":
        throw new Error("Exotel cannot transfer a call out of a Voicebot stream");
    }
  }

  /** Keep `value` under a fresh ticket for its carrier's request; the ticket. */
  async #keep(kind: "transfer" | "dialed", value: string, ttlMs: number): Promise<string> {
    const ticket = randomBytes(18).toString("base64url");
    if (!(await this.#deps.coordinator.hold(`${kind}:${ticket}`, value, ttlMs))) throw new Error("the transfer could not be kept");
    return ticket;
  }

  /** A warm dial ended with `status` (`DialCallStatus`): its outcome, once; undefined for an unknown, expired or used ticket. */
  async dialed(ticket: string, status: string | undefined): Promise<DialOutcome | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    const held = await this.#deps.coordinator.take(`dialed:${ticket}`);
    if (held === undefined) return undefined;
    if (status !== undefined && TAKEN.has(status)) return { kind: "taken" };
    const { sessionId, callId, destination } = JSON.parse(held) as { sessionId: string; callId: string; destination: string };
    return { kind: "back", sessionId, callId, notice: notTakenNotice(destination) };
  }

  /** The document kept under `ticket`, once; undefined for an unknown, expired or used ticket. */
  async document(ticket: string): Promise<string | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    return this.#deps.coordinator.take(`transfer:${ticket}`);
  }
}
