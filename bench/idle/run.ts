/**
 * `npm run bench:idle`: the memory of an idle gateway and of its idle sessions, against the floor
 * — a bare Node process holding the same WebSocket server (`ws`) and the same idle sockets —
 * measured in the same run. The bars (issue 23, docs/benchmarks.md): ≤ 64 MiB idle process, ≤ 64 KiB per idle session.
 *
 * The gateway runs as deployed: the compiled package (`npm run build` first, done here) serving
 * an agent written in JavaScript (`node dist/cli.js serve agent.mjs`), so no TypeScript loader is
 * in the process; an agent written in TypeScript adds tsx (the demo, `npm start`, shown apart).
 * Idle sessions are text sessions with no greeting, opened after one warm-up session (the first
 * session loads the AI SDK). RSS is read from /proc after 3 s of quiet and a full GC (every
 * process, the floor too, is started with a SIGUSR2 → gc() hook), and every figure once more
 * settled: each reading after 90 s alone, in which V8's memory reducer gives back the young
 * generation the work before it grew; with the settled readings, the CPU each process spent in the
 * last 30 s of that wait (from /proc, idle and with its idle sessions). The median of three rounds.
 * Results go to stdout and to docs/benchmarks.md between the bench:idle markers.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import WebSocket from "ws";
import { docSection, sleep, writeSection } from "../shared/common.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { path: DOCS, start: START, end: END } = docSection("bench:idle");
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const ROUNDS = 3;
const QUIET_MS = 3000;
/**
 * How long an idle process is left before its settled RSS is read. V8's memory reducer, which
 * starts once a process stops allocating, gives back the young generation that start-up grew (up
 * to 16 MiB of committed semi-space) 20 to 50 s after start here; 90 s leaves it room.
 */
const SETTLE_MS = 90_000;
/** The last part of each settled wait in which the process's CPU is read (ms): past start-up and the memory reducer's collections. */
const CPU_WINDOW_MS = 30_000;
/** Clock ticks per second of the CPU times in /proc/<pid>/stat. */
const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
const BAR_PROCESS_MIB = 64;
const BAR_SESSION_KIB = 64;
/**
 * Loaded into every measured process (`--expose-gc --import`): SIGUSR2 runs a full GC, so RSS is
 * read with the garbage of start-up and session set-up collected, as a process that idles long
 * enough would have it.
 */
const GC_ON_SIGNAL = `data:text/javascript,${encodeURIComponent('process.on("SIGUSR2", () => globalThis.gc?.());')}`;

/** The floor: node, http and ws, holding idle sockets and doing nothing else. */
const FLOOR = `
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
const wss = new WebSocketServer({ noServer: true });
const server = createServer((_req, res) => res.end("ok"));
server.on("upgrade", (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => ws.send(JSON.stringify({ type: "session.configured" }))));
server.listen(Number(process.env.PORT), "127.0.0.1");
`;

interface Measure {
  readonly idleMiB: number;
  readonly perSessionKiB: number;
  /** CPU spent idle, settled (ms per second; settled readings only). */
  readonly idleCpuMsPerS?: number;
  /** The same holding its idle sessions. */
  readonly sessionsCpuMsPerS?: number;
}

/** A measured server: its command for a port, the path sessions open, and how many it is given. */
interface Server {
  readonly command: (port: number) => readonly string[];
  readonly path: string;
  readonly sessions: number;
}

