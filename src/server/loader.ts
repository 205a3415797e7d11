import { readdir, readFile, stat } from "node:fs/promises";
import { register } from "node:module";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import {
  ConfigError,
  toAgentConfig,
  toolRegistry,
  withTools,
  withWorkflows,
  workflowRegistry,
  type AgentConfig,
  type ResolvedAgentDef,
} from "../manifest/index.js";
import { isCoLocatedFile } from "../manifest/registry.js";
import { agentRouteIssues } from "./agent-routes.js";
import { loadFailure } from "./import-failure.js";
import { startIssues } from "./start-issues.js";
import { loadWaitingSounds } from "./waiting-sounds.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";

/** An agent as a gateway holds it: the definition with its files attached, and its config. */
export interface LoadedAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The offline script (offline.json), if the agent has one. */
  readonly script?: unknown;
  /** The directory the agent was loaded from. */
  readonly dir: string;
  /** Its `waitingAudio` files, read and decoded (server/waiting-sounds.ts), if it has any. */
  readonly waitingAudio?: WaitingSounds | undefined;
  /**
   * Each tool that came from a file: name → its path in the agent directory
   * (`tools/lookup_order.ts`). A tool of `def.tools` not listed here was attached in code
   * (`withTools` in agent.ts).
   */
  readonly toolFiles: Readonly<Record<string, string>>;
}

const AGENT_FILES = ["agent.ts", "agent.mts", "agent.js", "agent.mjs"];
const MODULE = /\.(ts|mts|js|mjs)$/;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Every module file under `dir` (recursively: nested files are reported by the registry),
 * minus what the registry skips (`isCoLocatedFile`: specs, declaration files) — the one rule
 * both share, and these are never imported: a spec imported outside its runner throws.
 */
