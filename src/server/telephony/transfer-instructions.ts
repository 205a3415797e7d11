/**
 * The documents that hand a caller to a person (docs/telephony.md "Transfer"), per carrier. Pure:
 * a resolved, allow-listed target in, a document out.
 *
 * - TwiML / TeXML `<Dial>` (Twilio <https://www.twilio.com/docs/voice/twiml/dial>, Telnyx
 *   <https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/dial>): `<Number>` takes
 *   E.164 with the `+`, `<Sip>` a SIP URI. Warm: `<Number url>` / `<Sip url>` runs a document for the
 *   person who answered before the caller is put through (the whisper), and `<Dial action>` is
 *   requested when the dialled call ends, with `DialCallStatus`.
 * - Plivo XML `<Dial>`: `<Number>` digits without the `+`, `<User>` a SIP URI.
 * - Vonage NCCO `connect`: a `phone` endpoint (digits without the `+`) or a `sip` endpoint;
 *   `randomFromNumber` presents one of the application's numbers as the caller id.
 */
import type { TransferTarget } from "../../manifest/index.js";
import { xmlEscape } from "./instructions.js";

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

/** Where a warm transfer's carrier asks for the whisper and reports the dial's outcome. */
export interface WarmUrls {
  readonly whisperUrl: string;
  readonly actionUrl: string;
}

/** TwiML (and TeXML, the same dialect) `<Dial>` to the target; `warm` adds the whisper and the outcome callback. */
export function dialTwiml(target: TransferTarget, warm?: WarmUrls): string {
  const url = warm === undefined ? "" : ` url="${xmlEscape(warm.whisperUrl)}" method="POST"`;
  const noun =
    target.address.kind === "number" ? `<Number${url}>${xmlEscape(target.address.number)}</Number>` : `<Sip${url}>${xmlEscape(target.address.uri)}</Sip>`;
  const attributes = warm === undefined ? "" : ` action="${xmlEscape(warm.actionUrl)}" method="POST" timeout="${target.ringTimeoutS}"`;
  return `${XML_HEAD}<Response><Dial${attributes}>${noun}</Dial></Response>`;
}

/** The whisper: what the person who answered hears before the caller is put through. */
export function whisperTwiml(summary: string): string {
  return `${XML_HEAD}<Response><Say>${xmlEscape(summary)}</Say></Response>`;
}

/** End the call (a warm transfer's `<Dial>` ended after the two talked). */
export function hangupTwiml(): string {
  return `${XML_HEAD}<Response><Hangup/></Response>`;
}

/** Plivo XML `<Dial>` to the target. */
export function plivoDialXml(target: TransferTarget): string {
  const noun = target.address.kind === "number" ? `<Number>${target.address.number.slice(1)}</Number>` : `<User>${xmlEscape(target.address.uri)}</User>`;
  return `${XML_HEAD}<Response><Dial>${noun}</Dial></Response>`;
}

/** Vonage NCCO: `connect` to the target. */
export function vonageConnectNcco(target: TransferTarget): unknown[] {
  const endpoint = target.address.kind === "number" ? { type: "phone", number: target.address.number.slice(1) } : { type: "sip", uri: target.address.uri };
  return [{ action: "connect", randomFromNumber: true, endpoint: [endpoint] }];
}
