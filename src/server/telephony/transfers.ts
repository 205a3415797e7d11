/**
 * Handing a call the gateway answered to a person (`transfer_call`, docs/telephony.md "Transfer"):
 * per carrier, what the stream's bridge may offer and the order sent to the carrier's REST API.
 * The REST API acts only on the call a verified webhook named (a `CallRef` from its ticket), and
 * only dials an allow-listed destination (the target was resolved from the agent's `transfer`).
 *
 * Plivo fetches its new instructions from a URL: the gateway keeps the `<Dial>` document under a
 * single-use, unguessable ticket (`/telephony/plivo/transfer/<ticket>`, 2 minutes) and serves it
 * once to a request whose Plivo signature verifies.
 */
import { randomBytes } from "node:crypto";
import type { TransferMode, TransferTarget } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { TICKET } from "./answered-calls.js";
import type { CallRef, CarrierClient, TransferOrder } from "./carrier-client.js";
import { dialTwiml, plivoDialXml, vonageConnectNcco } from "./transfer-instructions.js";

/** How long a transfer document waits for its carrier's fetch (ms): the carrier asks within seconds of the REST call. */
export const TRANSFER_DOCUMENT_TTL_MS = 120_000;

/** What a carrier can do (docs/telephony.md "Transfer"); Exotel has no API that moves a call out of a Voicebot stream. */
export const TRANSFER_MODES: Readonly<Record<CarrierName, readonly TransferMode[]>> = {
  twilio: ["cold"],
  telnyx: ["cold"],
  plivo: ["cold"],
  vonage: ["cold"],
  exotel: [],
};

/** A transfer document route: `/telephony/<carrier>/transfer/<ticket>`. */
export const TRANSFER_DOCUMENT_PATH = /^\/telephony\/(plivo)\/transfer\/([^/]+)$/;

export interface CallTransfersDeps {
  readonly client: CarrierClient;
  readonly coordinator: Coordinator;
}

/** The bridge's side of a transfer: what it offers, and how it runs. */
export interface CallTransferPort {
  readonly modes: readonly TransferMode[];
  run(target: TransferTarget): Promise<void>;
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
    return { modes, run: async (target) => transfer(call, await this.#order(call.carrier, target, httpBase)) };
  }

  async #order(carrier: CarrierName, target: TransferTarget, httpBase: string): Promise<TransferOrder> {
    switch (carrier) {
      case "twilio":
        return { kind: "twiml", twiml: dialTwiml(target) };
      case "telnyx":
        return { kind: "texml", texml: dialTwiml(target) };
      case "plivo":
        return { kind: "plivo", alegUrl: `${httpBase}/telephony/plivo/transfer/${await this.#keep(plivoDialXml(target))}` };
      case "vonage":
        return { kind: "ncco", ncco: vonageConnectNcco(target) };
      case "exotel":
        throw new Error("Exotel cannot transfer a call out of a Voicebot stream");
    }
  }

  /** Keep a document for its carrier's fetch; its ticket. */
  async #keep(document: string): Promise<string> {
    const ticket = randomBytes(18).toString("base64url");
    if (!(await this.#deps.coordinator.hold(`transfer:${ticket}`, document, TRANSFER_DOCUMENT_TTL_MS))) throw new Error("the transfer document could not be kept");
    return ticket;
  }

  /** The document kept under `ticket`, once; undefined for an unknown, expired or used ticket. */
  async document(ticket: string): Promise<string | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    return this.#deps.coordinator.take(`transfer:${ticket}`);
  }
}
