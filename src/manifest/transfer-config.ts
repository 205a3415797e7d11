/**
 * `transfer`: where the `transfer_call` builtin may send a caller (docs/config.md "transfer",
 * docs/telephony.md "Transfer"). An allow-list of named destinations: the model picks a name,
 * never a number, so it cannot dial anything the operator did not list. Pure.
 */
import { z } from "zod";

/** E.164: `+`, a country code that does not start with 0, at most 15 digits in all (ITU-T E.164 §6). */
export const E164 = /^\+[1-9]\d{6,14}$/;
/** A SIP URI with a user part (RFC 3261 §19.1): `sip:` or `sips:`, `user@host[:port][;params]`, no spaces, quotes or angle brackets. */
export const SIP_URI = /^sips?:[^\s@<>"'&]+@[A-Za-z0-9.-]+(?::\d{1,5})?(?:;[^\s<>"'&]*)?$/;
/** A destination's name, as the model gives it. */
const DESTINATION_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** How the caller is handed over: straight away (`cold`), or after the human heard a summary (`warm`). */
export type TransferMode = "cold" | "warm";

/** Ring time before a warm transfer counts as unanswered (s): carriers accept 5–120 on `<Dial timeout>`. */
export const DEFAULT_RING_TIMEOUT_S = 20;
/** At most this many destinations: each is listed in the tool's schema the model reads every turn. */
export const MAX_DESTINATIONS = 20;

const DestinationSchema = z
  .strictObject({
    name: z.string().regex(DESTINATION_NAME, { error: 'must be lowercase letters, digits, "-" or "_", starting with a letter, at most 40 characters (the model passes it), e.g. "sales"' }),
    number: z.string().regex(E164, { error: 'must be an E.164 number: "+", the country code and the number, digits only, e.g. "+14155550123"' }).optional(),
    sip: z.string().regex(SIP_URI, { error: 'must be a SIP URI such as "sip:desk@pbx.example.com"' }).optional(),
    description: z.string().trim().min(1, { error: "must not be blank" }).max(200, { error: "must be at most 200 characters" }).optional(),
    mode: z.enum(["cold", "warm"], { error: 'must be "cold" (hand the caller straight over) or "warm" (the human hears a summary first)' }).optional(),
  })
  .refine((d) => (d.number === undefined) !== (d.sip === undefined), { error: "set exactly one of number (E.164) or sip (a SIP URI)" });

export const TransferSchema = z.strictObject({
  destinations: z
    .array(DestinationSchema)
    .min(1, { error: 'list at least one destination, e.g. [{ name: "sales", number: "+14155550123" }]' })
    .max(MAX_DESTINATIONS, { error: `at most ${MAX_DESTINATIONS} destinations` })
    .readonly(),
  ringTimeoutS: z.number().int({ error: "must be a whole number of seconds" }).min(5, { error: "must be ≥ 5 s" }).max(120, { error: "must be ≤ 120 s" }).optional(),
});

export type TransferConfig = z.infer<typeof TransferSchema>;
export type TransferDestination = TransferConfig["destinations"][number];

/** A destination the tool resolved: where to dial, and how. */
export interface TransferTarget {
  readonly name: string;
  /** E.164 number, or a SIP URI. */
  readonly address: { readonly kind: "number"; readonly number: string } | { readonly kind: "sip"; readonly uri: string };
  readonly mode: TransferMode;
  /** Warm: what the human hears before the caller is put through. */
  readonly summary?: string | undefined;
  /** Warm: how long the human's phone rings before the transfer counts as unanswered (s). */
  readonly ringTimeoutS: number;
}

/** Resolve an allow-listed destination into a target. */
export function transferTarget(config: TransferConfig, destination: TransferDestination, summary: string | undefined): TransferTarget {
  const address = destination.number !== undefined ? { kind: "number" as const, number: destination.number } : { kind: "sip" as const, uri: destination.sip ?? "" };
  return { name: destination.name, address, mode: destination.mode ?? "cold", summary, ringTimeoutS: config.ringTimeoutS ?? DEFAULT_RING_TIMEOUT_S };
}

/** The issues between `transfer` and `builtinTools`: each needs the other. */
export function transferIssues(config: { readonly transfer?: TransferConfig | undefined; readonly builtinTools?: readonly string[] | undefined }): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const offered = (config.builtinTools ?? []).includes("transfer_call");
  if (offered && config.transfer === undefined) {
    issues.push({
      path: "transfer",
      message: 'builtinTools lists transfer_call but no destination is allowed: add transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } (the model may only transfer to these), or drop transfer_call.',
    });
  }
  if (!offered && config.transfer !== undefined) {
    issues.push({ path: "transfer", message: 'does nothing without the transfer_call builtin: add "transfer_call" to builtinTools, or remove transfer.' });
  }
  const seen = new Set<string>();
  config.transfer?.destinations.forEach((d, i) => {
    if (seen.has(d.name)) issues.push({ path: `transfer.destinations[${i}].name`, message: `"${d.name}" is listed twice: each destination needs its own name.` });
    seen.add(d.name);
  });
  return issues;
}
