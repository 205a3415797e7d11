/**
 * The operator's workflow settings, from the environment as the gateway's other settings are
 * (SWITCHBOARD_*; docs/workflows.md "Where runs live"):
 * - `SWITCHBOARD_WORKFLOWS_DIR`: where runs are stored; relative paths are read against the
 *   working directory. Default `.switchboard/workflows`.
 * - `SWITCHBOARD_WORKFLOWS_DATABASE_URL`: a PostgreSQL database (`postgres://…`) instead, shared by
 *   every process of the deployment (`serve --workers`, several instances). Not with the above.
 * - `SWITCHBOARD_WORKFLOWS_RETENTION_DAYS`: days an ended run is kept, a whole number ≥ 1.
 *   Default 7.
 */
import { access, constants, mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { RunsIn } from "./engine.js";
import { DEFAULT_RETENTION_DAYS } from "./retention.js";

export const DEFAULT_WORKFLOWS_DIR = ".switchboard/workflows";

export interface WorkflowSettings {
  /** A directory (absolute) or a database URL. */
  readonly runsIn: RunsIn;
  readonly retentionDays: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The settings in `env`, or an Error naming the variable and the fix. */
export function workflowSettings(env: Env = process.env, cwd: string = process.cwd()): WorkflowSettings {
  const dir = (env.SWITCHBOARD_WORKFLOWS_DIR ?? "").trim();
  const days = (env.SWITCHBOARD_WORKFLOWS_RETENTION_DAYS ?? "").trim();
  const retentionDays = days === "" ? DEFAULT_RETENTION_DAYS : Number(days);
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    throw new Error(`SWITCHBOARD_WORKFLOWS_RETENTION_DAYS: ${JSON.stringify(days)} is not a whole number ≥ 1; set how many days an ended run is kept (default ${DEFAULT_RETENTION_DAYS})`);
  }
  const database = (env.SWITCHBOARD_WORKFLOWS_DATABASE_URL ?? "").trim();
  if (database === "") return { runsIn: { dir: resolve(cwd, dir === "" ? DEFAULT_WORKFLOWS_DIR : dir) }, retentionDays };
  if (dir !== "") throw new Error("SWITCHBOARD_WORKFLOWS_DATABASE_URL and SWITCHBOARD_WORKFLOWS_DIR are both set: runs live in one place; unset one");
  if (!isPostgresUrl(database)) {
    throw new Error("SWITCHBOARD_WORKFLOWS_DATABASE_URL: not a PostgreSQL URL; set postgres://user:password@host:5432/database (or unset it to keep runs in SWITCHBOARD_WORKFLOWS_DIR)");
  }
  return { runsIn: { database }, retentionDays };
}

/** `postgres://` or `postgresql://` with a host: what the engine's PostgreSQL client connects to. */
function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Create `dir` if needed and check this process may write it; else an Error naming the fix. */
export async function ensureWritableDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new Error(`workflow data directory ${dir} is not writable (${code}): set SWITCHBOARD_WORKFLOWS_DIR to a directory this process may create and write`, { cause: err });
  }
}