async function moduleFiles(dir: string): Promise<string[]> {
  if (!(await exists(dir))) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && MODULE.test(e.name) && !isCoLocatedFile(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

let tsxRegistered: Promise<void> | undefined;

/** The query that marks a reload's copy of an agent's modules (`?switchboard-reload=<n>`). */
export const RELOAD_QUERY = "switchboard-reload";

/**
 * A resolve hook (registered with `node:module`'s `register`, after tsx's, so it runs first and
 * asks tsx): an import made by a module of a reload (its URL carries the reload query) of a file
 * under the same agent directory gets that query too — a helper a tool imports is re-imported
 * with it. Imports leaving the directory (the `switchboard` package, `node_modules`) keep their
 * URLs: the gateway and the libraries stay one copy.
 */
const RELOAD_HOOK = `
const KEY = ${JSON.stringify(RELOAD_QUERY)};
let root = "";
export function initialize(data) { root = data.root; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const parent = context.parentURL;
  if (parent === undefined || !parent.startsWith(root) || !result.url.startsWith(root)) return result;
  const generation = new URL(parent).searchParams.get(KEY);
  const url = new URL(result.url);
  if (generation === null || url.pathname.includes("/node_modules/")) return result;
  url.searchParams.set(KEY, generation);
  return { ...result, url: url.href };
}`;

/** Agent directories (file URLs, with a trailing slash) whose reload hook is registered. */
const reloadHooks = new Set<string>();

/** Register the reload hook for one agent directory, once per process. */
function registerReloadHook(dir: string): void {
  const root = pathToFileURL(join(dir, sep)).href;
  if (reloadHooks.has(root)) return;
  reloadHooks.add(root);
  register(`data:text/javascript,${encodeURIComponent(RELOAD_HOOK)}`, { data: { root } });
}

/**
 * Import a module (TypeScript included, through tsx) and return its namespace. tsx's hooks are
 * registered once for the process, the first time a TypeScript file is loaded (an agent written
 * in JavaScript never loads tsx), so agent and tool files share one module cache with the
 * gateway: a namespaced `tsImport` per file would load a fresh copy of every dependency (`ai`,
 * the MCP SDK, zod…) per file — measured at ~190 MB more RSS for the demo agent.
 *
 * With a `reload` generation, the module (and, through the reload hook, every module of the
 * agent directory it imports) is imported afresh under a URL of its own — ESM caches a module
 * by URL for the life of the process, so a changed file is only seen under a new one. Each
 * reload keeps its copy in memory: fine for `switchboard dev`, not for a loop in production.
 */
async function load(path: string, reload?: number): Promise<Record<string, unknown>> {
  if (/\.[mc]?tsx?$/.test(path)) {
    tsxRegistered ??= import("tsx/esm/api").then(({ register }) => void register());
    await tsxRegistered;
  }
  const url = pathToFileURL(path);
  if (reload !== undefined) url.searchParams.set(RELOAD_QUERY, String(reload));
  return (await import(url.href)) as Record<string, unknown>;
}

/** `{ "tools/x.ts": namespace }`, paths relative to the agent directory, with `/` separators. */
async function namespaces(root: string, folder: string, reload?: number): Promise<Record<string, unknown>> {
  const modules: Record<string, unknown> = {};
  for (const file of await moduleFiles(join(root, folder))) {
    modules[relative(root, file).split(sep).join("/")] = await loadFrom(root, file, reload);
  }
  return modules;
}

/** Import `file` of the agent in `dir`; a failure becomes `importFailure`'s ConfigError. */
async function loadFrom(dir: string, file: string, reload?: number): Promise<Record<string, unknown>> {
  try {
    return await load(file, reload);
  } catch (error) {
    throw await loadFailure(error, dir, file);
  }
}

export interface LoadOptions {
  readonly warn?: (message: string) => void;
  /**
   * A reload generation (`switchboard dev`): a number not used before in this process imports
   * the agent's own modules — the files under its directory — afresh instead of from the module
   * cache. offline.json is read from disk on every load either way.
   */
  readonly reload?: number;
}

/**
 * Load an agent from a directory (agent.ts + tools/ + workflows/ + offline.json + the
 * `waitingAudio` files) or a single agent file (tools/ beside it, if any), attach its files and validate its config, then refuse
 * what would fail every session at its start (`startIssues`: offline.json, provider options,
 * builtins, dtmf.tool, the mode) and a route on a path the gateway serves itself
 * (`agentRouteIssues`). Throws a ConfigError naming the file and the fix — for a file that
 * throws while it is imported, its place in the author's source (`tools/x.ts:7:3`).
 */
export async function loadAgent(path: string, options: LoadOptions = {}): Promise<LoadedAgent> {
  const target = resolve(path);
  const info = await stat(target).catch(() => undefined);
  if (info === undefined) throw new ConfigError("Cannot load agent", [{ path, message: "no such file or directory." }]);
  let file: string | undefined;
  let dir: string;
  if (info.isDirectory()) {
    dir = target;
    for (const name of AGENT_FILES) if (file === undefined && (await exists(join(dir, name)))) file = join(dir, name);
    if (file === undefined) {
      throw new ConfigError("Cannot load agent", [{ path, message: `the directory has no ${AGENT_FILES.join(" / ")}; add one that default-exports agent({...}).` }]);
    }
  } else {
    file = target;
    dir = dirname(target);
  }
  if (options.reload !== undefined) registerReloadHook(dir);
  const module = await loadFrom(dir, file, options.reload);
  const exported = module.default;
  if (typeof exported !== "object" || exported === null || typeof (exported as { name?: unknown }).name !== "string") {
    throw new ConfigError("Cannot load agent", [{ path: relative(process.cwd(), file) || basename(file), message: "must default-export agent({ name, ... })." }]);
  }
  const toolModules = await namespaces(dir, "tools", options.reload);
  const tools = toolRegistry(toolModules);
  const workflows = workflowRegistry(await namespaces(dir, "workflows", options.reload));
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const def = withWorkflows(withTools(exported, tools), workflows, { warn }) as ResolvedAgentDef;
  const config = toAgentConfig(def, { warn });
  const scriptPath = join(dir, "offline.json");
  let script: unknown;
  if (await exists(scriptPath)) {
    try {
      script = JSON.parse(await readFile(scriptPath, "utf8"));
    } catch (error) {
      throw new ConfigError("Cannot load agent", [{ path: "offline.json", message: `is not valid JSON (${String(error)}).` }]);
    }
  }
  // What every session would fail on, and a route on a path the gateway serves itself.
  const issues = [...(await startIssues(script === undefined ? { def, config } : { def, config, script })), ...agentRouteIssues(def)];
  if (issues.length > 0) throw new ConfigError(`Invalid agent "${config.name}"`, issues);
  const toolFiles = toolFilesOf(tools, toolModules);
  const waitingAudio = await loadWaitingSounds(dir, config);
  return { def, config, ...(script === undefined ? {} : { script }), dir, toolFiles, ...(waitingAudio === undefined ? {} : { waitingAudio }) };
}

/** Which tools came from files: name → `tools/<file>` (the rest were attached in code, with withTools). */
function toolFilesOf(registry: Readonly<Record<string, unknown>>, modules: Readonly<Record<string, unknown>>): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [path, module] of Object.entries(modules)) {
    const exported = typeof module === "object" && module !== null && "default" in module ? module.default : undefined;
    const name = Object.keys(registry).find((key) => registry[key] === exported && basename(path).replace(/\.[^.]+$/, "") === key);
    if (name !== undefined) files[name] = path;
  }
  return files;
}
