import { IssueList, ToolDefinitionError, kindOf } from "./errors.js";
import { isToolDef, TOOL_SHAPE, type AnyToolDef, type ToolMap } from "./tool-def.js";
import { isWorkflowDeclaration, isWorkflowDef, type AnyWorkflowDef } from "./workflow.js";
import { spread } from "../spread.js";

/** path → module namespace: what `import.meta.glob` (eager) and a generated import list give. */
export type ToolModules = Readonly<Record<string, unknown>>;
/** A checked set of tools, keyed by the name the model calls. */
export type ToolRegistry = ToolMap;
/** path → module namespace, as for tools. */
export type WorkflowModules = Readonly<Record<string, unknown>>;
/** A checked set of workflows, keyed by the name they are started under. */
export type WorkflowRegistry = Readonly<Record<string, AnyWorkflowDef>>;

/** What `withWorkflows` may be told. */
export interface WithWorkflowsOptions {
  /** Where a name-clash warning goes. Default `console.warn`. */
  readonly warn?: (message: string) => void;
}

const NAME = /^[a-z][a-z0-9_]*$/;
const EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];

/**
 * The longest tool name a model provider takes: OpenAI's and Anthropic's function names match
 * `^[a-zA-Z0-9_-]{1,64}$`, Gemini's FunctionDeclaration.name is at most 64 characters too. A
 * longer name builds and is refused at the first model request, so it is refused at build.
 */
export const MAX_TOOL_NAME_LENGTH = 64;
/** The tool names every provider takes: OpenAI's and Anthropic's pattern (Gemini also allows `.` and `:`). */
const PROVIDER_NAME = /^[a-zA-Z0-9_-]+$/;

/**
 * Files that sit in a folder beside its tools (or workflows) without being one: co-located
 * specs (`echo.test.ts`, `echo.spec.mjs`, `.test.tsx`…) and declaration files (`echo.d.ts`).
 * The registries skip them, whatever they export — `import.meta.glob("./tools/*.ts")` picks
 * them up — and the agent loader never imports them (a spec imported outside its runner throws).
 */
export function isCoLocatedFile(path: string): boolean {
  return /\.(test|spec)\.[cm]?[jt]sx?$|\.d\.[cm]?ts$/.test(path);
}

/** `"<name>" is N characters; …` when a tool name is over the providers' cap. */
function tooLong(name: string): string | undefined {
  if (name.length <= MAX_TOOL_NAME_LENGTH) return undefined;
  return `"${name}" is ${name.length} characters; model providers take a tool name of at most ${MAX_TOOL_NAME_LENGTH} (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$), so every request would be refused.`;
}

/** Each def paired with the name the model calls it by — recorded by `withTools`. */
const toolNames = new WeakMap<AnyToolDef, string>();
/** Each workflow paired with the file that declared it — recorded by `workflowRegistry`. */
const workflowFiles = new WeakMap<AnyWorkflowDef, string>();

/** The name `withTools` registered a def under, for specs handed the def alone. */
export function toolNameOf(def: AnyToolDef): string | undefined {
  return toolNames.get(def);
}

type FileName = { readonly name: string } | { readonly problem: string };

/** A folder's own rule on a well-formed name: a problem to report, or `undefined`. */
type NameRule = (name: string, extension: string) => string | undefined;

/**
 * The name a file declares: `<folder>/<name>.<ext>`, directly inside the folder, the name in
 * lower_snake_case (the model calls it by that name), and whatever `rule` adds.
 */
function nameFromPath(path: string, folder: string, rule?: NameRule): FileName {
  const parts = path.replace(/\\/g, "/").split("/").filter((p) => p !== "" && p !== ".");
  const index = parts.lastIndexOf(folder);
  if (index === -1) return { problem: `not inside a ${folder}/ folder; put it at ${folder}/<name>.ts.` };
  const rest = parts.slice(index + 1);
  const file = rest.at(-1) ?? "";
  if (rest.length > 1) {
    return { problem: `nested inside ${folder}/${rest.slice(0, -1).join("/")}/; ${folder} are files directly in ${folder}/ — move it to ${folder}/${file}.` };
  }
  const extension = EXTENSIONS.find((e) => file.endsWith(e));
  if (extension === undefined) return { problem: `must end in ${EXTENSIONS.join(", ")}.` };
  const name = file.slice(0, -extension.length);
  if (!NAME.test(name)) {
    const suggestion = snakeCase(name);
    const hint = NAME.test(suggestion) ? ` Rename it ${folder}/${suggestion}${extension}.` : "";
    return { problem: `"${name}" is not a valid name: use lower_snake_case starting with a letter (the model calls it by this name).${hint}` };
  }
  const problem = rule?.(name, extension);
  return problem === undefined ? { name } : { problem };
}