/** Start a server as measured: with the GC hook when it is node, its output to the void, its errors to ours. */
function startServer(command: readonly string[], port: number): ChildProcess {
  const [file = "node", ...rest] = command;
  const args = file === "node" ? ["--expose-gc", "--import", GC_ON_SIGNAL, ...rest] : rest;
  return spawn(file, args, { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
}

/** Kill a measured server and wait until it has exited: the next round listens on its port. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await exited;
}

/** RSS after a full GC in the process (the GC_ON_SIGNAL hook). */
async function settledRssKiB(pid: number): Promise<number> {
  process.kill(pid, "SIGUSR2");
  await sleep(300);
  return rssKiB(pid);
}

/** CPU time the process has used, user and system (ms): fields 14 and 15 of /proc/<pid>/stat, read after the command name (which may hold spaces). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  const kib = Number(/(\d+)/.exec(line ?? "")?.[1]);
  if (!Number.isFinite(kib)) throw new Error(`no VmRSS for process ${pid}`);
  return kib;
}

async function listening(port: number, child: ChildProcess): Promise<void> {
  for (let tried = 0; tried < 300; tried++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listened on ${port}`);
}

/** Open `count` sockets that each wait for the first frame (the session is up), and keep them. */
async function openIdle(url: string, count: number): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = Array.from({ length: Math.min(20, count - i) }, () => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      sockets.push(ws);
      return new Promise<void>((resolve, reject) => {
        ws.once("message", () => resolve());
        ws.once("error", reject);
      });
    });
    await Promise.all(batch);
  }
  return sockets;
}

async function closeAll(sockets: readonly WebSocket[]): Promise<void> {
  await Promise.all(sockets.map((ws) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : (ws.once("close", () => resolve()), ws.close())))));
}

/** Idle RSS, then (with `sessions` > 0) the RSS each idle session adds. */
async function measure(command: readonly string[], port: number, path: string, sessions: number): Promise<Measure> {
  const child = startServer(command, port);
  try {
    await listening(port, child);
    await sleep(QUIET_MS);
    const pid = child.pid ?? 0;
    const idle = await settledRssKiB(pid);
    if (sessions === 0) return { idleMiB: idle / 1024, perSessionKiB: Number.NaN };
    await closeAll(await openIdle(`ws://127.0.0.1:${port}${path}`, 1));
    await sleep(500);
    const before = await settledRssKiB(pid);
    const sockets = await openIdle(`ws://127.0.0.1:${port}${path}`, sessions);
    await sleep(QUIET_MS);
    const after = await settledRssKiB(pid);
    // A session the server ended (a provider that did not open, a limit) retains nothing: the figure would flatter it.
    const ended = sockets.filter((ws) => ws.readyState !== WebSocket.OPEN).length;
    if (ended > 0) throw new Error(`${ended} of ${sessions} idle sessions were closed by the server before the measurement`);
    await closeAll(sockets);
    return { idleMiB: idle / 1024, perSessionKiB: (after - before) / sessions };
  } finally {
    await stopServer(child);
  }
}

/**
 * The same figures settled: every reading after the process has been left alone for SETTLE_MS
 * (no forced GC until the reading). The processes only idle, so they run all at once without
 * disturbing each other's figures: the idle process; then, after one session opened and closed
 * (the first session loads the AI SDK), the RSS before and after its idle sessions.
 */
