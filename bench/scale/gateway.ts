/**
 * The scale bench's gateway, as a user deploys it: the compiled package (the runner builds it
 * first), `node dist/cli.js serve <agent> --workers N --port 0 --host 127.0.0.1` (docs/deploy.md),
 * in its own process group, with a temporary agent file
 * (an `openai-realtime` s2s agent on the fake service, `telephony: ["twilio"]`). Read from
 * outside only: the URL it prints, its log lines (warnings and errors are counted), `GET /metrics`
 * (calls open per worker, event-loop delay per worker) and /proc (CPU and RSS of the primary and
 * every process under it). Stopped with SIGTERM (it drains and should exit 0), SIGKILL to the
 * whole group as the fallback, and on any exit of the runner.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { isOpenCarrierNotice, sleep, within } from "../shared/common.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** prom-client samples event-loop delay every 10 ms and records the whole interval: this much is the sampling, not delay. */
const LAG_RESOLUTION_S = 0.01;
const STOP_LIMIT_MS = 20_000;
/** Variables that would change what the gateway does here (auth, signatures, carrier REST calls, a shared store). */
const CLEARED_ENV = ["SWITCHBOARD_API_KEY", "SWITCHBOARD_REDIS_URL", "TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TELNYX_API_KEY", "TELNYX_PUBLIC_KEY", "NODE_OPTIONS"];

/** A temporary directory holding agent.mjs for the fake service at `providerUrl`. */
export function writeAgent(providerUrl: string): { readonly path: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-bench-scale-"));
  const path = join(dir, "agent.mjs");
  const def = { name: "bench-scale", greeting: "Welcome to the bench line.", s2s: { kind: "openai-realtime", options: { url: providerUrl } }, telephony: ["twilio"] };
  writeFileSync(path, `export default ${JSON.stringify(def, null, 2)};\n`);
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  // Also when the runner ends early (its time limit, a signal).
  process.once("exit", remove);
  return { path, remove };
}

// ── /proc ───────────────────────────────────────────────────────────────────────────────

const readOr = (path: string, fallback: string): string => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
};

/** `root` and every process under it (Linux: /proc/<pid>/task/<tid>/children). */
export function processTree(root: number): number[] {
  const seen: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    seen.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      for (const child of readOr(`/proc/${pid}/task/${tid}/children`, "").split(/\s+/)) if (child !== "") queue.push(Number(child));
    }
  }
  return seen;
}

/** Processes of process group `pgid`, as "pid (command)" (Linux: field 5 of /proc/<pid>/stat). */
export function groupMembers(pgid: number): string[] {
  const out: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readOr(`/proc/${entry}/stat`, "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(`${entry} ${stat.slice(stat.indexOf("("), stat.lastIndexOf(")") + 1)}`);
  }
  return out;
}

/** User + system CPU (ms, USER_HZ = 100) and RSS (bytes) of `pids`, summed; processes gone count 0. */
export function usageOf(pids: readonly number[]): { readonly cpuMs: number; readonly rss: number } {
  let cpuMs = 0;
  let rss = 0;
  for (const pid of pids) {
    const stat = readOr(`/proc/${pid}/stat`, "");
    // Fields after the command's closing bracket start at field 3 (state): utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    cpuMs += (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10 || 0;
    rss += Number(/^VmRSS:\s+(\d+) kB/m.exec(readOr(`/proc/${pid}/status`, ""))?.[1] ?? 0) * 1024;
  }
  return { cpuMs, rss };
}

// ── GET /metrics ────────────────────────────────────────────────────────────────────────

/** What the bench reads from the group's `/metrics`, by worker ("" without `--workers`). */
export interface Scrape {
  /** Event-loop delay p99 and max since the last scrape (ms), resolution taken off. */
  readonly lagP99Ms: ReadonlyMap<string, number>;
  readonly lagMaxMs: ReadonlyMap<string, number>;
  /** Calls (sessions) open. */
  readonly open: ReadonlyMap<string, number>;
}

export function parseScrape(text: string): Scrape {
  const lagP99Ms = new Map<string, number>();
  const lagMaxMs = new Map<string, number>();
  const open = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^(switchboard_nodejs_eventloop_lag_(?:p99|max)_seconds|switchboard_sessions_active)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const worker = /worker="([^"]*)"/.exec(match[2] ?? "")?.[1] ?? "";
    const value = Number(match[3]);
    if (match[1] === "switchboard_sessions_active") open.set(worker, (open.get(worker) ?? 0) + value);
    else (match[1]!.includes("p99") ? lagP99Ms : lagMaxMs).set(worker, Math.max(0, value - LAG_RESOLUTION_S) * 1000);
  }
  return { lagP99Ms, lagMaxMs, open };
}

