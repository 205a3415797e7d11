/**
 * `npm run audit`: production dependencies must carry no high or critical advisory.
 *
 * Runs `npm audit --omit=dev --json`. Exit 1 when the report lists a high or critical advisory;
 * exit 0 with a warning on stderr when the advisory endpoint cannot be reached (an offline build
 * machine, or a registry mirror without `/-/npm/v1/security/advisories/bulk`), so CI still runs
 * the tests there — the warning says the audit did not happen.
 */
import { spawnSync } from "node:child_process";

interface AuditReport {
  readonly message?: string;
  readonly statusCode?: number;
  readonly metadata?: { readonly vulnerabilities?: Record<string, number> };
  readonly vulnerabilities?: Record<string, { readonly severity: string; readonly via: unknown[] }>;
}

const run = spawnSync("npm", ["audit", "--omit=dev", "--json"], { encoding: "utf8", timeout: 120_000 });
let report: AuditReport;
try {
  report = JSON.parse(run.stdout) as AuditReport;
} catch {
  console.warn(`audit: not run — npm audit printed no report (${(run.stderr || run.error?.message || "no output").trim().split("\n").at(-1) ?? ""})`);
  process.exit(0);
}
const counts = report.metadata?.vulnerabilities;
if (counts === undefined) {
  console.warn(`audit: not run — the advisory endpoint answered: ${report.message ?? "no report"}`);
  process.exit(0);
}
const serious = Object.entries(report.vulnerabilities ?? {}).filter(([, v]) => v.severity === "high" || v.severity === "critical");
console.warn(`audit: production dependencies: ${Object.entries(counts).map(([level, n]) => `${level} ${n}`).join(", ")}`);
for (const [name, v] of serious) console.error(`audit: ${v.severity}: ${name}`);
process.exit(serious.length > 0 ? 1 : 0);
