/**
 * Retention: runs that ended more than N days ago are deleted. The local world has no per-run
 * delete (only `clear()` of everything), and its start-up and listing read every stored file
 * (the spike measured 320 ms to start over 500 finished runs), so finished runs must not pile up.
 *
 * This couples to @workflow/world-local 4.4.1's file layout (pinned; the engine's tests prune
 * a run and read it back): a run's files are named `<runId>.json` (`runs/`) or
 * `<runId>-<id>.json` (`events/`, `steps/`, `waits/`, and the lock markers under `.locks/`),
 * its stream chunks `strm_<runId's ULID>_…` (`streams/chunks/`). Hooks of an ended run are
 * already deleted by the world.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/** Days a finished run is kept when the operator sets nothing. */
export const DEFAULT_RETENTION_DAYS = 7;
/** How often a running engine prunes (ms). */
export const PRUNE_INTERVAL_MS = 6 * 3_600_000;

const RUN_DIRS = ["runs", "events", "steps", "waits", join(".locks", "steps"), join(".locks", "waits")];
const STREAM_DIR = join("streams", "chunks");

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/** Delete every file of `runIds` under the world's `dataDir`. */
export async function deleteRunFiles(dataDir: string, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  const ids = new Set(runIds);
  const streams = new Set(runIds.map((id) => id.replace(/^wrun_/, "strm_")));
  for (const dir of RUN_DIRS) {
    const path = join(dataDir, dir);
    // `wrun_<ULID>.json`, `wrun_<ULID>-evnt_<ULID>.json`: a ULID holds neither "." nor "-".
    for (const name of await names(path)) if (ids.has(name.split(/[.-]/, 1)[0] ?? "")) await rm(join(path, name), { force: true });
  }
  const streamPath = join(dataDir, STREAM_DIR);
  // `strm_<ULID>_user…`: the run's ULID under another prefix.
  for (const name of await names(streamPath)) if (streams.has(/^(strm_[0-9A-Za-z]+)_/.exec(name)?.[1] ?? "")) await rm(join(streamPath, name), { force: true });
}
