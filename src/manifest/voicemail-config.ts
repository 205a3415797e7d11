/**
 * `voicemail`: what an agent does when a call it placed (or answered) reaches an answering
 * machine (docs/config.md "voicemail", docs/telephony.md "Voicemail and answering machines"):
 * hang up, or leave a message once the machine's beep (or the end of its greeting) has come. Pure:
 * the schema, the resolved shape and the cross-field issues; no I/O.
 */
import { z } from "zod";

/** Who decides that a machine answered: the carrier's own detection, the gateway's (transcript heuristics and the beep), or both. */
export type VoicemailDetection = "carrier" | "local" | "both";

/** How long the agent stays silent, waiting for a verdict, before it greets as if a person answered (ms). */
export const DEFAULT_VOICEMAIL_WINDOW_MS = 6000;
/** The window's bounds (ms): Twilio's `MachineDetectionTimeout` takes 3–59 s, and a person waits no longer than this for a greeting. */
export const MIN_VOICEMAIL_WINDOW_MS = 3000;
export const MAX_VOICEMAIL_WINDOW_MS = 30_000;
/** After a machine is detected, the message waits this long at most for the beep or the greeting's end (ms). */
export const DEFAULT_BEEP_WAIT_MS = 20_000;
export const MAX_BEEP_WAIT_MS = 60_000;
/** A message longer than this is refused: a voicemail box records a minute or two, and the message is spoken verbatim. */
export const MAX_VOICEMAIL_MESSAGE_CHARS = 1000;

const wholeMs = (min: number, max: number) =>
  z.number().int({ error: "must be a whole number of milliseconds" }).min(min, { error: `must be ≥ ${min} ms` }).max(max, { error: `must be ≤ ${max} ms` });

export const VoicemailSchema = z.strictObject({
  action: z.enum(["hangup", "message"], { error: 'must be "hangup" (end the call on a machine) or "message" (leave `message` after the beep)' }),
  message: z.string().trim().min(1, { error: "must not be blank" }).max(MAX_VOICEMAIL_MESSAGE_CHARS, { error: `must be at most ${MAX_VOICEMAIL_MESSAGE_CHARS} characters` }).optional(),
  detection: z.enum(["carrier", "local", "both"], { error: 'must be "carrier" (Twilio/Telnyx AMD), "local" (the gateway listens) or "both"' }).optional(),
  calls: z.enum(["placed", "all"], { error: 'must be "placed" (calls the gateway places) or "all" (answered calls too)' }).optional(),
  windowMs: wholeMs(MIN_VOICEMAIL_WINDOW_MS, MAX_VOICEMAIL_WINDOW_MS).optional(),
  beepWaitMs: wholeMs(1000, MAX_BEEP_WAIT_MS).optional(),
});

export type VoicemailConfig = z.infer<typeof VoicemailSchema>;

/** `voicemail` with every default applied. */
export interface ResolvedVoicemail {
  readonly action: "hangup" | "message";
  /** Spoken verbatim, in the agent's voice, after the beep (action `message`). */
  readonly message: string | undefined;
  readonly detection: VoicemailDetection;
  /** Which calls are screened: the ones the gateway placed (default), or answered ones too. */
  readonly calls: "placed" | "all";
  readonly windowMs: number;
  readonly beepWaitMs: number;
}

export function resolveVoicemail(config: VoicemailConfig | undefined): ResolvedVoicemail | undefined {
  if (config === undefined) return undefined;
  return {
    action: config.action,
    message: config.message,
    detection: config.detection ?? "both",
    calls: config.calls ?? "placed",
    windowMs: config.windowMs ?? DEFAULT_VOICEMAIL_WINDOW_MS,
    beepWaitMs: config.beepWaitMs ?? DEFAULT_BEEP_WAIT_MS,
  };
}

/** The issues between `voicemail`, its own fields and `telephony`: each with the field and the fix. */
export function voicemailIssues(config: { readonly voicemail?: VoicemailConfig | undefined; readonly telephony?: boolean | readonly string[] | undefined }): { path: string; message: string }[] {
  const voicemail = config.voicemail;
  if (voicemail === undefined) return [];
  const issues: { path: string; message: string }[] = [];
  if (voicemail.action === "message" && voicemail.message === undefined) {
    issues.push({ path: "voicemail.message", message: 'action "message" needs the message to leave: add message: "Hi, this is … please call us back at …", or use action: "hangup".' });
  }
  if (voicemail.action === "hangup" && voicemail.message !== undefined) {
    issues.push({ path: "voicemail.message", message: 'is never spoken with action "hangup": use action: "message", or remove message.' });
  }
  if (voicemail.action === "hangup" && voicemail.beepWaitMs !== undefined) {
    issues.push({ path: "voicemail.beepWaitMs", message: 'is only waited for with action "message": remove it, or use action: "message".' });
  }
  const telephony = config.telephony;
  if (telephony === undefined || telephony === false || (Array.isArray(telephony) && telephony.length === 0)) {
    issues.push({ path: "voicemail", message: "does nothing without phone calls: set telephony (e.g. [\"twilio\"]), or remove voicemail." });
  }
  return issues;
}
