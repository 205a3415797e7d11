/**
 * The builtin tool catalog: tools an agent lists by name in `builtinTools`. They resolve
 * against host hooks (clock, call control), so the runtime builds them per session.
 */
import { compileJsonSchema, ConfigError, didYouMean, tool, toolset, type AnyToolDef, type ConfigIssue, type Toolset, type TransferConfig, type TransferTarget } from "../../manifest/index.js";
import { CalculationError, evaluate } from "./calculator.js";
import { transferCallTool, type TransferAnswer } from "./transfer-call.js";
import { spread } from "../../spread.js";

export { CalculationError, evaluate, MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH } from "./calculator.js";
export { MAX_SUMMARY_CHARS, type TransferAnswer } from "./transfer-call.js";

/** What the builtins need from the session that runs them. */
export interface BuiltinHooks {
  now(): Date;
  /** The session ends after the current reply is spoken. */
  endCall(): void;
  /** The agent's `transfer` allow-list: `transfer_call` offers these destinations and no other. */
  transfer?: TransferConfig | undefined;
  /** Ask for a transfer once the current reply has been heard; undefined when the connection cannot transfer. */
  transferCall?: ((target: TransferTarget) => TransferAnswer) | undefined;
  /** IANA zone used when the model names none; default "UTC". */
  defaultTimeZone?: string;
}

export const BUILTIN_TOOL_NAMES: readonly string[] = Object.freeze(["current_time", "calculate", "end_call", "transfer_call"]);

/** Significant digits of a result in the text the model reads. */
const SPOKEN_DIGITS = 10;
const EXAMPLE_ZONES = '"Europe/Paris" or "America/New_York"';