async function settledMeasures(servers: readonly Server[], firstPort: number): Promise<Measure[]> {
  const children = servers.map((server, i) => startServer(server.command(firstPort + i), firstPort + i));
  const url = (i: number): string => `ws://127.0.0.1:${firstPort + i}${servers[i]?.path ?? "/"}`;
  const readAll = (): Promise<number[]> => Promise.all(children.map((child) => settledRssKiB(child.pid ?? 0)));
  /** Wait out the settling time; the CPU each process spent in its last CPU_WINDOW_MS (ms per second). */
  const settle = async (): Promise<number[]> => {
    await sleep(SETTLE_MS - CPU_WINDOW_MS);
    const from = children.map((child) => cpuMs(child.pid ?? 0));
    await sleep(CPU_WINDOW_MS);
    return children.map((child, i) => ((cpuMs(child.pid ?? 0) - (from[i] ?? 0)) * 1000) / CPU_WINDOW_MS);
  };
  const withSessions = servers.flatMap((server, i) => (server.sessions > 0 ? [i] : []));
  try {
    await Promise.all(children.map((child, i) => listening(firstPort + i, child)));
    const idleCpu = await settle();
    const idle = await readAll();
    await Promise.all(withSessions.map(async (i) => closeAll(await openIdle(url(i), 1))));
    await sleep(SETTLE_MS);
    const before = await readAll();
    const sockets = await Promise.all(withSessions.map((i) => openIdle(url(i), servers[i]?.sessions ?? 0)));
    const sessionsCpu = await settle();
    const after = await readAll();
    const ended = sockets.flat().filter((ws) => ws.readyState !== WebSocket.OPEN).length;
    if (ended > 0) throw new Error(`${ended} idle sessions were closed by the server before the settled measurement`);
    await Promise.all(sockets.map(closeAll));
    return servers.map((server, i) => ({
      idleMiB: (idle[i] ?? Number.NaN) / 1024,
      perSessionKiB: server.sessions > 0 ? ((after[i] ?? Number.NaN) - (before[i] ?? Number.NaN)) / server.sessions : Number.NaN,
      idleCpuMsPerS: idleCpu[i] ?? Number.NaN,
      sessionsCpuMsPerS: server.sessions > 0 ? (sessionsCpu[i] ?? Number.NaN) : Number.NaN,
    }));
  } finally {
    await Promise.all(children.map(stopServer));
  }
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  console.log("bench:idle: building the package (npm run build)");
  execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), "switchboard-idle-"));
  try {
    const agentFile = join(dir, "agent.mjs");
    const entry = pathToFileURL(join(ROOT, "dist", "index.js")).href;
    // `text: true`: a text session (an agent with only an llm is a pipeline agent, on the offline STT and TTS).
    writeFileSync(agentFile, `import { agent } from ${JSON.stringify(entry)};\nexport default agent({ name: "idle", text: true, greeting: "", llm: { kind: "scripted", options: {} } });\n`);
    const servers: Readonly<Record<"gateway" | "tuned" | "floor" | "demo", Server>> = {
      gateway: { command: (port) => ["node", "dist/cli.js", "serve", agentFile, "--port", String(port)], path: "/websocket", sessions: SESSIONS },
      // The same with V8's young generation capped at 2 MB per semi-space (docs/deploy.md, "Memory").
      tuned: { command: (port) => ["node", "--max-semi-space-size=2", "dist/cli.js", "serve", agentFile, "--port", String(port)], path: "/websocket", sessions: SESSIONS },
      // The floor's eval'd module resolves ws from the working directory: the repository.
      floor: { command: () => ["node", "--input-type=module", "-e", FLOOR], path: "/", sessions: SESSIONS },
      // Voice sessions on the offline stack start a recognizer process each: the demo's idle process only.
      demo: { command: (port) => ["node", "dist/cli.js", "serve", "examples/support", "--port", String(port), "--offline"], path: "/websocket", sessions: 0 },
    };
    const kinds = ["gateway", "tuned", "floor", "demo"] as const;
    const rows: Record<(typeof kinds)[number], Measure[]> = { gateway: [], tuned: [], floor: [], demo: [] };
    const settled: Record<(typeof kinds)[number], Measure[]> = { gateway: [], tuned: [], floor: [], demo: [] };
    console.log(`bench:idle: ${ROUNDS} × ${kinds.length} processes, each reading after ${SETTLE_MS / 1000} s alone (about ${(3 * SETTLE_MS) / 60_000} minutes)`);
    const rounds = Array.from({ length: ROUNDS }, () => kinds.map((kind) => servers[kind]));
    const settledRows = await settledMeasures(rounds.flat(), 43790);
    settledRows.forEach((measured, i) => settled[kinds[i % kinds.length] ?? "gateway"].push(measured));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, kind] of kinds.entries()) {
        const server = servers[kind];
        rows[kind].push(await measure(server.command(43781 + i), 43781 + i, server.path, server.sessions));
      }
      console.log(`bench:idle: round ${round} of ${ROUNDS} done`);
    }
    const m = (list: readonly Measure[], key: keyof Measure): number => median(list.map((x) => x[key] ?? Number.NaN));
    const figures = (kind: (typeof kinds)[number]) => ({
      idle: m(rows[kind], "idleMiB"),
      session: m(rows[kind], "perSessionKiB"),
      settled: m(settled[kind], "idleMiB"),
      settledSession: m(settled[kind], "perSessionKiB"),
      idleCpu: m(settled[kind], "idleCpuMsPerS"),
      sessionsCpu: m(settled[kind], "sessionsCpuMsPerS"),
    });
    const [g, tn, f, d] = [figures("gateway"), figures("tuned"), figures("floor"), figures("demo")];
    const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : "–");
    const verdict = (value: number, bar: number): string => (value <= bar ? "within" : "over");
    const body = [
      START,
      `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${process.version}: \`npm run bench:idle\`. Median of ${ROUNDS} rounds; ${SESSIONS} idle sessions.`,
      "",
      "| figure | gateway (JS agent, dist) | floor (node + ws) | gateway ÷ floor | bar | gateway, `--max-semi-space-size=2` | demo agent (TS, tsx, offline stack) |",
      "|---|--:|--:|--:|--:|--:|--:|",
      `| idle process RSS, ${QUIET_MS / 1000} s after start (MiB) | ${g.idle.toFixed(1)} | ${f.idle.toFixed(1)} | ${ratio(g.idle, f.idle)} | ≤ ${BAR_PROCESS_MIB} (${verdict(g.idle, BAR_PROCESS_MIB)}) | ${tn.idle.toFixed(1)} (${verdict(tn.idle, BAR_PROCESS_MIB)}) | ${d.idle.toFixed(1)} |`,
      `| idle process RSS, settled: ${SETTLE_MS / 1000} s alone (MiB) | ${g.settled.toFixed(1)} | ${f.settled.toFixed(1)} | ${ratio(g.settled, f.settled)} | ≤ ${BAR_PROCESS_MIB} (${verdict(g.settled, BAR_PROCESS_MIB)}) | ${tn.settled.toFixed(1)} (${verdict(tn.settled, BAR_PROCESS_MIB)}) | ${d.settled.toFixed(1)} |`,
      `| RSS per idle session, 3 s after opening (KiB) | ${g.session.toFixed(1)} | ${f.session.toFixed(1)} | ${ratio(g.session, f.session)} | ≤ ${BAR_SESSION_KIB} (${verdict(g.session, BAR_SESSION_KIB)}) | ${tn.session.toFixed(1)} (${verdict(tn.session, BAR_SESSION_KIB)}) | – |`,
      `| RSS per idle session, settled (KiB) | ${g.settledSession.toFixed(1)} | ${f.settledSession.toFixed(1)} | ${ratio(g.settledSession, f.settledSession)} | ≤ ${BAR_SESSION_KIB} (${verdict(g.settledSession, BAR_SESSION_KIB)}) | ${tn.settledSession.toFixed(1)} (${verdict(tn.settledSession, BAR_SESSION_KIB)}) | – |`,
      `| idle process CPU, settled: the last ${CPU_WINDOW_MS / 1000} s (ms of CPU per second) | ${g.idleCpu.toFixed(2)} | ${f.idleCpu.toFixed(2)} | ${ratio(g.idleCpu, f.idleCpu)} | – | ${tn.idleCpu.toFixed(2)} | ${d.idleCpu.toFixed(2)} |`,
      `| CPU with ${SESSIONS} idle sessions, settled (ms of CPU per second) | ${g.sessionsCpu.toFixed(2)} | ${f.sessionsCpu.toFixed(2)} | ${ratio(g.sessionsCpu, f.sessionsCpu)} | – | ${tn.sessionsCpu.toFixed(2)} | – |`,
      END,
    ].join("\n");
    console.log(body);
    if (!process.argv.includes("--no-docs")) writeSection(DOCS, START, END, body);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
