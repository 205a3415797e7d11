// Fuzz settings and figures. `npm test` runs every property with a fixed seed and a small number of
// runs; `npm run fuzz` runs many more (FUZZ_RUNS) and writes what was tried to docs/reliability.md
// (FUZZ_REPORT), one row per property, between the fuzz markers.
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

const START = "<!-- fuzz:start -->";
const END = "<!-- fuzz:end -->";

/** Record a property's figures in docs/reliability.md when `FUZZ_REPORT` names it: only reached when the property held. */
export function report(figure: Figure): void {
  const path = process.env.FUZZ_REPORT;
  if (path === undefined || path === "") return;
  const text = readFileSync(path, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${path} has no ${START} … ${END} section`);
  const header = "| property (held) | runs | inputs fed | seed |\n|---|--:|--:|--:|";
  const lines = text.slice(start + START.length, end).split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| property") && !l.startsWith("|---"));
  const row = `| ${figure.property} | ${figure.runs} | ${figure.inputs} ${figure.unit} | ${SEED} |`;
  const kept = lines.filter((l) => !l.startsWith(`| ${figure.property} |`));
  const body = [header, ...kept, row].join("\n");
  writeFileSync(path, `${text.slice(0, start + START.length)}\n${body}\n${text.slice(end)}`);
}