// ── the process group ───────────────────────────────────────────────────────────────────

export interface GatewayGroup {
  readonly workers: number;
  readonly pid: number;
  /** The Twilio Media Streams URL callers dial. */
  readonly url: string;
  /** A scrape of `/metrics` (resets the per-worker event-loop histograms). */
  scrape(): Promise<Scrape>;
  /** CPU and RSS of the primary and every process under it, now. */
  usage(): { readonly cpuMs: number; readonly rss: number };
  /** Warnings and errors logged since the last call, "msg (×n)". */
  problems(): string[];
  /** SIGTERM, then wait for the drain; SIGKILL to the group after STOP_LIMIT_MS. Describes how it went. */
  stop(): Promise<{ readonly clean: boolean; readonly text: string }>;
  /** SIGKILL to the whole group (idempotent, synchronous). */
  kill(): void;
}

/** Starts `serve` for `agentPath` with `workers` workers; resolves once every worker answers `/metrics`. */
export async function startGroup(agentPath: string, workers: number): Promise<GatewayGroup> {
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: "test-key", LOG_LEVEL: "warn" };
  for (const name of CLEARED_ENV) delete env[name];
  const args = ["dist/cli.js", "serve", agentPath, "--workers", String(workers), "--port", "0", "--host", "127.0.0.1"];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid;
  if (pid === undefined) throw new Error("serve did not start");
  const kill = (): void => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  // Whatever ends the runner (its time limit included) takes the group with it.
  process.once("exit", kill);

  const tally = new Map<string, number>();
  const note = (text: string): void => void tally.set(text, (tally.get(text) ?? 0) + 1);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let httpUrl: string | undefined;
  const printed = new Promise<string>((resolve, reject) => {
    void exited.then(({ code, signal }) => reject(new Error(`serve --workers ${workers} exited (${signal ?? `code ${String(code)}`}) before listening: ${[...tally.keys()].join("; ")}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("{")) {
        let entry: { level?: number; msg?: string; worker?: number };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          return note(`stdout: ${line.slice(0, 200)}`);
        }
        if ((entry.level ?? 0) >= 40 && !isOpenCarrierNotice(entry.msg)) note(`log level ${entry.level}${entry.worker === undefined ? "" : ` (worker ${entry.worker})`}: "${entry.msg ?? ""}"`);
        return;
      }
      const url = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(line)?.[1];
      if (url !== undefined && httpUrl === undefined) resolve((httpUrl = url));
    });
  });
  createInterface({ input: child.stderr }).on("line", (line) => note(`stderr: ${line.slice(0, 200)}`));

  try {
    const base = await within(printed, 30_000, `serve --workers ${workers} printing its URL`);
    const scrape = async (): Promise<Scrape> => {
      const response = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
      return parseScrape(await response.text());
    };
    // The URL is printed when the first worker listens: wait until each one reports.
    await within(
      (async () => {
        while ((await scrape().catch(() => undefined))?.lagP99Ms.size !== workers) await sleep(250);
      })(),
      30_000,
      `all ${workers} workers answering /metrics`,
    );
    return {
      workers,
      pid,
      url: `${base.replace(/^http/, "ws")}/telephony/twilio`,
      scrape,
      usage: () => usageOf(processTree(pid)),
      problems: () => {
        const list = [...tally].map(([text, n]) => `${text} (×${n})`);
        tally.clear();
        return list;
      },
      stop: async () => {
        const began = Date.now();
        if (child.exitCode !== null || child.signalCode !== null) return { clean: false, text: "had exited before SIGTERM" };
        child.kill("SIGTERM");
        const end = await within(exited, STOP_LIMIT_MS, "the drain").catch(() => undefined);
        // Anything of the group still there a moment after the primary exited was left behind.
        let left: string[] = [];
        for (let i = 0; i < 20 && (left = groupMembers(pid)).length > 0; i++) await sleep(100);
        kill();
        process.off("exit", kill);
        if (end === undefined) return { clean: false, text: `did not exit within ${STOP_LIMIT_MS / 1000} s of SIGTERM: SIGKILLed` };
        const how = end.signal ?? `code ${String(end.code)}`;
        return { clean: end.code === 0 && left.length === 0, text: `SIGTERM → exited with ${how} in ${Date.now() - began} ms${left.length > 0 ? `, leaving ${left.join(", ")} behind (SIGKILLed)` : ""}` };
      },
      kill,
    };
  } catch (error) {
    kill();
    throw error;
  }
}
