import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { register } from "node:module";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MissingKeyError } from "../errors.js";
import {
  agentToolsets,
  ConfigError,
  toAgentConfig,
  toolRegistry,
  withTools,
  withWorkflows,
  workflowRegistry,
  type AgentConfig,
  type ConfigIssue,
  type ProviderDescriptor,
  type ResolvedAgentDef,
} from "../manifest/index.js";
import { didYouMean } from "../manifest/errors.js";
import { isCoLocatedFile } from "../manifest/registry.js";
import { languageModelSettings, type Env } from "../pipeline/providers/llm/index.js";
import { scriptedModel } from "../pipeline/providers/llm/scripted.js";
import { resolveStt } from "../pipeline/providers/stt/index.js";
import { resolveTts } from "../pipeline/providers/tts/index.js";
import { resolveS2s } from "../s2s/providers/index.js";
import { builtinToolset } from "../session/builtins/index.js";
import { missingKey } from "./offline.js";

/** An agent as a gateway holds it: the definition with its files attached, and its config. */
export interface LoadedAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The offline script (offline.json), if the agent has one. */
  readonly script?: unknown;
  /** The directory the agent was loaded from. */
  readonly dir: string;
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
 * Load an agent from a directory (agent.ts + tools/ + workflows/ + offline.json) or a single
 * agent file (tools/ beside it, if any), attach its files and validate its config, then refuse
 * what would fail every session at its start (`startIssues`: offline.json, provider options,
 * builtins, dtmf.tool, the mode). Throws a ConfigError naming the file and the fix — for a file
 * that throws while it is imported, its place in the author's source (`tools/x.ts:7:3`).
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
  const issues = startIssues(script === undefined ? { def, config } : { def, config, script });
  if (issues.length > 0) throw new ConfigError(`Invalid agent "${config.name}"`, issues);
  const toolFiles = toolFilesOf(tools, toolModules);
  return script === undefined ? { def, config, dir, toolFiles } : { def, config, script, dir, toolFiles };
}

// ---- where an import failed ----

/** `path:line:col` in an esbuild (tsx) transform error: a syntax error in a TypeScript file. Its column counts from 0. */
const TRANSFORM_ERROR = /^(.+?):(\d+):(\d+): ERROR: (.+)$/m;

/** The location a V8 stack frame names: `at fn (LOCATION)` or `at LOCATION`, LOCATION = `path-or-url:line:col`. */
function frameLocation(frame: string): { path: string; line: number; column: number } | undefined {
  const text = frame.trim();
  if (!text.startsWith("at ")) return undefined;
  const inner = text.endsWith(")") && text.includes("(") ? text.slice(text.lastIndexOf("(") + 1, -1) : text.slice(3);
  const match = /^(.*):(\d+):(\d+)$/.exec(inner);
  if (match === null) return undefined;
  const raw = match[1] ?? "";
  let path: string;
  if (raw.startsWith("file://")) {
    try {
      path = fileURLToPath(raw);
    } catch {
      return undefined;
    }
  } else {
    path = raw.replace(/\?[^/\\]*$/, "");
  }
  return { path, line: Number(match[2]), column: Number(match[3]) };
}