/** A formatter for `timeZone`, or undefined when the zone is not a valid IANA name. */
function zoneFormatter(timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat | undefined {
  try {
    return new Intl.DateTimeFormat("en-US", spread(options, { timeZone }));
  } catch {
    return undefined;
  }
}

/** `2026-11-30T15:05:00+01:00`: the wall-clock time in the zone, with its UTC offset. */
function isoInZone(now: Date, timeZone: string): string {
  const format = zoneFormatter(timeZone, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  });
  const parts = Object.fromEntries((format?.formatToParts(now) ?? []).map((p) => [p.type, p.value]));
  const offset = (parts.timeZoneName ?? "GMT").replace(/^GMT/, "") || "+00:00";
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

function currentTime(hooks: BuiltinHooks, defaultZone: string): AnyToolDef {
  return tool({
    description: "Get the current date and time, in the caller's time zone or any other. Call it whenever the answer depends on today's date or the time.",
    parameters: compileJsonSchema<{ timeZone?: string }>({
      type: "object",
      properties: {
        timeZone: { description: `IANA time zone name such as ${EXAMPLE_ZONES}. Omit for the agent's default zone (${defaultZone}).`, type: "string" },
      },
    }),
    effect: "read",
    execute: ({ timeZone = defaultZone }) => {
      const time = zoneFormatter(timeZone, { hour: "numeric", minute: "2-digit", hour12: true });
      const date = zoneFormatter(timeZone, { weekday: "long", month: "long", day: "numeric", year: "numeric" });
      if (time === undefined || date === undefined) {
        return { text: `"${timeZone}" is not a time zone I know. Use an IANA name such as ${EXAMPLE_ZONES}.`, isError: true };
      }
      const now = hooks.now();
      // ICU's canonical name fixes the case ("europe/paris") but may be an old alias
      // ("Asia/Kolkata" resolves to "Asia/Calcutta"); the caller's name is kept otherwise.
      const resolved = time.resolvedOptions().timeZone;
      const zone = resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
      // ICU puts a narrow no-break space before AM/PM; speech engines want a plain space.
      const spoken = `It is ${time.format(now)} on ${date.format(now)} in ${zone}.`.replace(/\s/g, " ");
      return { text: spoken, details: { iso: isoInZone(now, zone), timeZone: zone } };
    },
  });
}

/** Up to SPOKEN_DIGITS significant digits, no grouping (so the number can be reused in an expression). */
function spokenNumber(value: number): string {
  return new Intl.NumberFormat("en-US", { maximumSignificantDigits: SPOKEN_DIGITS, useGrouping: false }).format(value);
}

function calculate(): AnyToolDef {
  return tool({
    description:
      "Evaluate an arithmetic expression exactly instead of doing math in your head. Supports + - * / ^, % (modulo, or percent as in 15% of 80), parentheses, sqrt abs round floor ceil min max log ln exp sin cos tan, and the constants pi and e.",
    parameters: compileJsonSchema<{ expression: string }>({
      type: "object",
      required: ["expression"],
      properties: {
        expression: {
          description: 'The expression, e.g. "(12.5 + 7) * 3", "15% of 80" or "round(100 / 7, 2)". Digits only: no words for numbers and no thousands separators.',
          type: "string",
        },
      },
    }),
    effect: "read",
    execute: ({ expression }) => {
      try {
        const result = evaluate(expression);
        return { text: `The result is ${spokenNumber(result)}.`, details: { expression, result } };
      } catch (error) {
        if (!(error instanceof CalculationError)) throw error;
        return { text: `I could not calculate that: ${error.message}.`, isError: true };
      }
    },
  });
}

function endCall(hooks: BuiltinHooks): AnyToolDef {
  return tool({
    description:
      "Hang up the call. Say goodbye to the caller in your reply first; the call ends right after that reply is spoken. Use only when the caller is done or asks to end the call.",
    parameters: compileJsonSchema<{ reason?: string }>({
      type: "object",
      properties: { reason: { description: 'Why the call is ending, for the logs, e.g. "caller said goodbye".', type: "string" } },
    }),
    effect: "write",
    execute: ({ reason }) => {
      hooks.endCall();
      return reason === undefined ? "Ending the call." : { text: "Ending the call.", details: { reason } };
    },
  });
}

function checkNames(names: readonly string[], hooks: BuiltinHooks): void {
  const issues: ConfigIssue[] = [];
  const known = BUILTIN_TOOL_NAMES.join(", ");
  names.forEach((name, i) => {
    if (!BUILTIN_TOOL_NAMES.includes(name)) {
      issues.push({ path: `builtinTools[${i}]`, message: `unknown builtin tool \`${name}\`.${didYouMean(name, BUILTIN_TOOL_NAMES)} Known builtins: ${known}.` });
    }
  });
  const zone = hooks.defaultTimeZone;
  if (zone !== undefined && names.includes("current_time") && zoneFormatter(zone, {}) === undefined) {
    issues.push({ path: "defaultTimeZone", message: `"${zone}" is not an IANA time zone; use a name such as ${EXAMPLE_ZONES}.` });
  }
  if (names.includes("transfer_call") && hooks.transfer === undefined) {
    issues.push({ path: "transfer", message: 'transfer_call needs an allow-list: add transfer: { destinations: [{ name: "sales", number: "+14155550123" }] }, or drop transfer_call.' });
  }
  if (issues.length > 0) throw new ConfigError("builtinTools", issues);
}

/**
 * The named builtins as one Toolset (source "builtin"), in the order given; a repeated name is
 * listed once. Unknown names → ConfigError with one issue per name.
 */
export function builtinToolset(names: readonly string[], hooks: BuiltinHooks): Toolset {
  checkNames(names, hooks);
  const build: Readonly<Record<string, () => AnyToolDef>> = {
    current_time: () => currentTime(hooks, hooks.defaultTimeZone ?? "UTC"),
    calculate,
    end_call: () => endCall(hooks),
    transfer_call: () => transferCallTool(hooks.transfer ?? { destinations: [] }, hooks.transferCall),
  };
  const tools: Record<string, AnyToolDef> = {};
  for (const name of names) {
    const make = Object.hasOwn(build, name) ? build[name] : undefined;
    if (make !== undefined && !Object.hasOwn(tools, name)) tools[name] = make();
  }
  return toolset("builtin", tools);
}
