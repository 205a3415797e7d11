/**
 * The offline script (an agent's `offline.json`, docs/offline.md): its schema, and compiling it
 * once — every regular expression built, every placeholder checked — into the rules the
 * `scripted` model answers from. A bad script throws a `ConfigError` naming each field and its fix.
 */
import { z } from "zod";
import { didYouMean, IssueList } from "../../../manifest/errors.js";

/** Said when no rule matches and the script sets no `fallback`. */
export const DEFAULT_FALLBACK = "I'm the offline demo model, and I don't have a scripted reply for that.";

const wholeMs = z.number({ error: "must be a number of milliseconds, e.g. 40" }).int({ error: "must be a whole number of milliseconds" }).min(0, { error: "must be ≥ 0 ms" });

const RULE_FIELDS = ["when", "say", "call", "then", "delayMs"] as const;
const CALL_FIELDS = ["tool", "args"] as const;
const SCRIPT_FIELDS = ["rules", "fallback", "delayMs"] as const;

/** A custom message for a value of the wrong type; zod's own for everything else. */
const expecting = (message: string) => ({ error: (issue: { code: string }) => (issue.code === "invalid_type" ? message : undefined) });

const ToolCallSchema = z.strictObject({
  tool: z
    .string({ error: 'is required: the name of a tool the agent offers, e.g. "lookup_order"' })
    .min(1, { error: 'must not be empty: write the name of a tool the agent offers, e.g. "lookup_order"' }),
  args: z.record(z.string(), z.unknown(), { error: 'must be an object of arguments, e.g. { "orderId": "{orderId}" }' }).optional(),
}, expecting('must be a tool call such as { "tool": "lookup_order", "args": { "orderId": "{orderId}" } }'));

const RuleSchema = z.strictObject({
  /** Case-insensitive regular expression source, matched against the last user message. */
  when: z.string({ error: 'must be a regular expression as a string, e.g. "order (?<orderId>\\\\w+)"' }).optional(),
  /** Said first; `{name}` placeholders come from the named groups of `when`. */
  say: z.string({ error: "must be a string" }).optional(),
  /** One tool call or a list of them, made in the same step. */
  call: z.union([ToolCallSchema, z.array(ToolCallSchema).min(1, { error: "must list at least one tool call, or be left out" })], {
    error: 'must be a tool call { "tool": "name", "args": { ... } } or a list of them',
  }).optional(),
  /** Said after the tool(s) ran; `{result}` is the tool results' text. Default "{result}". */
  then: z.string({ error: "must be a string" }).optional(),
  /** Delay between streamed text chunks for this rule, overriding the script's. */
  delayMs: wholeMs.optional(),
}, expecting('must be a rule such as { "when": "\\\\b(hi|hello)\\\\b", "say": "Hello!" }'));

/** The `scripted` model's script; also the format of a per-agent `offline.json`. */
export const ScriptSchema = z.strictObject({
  rules: z.array(RuleSchema, { error: "must be a list of rules, e.g. [{ \"when\": \"hello\", \"say\": \"Hi!\" }]" }).optional(),
  /** Said when no rule matches (default: {@link DEFAULT_FALLBACK}). */
  fallback: z.string({ error: "must be a string" }).optional(),
  /** Delay between streamed text chunks, in ms (default 0). */
  delayMs: wholeMs.optional(),
}, expecting('must be an object such as { "rules": [...], "fallback": "..." }'));

export type Script = z.infer<typeof ScriptSchema>;
export type ScriptRule = z.infer<typeof RuleSchema>;
export type ScriptToolCall = z.infer<typeof ToolCallSchema>;

/** Waits `ms`; rejects if `signal` aborts first. Injectable so tests need no real timers. */

export interface CompiledRule {
  readonly rule: ScriptRule;
  /** Undefined for rules without `when`: they never match a user message, only tool results. */
  readonly pattern: RegExp | undefined;
  readonly calls: readonly ScriptToolCall[];
  readonly toolNames: ReadonlySet<string>;
}

export interface CompiledScript {
  readonly rules: readonly CompiledRule[];
  readonly fallback: string;
  readonly delayMs: number;
}

export const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
export const RESULT = "result";

// ---------------------------------------------------------------------------------------------
// Validation

