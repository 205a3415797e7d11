#!/usr/bin/env node
/**
 * `switchboard <command>`: a thin shell over the library. Parses flags, calls the library,
 * prints what happened.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import process from "node:process";
import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { createLogger } from "./log.js";
import { readWav, writeWav } from "./audio/wav.js";
import type { ServerEvent } from "./transport/protocol.js";
import { clusterCoordinator, clusterMetrics, joinCluster, prepareWorker, runPrimary } from "./server/workers.js";

// The gateway, the loader and the call runner load on demand: a `--workers` primary only
// supervises, and should not hold the whole gateway in memory.
const server = () => import("./server/index.js");
const loader = () => import("./server/loader.js");

const USAGE = `Usage: switchboard <command> [options]

Commands:
  serve <agent-dir-or-file>   run the gateway for an agent
      --port <n>              port to listen on (default 3000; 0 picks a free one)
      --host <addr>           address to bind (default 127.0.0.1)
      --offline               run on the offline stack even when keys are set
      --workers <n>           one gateway process per core (default: the number of cores when
                              SWITCHBOARD_REDIS_URL is set, else 1: resume needs a shared store)
      --allowed-origins <list>  browser origins allowed on /websocket, comma-separated
                              (default: SWITCHBOARD_ALLOWED_ORIGINS, else any)
  start                       serve the bundled demo agent (examples/support)
  check <agent-dir-or-file>   validate an agent: mode, tools (source, messages), providers and keys
  call <agent> <input.wav>    one session from a recording; prints the conversation
      --out <reply.wav>       write the agent's audio
      --json                  print events as JSON lines
      --offline               force the offline stack
      --timeout <ms>          how long to wait for the reply (default 60000)
  help                        show this message
`;

const DEMO_AGENT = fileURLToPath(new URL("../examples/support", import.meta.url));

/** What `serve` prints once it listens; `open` lists the entry points anyone who reaches the port can use. */
function banner(title: string, url: string, workers: number, open: readonly string[]): string {
  const processes = workers > 1 ? `, ${workers} worker processes` : "";
  // Each open carrier's webhook and stream, said once by the carrier's name.
  const carriers = [...new Set(open.flatMap((e) => /^(?:WS )?\/telephony\/([a-z]+)/.exec(e)?.[1] ?? []))];
  const others = open.filter((e) => !/^(?:WS )?\/telephony\//.test(e));
  const listed = [...others, ...(carriers.length === 0 ? [] : [`telephony (${carriers.join(", ")})`])];
  const warning = listed.length === 0 ? "" : `  unauthenticated: ${listed.join(", ")} — see docs/security.md\n`;
  return `\nSwitchboard is serving ${title}${processes}\n  ${url}/               the demo page\n  ${url.replace(/^http/, "ws")}/websocket  the client protocol\n${warning}\n`;
}

function fail(message: string): number {
  process.stderr.write(`switchboard: ${message}\n`);
  return 1;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type ServeFlags = { port?: string | undefined; host?: string | undefined; offline?: boolean | undefined; workers?: string | undefined; "allowed-origins"?: string | undefined };

async function serve(path: string, flags: ServeFlags, defaultWorkers = 1): Promise<number> {
  const log = createLogger();
  const port = flags.port === undefined ? 3000 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail(`--port must be a port number (got ${flags.port}).`);
  const host = flags.host ?? "127.0.0.1";
  const workers = flags.workers === undefined ? defaultWorkers : Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) return fail(`--workers must be a whole number from 1 to 256 (got ${flags.workers}).`);
  if (workers > 1 && cluster.isPrimary) {
    if ((process.env.SWITCHBOARD_REDIS_URL ?? "") === "") log.warn({ workers }, "several workers without SWITCHBOARD_REDIS_URL: a client resumes only if it reconnects to the same worker");
    return runPrimary(workers, log, (title, url, open) => process.stdout.write(banner(title, url, workers, open)));
  }
  const worker = cluster.isWorker;
  // Answer the primary's metrics requests from the start, so an aggregation never waits on a worker still loading.
  if (worker) prepareWorker();
  const { loadAgent } = await loader();
  const { createGateway } = await server();
  let agent;
  try {
    agent = await loadAgent(path, { warn: (message) => log.warn({}, message) });
  } catch (error) {
    return fail(describe(error));
  }
  const origins = flags["allowed-origins"]?.split(",").map((o) => o.trim()).filter((o) => o !== "");
  let gateway;
  try {
    gateway = createGateway({
      agent: agent.def,
      script: agent.script,
      offline: flags.offline === true ? true : "auto",
      logger: worker ? log.child({ worker: cluster.worker?.id }) : log,
      ...(origins === undefined ? {} : { allowedOrigins: origins }),
      // Every worker sees the same call tickets, replays and connection budgets (Redis, when set, holds them instead).
      ...(worker ? { metricsText: () => clusterMetrics(), ...((process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? { coordinator: clusterCoordinator() } : {}) } : {}),
    });
  } catch (error) {
    return fail(describe(error));
  }
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "::1" && (process.env.SWITCHBOARD_API_KEY ?? "") === "") {
    log.warn({ host }, "auth is off on a non-loopback address: set SWITCHBOARD_API_KEY");
  }
  let url: string;
  try {
    ({ url } = await gateway.listen(port, host));
  } catch (error) {
    return fail(`cannot listen on ${host}:${port}: ${describe(error)}`);
  }
  const { config } = gateway;
  const title = `"${config.name}" (${config.mode}${config.llm?.kind === "scripted" ? ", offline demo brain" : ""})`;
  const open = gateway.entryPoints.filter((e) => e.open).map((e) => e.entry);
  if (worker) joinCluster(gateway.metrics.registry, title, url, open);
  else process.stdout.write(banner(title, url, 1, open));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    gateway.drain().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "drain failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  return new Promise<number>(() => {});
}

async function check(path: string): Promise<number> {
  let agent;
  try {
    agent = await (await loader()).loadAgent(path, { warn: (message) => process.stderr.write(`warning: ${message}\n`) });
  } catch (error) {
    return fail(describe(error));
  }
  const { config, def } = agent;
  const out: string[] = [`${config.name}: ${config.mode} agent`];
  out.push("tools:");
  const builtins = config.builtinTools ?? [];
  for (const [name, tool] of Object.entries(def.tools)) {
    const kinds = Object.keys(tool.messages ?? {});
    out.push(`  ${name.padEnd(18)} tools/${name}${kinds.length > 0 ? `  messages: ${kinds.join(", ")}` : ""}${tool.gate === undefined ? "" : "  (gated)"}`);
  }
  for (const name of builtins) out.push(`  ${name.padEnd(18)} builtin`);
  for (const key of Object.keys(config.mcpServers ?? {})) out.push(`  mcp_${key}_*${" ".repeat(Math.max(1, 13 - key.length))}mcp server "${key}" (listed at session start)`);
  out.push("providers:");
  let missing = 0;
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const descriptor = config[slot];
    if (descriptor === undefined) continue;
    const variable = (await import("./server/offline.js")).missingKey(descriptor, process.env);
    out.push(`  ${slot.padEnd(4)} ${descriptor.kind}${variable === undefined ? "" : `  — needs ${variable}`}`);
    if (variable !== undefined) missing += 1;
  }
  for (const variable of config.requiredEnv ?? []) {
    if ((process.env[variable] ?? "") === "") {
      out.push(`  requiredEnv ${variable} — missing`);
      missing += 1;
    }
  }
  if (missing > 0) out.push(`${missing} missing; serve falls back to the offline stack for missing provider keys.`);
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}

