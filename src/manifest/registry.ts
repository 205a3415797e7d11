import { IssueList } from "./errors.js";
import { isToolDef, type AnyToolDef, type ToolMap } from "./tool-def.js";
import { isWorkflowDeclaration, isWorkflowDef, type AnyWorkflowDef } from "./workflow.js";

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

/** Each def paired with the name the model calls it by — recorded by `withTools`. */
const toolNames = new WeakMap<AnyToolDef, string>();
/** Each workflow paired with the file that declared it — recorded by `workflowRegistry`. */
const workflowFiles = new WeakMap<AnyWorkflowDef, string>();

/** The name `withTools` registered a def under, for specs handed the def alone. */
export function toolNameOf(def: AnyToolDef): string | undefined {
  return toolNames.get(def);
}

type FileName = { readonly name: string } | { readonly problem: string };

/**
 * The name a file declares: `<folder>/<name>.<ext>`, directly inside the folder, the name in
 * lower_snake_case (the model calls it by that name).
 */
function nameFromPath(path: string, folder: string): FileName {
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
    const suggestion = name.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^[^a-z]+/, "");
    const hint = NAME.test(suggestion) ? ` Rename it ${folder}/${suggestion}${extension}.` : "";
    return { problem: `"${name}" is not a valid name: use lower_snake_case starting with a letter (the model calls it by this name).${hint}` };
  }
  return { name };
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
): { readonly registry: Record<string, T>; readonly fileOf: ReadonlyMap<string, string> } {
  const issues = new IssueList();
  const registry: Record<string, T> = {};
  const fileOf = new Map<string, string>();
  for (const [path, module] of Object.entries(modules)) {
    const verdict = judge(defaultExport(module));
    if (verdict === "skip") continue;
    const file = nameFromPath(path, folder);
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
 * Build a checked registry from already-loaded modules. Synchronous: the caller that matters
 * most has the modules statically imported already. Nested, misnamed, duplicate or non-tool
 * modules are errors naming the file — all of them, in one `ConfigError`.
 */
export function toolRegistry(modules: ToolModules): ToolRegistry {
  const { registry } = buildRegistry(modules, "tools", "tool", (value) =>
    isToolDef(value) ? { def: value } : { problem: `must default-export tool({...}) or clientTool({...}) (found ${describe(value)}).` },
  );
  return Object.freeze(registry);
}

/**
 * Attach a registry to an agent definition, returning the def the runtime runs — a NEW
 * object: the def a module default-exports is shared, and a loader rewriting it would make
 * the order of two imports decide what an agent can do.
 *
 * A name the def already holds, or declares as a builtin, is an error: both halves were
 * declared on purpose, so it is a contradiction to report, not a precedence to apply.
 */
export function withTools<D extends object>(def: D, registry: ToolRegistry): D & { readonly tools: ToolMap } {
  const carried = def as { readonly tools?: ToolMap; readonly builtinTools?: readonly string[] };
  const existing = carried.tools ?? {};
  const builtins = new Set(carried.builtinTools ?? []);
  const issues = new IssueList();
  for (const name of Object.keys(registry)) {
    if (Object.hasOwn(existing, name)) {
      issues.add(`tools.${name}`, `the agent already has a tool named "${name}"; a tool is declared once — remove one of them.`);
    } else if (builtins.has(name)) {
      issues.add(`tools.${name}`, `"${name}" is also listed in builtinTools; the file would silently replace the builtin. Rename the file or drop the builtin.`);
    }
  }
  issues.throwIfAny("Invalid tools");
  for (const [name, tool] of Object.entries(registry)) toolNames.set(tool, name);
  return { ...def, tools: Object.freeze({ ...existing, ...registry }) };
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
  return { ...def, workflows: Object.freeze(merged) };
}

