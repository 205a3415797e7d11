import { ToolDefinitionError } from "./errors.js";
import { spread } from "../spread.js";

/** A condition on one top-level tool argument. Ordering ops match numbers only. */
export interface ToolMessageCondition {
  readonly arg: string;
  readonly op: "eq" | "neq" | "gt" | "gte" | "lt" | "lte";
  readonly value: string | number | boolean | null;
}

/** `when`: one condition or several, ANDed. */
export type ToolMessageWhen = ToolMessageCondition | readonly ToolMessageCondition[];

/** A line spoken as the call starts. `blocking` holds the tool until the line is spoken. */
export interface ToolStartMessage {
  readonly content: string;
  readonly when?: readonly ToolMessageCondition[];
  readonly blocking?: true;
}

/** A rung of the delay ladder: spoken `afterMs` after the call started, if still running. */
export interface ToolDelayedMessage {
  readonly afterMs: number;
  readonly content: string;
  readonly when?: readonly ToolMessageCondition[];
}

/**
 * A line for a settled call. `assistant`: spoken verbatim and recorded, and the model is not
 * called again for that step. `system`: appended as `[guidance] <content>` to the result the
 * model reads.
 */
export interface ToolCompletionMessage {
  readonly content: string;
  readonly when?: readonly ToolMessageCondition[];
  readonly role: "assistant" | "system";
}

/** The wire shape: normalized, every declared kind a non-empty list, undeclared kinds absent. */
export interface ToolMessages {
  readonly start?: readonly ToolStartMessage[];
  readonly delayed?: readonly ToolDelayedMessage[];
  readonly complete?: readonly ToolCompletionMessage[];
  readonly failed?: readonly ToolCompletionMessage[];
}

type StartInput = string | { readonly content: string; readonly when?: ToolMessageWhen; readonly blocking?: boolean };
type DelayedInput = { readonly afterMs: number; readonly content: string; readonly when?: ToolMessageWhen };
type CompletionInput =
  | string
  | { readonly content: string; readonly when?: ToolMessageWhen; readonly role?: "assistant" | "system" };

/** What an author may write. */
export interface ToolMessagesInput {
  /** `true` draws from the default lines; one variant is drawn per call. */
  readonly start?: true | StartInput | readonly StartInput[];
  readonly delayed?: DelayedInput | readonly DelayedInput[];
  readonly complete?: CompletionInput | readonly CompletionInput[];
  readonly failed?: CompletionInput | readonly CompletionInput[];
}

/** The lines `start: true` draws from. */
export const DEFAULT_START_LINES: readonly string[] = [
  "One moment.",
  "Let me check.",
  "Let me look that up.",
  "Just a second.",
];

const OPS = new Set(["eq", "neq", "gt", "gte", "lt", "lte"]);
const KINDS = new Set(["start", "delayed", "complete", "failed"]);

function list<T>(input: T | readonly T[]): readonly T[] {
  return Array.isArray(input) ? (input as readonly T[]) : [input as T];
}

function content(raw: unknown, where: string): string {
  if (typeof raw !== "string" || raw.trim() === "") {
    throw new ToolDefinitionError(`${where}: \`content\` must be a non-empty string.`);
  }
  return raw.trim();
}

function conditions(when: ToolMessageWhen | undefined, where: string): readonly ToolMessageCondition[] | undefined {
  if (when === undefined) return undefined;
  const all = list(when);
  all.forEach((c, i) => {
    if (typeof c !== "object" || c === null || typeof c.arg !== "string" || c.arg === "") {
      throw new ToolDefinitionError(`${where}.when[${i}]: needs \`arg\`, the name of a top-level argument.`);
    }
    if (!OPS.has(c.op)) {
      throw new ToolDefinitionError(`${where}.when[${i}]: \`op\` must be one of eq, neq, gt, gte, lt, lte (got ${JSON.stringify(c.op)}).`);
    }
  });
  return all.length === 0 ? undefined : all.map(({ arg, op, value }) => ({ arg, op, value }));
}

function withWhen<T extends object>(base: T, when: readonly ToolMessageCondition[] | undefined): T {
  return when === undefined ? base : spread(base, { when });
}

function normalizeStart(input: NonNullable<ToolMessagesInput["start"]>): ToolStartMessage[] {
  const items = input === true ? DEFAULT_START_LINES : list(input);
  return items.map((item, i) => {
    const where = `messages.start[${i}]`;
    if (typeof item === "string") return { content: content(item, where) };
    const message = withWhen<ToolStartMessage>({ content: content(item.content, where) }, conditions(item.when, where));
    return item.blocking === true ? spread(message, { blocking: true }) : message;
  });
}

function normalizeDelayed(input: NonNullable<ToolMessagesInput["delayed"]>): ToolDelayedMessage[] {
  return list(input).map((item, i) => {
    const where = `messages.delayed[${i}]`;
    if (typeof item !== "object" || item === null) {
      throw new ToolDefinitionError(`${where}: write { afterMs, content } (a delayed line needs its delay).`);
    }
    if (!Number.isInteger(item.afterMs) || item.afterMs <= 0) {
      throw new ToolDefinitionError(`${where}: \`afterMs\` must be a positive integer (milliseconds after the call started).`);
    }
    return withWhen<ToolDelayedMessage>({ afterMs: item.afterMs, content: content(item.content, where) }, conditions(item.when, where));
  });
}