/** `path` relative to the agent directory with `/` separators, or undefined when it is not inside it (or is a dependency). */
function insideAgent(dir: string, path: string): string | undefined {
  if (!isAbsolute(path)) return undefined;
  const rel = relative(dir, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  const parts = rel.split(sep);
  return parts.includes("node_modules") ? undefined : parts.join("/");
}

/**
 * The line of a JavaScript file's syntax error. Node's own loader leaves it out of the error it
 * throws (it only prints it for an uncaught one), so the file is checked again with
 * `node --check`, which prints `<file>:<line>`, the line and a caret under the column.
 */
async function syntaxErrorLine(file: string): Promise<{ line: number; column: number | undefined } | undefined> {
  if (!/\.[cm]?js$/.test(file)) return undefined;
  const stderr = await new Promise<string>((done) => {
    execFile(process.execPath, ["--check", file], { timeout: 10_000 }, (_error, _stdout, text) => done(text));
  });
  const lines = stderr.split("\n");
  const index = lines.findIndex((l) => /^.+:\d+$/.test(l));
  const line = /:(\d+)$/.exec(lines[index] ?? "")?.[1];
  if (line === undefined) return undefined;
  const caret = (lines[index + 2] ?? "").indexOf("^");
  return { line: Number(line), column: caret === -1 ? undefined : caret + 1 };
}

/**
 * Importing an agent or tool file threw (a syntax error, an error at the module's top level, a
 * `tool()` or `agent()` that refused its definition): a ConfigError naming where, in the
 * author's own file — `tools/lookup.ts:7:3: Cannot read properties of undefined (reading
 * 'description')`. The place is the innermost stack frame inside the agent directory (tsx maps
 * frames to the TypeScript lines), or the location a syntax error reports; a helper module
 * of the agent's that threw is named along with the file that imported it.
 */
async function importFailure(error: unknown, dir: string, file: string): Promise<ConfigError> {
  const own = insideAgent(dir, file) ?? relative(process.cwd(), file);
  const message = error instanceof Error ? error.message : String(error);
  let where: { file: string; line?: number; column?: number | undefined } | undefined;
  let text = message;
  const transform = TRANSFORM_ERROR.exec(message);
  if (transform !== null) {
    where = { file: insideAgent(dir, transform[1] ?? "") ?? transform[1] ?? own, line: Number(transform[2]), column: Number(transform[3]) + 1 };
    text = `syntax error: ${transform[4] ?? ""}`;
  } else if (error instanceof Error) {
    for (const frame of (error.stack ?? "").split("\n")) {
      const location = frameLocation(frame);
      const inside = location === undefined ? undefined : insideAgent(dir, location.path);
      if (location !== undefined && inside !== undefined) {
        where = { file: inside, line: location.line, column: location.column };
        break;
      }
    }
    if (where === undefined && error.name === "SyntaxError") {
      const found = await syntaxErrorLine(file);
      if (found !== undefined) where = { file: own, ...found };
      text = `syntax error: ${message}`;
    }
  }
  const at = where ?? { file: own };
  const place = [at.file, at.line, at.column].filter((part) => part !== undefined).join(":");
  const loading = at.file === own ? "" : ` (while loading ${own})`;
  let failure: ConfigError;
  if (error instanceof ConfigError) {
    const subject = /^(.*): \d+ problems?\n/.exec(error.message)?.[1] ?? "Invalid agent";
    failure = new ConfigError(`${place}: ${subject}${loading}`, error.issues);
  } else {
    failure = new ConfigError("Cannot load agent", [{ path: place, message: `${text}${loading}` }]);
  }
  failure.cause = error;
  return failure;
}

/** Import `file` of the agent in `dir`; a failure becomes `importFailure`'s ConfigError. */
async function loadFrom(dir: string, file: string, reload?: number): Promise<Record<string, unknown>> {
  try {
    return await load(file, reload);
  } catch (error) {
    throw (await commonJsScope(file, error)) ?? (await importFailure(error, dir, file));
  }
}

/** The nearest package.json at or above `dir`: what decides a file's module scope in Node. */
async function nearestPackageJson(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    if (await exists(join(at, "package.json"))) return join(at, "package.json");
    if (dirname(at) === at) return undefined;
  }
}

/**
 * Whether a failure is the scope's: Node's codes and messages for ES module syntax met in (or
 * required from) CommonJS, or a SyntaxError — tsx's hooks compile ES modules only, so in a
 * CommonJS scope the TypeScript reaches Node untranslated ("Missing initializer in const
 * declaration"). Any other failure (a TypeError at the top level) is the file's own.
 */
const MODULE_SCOPE_CODES = new Set(["ERR_REQUIRE_ESM", "ERR_REQUIRE_CYCLE_MODULE", "ERR_REQUIRE_ASYNC_MODULE"]);
const MODULE_SCOPE_MESSAGE = /Cannot require\(\) ES Module|require\(\) of ES Module|Cannot use import statement outside a module|is not defined in ES module scope/;

function isModuleScopeError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof SyntaxError) return true;
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && MODULE_SCOPE_CODES.has(code)) || MODULE_SCOPE_MESSAGE.test(error.message);
}

/**
 * Why a `.ts` file failed to import when it sits in a CommonJS scope: the nearest package.json
 * has no `"type": "module"` (npm 11's `npm init -y` writes `"type": "commonjs"`), or there is
 * none. tsx then compiles the file as CommonJS, and one with `import`/`export` fails with Node's
 * "Cannot require() ES Module … in a cycle" (Node ≥ 20.19, require(esm)) or "Cannot use import
 * statement outside a module" (earlier). Agents are ES modules, so the fix is the scope.
 * Undefined (the error stands as it is) for a file in an ES module scope, or `.mts`.
 */
async function commonJsScope(file: string, error: unknown): Promise<ConfigError | undefined> {
  if (!/\.tsx?$/.test(file) || !isModuleScopeError(error)) return undefined;
  const pkg = await nearestPackageJson(dirname(file));
  if (pkg !== undefined) {
    let type: unknown;
    try {
      type = (JSON.parse(await readFile(pkg, "utf8")) as { type?: unknown }).type;
    } catch {
      return undefined; // an unreadable package.json: Node's own error says more than a guess
    }
    if (type === "module") return undefined;
  }
  const shown = pkg === undefined ? "" : relative(process.cwd(), pkg) || "package.json";
  const why = pkg === undefined ? "there is no package.json above it" : `${shown} has no "type": "module"`;
  const fix = pkg === undefined ? `add a package.json with {"type": "module"} beside it` : `add "type": "module" to ${shown} (npm pkg set type=module)`;
  const failure = new ConfigError("Cannot load agent", [
    {
      path: relative(process.cwd(), file) || basename(file),
      message: `is loaded as CommonJS (${why}), but agents are ES modules: ${fix}, or name the file .mts. (Node said: ${error instanceof Error ? error.message : String(error)})`,
    },
  ]);
  failure.cause = error;
  return failure;
}

