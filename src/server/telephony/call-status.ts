/**
 * A carrier's status callback on a call the gateway placed for a workflow, read: Twilio's
 * `StatusCallback` and Telnyx TeXML's `StatusCallback` both POST a form with the call's `CallSid`
 * and its `CallStatus` (`queued`, `initiated`, `ringing`, `in-progress`, then one of `completed`,
 * `busy`, `no-answer`, `failed`, `canceled`). A stranger's bytes until its signature verified,
 * and checked even then: an unknown status is refused, never guessed.
 */
import type { CarrierName } from "../../transport/carriers/index.js";
import { webhookField } from "./answered-calls.js";
import type { StatusReport } from "./call-reports.js";

const STATUSES = new Set(["queued", "initiated", "ringing", "in-progress", "completed", "busy", "no-answer", "failed", "canceled"]);

/** Call ids as carriers make them (Twilio `CA…`, Telnyx `v3:…`). */
const CALL_ID = /^[A-Za-z0-9:._-]{1,128}$/;

/** The report the callback makes, or why it is not one. Only Twilio and Telnyx report to this gateway. */
export function callStatusReport(carrier: CarrierName, url: URL, body: string): StatusReport | { readonly invalid: string } {
  if (carrier !== "twilio" && carrier !== "telnyx") return { invalid: `${carrier} does not report call status to this gateway` };
  const status = webhookField("CallStatus", url, body);
  if (status === undefined || !STATUSES.has(status)) return { invalid: `CallStatus: ${JSON.stringify(status ?? null)} is not a call status ${carrier} reports` };
  const callId = webhookField("CallSid", url, body);
  if (callId !== undefined && !CALL_ID.test(callId)) return { invalid: "CallSid: not a call id" };
  return { callId, status };
}
