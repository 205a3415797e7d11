// Fuzz settings and figures. `npm test` runs every property with a fixed seed and a small number of
// runs; `npm run fuzz` runs many more (FUZZ_RUNS) and writes what was tried to docs/reliability.md
// (FUZZ_REPORT), one row per property, between the fuzz markers. The fault and soak suites write
// their own sections of the same file with `reportRow`.
import { readFileSync, writeFileSync } from "node:fs";

/** Fixed in CI so a failure reproduces; `FUZZ_SEED` overrides. */
export const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
/** Runs per property: small in `npm test`, large under `npm run fuzz`. */
export function runs(ci: number): number {
  const wanted = Number(process.env.FUZZ_RUNS ?? "");
  return Number.isInteger(wanted) && wanted > 0 ? Math.max(ci, Math.round((wanted * ci) / 1000)) : ci;
}

export interface Figure {
  readonly property: string;
  readonly runs: number;
  /** What one run feeds the system under test (frames, steps). */
  readonly inputs: number;
  readonly unit: string;
}

/**
 * Put one row into the table between `<!-- <section>:start -->` and `<!-- <section>:end -->` of
 * the report named by `FUZZ_REPORT` (nothing when unset): the row whose first cell equals
 * `cells[0]` is replaced, the others kept. Only reached when the property or fault held.
 */
export function reportRow(section: string, header: readonly string[], cells: readonly (string | number)[]): void {
  const path = process.env.FUZZ_REPORT;
  if (path === undefined || path === "") return;
  const start = `<!-- ${section}:start -->`;
  const end = `<!-- ${section}:end -->`;
  const text = readFileSync(path, "utf8");
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${path} has no ${start} … ${end} section`);
  const head = `| ${header.join(" | ")} |\n|---${"|--:".repeat(header.length - 1)}|`;
  const key = `| ${String(cells[0])} |`;
  const kept = text
    .slice(from + start.length, to)
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith(`| ${header[0]} |`) && !l.startsWith("|---") && !l.startsWith(key));
  const body = [head, ...kept, `| ${cells.join(" | ")} |`].join("\n");
  writeFileSync(path, `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`);
}

/** Record a property's figures in the fuzz section. */
export function report(figure: Figure): void {
  reportRow("fuzz", ["property (held)", "runs", "inputs fed", "seed"], [figure.property, figure.runs, `${figure.inputs} ${figure.unit}`, SEED]);
}