async function call(
  agentPath: string,
  input: string,
  flags: { out?: string | undefined; json?: boolean | undefined; offline?: boolean | undefined; timeout?: string | undefined },
): Promise<number> {
  const timeoutMs = flags.timeout === undefined ? 60_000 : Number(flags.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) return fail(`--timeout must be a positive number of ms (got ${flags.timeout}).`);
  let agent;
  let recording;
  try {
    agent = await (await loader()).loadAgent(agentPath, { warn: () => {} });
    recording = readWav(new Uint8Array(await readFile(input)));
  } catch (error) {
    return fail(describe(error));
  }
  const print = (event: ServerEvent): void => {
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(event)}\n`);
      return;
    }
    const line = describeEvent(event);
    if (line !== undefined) process.stdout.write(`${line}\n`);
  };
  const { CALL_PLAYBACK_RATE, callAgent } = await import("./server/call.js");
  const result = await callAgent(agent, recording, { offline: flags.offline === true ? true : "auto", onEvent: print, timeoutMs });
  if (flags.out !== undefined) await writeFile(flags.out, writeWav(result.audio, CALL_PLAYBACK_RATE));
  if (result.fatal !== undefined) return 1;
  if (!result.answered) {
    process.stderr.write("switchboard: no speech was recognized in the recording.\n");
    return 2;
  }
  return 0;
}

/** One human line per event worth showing (`--json` prints them all). */
function describeEvent(event: ServerEvent): string | undefined {
  switch (event.type) {
    case "user-transcript.committed":
      return `you:   ${event.text}`;
    case "agent-transcript.committed":
      return `agent: ${event.text}`;
    case "tool.called":
      return `tool:  ${event.toolName}(${JSON.stringify(event.args)})`;
    case "tool.message":
      return `tool:  (${event.kind}) "${event.text}"`;
    case "tool.completed":
      return `tool:  → ${event.result}${event.isError === true ? " (error)" : ""}`;
    case "reply.cancelled":
      return "agent: [interrupted]";
    case "error.reported":
      return `error: ${event.code}: ${event.message}${event.fatal ? " (fatal)" : ""}`;
    default:
      return undefined;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [command = "help", ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...rest],
      allowPositionals: true,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        offline: { type: "boolean" },
        workers: { type: "string" },
        "allowed-origins": { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
        timeout: { type: "string" },
      },
    });
  } catch (error) {
    return fail(`${describe(error)}\n\n${USAGE}`);
  }
  const [target] = parsed.positionals;
  switch (command) {
    case "start":
      return serve(target ?? DEMO_AGENT, parsed.values);
    case "serve":
      if (target === undefined) return fail(`serve needs an agent directory or file.\n\n${USAGE}`);
      return serve(target, parsed.values, (process.env.SWITCHBOARD_REDIS_URL ?? "") === "" ? 1 : availableParallelism());
    case "check":
      if (target === undefined) return fail(`check needs an agent directory or file.\n\n${USAGE}`);
      return check(target);
    case "call": {
      const input = parsed.positionals[1];
      if (target === undefined || input === undefined) return fail(`call needs an agent and a WAV file.\n\n${USAGE}`);
      return call(target, input, parsed.values);
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      return fail(`unknown command "${command}".\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`switchboard: ${describe(error)}\n`);
    process.exitCode = 1;
  },
);
