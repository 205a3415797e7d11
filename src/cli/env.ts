/**
 * `.env` files for the commands that take an agent (serve, start, dev, check, call): the agent
 * directory's `.env` and the working directory's `.env`. Precedence, highest first:
 *
 *   1. the real environment (a variable that is set, even to "", is never replaced),
 *   2. `<agent dir>/.env` — the more specific file: an agent's own settings,
 *   3. `./.env` — shared settings for every agent run from this directory.
 *
 * The same rule as `process.loadEnvFile` (which never replaces a set variable), made explicit
 * with `node:util`'s `parseEnv` so that the two files' order is ours, not an accident of which
 * was loaded first. Values are never logged: callers report the files' names only.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { parseEnv } from "node:util";

/** What `loadDotEnv` did: the files it read (paths relative to the working directory) and how many variables it set. */
export interface DotEnvResult {
  readonly files: readonly string[];
  readonly variables: number;
}

export type Environment = Record<string, string | undefined>;

/**
 * The variables to set: each source's, in order (highest precedence first), skipping any name
 * the environment already holds or an earlier source gave. Pure.
 */
export function mergeDotEnv(env: Readonly<Environment>, sources: readonly Readonly<Record<string, string | undefined>>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source)) {
      if (value === undefined || Object.hasOwn(env, name) || Object.hasOwn(out, name)) continue;
      out[name] = value;
    }
  }
  return out;
}

/** The directory of an agent given as a directory or a file; undefined when the path does not exist (the loader says so). */
export function agentDirOf(target: string, cwd: string): string | undefined {
  const path = resolve(cwd, target);
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) return undefined;
  return info.isDirectory() ? path : dirname(path);
}

/** A `.env` file's variables, or undefined when there is none. Throws (naming the file) when it cannot be read. */
function readDotEnv(path: string, shown: string): Record<string, string | undefined> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read ${shown}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return parseEnv(text);
}

/**
 * Load `<agent dir>/.env` and `./.env` into `env` (default `process.env`), below the real
 * environment (see the module comment). `agentPath` is the agent's directory or file, as given
 * on the command line; undefined for a command without one.
 */
export function loadDotEnv(agentPath: string | undefined, options: { readonly cwd?: string; readonly env?: Environment } = {}): DotEnvResult {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const candidates: string[] = [];
  const agentDir = agentPath === undefined ? undefined : agentDirOf(agentPath, cwd);
  if (agentDir !== undefined) candidates.push(join(agentDir, ".env"));
  const here = join(resolve(cwd), ".env");
  if (!candidates.includes(here)) candidates.push(here);
  const files: string[] = [];
  const sources: Record<string, string | undefined>[] = [];
  for (const path of candidates) {
    const shown = relative(cwd, path) || path;
    const parsed = readDotEnv(path, shown);
    if (parsed === undefined) continue;
    files.push(shown);
    sources.push(parsed);
  }
  const assigned = mergeDotEnv(env, sources);
  for (const [name, value] of Object.entries(assigned)) env[name] = value;
  return { files, variables: Object.keys(assigned).length };
}

/**
 * `loadDotEnv` for a command: a `.env` that exists but cannot be read is the command failing,
 * with the message to print.
 */
export function dotEnvFor(agentPath: string): DotEnvResult | { readonly error: string } {
  try {
    return loadDotEnv(agentPath);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** For the commands that print rather than log (check, call): the files loaded, on stderr. */
export function noteDotEnv(loaded: DotEnvResult): void {
  if (loaded.files.length > 0) process.stderr.write(`loaded ${loaded.files.join(", ")}\n`);
}
