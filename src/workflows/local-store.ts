/**
 * The embedded store: the SDK's local world (@workflow/world-local: JSON files under `<dir>/world`,
 * its queue delivered in this process — no server, no network), the key index in
 * `<dir>/keys.jsonl` and the call placings under `<dir>/calls/`. One process owns a directory:
 * engines on two processes would each deliver their own queue, so `serve --workers` needs the
 * PostgreSQL store (docs/workflows.md "Where runs live").
 */
import { join } from "node:path";
import { getQueueTopicPrefix } from "@workflow/world";
import { createLocalWorld } from "@workflow/world-local";
import { KeyIndex } from "./key-index.js";
import { PlacingJournal } from "./placing-journal.js";
import { deleteRunFiles } from "./retention.js";
import type { Entrypoints, RunStore } from "./run-store.js";
import { ensureWritableDir } from "./settings.js";

export async function openLocalStore(dir: string, now: () => number): Promise<RunStore> {
  await ensureWritableDir(dir);
  const worldDir = join(dir, "world");
  const keys = await KeyIndex.open(join(dir, "keys.jsonl"));
  const world = createLocalWorld({ dataDir: worldDir });
  const listeners: Array<(runId: string, eventType: string) => void> = [];
  return {
    world,
    keys,
    placings: new PlacingJournal(join(dir, "calls"), now),
    where: { dir },
    async start(entrypoints: Entrypoints) {
      world.registerHandler(getQueueTopicPrefix("workflow"), entrypoints.workflow);
      world.registerHandler(getQueueTopicPrefix("step"), entrypoints.step);
      await world.start?.();
    },
    announce(runId: string, eventType: string) {
      for (const listener of listeners) listener(runId, eventType);
      return Promise.resolve();
    },
    onAnnounce(listener) {
      listeners.push(listener);
    },
    async deleteRuns(runIds: readonly string[]) {
      await deleteRunFiles(worldDir, runIds);
      await keys.drop(runIds);
    },
    async close() {
      await world.close?.();
    },
  };
}
