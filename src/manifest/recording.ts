import { z } from "zod";

/**
 * `recording`: the call record an agent opts into (docs/config.md "Recording"): a stereo WAV
 * (caller left, agent right, as played) and a JSON record (transcript with timings, tool calls,
 * per-turn metrics), written when the session ends to a directory or an S3-compatible bucket,
 * with redaction rules applied first. Pure: the schema and the resolved shape, no I/O.
 */

/** The built-in redaction rules (session/recording/redaction.ts says what each matches). */
export const REDACTION_RULES = ["card", "ssn", "email"] as const;
export type RedactionRuleName = (typeof REDACTION_RULES)[number];

/** The longest a recording's audio runs by default (minutes); past it the audio stops and the record says where. */
export const DEFAULT_MAX_AUDIO_MINUTES = 120;
/** The most `maxAudioMinutes` may say: a 16 kHz stereo PCM16 WAV of 10 h is 2.3 GB, within the format's 4 GiB. */
export const MAX_AUDIO_MINUTES = 600;

const nonBlank = z.string().trim().min(1, { error: "must not be blank" });

/** S3 bucket names: 3–63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit (AWS "Bucket naming rules"). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const S3Schema = z.strictObject({
  bucket: z.string().regex(BUCKET, { error: "must be an S3 bucket name: 3–63 lowercase letters, digits, dots and hyphens" }),
  /** Key prefix (no leading "/"); each session's files go under `<prefix><sessionId>/`. */
  prefix: z
    .string()
    .max(512, { error: "must be at most 512 characters" })
    .refine((value) => !value.startsWith("/"), { error: 'must not start with "/" (keys are relative to the bucket)' })
    .optional(),
  region: nonBlank.optional(),
  /** An S3-compatible service's endpoint (MinIO, R2, …); absent = AWS. */
  endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as http://127.0.0.1:9000" }).optional(),
  forcePathStyle: z.boolean().optional(),
});

const DestinationSchema = z.union([z.strictObject({ dir: nonBlank }), z.strictObject({ s3: S3Schema })], {
  error: 'must be { dir: "<directory>" } or { s3: { bucket: "<bucket>", prefix?, region?, endpoint?, forcePathStyle? } }',
});

const CustomRuleSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, { error: "must be a short lowercase name such as account_number" }),
  /** A JavaScript regular expression's source; compiled with `flags` plus "g". */
  pattern: z.string().min(1, { error: "must not be empty" }).max(1000, { error: "must be at most 1000 characters" }),
  flags: z
    .string()
    .regex(/^[imsu]*$/, { error: 'may hold only the flags i, m, s and u ("g" is always added)' })
    .optional(),
});

export const RecordingSchema = z.strictObject({
  /** The stereo WAV (default true in voice modes; a text session has no audio). */
  audio: z.boolean().optional(),
  /** The transcript and tool calls in the JSON record (default true). */
  transcript: z.boolean().optional(),
  destination: DestinationSchema,
  redact: z
    .array(z.union([z.enum(REDACTION_RULES), CustomRuleSchema], { error: `must be one of ${REDACTION_RULES.map((rule) => `"${rule}"`).join(", ")} or { name, pattern, flags? }` }))
    .max(32, { error: "at most 32 rules" })
    .readonly()
    .optional(),
  maxAudioMinutes: z
    .number()
    .int({ error: "must be a whole number of minutes" })
    .min(1, { error: "must be ≥ 1" })
    .max(MAX_AUDIO_MINUTES, { error: `must be ≤ ${MAX_AUDIO_MINUTES}` })
    .optional(),
});

export type RecordingConfig = z.infer<typeof RecordingSchema>;
export type RecordingDestination = RecordingConfig["destination"];
export type CustomRedactionRule = z.infer<typeof CustomRuleSchema>;
export type RedactionRule = RedactionRuleName | CustomRedactionRule;

/** Where a session's record went, as `onSessionEnd` receives it (`record`; absent when the agent records nothing). */
export type RecordOutcome =
  /** Written: `location` is the folder (`file://…/`) or the key prefix (`s3://bucket/…/`); `files` the names under it. */
  | { readonly status: "written"; readonly location: string; readonly files: readonly string[] }
  /** Not written (the destination refused or timed out): why. The local copies are removed. */
  | { readonly status: "failed"; readonly error: string };

/** Problems of a recording config a schema cannot see: `[path under recording, message]`. */
export function recordingIssues(recording: RecordingConfig): [string, string][] {
  const issues: [string, string][] = [];
  if (recording.audio === false && recording.transcript === false) {
    issues.push(["", "records nothing with audio and transcript both false: set one of them, or remove recording."]);
  }
  recording.redact?.forEach((rule, i) => {
    if (typeof rule === "string") return;
    try {
      new RegExp(rule.pattern, `${rule.flags ?? ""}g`);
    } catch (error) {
      issues.push([`redact[${i}].pattern`, `is not a valid regular expression (${(error as Error).message}): fix the pattern.`]);
    }
    if (REDACTION_RULES.includes(rule.name as RedactionRuleName)) issues.push([`redact[${i}].name`, `"${rule.name}" is a built-in rule: name yours differently, or list "${rule.name}" on its own.`]);
  });
  return issues;
}
