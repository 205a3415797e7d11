import { readdir, readFile, stat } from "node:fs/promises";
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

/** An agent as a gateway holds it: the definition with its files attached, and its config. */
export interface LoadedAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The offline script (offline.json), if the agent has one. */
  readonly script?: unknown;
  /** The directory the agent was loaded from. */
  readonly dir: string;
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

/**
 * Import a module (TypeScript included, through tsx) and return its namespace. tsx's hooks are
 * registered once for the process, the first time a TypeScript file is loaded (an agent written
 * in JavaScript never loads tsx), so agent and tool files share one module cache with the
 * gateway: a namespaced `tsImport` per file would load a fresh copy of every dependency (`ai`,
 * the MCP SDK, zod…) per file — measured at ~190 MB more RSS for the demo agent.
 */
async function load(path: string): Promise<Record<string, unknown>> {
  if (/\.[mc]?tsx?$/.test(path)) {
    tsxRegistered ??= import("tsx/esm/api").then(({ register }) => void register());
    await tsxRegistered;
  }
  return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
}

/** `{ "tools/x.ts": namespace }`, paths relative to the agent directory, with `/` separators. */
async function namespaces(root: string, folder: string): Promise<Record<string, unknown>> {
  const modules: Record<string, unknown> = {};
  for (const file of await moduleFiles(join(root, folder))) {
    modules[relative(root, file).split(sep).join("/")] = await load(file);
  }
  return modules;
}

/**
 * Load an agent from a directory (agent.ts + tools/ + workflows/ + offline.json) or a single
 * agent file (tools/ beside it, if any), attach its files and validate its config. Throws a
 * ConfigError naming the file and the fix.
 */
export async function loadAgent(path: string, options: { readonly warn?: (message: string) => void } = {}): Promise<LoadedAgent> {
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
  const module = await load(file);
  const exported = module.default;
  if (typeof exported !== "object" || exported === null || typeof (exported as { name?: unknown }).name !== "string") {
    throw new ConfigError("Cannot load agent", [{ path: relative(process.cwd(), file) || basename(file), message: "must default-export agent({ name, ... })." }]);
  }
  const tools = toolRegistry(await namespaces(dir, "tools"));
  const workflows = workflowRegistry(await namespaces(dir, "workflows"));
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
  return script === undefined ? { def, config, dir } : { def, config, script, dir };
}