function normalizeCompletion(kind: "complete" | "failed", input: CompletionInput | readonly CompletionInput[]): ToolCompletionMessage[] {
  return list(input).map((item, i) => {
    const where = `messages.${kind}[${i}]`;
    if (typeof item === "string") return { content: content(item, where), role: "assistant" };
    const role = item.role ?? "assistant";
    if (role !== "assistant" && role !== "system") {
      throw new ToolDefinitionError(`${where}: \`role\` must be "assistant" (spoken) or "system" (guidance for the model).`);
    }
    return withWhen<ToolCompletionMessage>({ content: content(item.content, where), role }, conditions(item.when, where));
  });
}

/**
 * Author input → the wire shape, dropping every kind the tool did not declare.
 *
 * Answers `undefined` for a tool with nothing to say, so the wire declaration of an ordinary
 * tool is byte-identical to one from before tool messages existed. Idempotent: a normalized
 * value normalizes to an equal value. Throws `ToolDefinitionError` naming the bad entry.
 */
export function normalizeToolMessages(input: ToolMessagesInput | undefined): ToolMessages | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "object" || input === null) {
    throw new ToolDefinitionError("messages: write an object such as { start: true, delayed: [{ afterMs: 3000, content: \"Still looking.\" }] }.");
  }
  for (const key of Object.keys(input)) {
    if (!KINDS.has(key)) {
      throw new ToolDefinitionError(`messages.${key}: not a tool message kind; use start, delayed, complete or failed.`);
    }
  }
  const out: {
    start?: ToolStartMessage[];
    delayed?: ToolDelayedMessage[];
    complete?: ToolCompletionMessage[];
    failed?: ToolCompletionMessage[];
  } = {};
  if (input.start !== undefined && (input.start as unknown) !== false) {
    const start = normalizeStart(input.start);
    if (start.length > 0) out.start = start;
  }
  if (input.delayed !== undefined) {
    const delayed = normalizeDelayed(input.delayed);
    if (delayed.length > 0) out.delayed = delayed;
  }
  for (const kind of ["complete", "failed"] as const) {
    const raw = input[kind];
    if (raw === undefined) continue;
    const lines = normalizeCompletion(kind, raw);
    if (lines.length > 0) out[kind] = lines;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

// ── Runtime selection ────────────────────────────────────────────────────────────────────

/** A source of uniform numbers in [0, 1): `Math.random` in production, seeded in tests. */
export type RandomSource = () => number;

/** A deterministic RandomSource (mulberry32) for tests and reproducible demos. */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether two values are the same JSON (objects compared as serialized, key order included). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function holds(condition: ToolMessageCondition, args: unknown): boolean {
  if (typeof args !== "object" || args === null) return false;
  const actual = (args as Record<string, unknown>)[condition.arg];
  const expected = condition.value;
  switch (condition.op) {
    case "eq":
      return sameJson(actual, expected);
    case "neq":
      return !sameJson(actual, expected);
    default: {
      if (typeof actual !== "number" || typeof expected !== "number") return false;
      if (Number.isNaN(actual) || Number.isNaN(expected)) return false;
      if (condition.op === "gt") return actual > expected;
      if (condition.op === "gte") return actual >= expected;
      if (condition.op === "lt") return actual < expected;
      return actual <= expected;
    }
  }
}

/** Whether every condition holds for these arguments. Never throws, whatever `args` is. */
export function matchesWhen(when: readonly ToolMessageCondition[] | undefined, args: unknown): boolean {
  return when === undefined || when.every((c) => holds(c, args));
}

/** One variant among those whose `when` holds, drawn uniformly; `undefined` if none. */
export function pickVariant<M extends { readonly content: string; readonly when?: readonly ToolMessageCondition[] }>(
  variants: readonly M[] | undefined,
  args: unknown,
  random: RandomSource,
): M | undefined {
  const eligible = (variants ?? []).filter((m) => matchesWhen(m.when, args));
  if (eligible.length === 0) return undefined;
  const index = Math.min(eligible.length - 1, Math.floor(random() * eligible.length));
  return eligible[index];
}

/** One rung of a planned ladder: what to say, and when (ms after the call started). */
export interface LadderStep {
  readonly afterMs: number;
  readonly content: string;
}

/**
 * The delay ladder for one call: entries with the same `afterMs` are variants of one rung
 * (one is drawn), different `afterMs` are successive rungs, ascending.
 */
export function planDelayedLadder(
  delayed: readonly ToolDelayedMessage[] | undefined,
  args: unknown,
  random: RandomSource,
): readonly LadderStep[] {
  const rungs = new Map<number, ToolDelayedMessage[]>();
  for (const message of delayed ?? []) {
    const rung = rungs.get(message.afterMs);
    if (rung === undefined) rungs.set(message.afterMs, [message]);
    else rung.push(message);
  }
  const steps: LadderStep[] = [];
  for (const afterMs of [...rungs.keys()].sort((a, b) => a - b)) {
    const chosen = pickVariant(rungs.get(afterMs), args, random);
    if (chosen !== undefined) steps.push({ afterMs, content: chosen.content });
  }
  return steps;
}

/** Speaking rate used to estimate how long a line takes to say (characters per second). */
export const SPOKEN_CHARS_PER_SECOND = 18;
/** A blocking start line never holds a tool longer than this. */
export const MAX_BLOCKING_START_MS = 8000;

/** Estimated spoken duration of a line, for a blocking start message (ms, ≤ 8 s). */
export function spokenDurationMs(text: string): number {
  return Math.min(MAX_BLOCKING_START_MS, Math.round((text.length / SPOKEN_CHARS_PER_SECOND) * 1000));
}