export function compileScript(input: unknown): CompiledScript {
  const issues = new IssueList();
  const parsed = ScriptSchema.safeParse(input);
  if (!parsed.success) {
    addZodIssues(issues, parsed.error.issues, []);
    issues.throwIfAny("scripted model script");
  }
  const script = parsed.data ?? {};
  const rules = (script.rules ?? []).map((rule, index) => compileRule(rule, `rules[${index}]`, issues));
  issues.throwIfAny("scripted model script");
  return { rules, fallback: script.fallback ?? DEFAULT_FALLBACK, delayMs: script.delayMs ?? 0 };
}

function compileRule(rule: ScriptRule, path: string, issues: IssueList): CompiledRule {
  let pattern: RegExp | undefined;
  if (rule.when !== undefined) {
    try {
      pattern = new RegExp(rule.when, "i");
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      issues.add(
        `${path}.when`,
        `not a valid regular expression (${reason}). Fix the pattern: escape characters meant literally with a backslash, e.g. \\( or \\? (written "\\\\(" in a JSON file).`,
      );
    }
  }
  const calls = rule.call === undefined ? [] : Array.isArray(rule.call) ? rule.call : [rule.call];
  if (rule.say === undefined && calls.length === 0) {
    issues.add(path, 'does nothing: give it "say", "call" or both.');
  }
  if (rule.then !== undefined && calls.length === 0) {
    issues.add(`${path}.then`, 'is only said after a tool call: add "call", or move the text to "say".');
  }
  if (rule.when === undefined || pattern !== undefined) {
    const groups = groupNamesOf(pattern);
    const callPath = Array.isArray(rule.call) ? (i: number) => `${path}.call[${i}]` : () => `${path}.call`;
    checkPlaceholders(rule.say, `${path}.say`, groups, issues);
    checkPlaceholders(rule.then, `${path}.then`, [...groups, RESULT], issues);
    calls.forEach((call, i) => checkPlaceholders(call.args, `${callPath(i)}.args`, groups, issues));
  }
  return { rule, pattern, calls, toolNames: new Set(calls.map((call) => call.tool)) };
}

/** The named groups a pattern defines (an always-matching alternative exposes them all). */
export function groupNamesOf(pattern: RegExp | undefined): string[] {
  if (pattern === undefined) return [];
  const groups = new RegExp(`(?:${pattern.source})|`, pattern.flags).exec("")?.groups;
  return groups === undefined ? [] : Object.keys(groups);
}

/** Every `{name}` in a template (or in the strings of an args object) must have a source. */
function checkPlaceholders(value: unknown, path: string, known: readonly string[], issues: IssueList): void {
  if (typeof value === "string") {
    for (const [, name = ""] of value.matchAll(PLACEHOLDER)) {
      if (known.includes(name)) continue;
      const sources = name === RESULT ? 'only "then" has {result}' : known.length === 0 ? '"when" has no named groups' : `known: ${known.map((k) => `{${k}}`).join(", ")}`;
      issues.add(path, `unknown placeholder {${name}} (${sources}). Add a named group such as (?<${name}>\\w+) to "when", or remove the braces.${didYouMean(name, known)}`);
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => checkPlaceholders(item, `${path}[${i}]`, known, issues));
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) checkPlaceholders(item, `${path}.${key}`, known, issues);
  }
}

const FIELDS_BY_KIND: Record<string, readonly string[]> = { script: SCRIPT_FIELDS, rule: RULE_FIELDS, call: CALL_FIELDS };

/** Zod issues → `field.path: what is wrong and how to fix it`; a union reports its closest branch. */
function addZodIssues(issues: IssueList, zodIssues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): void {
  for (const issue of zodIssues) {
    const where = [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      const closest = issue.errors.find((branch) => !branch.every((inner) => inner.path.length === 0 && inner.code === "invalid_type"));
      if (closest !== undefined) {
        addZodIssues(issues, closest, where);
        continue;
      }
    }
    if (issue.code === "unrecognized_keys") {
      const known = FIELDS_BY_KIND[objectKindAt(where)] ?? [];
      for (const key of issue.keys) {
        issues.add(pathOf([...where, key]), `is not a field here (known: ${known.join(", ")}).${didYouMean(key, known)}`);
      }
      continue;
    }
    issues.add(pathOf(where), issue.message);
  }
}

function objectKindAt(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "script";
  return path.includes("call") ? "call" : "rule";
}

function pathOf(parts: readonly PropertyKey[]): string {
  const path = parts.reduce<string>((acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc === "" ? String(part) : `${acc}.${String(part)}`), "");
  return path === "" ? "script" : path;
}
