// The PostgreSQL store's own parts (postgres-store.ts), on a private server: the call placings
// keep the placing journal's rules (one dial per key: placing-journal.ts), the key index, and a
// database it cannot open refused with the variable and the URL's password hidden.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { PlacingJournal, type PlacingLedger } from "../../../src/workflows/placing-journal.js";
import { openPostgresStore } from "../../../src/workflows/postgres-store.js";
import type { RunStore } from "../../../src/workflows/run-store.js";
import { POSTGRES_BIN, startPostgres, type PostgresServer } from "../../../fakes/postgres-server.js";

/** Why the PostgreSQL cases cannot run here, or undefined. */
const SKIPPED = POSTGRES_BIN === undefined ? "PostgreSQL is not installed (sudo apt-get install postgresql)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
const dir = mkdtempSync(join(tmpdir(), "wf-pgstore-"));
let postgres: PostgresServer | undefined;
let store: RunStore | undefined;

beforeAll(async () => {
  if (SKIPPED !== undefined) return;
  postgres = await startPostgres();
  store = await openPostgresStore({ url: postgres.database("store"), clock: systemClock, log: silentLogger });
});
afterAll(async () => {
  await store?.close();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const call = { token: "call:wrun_1:1", carrier: "twilio", to: "+14155550123", from: "+14155550100", callId: "CA1" };
const ledgers: ReadonlyArray<{ readonly title: string; readonly skipped?: string | undefined; readonly ledger: () => PlacingLedger }> = [
  { title: "the journal on a directory", ledger: () => new PlacingJournal(join(dir, "calls"), () => Date.now()) },
  { title: `the table on PostgreSQL${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, skipped: SKIPPED, ledger: () => (store as RunStore).placings },
];

for (const { title, skipped, ledger } of ledgers) {
  describe.skipIf(skipped !== undefined)(`call placings: ${title}`, () => {
    it("lets one try dial per key: a later try finds it dialing, then placed; a release lets a retry dial", async () => {
      const placings = ledger();
      expect(await placings.claim("wrun_1:call:1")).toEqual({ state: "new" });
      expect(await placings.claim("wrun_1:call:1")).toEqual({ state: "dialing" });
      await placings.settle("wrun_1:call:1", call);
      expect(await placings.claim("wrun_1:call:1")).toEqual({ state: "placed", call });
      expect(await placings.claim("wrun_1:call:2")).toEqual({ state: "new" });
      await placings.release("wrun_1:call:2");
      expect(await placings.claim("wrun_1:call:2")).toEqual({ state: "new" });
      // Claims made at once: exactly one wins.
      const racing = await Promise.all([1, 2, 3, 4].map(() => placings.claim("wrun_1:call:3")));
      expect(racing.filter((claim) => claim.state === "new")).toHaveLength(1);
    });
  });
}

describe.skipIf(SKIPPED !== undefined)(`the PostgreSQL store${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, () => {
  it("keeps each key's runs, oldest first, and forgets dropped ones", async () => {
    const keys = (store as RunStore).keys;
    await keys.add({ key: "+15550100", runId: "wrun_B", workflow: "w", at: 2 });
    await keys.add({ key: "+15550100", runId: "wrun_A", workflow: "w", at: 1 });
    await keys.add({ key: "+15550100", runId: "wrun_A", workflow: "w", at: 1 });
    expect((await keys.runsOf("+15550100")).map((entry) => entry.runId)).toEqual(["wrun_A", "wrun_B"]);
    expect(await keys.entryOf("wrun_B")).toEqual({ key: "+15550100", runId: "wrun_B", workflow: "w", at: 2 });
    await keys.drop(["wrun_A"]);
    expect((await keys.runsOf("+15550100")).map((entry) => entry.runId)).toEqual(["wrun_B"]);
    expect(await keys.entryOf("wrun_none")).toBeUndefined();
  });

  it("refuses a database it cannot open, naming the variable, with the password hidden", async () => {
    const refused = await openPostgresStore({ url: "postgres://sb:hunter2@127.0.0.1:1/none", clock: systemClock, log: silentLogger }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(refused?.message).toMatch(/^SWITCHBOARD_WORKFLOWS_DATABASE_URL: cannot open postgres:\/\/sb:\*\*\*@127\.0\.0\.1:1\/none \(/);
    expect(refused?.message).not.toContain("hunter2");
  });
});
