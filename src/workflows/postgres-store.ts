/**
 * The distributed store: the SDK's PostgreSQL world (@workflow/world-postgres 4.3.7: runs, events,
 * steps, hooks and waits in the `workflow` schema; its queue is graphile-worker's, in the
 * `graphile_worker` schema) plus the gateway's own tables in the `switchboard` schema (the key
 * index, the call placings). Every process of a deployment opens the same database: any of them
 * may run a run's next step, a hook delivered to any of them resumes the run, and each hears every
 * run's events through `LISTEN`/`NOTIFY` (docs/workflows.md "Where runs live").
 *
 * Schemas are created or upgraded as the store opens, one process at a time (a session-level
 * advisory lock), so workers starting together do not race on the DDL.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { makeWorkerUtils } from "graphile-worker";
import pg from "pg";
import { createWorld } from "@workflow/world-postgres";
import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../log.js";
import type { PlacedCall } from "../manifest/index.js";
import { listenForDeliveries, type LoopbackDelivery } from "./loopback-delivery.js";
import { MAX_AGE_MS, type Claim, type PlacingLedger } from "./placing-journal.js";
import type { Entrypoints, KeyEntry, RunKeys, RunStore } from "./run-store.js";

/** The channel every engine on the database listens on; a payload is `<runId> <eventType>`. */
const CHANNEL = "switchboard_workflow_events";
/** The advisory lock the schema set-up holds (any constant no other user of the database takes). */
const SCHEMA_LOCK = 0x5357_4246; // "SWBF"
/** Wait before listening again after the listening connection dropped (ms). */
const RELISTEN_MS = 1_000;

const OWN_SCHEMA = `
CREATE SCHEMA IF NOT EXISTS switchboard;
CREATE TABLE IF NOT EXISTS switchboard.workflow_keys (
  run_id text PRIMARY KEY,
  key text NOT NULL,
  workflow text NOT NULL,
  started_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS workflow_keys_by_key ON switchboard.workflow_keys (key, started_at);
CREATE TABLE IF NOT EXISTS switchboard.call_placings (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('dialing', 'placed')),
  call jsonb,
  claimed_at timestamptz NOT NULL DEFAULT now()
);`;

/** The world's run tables, children first (the run's row last). */
const RUN_TABLES = ["workflow_events", "workflow_steps", "workflow_hooks", "workflow_waits", "workflow_stream_chunks"];

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (or `postgresql://`). */
  readonly url: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** Jobs this process runs at once (graphile-worker's concurrency); default 10. */
  readonly concurrency?: number;
}

/** `url` with its password hidden, for logs and errors. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/** The world's migrations ship in its package (`src/drizzle/migrations`, beside `dist/`). */
function worldMigrations(): string {
  const entry = createRequire(import.meta.url).resolve("@workflow/world-postgres");
  return join(dirname(entry), "..", "src", "drizzle", "migrations");
}

async function setUpSchemas(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [SCHEMA_LOCK]);
    try {
      // The world's own set-up (its CLI does the same): its tables, then the queue's.
      await migrate(drizzle(client), { migrationsFolder: worldMigrations(), migrationsTable: "workflow_migrations", migrationsSchema: "workflow_drizzle" });
      const utils = await makeWorkerUtils({ pgPool: pool });
      try {
        await utils.migrate();
      } finally {
        await utils.release();
      }
      await client.query(OWN_SCHEMA);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [SCHEMA_LOCK]);
    }
  } finally {
    client.release();
  }
}

class PostgresKeys implements RunKeys {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async add(entry: KeyEntry): Promise<void> {
    await this.#pool.query("INSERT INTO switchboard.workflow_keys (run_id, key, workflow, started_at) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING", [entry.runId, entry.key, entry.workflow, entry.at]);
  }

  async runsOf(key: string): Promise<readonly KeyEntry[]> {
    const { rows } = await this.#pool.query<Row>("SELECT run_id, key, workflow, started_at FROM switchboard.workflow_keys WHERE key = $1 ORDER BY started_at, run_id", [key]);
    return rows.map(entryOf);
  }

  async entryOf(runId: string): Promise<KeyEntry | undefined> {
    const { rows } = await this.#pool.query<Row>("SELECT run_id, key, workflow, started_at FROM switchboard.workflow_keys WHERE run_id = $1", [runId]);
    return rows[0] === undefined ? undefined : entryOf(rows[0]);
  }

  async drop(runIds: readonly string[]): Promise<void> {
    if (runIds.length > 0) await this.#pool.query("DELETE FROM switchboard.workflow_keys WHERE run_id = ANY($1)", [runIds]);
  }
}

