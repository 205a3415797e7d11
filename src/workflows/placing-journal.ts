/**
 * What a workflow's call placements did, on disk, so that a step tried again — after a crash, or
 * after the carrier's API gave no answer — never dials twice (docs/workflows.md "Calling out").
 * Neither Twilio's Calls resource nor Telnyx's TeXML outbound-call API takes an idempotency key,
 * so the gateway remembers instead, keyed by the run and the call's place in it:
 *
 * - `claim(key)` before the carrier is asked: a file created exclusively (`wx`), so one try only
 *   ever wins it; a later try finds `dialing` (the call may exist) or `placed` (the call, as it
 *   was answered);
 * - `settle(key, call)` once the carrier answered (written aside, then renamed over);
 * - `release(key)` once the carrier refused (nothing was dialled: a retry may dial).
 *
 * One small file per key, named by its SHA-256, under `SWITCHBOARD_WORKFLOWS_DIR/calls/`: the same
 * disk as the runs, so it survives what they survive. A claim is only read while its step can be
 * tried again (seconds to minutes), so files older than `MAX_AGE_MS` are pruned when it opens.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PlacedCall } from "../manifest/index.js";

/** A claim is kept this long (ms): far beyond a placing step's last try. */
export const MAX_AGE_MS = 86_400_000;

export type Claim = { readonly state: "new" } | { readonly state: "dialing" } | { readonly state: "placed"; readonly call: PlacedCall };

/**
 * Where a run's call placements are remembered: beside its runs (this file's journal on the local
 * store, a table on PostgreSQL — postgres-store.ts), so a placement survives what its run survives.
 */
export interface PlacingLedger {
  /** Claim `key` for one dial; what an earlier try left when it cannot. */
  claim(key: string): Promise<Claim>;
  /** The carrier placed it: a later try answers `call`. */
  settle(key: string, call: PlacedCall): Promise<void>;
  /** The carrier refused: nothing was dialled. */
  release(key: string): Promise<void>;
}

export class PlacingJournal implements PlacingLedger {
  readonly #dir: string;
  readonly #now: () => number;
  #opened: Promise<void> | undefined;

  constructor(dir: string, now: () => number) {
    this.#dir = dir;
    this.#now = now;
  }

  /** Claim `key` for one dial; what an earlier try left when it cannot. */
  async claim(key: string): Promise<Claim> {
    await this.#open();
    const path = this.#path(key);
    try {
      await writeFile(path, JSON.stringify({ state: "dialing" }), { flag: "wx" });
      return { state: "new" };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    try {
      const held = JSON.parse(await readFile(path, "utf8")) as { state?: unknown; call?: PlacedCall };
      if (held.state === "placed" && typeof held.call?.token === "string") return { state: "placed", call: held.call };
    } catch {
      // Torn by a crash mid-write: the dial may have happened.
    }
    return { state: "dialing" };
  }

  /** The carrier placed it: a later try answers `call`. */
  async settle(key: string, call: PlacedCall): Promise<void> {
    const path = this.#path(key);
    await writeFile(`${path}.tmp`, JSON.stringify({ state: "placed", call }));
    await rename(`${path}.tmp`, path);
  }

  /** The carrier refused: nothing was dialled. */
  async release(key: string): Promise<void> {
    await unlink(this.#path(key)).catch(() => undefined);
  }

  #path(key: string): string {
    return join(this.#dir, `${createHash("sha256").update(key).digest("hex")}.json`);
  }

  #open(): Promise<void> {
    this.#opened ??= (async () => {
      await mkdir(this.#dir, { recursive: true });
      const before = this.#now() - MAX_AGE_MS;
      for (const name of await readdir(this.#dir)) {
        const path = join(this.#dir, name);
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs < before) await unlink(path).catch(() => undefined);
      }
    })().catch((err: unknown) => {
      this.#opened = undefined;
      throw err;
    });
    return this.#opened;
  }
}
