/**
 * What a carrier's signed answering-machine callback says, in the gateway's terms (`AnsweredBy`,
 * src/voicemail/answered-by.ts), and the call it names. Pure; the body is a stranger's until the
 * caller verified it, and whatever it holds this never throws.
 *
 * | carrier | callback | verdict | call |
 * |---|---|---|---|
 * | Twilio, Telnyx TeXML | `AsyncAmdStatusCallback` (form) | `AnsweredBy`, as is | `CallSid` |
 * | Plivo | `machine_detection_url` (form; "Asynchronous machine detection") | `Machine=true` → `machine_start`, `false` → `human` | `CallUUID` |
 * | Vonage | the call's `event_url` (JSON; every event of the call comes there) | `status: "human"` → `human`; `"machine"` → `machine_start`, with `sub_state: "beep_start"` → `machine_end_beep`, `"beep_timeout"` → `machine_end_other`; any other status is the call's progress, not a verdict | `call_uuid` (the human/machine event's name for it), else `uuid` |
 */
import { parseAnsweredBy, type AnsweredBy } from "../../voicemail/answered-by.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import { webhookCallId, webhookField } from "./answered-calls.js";

export type AmdReport =
  | { readonly kind: "verdict"; readonly answeredBy: AnsweredBy; readonly callId: string | undefined }
  /** Vonage reports the call's other states (`started`, `ringing`, `answered`, `completed`, …) to the same URL: nothing to act on. */
  | { readonly kind: "progress" }
  | { readonly kind: "invalid"; readonly why: string };

const VONAGE_SUB_STATES: Readonly<Record<string, AnsweredBy>> = { beep_start: "machine_end_beep", beep_timeout: "machine_end_other" };

function vonageReport(body: string): AmdReport {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    event = undefined;
  }
  if (typeof event !== "object" || event === null || Array.isArray(event)) return { kind: "invalid", why: "a Vonage event is a JSON object" };
  const { status, sub_state: subState, call_uuid: callUuid, uuid } = event as Record<string, unknown>;
  if (status !== "human" && status !== "machine") return { kind: "progress" };
  const callId = typeof callUuid === "string" && callUuid !== "" ? callUuid : typeof uuid === "string" && uuid !== "" ? uuid : undefined;
  if (status === "human") return { kind: "verdict", answeredBy: "human", callId };
  if (subState === undefined || subState === null) return { kind: "verdict", answeredBy: "machine_start", callId };
  const answeredBy = typeof subState === "string" && Object.hasOwn(VONAGE_SUB_STATES, subState) ? VONAGE_SUB_STATES[subState] : undefined;
  if (answeredBy === undefined) return { kind: "invalid", why: "sub_state is not beep_start or beep_timeout" };
  return { kind: "verdict", answeredBy, callId };
}

/** The verdict (or not) in a carrier's AMD callback `body` at `url`. */
export function amdReport(carrier: CarrierName, url: URL, body: string): AmdReport {
  switch (carrier) {
    case "vonage":
      return vonageReport(body);
    case "plivo": {
      const machine = webhookField("Machine", url, body)?.toLowerCase();
      if (machine !== "true" && machine !== "false") return { kind: "invalid", why: "Machine is missing or not true or false" };
      return { kind: "verdict", answeredBy: machine === "true" ? "machine_start" : "human", callId: webhookCallId(carrier, url, body) };
    }
    case "exotel":
      return { kind: "invalid", why: "Exotel reports no answering-machine verdict" };
    case "twilio":
    case "telnyx": {
      const answeredBy = parseAnsweredBy(webhookField("AnsweredBy", url, body));
      if (answeredBy === undefined) return { kind: "invalid", why: "AnsweredBy is missing or not one of human, machine_start, machine_end_beep, machine_end_silence, machine_end_other, fax, unknown" };
      return { kind: "verdict", answeredBy, callId: webhookCallId(carrier, url, body) };
    }
  }
}
