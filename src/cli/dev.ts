/**
 * `switchboard dev <agent>`: serve an agent in one process, like `serve`, and reload it whenever a
 * file under its directory changes. The reloaded agent is swapped into the running gateway
 * (`gateway.reload`): new sessions get it, live ones finish on the version they started with. A
 * reload that fails (a syntax error, an invalid config, bad JSON) is logged with the file it
 * names, and the previous version keeps serving.
 */
import { readdirSync, watch as fsWatch, type WatchListener } from "node:fs";
import { join, relative, sep } from "node:path";
import process from "node:process";
import { systemClock, type Clock, type Timer } from "../clock.js";
import { createLogger, type Logger } from "../log.js";
import type { AgentConfig } from "../manifest/index.js";
import type { LoadedAgent } from "../server/loader.js";
import { EXIT, fail, flag, text, type Command, type Values } from "./command.js";
import type { DotEnvResult } from "./env.js";
import { agentRun, banner, gatewayFor, listenOn, logDotEnv, portOf, stopOnSignals } from "./serve.js";

/** Changes closer together than this are one reload (ms): an editor's save is often several writes. */
export const DEV_DEBOUNCE_MS = 200;

/** Directories whose changes never reload the agent. */
const IGNORED = new Set(["node_modules", ".git"]);

/** Whether a changed path (relative to the agent directory) is under an ignored directory. */
export function ignoredChange(file: string): boolean {
  return file.split(/[\\/]/).some((part) => IGNORED.has(part));
}

/** The part of `fs.watch` the watcher uses (replaced in tests). */
export interface Watcher {
  close(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
}
export type Watch = (dir: string, options: { readonly recursive: boolean }, listener: WatchListener<string>) => Watcher;

export interface WatchOptions {
  readonly clock?: Clock;
  /**
   * One recursive `fs.watch` (default: on macOS and Windows, where the OS watches the tree), or
   * one watcher per directory (elsewhere: Node 20 emulates recursion on Linux by watching each
   * file, and loses a file replaced by a rename — what `sed -i` and editors' atomic saves do —
   * while a directory's watcher sees every change made in it).
   */
  readonly recursive?: boolean;
  readonly debounceMs?: number;
  readonly watch?: Watch;
  /** A watcher failed (the directory was removed…); watching goes on where it can. */
  readonly onError?: (error: Error) => void;
}

/** Every directory under `dir` (itself included), minus the ignored ones. */
function directories(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !IGNORED.has(entry.name)) found.push(...directories(join(dir, entry.name)));
  }
  return found;
}

/**
 * Watch `dir` and call `onChange` with the changed paths (relative, `/`-separated, sorted) once
 * changes have stopped for `debounceMs`. Changes under node_modules and .git are ignored. With one
 * watcher per directory, the list of directories is refreshed on every change: a new `tools/` is
 * watched from then on, a removed one is let go.
 */