// ---- what would fail every session at start ----

/** The agent as a session holds it. */
export interface StartableAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The offline script (offline.json), if any. */
  readonly script?: unknown;
}

/** Stands in for a key a provider reads but the environment lacks: keys are `check`'s to report, not a reason to skip the options. */
const STAND_IN_KEY = "switchboard-check-stand-in-key";

/** `env`, plus a stand-in for the key `descriptor` needs and `env` lacks. */
function withStandInKey(descriptor: ProviderDescriptor, env: Env): Env {
  const variable = missingKey(descriptor, env);
  return variable === undefined ? env : { ...env, [variable]: STAND_IN_KEY };
}

/** A scripted model's script refused (`scriptedModel`'s ConfigError), as issues under `prefix` (`offline.json`). */
function scriptIssues(error: ConfigError, prefix: string): ConfigIssue[] {
  return error.issues.map((issue) => ({ path: issue.path === "script" ? prefix : `${prefix} ${issue.path}`, message: issue.message }));
}

/** A provider refusing its descriptor at construction: `stt.options.url must be …` → path `stt.options.url`. */
function providerIssue(slot: string, error: unknown): ConfigIssue {
  const message = error instanceof Error ? error.message : String(error);
  const option = new RegExp(`^(${slot}\\.options\\.[A-Za-z0-9_]+) (.+)$`, "s").exec(message);
  return option === null ? { path: slot, message } : { path: option[1] ?? slot, message: option[2] ?? message };
}

/** Build the provider for one slot the way a session start does (`resolveStt`, `resolveTts`, `resolveS2s`, `languageModelSettings`); nothing is opened. */
function buildProvider(slot: "stt" | "llm" | "tts" | "s2s", descriptor: ProviderDescriptor, env: Env, script: unknown): void {
  if (slot === "stt") resolveStt(descriptor, env);
  else if (slot === "tts") resolveTts(descriptor, env);
  else if (slot === "s2s") resolveS2s(descriptor, env);
  else languageModelSettings(descriptor, script === undefined ? { env } : { env, script });
}

/**
 * What would fail every session of this agent when it starts, whatever keys are set — the
 * checks a session runs as it opens (src/session/session.ts), run without a connection:
 * - the offline script (offline.json; or `llm.options.script` for a `scripted` llm without one),
 *   compiled as the `scripted` model compiles it;
 * - each provider's options: the provider is built the way the session builds it, with a stand-in
 *   for a key the environment lacks (a missing key is `check`'s to report, and `serve` then runs
 *   the offline stack);
 * - the builtin tool names, and `dtmf.tool` against the agent's tools (MCP tools are listed
 *   only at session start, so a `mcp_<server>_…` name of a configured server is taken on trust);
 * - the mode: a `workflow-app` agent serves no sessions.
 * Pure: nothing is opened, spawned or called.
 */
export function startIssues(agent: StartableAgent, env: Env = process.env): ConfigIssue[] {
  const { def, config, script } = agent;
  const issues: ConfigIssue[] = [];
  if (config.mode === "workflow-app") {
    issues.push({ path: "mode", message: 'a workflow-app agent serves workflows, not sessions, and this build runs no workflows yet (docs/config.md §5): every connection would fail. Give it an llm and mode: "text", or audio providers.' });
  }
  if (script !== undefined) {
    try {
      scriptedModel(script);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...scriptIssues(error, "offline.json"));
    }
  }
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const descriptor = config[slot];
    // A scripted llm runs offline.json, checked above.
    if (descriptor === undefined || (slot === "llm" && descriptor.kind === "scripted" && script !== undefined)) continue;
    try {
      buildProvider(slot, descriptor, withStandInKey(descriptor, env), script);
    } catch (error) {
      if (error instanceof MissingKeyError) continue;
      issues.push(...(error instanceof ConfigError ? scriptIssues(error, `${slot}.options.script`) : [providerIssue(slot, error)]));
    }
  }
  const builtins = config.builtinTools ?? [];
  try {
    builtinToolset(builtins, { now: () => new Date(), endCall: () => undefined });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  const dtmf = config.dtmf;
  if (typeof dtmf === "object") {
    const names = [...agentToolsets(def).flatMap((set) => Object.keys(set.list())), ...builtins];
    const fromMcp = Object.keys(config.mcpServers ?? {}).some((key) => dtmf.tool.startsWith(`mcp_${key}_`));
    if (!names.includes(dtmf.tool) && !fromMcp) {
      issues.push({ path: "dtmf.tool", message: `this agent has no tool named ${dtmf.tool}; add it to the agent's tools or set dtmf: "text".${didYouMean(dtmf.tool, names)}` });
    }
  }
  return issues;
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