interface Row {
  readonly run_id: string;
  readonly key: string;
  readonly workflow: string;
  /** bigint: pg hands it back as a string. */
  readonly started_at: string;
}

const entryOf = (row: Row): KeyEntry => ({ runId: row.run_id, key: row.key, workflow: row.workflow, at: Number(row.started_at) });

/** The placing journal's rules (placing-journal.ts) as rows: the primary key is the exclusive claim. */
class PostgresPlacings implements PlacingLedger {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async claim(key: string): Promise<Claim> {
    const won = await this.#pool.query("INSERT INTO switchboard.call_placings (key, state) VALUES ($1, 'dialing') ON CONFLICT (key) DO NOTHING", [key]);
    if (won.rowCount === 1) return { state: "new" };
    const { rows } = await this.#pool.query<{ state: string; call: PlacedCall | null }>("SELECT state, call FROM switchboard.call_placings WHERE key = $1", [key]);
    const held = rows[0];
    return held?.state === "placed" && typeof held.call?.token === "string" ? { state: "placed", call: held.call } : { state: "dialing" };
  }

  async settle(key: string, call: PlacedCall): Promise<void> {
    await this.#pool.query("UPDATE switchboard.call_placings SET state = 'placed', call = $2 WHERE key = $1", [key, JSON.stringify(call)]);
  }

  async release(key: string): Promise<void> {
    await this.#pool.query("DELETE FROM switchboard.call_placings WHERE key = $1", [key]);
  }
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<RunStore> {
  const { url, clock, log } = options;
  const where = redactedUrl(url);
  const pool = new pg.Pool({ connectionString: url });
  // An idle connection the server drops emits here; unheard, it would end the process.
  pool.on("error", (err) => log.warn({ err, database: where }, "workflow database connection lost"));
  try {
    await setUpSchemas(pool);
    await pool.query("DELETE FROM switchboard.call_placings WHERE claimed_at < now() - make_interval(secs => $1)", [MAX_AGE_MS / 1000]);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`SWITCHBOARD_WORKFLOWS_DATABASE_URL: cannot open ${where} (${(err as Error).message}); check the server is up and the user may create schemas in that database`, { cause: err });
  }
  const world = createWorld({ pool, queueConcurrency: options.concurrency ?? 10 });

  const listeners: Array<(runId: string, eventType: string) => void> = [];
  let closed = false;
  let listener: pg.Client | undefined;
  let relisten: Timer | undefined;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url });
    const lost = (err?: Error): void => {
      if (listener !== client) return;
      listener = undefined;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      if (closed) return;
      log.warn({ err, database: where }, "workflow event listener lost; listening again");
      relisten = clock.setTimeout(() => void listen().catch((retryErr: unknown) => lost(retryErr as Error)), RELISTEN_MS);
    };
    listener = client;
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (message) => {
      if (message.channel !== CHANNEL || message.payload === undefined) return;
      const [runId, eventType] = message.payload.split(" ");
      if (runId === undefined || eventType === undefined) return;
      for (const heard of listeners) heard(runId, eventType);
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
  };
  let delivery: LoopbackDelivery | undefined;

  return {
    world,
    keys: new PostgresKeys(pool),
    placings: new PostgresPlacings(pool),
    where: { database: where },
    async start(entrypoints: Entrypoints) {
      await listen();
      delivery = await listenForDeliveries(entrypoints, log);
      // Read by the world's queue at each delivery (the SDK offers no other way to name its target).
      process.env.WORKFLOW_LOCAL_BASE_URL = delivery.baseUrl;
      await world.start();
    },
    async announce(runId: string, eventType: string) {
      await pool.query("SELECT pg_notify($1, $2)", [CHANNEL, `${runId} ${eventType}`]);
    },
    onAnnounce(heard) {
      listeners.push(heard);
    },
    async deleteRuns(runIds: readonly string[]) {
      if (runIds.length === 0) return;
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        for (const table of RUN_TABLES) await client.query(`DELETE FROM workflow.${table} WHERE run_id = ANY($1)`, [runIds]);
        await client.query("DELETE FROM workflow.workflow_runs WHERE id = ANY($1)", [runIds]);
        await client.query("DELETE FROM switchboard.workflow_keys WHERE run_id = ANY($1)", [runIds]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      closed = true;
      relisten?.cancel();
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
      await world.close?.();
      await delivery?.close();
      delete process.env.WORKFLOW_LOCAL_BASE_URL;
      await pool.end();
    },
  };
}
