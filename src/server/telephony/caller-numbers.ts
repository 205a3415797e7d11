/**
 * The numbers on a call, as its carrier's signed voice webhook names them (docs/telephony.md "The
 * caller's number"). Read only from a webhook whose signature verified: never from the media
 * stream's `start` (anyone holding the stream could write it) nor from a client. Each carrier's
 * documented fields:
 *
 * | carrier        | from   | to   | as documented                                                        | read from (what the signature covers) |
 * |----------------|--------|------|----------------------------------------------------------------------|---------------------------------------|
 * | Twilio         | `From` | `To` | E.164, a SIP URI, or `client:<identity>` (Voice SDK)                 | the URL's query and the form body     |
 * | Telnyx (TeXML) | `From` | `To` | E.164 or a SIP URI                                                   | the body (signed: `timestamp\|body`)  |
 * | Plivo          | `From` | `To` | the number "including the country code", without `+` (or a SIP URI) | the URL's query and the form body     |
 * | Vonage         | `from` | `to` | E.164 without `+` (`447700900000`); no `from` on a Client SDK call   | the JSON body (`payload_hash`): a GET answer URL carries none |
 * | Exotel         | —      | —    | signs nothing (its `CallFrom`/`CallTo` are unsigned)                 | never read                            |
 *
 * Telnyx's and Vonage's signatures do not cover the URL, so their query is never read. A value
 * that is none of E.164, a SIP URI or a Twilio client id, or is longer than its bound, is dropped
 * (absent), never passed on.
 */
import type { CarrierName } from "../../transport/carriers/index.js";
import { webhookField } from "./answered-calls.js";
import { spread } from "../../spread.js";

/** A SIP URI's longest kept length (characters): RFC 3261 sets none; 256 bounds what a ticket stores. */
export const MAX_SIP_URI_CHARS = 256;

/** E.164: `+`, a country code not starting with 0, 7 to 15 digits in all. */
const E164 = /^\+[1-9][0-9]{6,14}$/;
/** Digits as Plivo and Vonage send them: the E.164 number without its `+`. */
const BARE_E164 = /^[1-9][0-9]{6,14}$/;
/** `sip:` / `sips:`, then printable ASCII without spaces, quotes or angle brackets (a header's `<…>` never reaches a field). */
const SIP_URI = /^sips?:[!#-;=?-~]+$/;
/** Twilio's Voice SDK identity: `client:`, then letters, digits and `_` (Twilio's documented alphabet, at most 121 characters). */
const TWILIO_CLIENT = /^client:[A-Za-z0-9_]{1,121}$/;

/** The fields a carrier's voice webhook names the numbers in; undefined for a carrier whose webhook is not signed (Exotel). */
const FIELDS: Readonly<Record<CarrierName, { readonly from: string; readonly to: string; readonly bare: boolean; readonly signedUrl: boolean } | undefined>> = {
  twilio: { from: "From", to: "To", bare: false, signedUrl: true },
  telnyx: { from: "From", to: "To", bare: false, signedUrl: false },
  plivo: { from: "From", to: "To", bare: true, signedUrl: true },
  vonage: { from: "from", to: "to", bare: true, signedUrl: false },
  exotel: undefined,
};

/** A URL with no query: where a carrier's signature does not cover the URL, its query is not read. */
const NO_QUERY = new URL("http://localhost/");

/** A number a webhook named, kept as it is documented or normalized to E.164; undefined for anything else. */
export function lineNumber(carrier: CarrierName, value: string): string | undefined {
  if (E164.test(value)) return value;
  if (FIELDS[carrier]?.bare === true && BARE_E164.test(value)) return `+${value}`;
  if (value.length <= MAX_SIP_URI_CHARS && SIP_URI.test(value)) return value;
  if (carrier === "twilio" && TWILIO_CLIENT.test(value)) return value;
  return undefined;
}

/** What the webhook said: the kept numbers, and the fields it named with a value that was dropped. */
export interface WebhookNumbers {
  readonly from?: string;
  readonly to?: string;
  readonly dropped: readonly ("from" | "to")[];
}

/** The numbers a carrier's (verified) voice webhook names, from its query, form or JSON body. */
export function webhookNumbers(carrier: CarrierName, url: URL, body: string): WebhookNumbers {
  const fields = FIELDS[carrier];
  if (fields === undefined) return { dropped: [] };
  const dropped: ("from" | "to")[] = [];
  const read = (which: "from" | "to"): string | undefined => {
    const raw = webhookField(fields[which], fields.signedUrl ? url : NO_QUERY, body);
    if (raw === undefined) return undefined;
    const kept = lineNumber(carrier, raw);
    if (kept === undefined) dropped.push(which);
    return kept;
  };
  const from = read("from");
  const to = read("to");
  return spread(from === undefined ? {} : { from }, to === undefined ? {} : { to }, { dropped });
}