/**
 * The lower_snake_case form of a file name, for the rename hint: `LookupOrder`, `lookupOrder`,
 * `lookup-order` and `Lookup Order` all become `lookup_order`; an acronym stays one word
 * (`HTTPStatus` → `http_status`). Leading characters that cannot start a name are dropped.
 */
function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^[^a-z]+/, "")
    .replace(/_+$/, "");
}

function defaultExport(module: unknown): unknown {
  return typeof module === "object" && module !== null && "default" in module ? (module).default : undefined;
}

function describe(value: unknown): string {
  if (value === undefined) return "no default export";
  if (value === null) return "null";
  if (typeof value === "function") return "a function";
  return typeof value === "object" ? "an object that is not a tool()" : `a ${typeof value}`;
}

/** What a registry makes of one module's default export. */
type Verdict<T> = { readonly def: T } | { readonly problem: string } | "skip";

/**
 * The registry both folders share: each module's verdict, its name from its path, one file
 * per name. Every problem names its file; all of them are thrown at once.
 */
function buildRegistry<T>(
  modules: Readonly<Record<string, unknown>>,
  folder: string,
  kind: string,
  judge: (value: unknown) => Verdict<T>,
  rule?: NameRule,
): { readonly registry: Record<string, T>; readonly fileOf: ReadonlyMap<string, string> } {
  const issues = new IssueList();
  const registry: Record<string, T> = {};
  const fileOf = new Map<string, string>();
  for (const [path, module] of Object.entries(modules)) {
    if (isCoLocatedFile(path)) continue;
    const verdict = judge(defaultExport(module));
    if (verdict === "skip") continue;
    const file = nameFromPath(path, folder, rule);
    if ("problem" in file || "problem" in verdict) {
      issues.add(path, "problem" in file ? file.problem : (verdict as { problem: string }).problem);
      continue;
    }
    const previous = fileOf.get(file.name);
    if (previous !== undefined) {
      issues.add(path, `declares ${kind} "${file.name}" again (also ${previous}); keep one file per ${kind}.`);
      continue;
    }
    fileOf.set(file.name, path);
    registry[file.name] = verdict.def;
  }
  issues.throwIfAny(`Invalid ${folder}`);
  return { registry, fileOf };
}

/**
 * A tools/ file's name rules beyond lower_snake_case: no barrel (tools are found by their
 * files, so an `index` would only become a tool named "index" — or, exporting none, an error
 * that does not say why), and no name over the providers' cap.
 */
const toolNameRule: NameRule = (name, extension) => {
  if (name === "index") {
    return `is a barrel, not a tool: each file in tools/ is one tool named after its file, and they are found without an index. Delete tools/index${extension} (or, if it is a tool, rename it tools/<name>${extension}).`;
  }
  const long = tooLong(name);
  return long === undefined ? undefined : `${long} Rename the file to a name of ${MAX_TOOL_NAME_LENGTH} characters or fewer.`;
};

/**
 * Build a checked registry from already-loaded modules. Synchronous: the caller that matters
 * most has the modules statically imported already. Co-located specs and declaration files
 * are skipped (`isCoLocatedFile`); a barrel, or a nested, misnamed, over-long, duplicate or
 * non-tool module is an error naming the file — all of them, in one `ConfigError`.
 */
export function toolRegistry(modules: ToolModules): ToolRegistry {
  const { registry } = buildRegistry(
    modules,
    "tools",
    "tool",
    (value) => (isToolDef(value) ? { def: value } : { problem: `must default-export tool({...}) or clientTool({...}) (found ${describe(value)}).` }),
    toolNameRule,
  );
  return Object.freeze(registry);
}

/**
 * Attach a registry to an agent definition, returning the def the runtime runs — a NEW
 * object: the def a module default-exports is shared, and a loader rewriting it would make
 * the order of two imports decide what an agent can do.
 *
 * A registry that is not a record of tools (an array, a value that is not a tool) is a
 * `ToolDefinitionError` naming each key: it would otherwise build and fail later, inside
 * `agentToolsToSchemas`. A name the def already holds, or declares as a builtin, is an error:
 * both halves were declared on purpose, so it is a contradiction to report, not a precedence
 * to apply. So is a name over the providers' cap, which a hand-built registry can carry.
 */
