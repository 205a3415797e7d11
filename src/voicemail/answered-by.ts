/**
 * The carriers' answering-machine verdicts. Twilio's asynchronous AMD callback and Telnyx TeXML's
 * (`AsyncAmdStatusCallback`, form-encoded) both carry `AnsweredBy`, one of the values below
 * (Twilio "Answering Machine Detection"; Telnyx "TexmlCallAmdWebhook"). With
 * `MachineDetection=Enable` the machine verdict is `machine_start`, as soon as the carrier knows;
 * the `machine_end_*` values come with `DetectMessageEnd`, once the greeting has ended. Plivo's
 * `Machine` and Vonage's `status` / `sub_state` are read into these values
 * (src/server/telephony/amd-reports.ts). Pure.
 */

export const ANSWERED_BY = ["human", "machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other", "fax", "unknown"] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

/** What a carrier's verdict means to the session. */
export type CarrierVerdict =
  | { readonly kind: "human"; readonly answeredBy: AnsweredBy }
  /** `greetingEnded`: the carrier heard the greeting end (a beep, silence, or otherwise): a message can start now. */
  | { readonly kind: "machine"; readonly answeredBy: AnsweredBy; readonly greetingEnded: boolean }
  /** A fax: no one to speak to, whatever the agent's action. */
  | { readonly kind: "fax"; readonly answeredBy: AnsweredBy }
  /** The carrier could not tell: the session decides by itself. */
  | { readonly kind: "unknown"; readonly answeredBy: AnsweredBy };

export function parseAnsweredBy(value: unknown): AnsweredBy | undefined {
  return typeof value === "string" && (ANSWERED_BY as readonly string[]).includes(value) ? (value as AnsweredBy) : undefined;
}

export function carrierVerdict(answeredBy: AnsweredBy): CarrierVerdict {
  switch (answeredBy) {
    case "human":
      return { kind: "human", answeredBy };
    case "machine_start":
      return { kind: "machine", answeredBy, greetingEnded: false };
    case "machine_end_beep":
    case "machine_end_silence":
    case "machine_end_other":
      return { kind: "machine", answeredBy, greetingEnded: true };
    case "fax":
      return { kind: "fax", answeredBy };
    case "unknown":
      return { kind: "unknown", answeredBy };
  }
}
