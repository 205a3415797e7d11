/**
 * Where an agent's import failed, named in the author's own file and line (a syntax error, a
 * throw at module scope, a `tool()` or `agent()` that refused its definition, an ES module read
 * as CommonJS): the `ConfigError` `loadAgent` throws instead of Node's bare message.
 */
import { execFile } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../manifest/index.js";

/** The ConfigError for a failed import of `file` (the agent in `dir`). */
export async function loadFailure(error: unknown, dir: string, file: string): Promise<ConfigError> {
  return (await commonJsScope(file, error)) ?? (await importFailure(error, dir, file));
}

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


/** The nearest package.json at or above `dir`: what decides a file's module scope in Node. */
async function nearestPackageJson(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const pkg = join(at, "package.json");
    if (await stat(pkg).then(() => true, () => false)) return pkg;
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