export function withTools<D extends object>(def: D, registry: ToolRegistry): D & { readonly tools: ToolMap } {
  if (typeof registry !== "object" || registry === null || Array.isArray(registry)) {
    throw new ToolDefinitionError(
      `withTools(): the registry is ${kindOf(registry)}; pass a record keyed by tool name ({ lookup_order: lookupOrder }), such as toolRegistry(import.meta.glob("./tools/*.ts", { eager: true })) builds.`,
    );
  }
  const notTools = Object.entries(registry as Readonly<Record<string, unknown>>)
    .filter(([, value]) => !isToolDef(value))
    .map(([name, value]) => `tools.${name} is ${kindOf(value)}, not a tool`);
  if (notTools.length > 0) {
    throw new ToolDefinitionError(`withTools(): ${notTools.join("; ")}. A tool is what ${TOOL_SHAPE} returns — pass those, keyed by the name the model calls.`);
  }
  const carried = def as { readonly tools?: ToolMap; readonly builtinTools?: readonly string[] };
  const existing = carried.tools ?? {};
  const builtins = new Set(carried.builtinTools ?? []);
  const issues = new IssueList();
  for (const name of Object.keys(registry)) {
    const long = tooLong(name);
    if (long !== undefined) {
      issues.add(`tools.${name}`, `${long} Register it under a shorter name.`);
    } else if (!PROVIDER_NAME.test(name)) {
      issues.add(`tools.${name}`, `"${name}" is not a name model providers take for a tool (OpenAI and Anthropic: letters, digits, _ and -, e.g. ${JSON.stringify(name.replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "my_tool")}), so every request would be refused. Register it under such a name.`);
    } else if (Object.hasOwn(existing, name)) {
      issues.add(`tools.${name}`, `the agent already has a tool named "${name}"; a tool is declared once — remove one of them.`);
    } else if (builtins.has(name)) {
      issues.add(`tools.${name}`, `"${name}" is also listed in builtinTools; the file would silently replace the builtin. Rename the file or drop the builtin.`);
    }
  }
  issues.throwIfAny("Invalid tools");
  for (const [name, tool] of Object.entries(registry)) toolNames.set(tool, name);
  return spread(def, { tools: Object.freeze(spread(existing, registry)) });
}

/**
 * The workflows a workflows/ directory declares, from its already-loaded modules. A module
 * that does not default-export a def is skipped — except a bodyless two-phase declaration,
 * which is refused naming `.body()`. One that is a def and is nested, misnamed or a duplicate
 * is an error naming the file.
 */
export function workflowRegistry(modules: WorkflowModules): WorkflowRegistry {
  const { registry, fileOf } = buildRegistry<AnyWorkflowDef>(modules, "workflows", "workflow", (value) => {
    if (isWorkflowDeclaration(value)) {
      return { problem: "default-exports a workflow declaration with no body; finish it with .body(async (input, ctx) => { ... })." };
    }
    return isWorkflowDef(value) ? { def: value } : "skip";
  });
  for (const [name, def] of Object.entries(registry)) workflowFiles.set(def, fileOf.get(name) ?? `workflows/${name}`);
  return Object.freeze(registry);
}

/**
 * Attach a discovered registry to an agent definition, returning a NEW def. An explicit
 * declaration (`agent({ workflows })`) wins a clash, and says so:
 * - the same def under the same name: silent (the common, benign case);
 * - a DIFFERENT def under a declared name: the declared one is kept, with a warning naming
 *   the file, so its author learns it is not the one running;
 * - the same def declared under ANOTHER name: registered once, under the declared name, with
 *   a warning naming the file (a def under two names could be started as either).
 */
export function withWorkflows<D extends object>(
  def: D,
  registry: WorkflowRegistry,
  options: WithWorkflowsOptions = {},
): D & { readonly workflows: WorkflowRegistry } {
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const declared = (def as { readonly workflows?: WorkflowRegistry }).workflows ?? {};
  const declaredNames = new Map<AnyWorkflowDef, string[]>();
  for (const [name, wf] of Object.entries(declared)) declaredNames.set(wf, [...(declaredNames.get(wf) ?? []), name]);
  const merged: Record<string, AnyWorkflowDef> = { ...declared };
  for (const [name, wf] of Object.entries(registry)) {
    const file = workflowFiles.get(wf) ?? `workflows/${name}`;
    const holder = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (holder === wf) continue;
    if (holder !== undefined) {
      warn(`${file}: agent({ workflows }) declares a different workflow as "${name}"; the declared one runs and this file's is ignored.`);
      continue;
    }
    const names = declaredNames.get(wf);
    if (names !== undefined) {
      warn(`${file}: this workflow is declared as ${names.map((n) => `"${n}"`).join(", ")} in agent({ workflows }); it is registered once, under the declared name.`);
      continue;
    }
    merged[name] = wf;
  }
  return spread(def, { workflows: Object.freeze(merged) });
}