export function watchTree(dir: string, onChange: (files: readonly string[]) => void, options: WatchOptions = {}): { close(): void } {
  const clock = options.clock ?? systemClock;
  const debounceMs = options.debounceMs ?? DEV_DEBOUNCE_MS;
  const recursive = options.recursive ?? (process.platform === "darwin" || process.platform === "win32");
  const watch: Watch = options.watch ?? ((path, settings, listener) => fsWatch(path, { recursive: settings.recursive }, listener));
  const pending = new Set<string>();
  const watchers = new Map<string, Watcher>();
  let timer: Timer | undefined;
  let closed = false;
  const flush = (): void => {
    timer = undefined;
    const files = [...pending].sort();
    pending.clear();
    if (!closed && files.length > 0) onChange(files);
  };
  const changed = (path: string, name: string | null): void => {
    if (closed) return;
    const file = relative(dir, join(path, name ?? "")).split(sep).join("/") || ".";
    if (!recursive) refresh();
    if (ignoredChange(file)) return;
    pending.add(file);
    timer?.cancel();
    timer = clock.setTimeout(flush, debounceMs);
  };
  const add = (path: string): void => {
    const watcher = watch(path, { recursive }, (_event, name) => changed(path, name));
    watcher.on("error", (error) => options.onError?.(error));
    watchers.set(path, watcher);
  };
  /** Watch every directory of the tree, and only those. */
  const refresh = (): void => {
    let present: Set<string>;
    try {
      present = new Set(directories(dir));
    } catch (error) {
      options.onError?.(error as Error);
      return;
    }
    for (const [path, watcher] of watchers) {
      if (present.has(path)) continue;
      watcher.close();
      watchers.delete(path);
    }
    for (const path of present) {
      if (watchers.has(path)) continue;
      try {
        add(path);
      } catch (error) {
        // Removed between the listing and the watch: the next change refreshes again.
        options.onError?.(error as Error);
      }
    }
  };
  if (recursive) add(dir);
  else refresh();
  return {
    close() {
      closed = true;
      timer?.cancel();
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/**
 * The file a failed load is about, relative to the agent directory: the first problem of a
 * ConfigError that names a file (the loader names the file and line of a syntax error or a throw
 * at import, and offline.json), else the first path under the directory that the error's message
 * or stack names, else the changed files — the cause is most likely among them.
 */
export function blame(error: unknown, dir: string, changed: readonly string[]): string {
  const issues = (error as { issues?: readonly { path?: unknown }[] } | undefined)?.issues ?? [];
  const named = issues.map((issue) => String(issue.path)).find((path) => /\.(json|[mc]?[jt]sx?)(:\d+)*$/.test(path));
  if (named !== undefined) return named;
  const text = error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : String(error);
  const prefix = dir.endsWith(sep) ? dir : `${dir}${sep}`;
  for (const word of text.split(/[\s()'"]+/)) {
    const path = word.replace(/^file:\/\//, "").replace(/\?[^:]*/, "");
    if (path.startsWith(prefix)) return relative(dir, path).split(sep).join("/");
  }
  return changed.join(", ");
}

export interface ReloaderDeps {
  /** The agent directory (for `blame`). */
  readonly dir: string;
  /** Load the agent afresh; `generation` is new on every call. */
  readonly load: (generation: number) => Promise<LoadedAgent>;
  readonly gateway: { reload(agent: LoadedAgent): AgentConfig; readonly sessions: number };
  readonly log: Logger;
  /** Where the line each reload prints goes (stdout). */
  readonly print: (line: string) => void;
}

/**
 * What a change does: load the agent afresh and swap it in, one reload at a time — changes that
 * arrive during a reload make one more after it, with every file they named. Resolves (never
 * rejects) once no reload is running; a failure keeps the previous agent serving.
 */
export function reloader(deps: ReloaderDeps): (files: readonly string[]) => Promise<void> {
  let generation = 0;
  let running: Promise<void> | undefined;
  const queued = new Set<string>();
  const once = async (files: readonly string[]): Promise<void> => {
    generation += 1;
    let config: AgentConfig;
    try {
      config = deps.gateway.reload(await deps.load(generation));
    } catch (err) {
      deps.log.error({ err, file: blame(err, deps.dir, files), changed: files }, "reload failed; the previous agent keeps serving");
      return;
    }
    const live = deps.gateway.sessions;
    const keep = live === 0 ? "" : `; ${live} live session${live === 1 ? "" : "s"} finish${live === 1 ? "es" : ""} on the previous version`;
    deps.print(`reloaded "${config.name}" (${config.mode}) after ${files.join(", ")} changed: new sessions use it${keep}\n`);
  };
  const drain = async (): Promise<void> => {
    while (queued.size > 0) {
      const files = [...queued].sort();
      queued.clear();
      await once(files);
    }
    running = undefined;
  };
  return (files) => {
    for (const file of files) queued.add(file);
    running ??= drain();
    return running;
  };
}

const DEV_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  offline: { type: "boolean" },
  "allowed-origins": { type: "string" },
} as const;

const DEV_HELP = `      --port <n>              port to listen on (default 3000; 0 picks a free one)
      --host <addr>           address to bind (default 127.0.0.1)
      --offline               run on the offline stack even when keys are set
      --allowed-origins <list>  browser origins allowed on /websocket, comma-separated
                              (default: SWITCHBOARD_ALLOWED_ORIGINS, else any)
`;

async function dev(path: string, values: Values, loaded: DotEnvResult): Promise<number> {
  const flags = { port: text(values, "port"), host: text(values, "host"), origins: text(values, "allowed-origins"), offline: flag(values, "offline") };
  const port = portOf(flags.port);
  if (typeof port !== "number") return fail(port.error, EXIT.usage);
  const host = flags.host ?? "127.0.0.1";
  const log = createLogger();
  logDotEnv(log, loaded);
  const made = await gatewayFor(path, { log, offline: flags.offline, origins: flags.origins });
  if (typeof made === "number") return made;
  const { agent, gateway } = made;
  const { loadAgent } = await import("../server/loader.js");
  const warn = (message: string): void => log.warn({}, message);
  const listening = await listenOn(gateway, host, port);
  if (typeof listening === "number") return listening;
  const { url, title, open, serves } = listening;
  const inside = relative(process.cwd(), agent.dir);
  const shown = inside === "" ? "." : inside.startsWith("..") ? agent.dir : inside;
  process.stdout.write(`${banner(title, url, 1, open, serves).trimEnd()}\n  watching ${shown}/ — a change reloads the agent for new sessions\n\n`);
  const onChange = reloader({
    dir: agent.dir,
    load: (generation) => loadAgent(path, { warn, reload: generation }),
    gateway,
    log,
    print: (line) => process.stdout.write(line),
  });
  const watcher = watchTree(agent.dir, (files) => void onChange(files), { onError: (err) => log.warn({ err }, "watching the agent directory failed") });
  stopOnSignals(log, () => gateway.drain(), () => watcher.close());
  return new Promise<number>(() => {});
}

export const devCommand: Command = {
  name: "dev",
  args: "<agent-dir-or-file>",
  summary: "serve an agent and reload it when its files change (new sessions get the new version)",
  optionHelp: DEV_HELP,
  options: DEV_OPTIONS,
  run: agentRun("dev", dev),
};
