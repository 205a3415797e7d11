import { ToolDefinitionError } from "./errors.js";

/**
 * A span of time as an author writes it: milliseconds as a number, or a string of a number and
 * one unit — `"250ms"`, `"30s"`, `"5m"`, `"2h"`, `"3d"`.
 */
export type Duration = number | `${number}${DurationUnit}`;

type DurationUnit = "ms" | "s" | "m" | "h" | "d";

const UNIT_MS: Readonly<Record<DurationUnit, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * `value` in whole milliseconds (fractions round up), or a `ToolDefinitionError` naming `field`
 * and the forms it takes. Never negative, never NaN, never above `maxMs` when given.
 */
export function parseDuration(value: unknown, field: string, maxMs?: number): number {
  let ms: number | undefined;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) ms = Math.ceil(value);
  else if (typeof value === "string") {
    const match = PATTERN.exec(value.trim());
    if (match !== null) ms = Math.ceil(Number(match[1]) * UNIT_MS[match[2] as DurationUnit]);
  }
  if (ms === undefined) {
    throw new ToolDefinitionError(`${field}: ${JSON.stringify(value) ?? String(value)} is not a duration; write milliseconds as a number (1500) or a number and a unit: "250ms", "30s", "5m", "2h", "3d".`);
  }
  if (maxMs !== undefined && ms > maxMs) {
    throw new ToolDefinitionError(`${field}: ${JSON.stringify(value)} is longer than the most it may be (${maxMs} ms).`);
  }
  return ms;
}
