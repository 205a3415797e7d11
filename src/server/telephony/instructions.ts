/**
 * The call instructions each carrier's voice webhook answers with (docs/vendors.md (Carriers),
 * "Call instructions"; examples in docs/telephony.md): they point the call's media stream at this
 * gateway. Pure: URLs and values in, a document out.
 */
import { G711_SAMPLE_RATE } from "../../audio/rates.js";
import type { CarrierName } from "../../transport/carriers/index.js";

/** What the instructions carry to the stream: its URL and values that come back on `start`. */
export interface StreamTarget {
  /** `wss://host/telephony/<carrier>` (Twilio: no query string allowed). */
  readonly url: string;
  /** Values the carrier hands back on the stream (Twilio `<Parameter>`s; elsewhere in the URL's query). */
  readonly parameters: Readonly<Record<string, string>>;
}

export function xmlEscape(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c);
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

function withQuery(url: string, parameters: Readonly<Record<string, string>>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(parameters)) target.searchParams.set(name, value);
  return target.toString();
}

/** TwiML `<Connect><Stream>` (bidirectional; the call ends when the stream closes). Values as `<Parameter>`s. */
export function twiml(target: StreamTarget): string {
  const params = Object.entries(target.parameters)
    .map(([name, value]) => `<Parameter name="${xmlEscape(name)}" value="${xmlEscape(value)}"/>`)
    .join("");
  return `${XML_HEAD}<Response><Connect><Stream url="${xmlEscape(target.url)}">${params}</Stream></Connect></Response>`;
}

/**
 * TeXML: a bidirectional RTP stream in PCMU, then a pause that holds the call while it runs;
 * hanging up early goes through the Call Control API (`TELNYX_API_KEY`).
 */
export function texml(target: StreamTarget, maxCallSeconds: number): string {
  const url = xmlEscape(withQuery(target.url, target.parameters));
  return (
    `${XML_HEAD}<Response><Start><Stream url="${url}" track="inbound_track" bidirectionalMode="rtp" bidirectionalCodec="PCMU"/></Start>` +
    `<Pause length="${Math.max(1, Math.ceil(maxCallSeconds))}"/><Hangup/></Response>`
  );
}

/** Plivo XML: a bidirectional μ-law stream that keeps the call until it disconnects. */
export function plivoXml(target: StreamTarget, maxCallSeconds: number): string {
  const url = xmlEscape(withQuery(target.url, target.parameters));
  return (
    `${XML_HEAD}<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=${G711_SAMPLE_RATE}" ` +
    `audioTrack="inbound" streamTimeout="${Math.max(1, Math.ceil(maxCallSeconds))}">${url}</Stream></Response>`
  );
}

/** Vonage NCCO: `connect` to a WebSocket endpoint, L16 at 16 kHz. */
export function vonageNcco(target: StreamTarget): unknown[] {
  return [
    {
      action: "connect",
      endpoint: [{ type: "websocket", uri: withQuery(target.url, target.parameters), "content-type": "audio/l16;rate=16000", headers: {} }],
    },
  ];
}

/** Exotel's Voicebot applet may fetch its WSS URL from an https endpoint: the URL, 8 kHz slin. */
export function exotelUrl(target: StreamTarget): { url: string } {
  return { url: withQuery(target.url, { "sample-rate": "8000", ...target.parameters }) };
}

/** The call instructions that stream a call to `target`, in `carrier`'s terms, and their content type. */
export function streamInstructions(carrier: CarrierName, target: StreamTarget, maxCallSeconds: number): { readonly type: string; readonly body: string } {
  const xml = (body: string) => ({ type: "text/xml; charset=utf-8", body });
  const json = (body: unknown) => ({ type: "application/json; charset=utf-8", body: JSON.stringify(body) });
  switch (carrier) {
    case "twilio":
      return xml(twiml(target));
    case "telnyx":
      return xml(texml(target, maxCallSeconds));
    case "plivo":
      return xml(plivoXml(target, maxCallSeconds));
    case "vonage":
      return json(vonageNcco(target));
    case "exotel":
      return json(exotelUrl(target));
  }
}
