/**
 * The documents that hand a caller to a person (docs/telephony.md "Transfer"), per carrier. Pure:
 * a resolved, allow-listed target in, a document out.
 *
 * - TwiML / TeXML `<Dial>` (Twilio <https://www.twilio.com/docs/voice/twiml/dial>, Telnyx
 *   <https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/dial>): `<Number>` takes
 *   E.164 with the `+`, `<Sip>` a SIP URI. Warm: `<Number url>` / `<Sip url>` runs a document for the
 *   person who answered before the caller is put through (the whisper), and `<Dial action>` is
 *   requested when the dialled call ends, with `DialCallStatus`.
 * - Telnyx TeXML warm: a conference (<https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/conference>).
 *   The caller waits in a room of its own, `startConferenceOnEnter="false"` (muted, hearing Telnyx's
 *   hold music until someone who starts it joins) and `endConferenceOnExit="true"`; then `<Hangup/>`,
 *   for when the room ends. The person's call (placed through the REST API) runs `<Say>` of the
 *   summary, then joins the room, starting it (`startConferenceOnEnter="true"`,
 *   `endConferenceOnExit="true"`: when either leaves, the other drops out), with `statusCallback`
 *   and `statusCallbackEvent="join"` reporting that they joined. `beep="false"` throughout.
 * - Plivo XML `<Dial>` (<https://www.plivo.com/docs/voice/xml/dial>): `<Number>` digits without
 *   the `+`, `<User>` a SIP URI. Warm: `confirmSound` is a URL Plivo fetches (POST) when the
 *   person answers, whose `<Speak>`/`<Play>`/`<Wait>` they hear before the caller is put through
 *   (without `confirmKey` no key press is asked for), and `action` is requested when the dial ends,
 *   with `DialStatus` (`completed`, `busy`, `failed`, `timeout`, `no-answer`); its XML then runs on
 *   the caller's leg.
 * - Vonage NCCO `connect` (<https://developer.vonage.com/en/voice/voice-api/ncco-reference>): a
 *   `phone` endpoint (digits without the `+`) or a `sip` endpoint; `randomFromNumber` presents one
 *   of the application's numbers as the caller id. Warm: the phone endpoint's `onAnswer.url` serves
 *   an NCCO run for the person who answered before they are joined to the caller (only a `phone`
 *   endpoint has it), and `eventType: "synchronous"` with `eventUrl` makes the connect wait: when
 *   the dial fails (`timeout`, `unanswered`, `busy`, `rejected`, `failed`) the NCCO the event URL
 *   answers replaces the call's.
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

/** End the call (a warm transfer's `<Dial>` ended after the two talked): TwiML, and Plivo XML, which spells it the same. */
export function hangupTwiml(): string {
  return `${XML_HEAD}<Response><Hangup/></Response>`;
}

/** Telnyx TeXML: the caller waits in `room` for the person (a warm transfer), and the call ends when the room does. */
export function texmlConferenceWait(room: string): string {
  return `${XML_HEAD}<Response><Dial><Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">${xmlEscape(room)}</Conference></Dial><Hangup/></Response>`;
}

/** Telnyx TeXML for the person a warm transfer dialled: the summary (the whisper), then into `room`, reporting the join to `joinedUrl`. */
export function texmlWhisperConference(summary: string, room: string, joinedUrl: string): string {
  const conference = `<Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false" statusCallback="${xmlEscape(joinedUrl)}" statusCallbackEvent="join" statusCallbackMethod="POST">${xmlEscape(room)}</Conference>`;
  return `${XML_HEAD}<Response><Say>${xmlEscape(summary)}</Say><Dial>${conference}</Dial></Response>`;
}

/** Plivo XML `<Dial>` to the target; `warm` adds the whisper (`confirmSound`) and the outcome callback (`action`). */
export function plivoDialXml(target: TransferTarget, warm?: WarmUrls): string {
  const noun = target.address.kind === "number" ? `<Number>${target.address.number.slice(1)}</Number>` : `<User>${xmlEscape(target.address.uri)}</User>`;
  const attributes =
    warm === undefined ? "" : ` action="${xmlEscape(warm.actionUrl)}" method="POST" timeout="${target.ringTimeoutS}" confirmSound="${xmlEscape(warm.whisperUrl)}"`;
  return `${XML_HEAD}<Response><Dial${attributes}>${noun}</Dial></Response>`;
}

/** Plivo's whisper (a `confirmSound` document: `<Speak>`, `<Play>` and `<Wait>` only). */
export function plivoWhisperXml(summary: string): string {
  return `${XML_HEAD}<Response><Speak>${xmlEscape(summary)}</Speak></Response>`;
}

/**
 * Vonage NCCO: `connect` to the target; `warm` (a phone number only: a `sip` endpoint has no
 * `onAnswer`) adds the whisper, the ring time and the synchronous outcome events.
 */
export function vonageConnectNcco(target: TransferTarget, warm?: WarmUrls): unknown[] {
  if (target.address.kind === "sip") {
    if (warm !== undefined) throw new Error("Vonage plays a whisper (onAnswer) only to a phone endpoint, not to a SIP URI");
    return [{ action: "connect", randomFromNumber: true, endpoint: [{ type: "sip", uri: target.address.uri }] }];
  }
  const number = target.address.number.slice(1);
  if (warm === undefined) return [{ action: "connect", randomFromNumber: true, endpoint: [{ type: "phone", number }] }];
  return [
    {
      action: "connect",
      randomFromNumber: true,
      timeout: target.ringTimeoutS,
      eventType: "synchronous",
      eventUrl: [warm.actionUrl],
      eventMethod: "POST",
      endpoint: [{ type: "phone", number, onAnswer: { url: warm.whisperUrl } }],
    },
  ];
}

/** Vonage's whisper (the `onAnswer` NCCO): the summary, spoken to the person who answered. */
export function vonageWhisperNcco(summary: string): unknown[] {
  return [{ action: "talk", text: summary }];
}
