/**
 * The carriers' REST APIs on a call the gateway answered: hanging up after the gateway closed a
 * call's stream (end_call, idle timeout, call limit), and handing the caller to a person
 * (`transfer_call`). Twilio, Plivo and Vonage end the call when the stream closes (their
 * instructions run out); Telnyx TeXML holds it in `<Pause>`, so it needs the API to hang up. A
 * network client, injectable: codecs never call it. It acts with the operator's credentials, so it
 * is only ever given a call the gateway answered itself (the id a verified webhook named, see
 * answered-calls.ts). One vendor per file under rest/.
 */
import type { CarrierName } from "../../transport/carriers/index.js";
import { createTwilioCall, updateTwilioCall, twilioConfigured, TWILIO_API } from "./rest/twilio.js";
import { createTexmlCall, hangUpTelnyxCall, telnyxConfigured, texmlPlacing, updateTexmlCall, TELNYX_API } from "./rest/telnyx.js";
import { createPlivoCall, plivoConfigured, transferPlivoCall, PLIVO_API } from "./rest/plivo.js";
import { createVonageCall, transferVonageCall, vonageApplication, VONAGE_API } from "./rest/vonage.js";
import type { RestContext } from "./rest/request.js";

/** A call to act on: the carrier and the id its verified webhook named (and, for Telnyx TeXML, its `AccountSid` and the gateway's own number on it). */
export interface CallRef {
  readonly carrier: CarrierName;
  readonly callId: string;
  readonly accountId?: string | undefined;
  readonly line?: string | undefined;
}

/** What replaces a call's instructions to put the caller through, in its carrier's terms. */
export type TransferOrder =
  | { readonly kind: "twiml"; readonly twiml: string }
  | { readonly kind: "texml"; readonly texml: string }
  | { readonly kind: "plivo"; readonly alegUrl: string }
  | { readonly kind: "ncco"; readonly ncco: unknown[] };

/** A call to place: checked numbers, and the gateway's own URLs the carrier calls back. */
export interface PlaceOrder {
  readonly carrier: CarrierName;
  /** E.164. */
  readonly to: string;
  readonly from: string;
  /** The gateway's voice webhook for this call. */
  readonly url: string;
  /**
   * The carrier's answering-machine detection: where its verdict goes, the longest it may take (s),
   * and how long a message waits for the beep (s; Vonage's `beep_timeout`).
   */
  readonly amd?: { readonly callbackUrl: string; readonly timeoutS: number; readonly beepWaitS: number } | undefined;
  /** Twilio and Telnyx (a workflow's call, a Telnyx warm transfer's dial): where the call's end is reported, and how long it rings (s). */
  readonly status?: { readonly callbackUrl: string; readonly timeoutS: number } | undefined;
  /** Telnyx: the account to place it under (a warm transfer's caller's `AccountSid`); default `TELNYX_ACCOUNT_SID`. */
  readonly accountId?: string | undefined;
}

/**
 * The carriers that can place calls from this gateway (docs/telephony.md "Placing calls"). Exotel
 * cannot: its connect-call API dials into a flow built in its dashboard, not a URL the gateway names.
 */
export const PLACING_CARRIERS: readonly CarrierName[] = ["twilio", "telnyx", "plivo", "vonage"];

export interface CarrierClient {
  /** Hang the call up; resolves when the carrier accepted the request (nothing to do without credentials). */
  hangUp(call: CallRef): Promise<void>;
  /** Whether `transfer` can act on this call: the carrier has an API for it and its credentials are set. Absent: never. */
  canTransfer?(call: CallRef): boolean;
  /** Replace the call's instructions with `order`; resolves when the carrier accepted, rejects when it refused. */
  transfer?(call: CallRef, order: TransferOrder): Promise<void>;
  /**
   * What this carrier (one of `PLACING_CARRIERS`) lacks to place a call from here ("set …" the
   * variables), or undefined when it can; `accountId`: under that account instead of the configured one.
   */
  placingRefusal?(carrier: CarrierName, accountId?: string): string | undefined;
  /** Place a call; resolves with its call id when the carrier's answer names one, rejects when it refused. */
  placeCall?(order: PlaceOrder): Promise<string | undefined>;
}

export interface CarrierClientOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** API base URLs (tests point them at a loopback fake). */
  readonly twilioBaseUrl?: string;
  readonly telnyxBaseUrl?: string;
  readonly plivoBaseUrl?: string;
  readonly vonageBaseUrl?: string;
  readonly fetch?: typeof fetch;
  /** Per request (ms). */
  readonly timeoutMs?: number;
  /** Epoch ms (Vonage's JWT `iat`). */
  readonly now?: () => number;
}

