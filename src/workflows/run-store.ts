/**
 * Where an engine's runs live, and how the engines that share them hear of each other: the SDK's
 * world plus what the gateway keeps beside it (the key index, the call placings). Two stores,
 * one interface: a directory for one process (local-store.ts) and a PostgreSQL database for
 * several processes or machines (postgres-store.ts). docs/workflows.md "Where runs live".
 */
import type { World } from "@workflow/world";
import type { PlacingLedger } from "./placing-journal.js";

export interface KeyEntry {
  readonly key: string;
  readonly runId: string;
  readonly workflow: string;
  /** Epoch ms the run was started. */
  readonly at: number;
}

/** Which runs each correlation key started (the world lists runs only by workflow and status). */
export interface RunKeys {
  add(entry: KeyEntry): Promise<void>;
  /** The key's runs, oldest first. */
  runsOf(key: string): Promise<readonly KeyEntry[]>;
  entryOf(runId: string): Promise<KeyEntry | undefined>;
  drop(runIds: readonly string[]): Promise<void>;
}

/** The SDK's queue entrypoints (`workflowEntrypoint(bundle)`, `stepEntrypoint`): a delivery in, the SDK's answer out. */
export interface Entrypoints {
  readonly workflow: (request: Request) => Promise<Response>;
  readonly step: (request: Request) => Promise<Response>;
}

export interface RunStore {
  readonly world: World;
  readonly keys: RunKeys;
  readonly placings: PlacingLedger;
  /** For the log: where the runs are (`dir`, or the database with its password hidden). */
  readonly where: Readonly<Record<string, string>>;
  /** Route the SDK's queue deliveries to `entrypoints`, then start the world (it re-enqueues runs that had not ended). */
  start(entrypoints: Entrypoints): Promise<void>;
  /** Every engine on this store hears that `runId` wrote an event of `eventType` (this one included). */
  announce(runId: string, eventType: string): Promise<void>;
  /** What `announce` tells, from any engine on this store. */
  onAnnounce(listener: (runId: string, eventType: string) => void): void;
  /** Delete everything of these (ended) runs. */
  deleteRuns(runIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}
