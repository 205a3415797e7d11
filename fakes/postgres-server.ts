// A private PostgreSQL cluster on loopback for the distributed-engine tests and bench:workflows (Debian `postgresql`;
// .ci/run installs it). initdb into a temp dir, trust auth, no fsync, a free port, its socket in
// the same dir; stopped and removed by `stop()`. initdb and postgres refuse to run as root, so as
// root the server runs as the `postgres` user the Debian package creates.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accepting, freePort } from "./free-port.js";

/** The newest installed server's bin dir (`/usr/lib/postgresql/<major>/bin`), if any. */
export const POSTGRES_BIN = ((): string | undefined => {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  return majors.map((major) => join(root, major, "bin")).find((bin) => existsSync(join(bin, "initdb")));
})();

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** A fresh, empty database on this server: its URL. */
  database(name: string): string;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresServer> {
  if (POSTGRES_BIN === undefined) throw new Error("PostgreSQL is not installed (apt-get install postgresql)");
  const bin = POSTGRES_BIN;
  const dir = mkdtempSync(join(tmpdir(), "sb-pg-"));
  const data = join(dir, "data");
  const asUser: { uid?: number; gid?: number } = process.getuid?.() === 0 ? { uid: Number(execFileSync("id", ["-u", "postgres"]).toString()), gid: Number(execFileSync("id", ["-g", "postgres"]).toString()) } : {};
  if (asUser.uid !== undefined && asUser.gid !== undefined) chownSync(dir, asUser.uid, asUser.gid);
  execFileSync(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"], { stdio: "ignore", ...asUser });
  const port = await freePort();
  const settings = ["-c", "listen_addresses=127.0.0.1", "-c", `unix_socket_directories=${dir}`, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"];
  const child: ChildProcess = spawn(join(bin, "postgres"), ["-D", data, "-p", String(port), ...settings], { stdio: "ignore", ...asUser });
  const deadline = Date.now() + 30_000;
  while (!(await accepting(port))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`postgres did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const psql = (sql: string): void => {
    execFileSync(join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { stdio: "ignore" });
  };
  // The server accepts connections a moment before it accepts queries.
  for (;;) {
    try {
      psql("select 1");
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    database: (name: string) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${name}: lower-case letters, digits and "_"`);
      psql(`create database ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop: async () => {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          // SIGINT: PostgreSQL's fast shutdown (ends sessions, no checkpoint wait on SIGQUIT's crash path).
          child.kill("SIGINT");
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