/**
 * The default client, from the environment. Hang-up: Twilio with `TWILIO_ACCOUNT_SID` +
 * `TWILIO_AUTH_TOKEN`, Telnyx with `TELNYX_API_KEY`; other carriers end the call when the stream
 * closes. Transfer: Twilio (the same two), Telnyx TeXML (`TELNYX_API_KEY`, and the `AccountSid`
 * the webhook named; a warm one also places the person's call, with `TELNYX_TEXML_APPLICATION_ID`), Plivo (`PLIVO_AUTH_ID` + `PLIVO_AUTH_TOKEN`), Vonage
 * (`VONAGE_APPLICATION_ID` + `VONAGE_PRIVATE_KEY`). Exotel has no API that moves a call out of
 * a Voicebot stream: never. Placing calls: Twilio (the same two), Telnyx TeXML (`TELNYX_API_KEY`,
 * `TELNYX_ACCOUNT_SID`, `TELNYX_TEXML_APPLICATION_ID`), Plivo and Vonage (the transfer's
 * credentials). Throws at construction when `VONAGE_PRIVATE_KEY` is not a key.
 */
export function carrierClient(options: CarrierClientOptions): CarrierClient {
  const ctx: RestContext = { env: options.env, fetch: options.fetch ?? fetch, timeoutMs: options.timeoutMs ?? 5000 };
  const now = options.now ?? Date.now;
  const vonage = vonageApplication(options.env);
  const twilioBase = options.twilioBaseUrl ?? TWILIO_API;
  const telnyxBase = options.telnyxBaseUrl ?? TELNYX_API;
  return {
    async hangUp(call) {
      if (call.carrier === "twilio") return updateTwilioCall(ctx, twilioBase, call.callId, { Status: "completed" }, "Twilio hang-up");
      if (call.carrier === "telnyx") return hangUpTelnyxCall(ctx, telnyxBase, call.callId);
    },
    canTransfer(call) {
      switch (call.carrier) {
        case "twilio":
          return twilioConfigured(ctx);
        case "telnyx":
          return telnyxConfigured(ctx) && call.accountId !== undefined;
        case "plivo":
          return plivoConfigured(ctx);
        case "vonage":
          return vonage !== undefined;
        case "exotel":
          return false;
      }
    },
    async transfer(call, order) {
      switch (order.kind) {
        case "twiml":
          if (!twilioConfigured(ctx)) throw new Error("TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are not set");
          return updateTwilioCall(ctx, twilioBase, call.callId, { Twiml: order.twiml }, "Twilio transfer");
        case "texml":
          if (call.accountId === undefined) throw new Error("the Telnyx webhook named no AccountSid");
          return updateTexmlCall(ctx, telnyxBase, call.accountId, call.callId, order.texml);
        case "plivo":
          return transferPlivoCall(ctx, options.plivoBaseUrl ?? PLIVO_API, call.callId, order.alegUrl);
        case "ncco":
          return transferVonageCall(ctx, options.vonageBaseUrl ?? VONAGE_API, vonage, call.callId, order.ncco, now());
      }
    },
    placingRefusal(carrier, accountId) {
      switch (carrier) {
        case "twilio":
          return twilioConfigured(ctx) ? undefined : "set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN";
        case "telnyx": {
          const placing = texmlPlacing(ctx, accountId);
          return "missing" in placing ? `set ${placing.missing}` : undefined;
        }
        case "plivo":
          return plivoConfigured(ctx) ? undefined : "set PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN";
        case "vonage":
          return vonage !== undefined ? undefined : "set VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY";
        case "exotel":
          return `${carrier} cannot place calls from this gateway`;
      }
    },
    async placeCall(order) {
      switch (order.carrier) {
        case "twilio":
          return createTwilioCall(ctx, twilioBase, order);
        case "telnyx":
          return createTexmlCall(ctx, telnyxBase, order);
        case "plivo":
          // Plivo's answer names a request_uuid, not the CallUUID its answer URL will name.
          await createPlivoCall(ctx, options.plivoBaseUrl ?? PLIVO_API, order);
          return undefined;
        case "vonage":
          return createVonageCall(ctx, options.vonageBaseUrl ?? VONAGE_API, vonage, order, now());
        case "exotel":
          throw new Error("exotel cannot place calls from this gateway");
      }
    },
  };
}
