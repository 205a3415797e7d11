/**
 * `switchboard init <dir>`: scaffold an agent project that runs as it is — package.json,
 * tsconfig.json, agent.ts, a tool with messages (tools/check_weather.ts), its offline brain
 * (offline.json), a vitest test on `switchboard/testing`, .env.example, .gitignore and a README.
 * The files are `templates/agent/` (shipped in the package: package.json `files`); `.ts` files
 * carry a `.tmpl` suffix there so the repository's own tsc and ESLint leave them alone, and the
 * dotfiles are stored without their dot (npm reads a `.gitignore` inside a package as ignore
 * rules and never packs it).
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { describe, EXIT, fail, text, type Command } from "./command.js";

/** This package's root: `dist/cli/init.js` (or `src/cli/init.ts` in a checkout) → `../..`. */
const PACKAGE_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TEMPLATE = join(PACKAGE_ROOT, "templates", "agent");

/** Template file names that are not the scaffold's names. */
const RENAMED: Readonly<Record<string, string>> = { gitignore: ".gitignore", "env.example": ".env.example" };

interface OwnManifest {
  readonly version: string;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

function ownManifest(): OwnManifest {
  return JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as OwnManifest;
}

/** An npm package name from a directory name: lowercase, URL-safe, not starting with `.` or `_`. */
export function packageName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, "-")
    .replace(/^[._~-]+|-+$/g, "");
  return name === "" ? "agent" : name.slice(0, 214);
}

/** A `file:` spec relative to `from`, with `/` separators (npm's form on every platform). */
function fileSpec(from: string, target: string): string {
  const rel = relative(from, target).split(sep).join("/");
  return `file:${rel === "" ? "." : rel}`;
}

/** A spec npm resolves on the registry (a range, a version or a tag), rather than a file, URL or git spec. */
function isRegistrySpec(spec: string): boolean {
  return /^[\s\d.xX*^~<>=|-]*$/.test(spec) || /^[a-z][a-z0-9-]*$/i.test(spec);
}

/**
 * The `switchboard` dependency the scaffold gets: however this switchboard was installed.
 * - Installed in a project (`<project>/node_modules/switchboard`, which is also where `npx`
 *   puts a package it fetched, with a package.json of its own): that project's spec for
 *   it — a `file:` spec (a packed tarball) re-based on the new directory, any other spec
 *   (git, URL) as it is, a registry range as `^<version>`.
 * - Run from a checkout of the repository: `file:` that checkout (npm links it).
 * - Otherwise (a global install): `^<version>`.
 */
export function switchboardSpec(packageRoot: string, target: string, version: string): string {
  const parent = dirname(packageRoot);
  if (basename(parent) === "node_modules") {
    const project = dirname(parent);
    let spec: string | undefined;
    try {
      const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as Record<string, Readonly<Record<string, string>> | undefined>;
      spec = manifest.dependencies?.switchboard ?? manifest.devDependencies?.switchboard ?? manifest.optionalDependencies?.switchboard;
    } catch {
      spec = undefined;
    }
    if (spec === undefined || isRegistrySpec(spec)) return `^${version}`;
    return spec.startsWith("file:") ? fileSpec(target, resolve(project, spec.slice("file:".length))) : spec;
  }
  if (existsSync(join(packageRoot, "src", "cli.ts"))) return fileSpec(target, packageRoot);
  return `^${version}`;
}

/** A devDependency range of this package, for the scaffold (one place for the versions it is tested with). */
function range(manifest: OwnManifest, name: string): string {
  const spec = manifest.devDependencies?.[name] ?? manifest.peerDependencies?.[name];
  if (spec === undefined) throw new Error(`switchboard's package.json has no range for ${name}`);
  return /^\d/.test(spec) ? `^${spec}` : spec;
}

/** The scaffold's package.json. */
function packageJson(name: string, spec: string, manifest: OwnManifest): string {
  const pkg = {
    name,
    version: "0.1.0",
    private: true,
    // Agents are ES modules: a `.ts` file in a CommonJS scope cannot be loaded (src/server/loader.ts).
    type: "module",
    engines: { node: ">=20" },
    scripts: {
      dev: "switchboard dev .",
      start: "switchboard serve . --host 0.0.0.0",
      check: "switchboard check .",
      test: "vitest run",
      typecheck: "tsc --noEmit",
    },
    // @sinclair/typebox is a peer of switchboard: the tool's parameters are written in it, and its
    // types must be the copy switchboard's are (TypeBox marks a schema with a unique symbol).
    dependencies: { "@sinclair/typebox": range(manifest, "@sinclair/typebox"), switchboard: spec },
    devDependencies: { "@types/node": range(manifest, "@types/node"), typescript: range(manifest, "typescript"), vitest: range(manifest, "vitest") },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Every template file, relative to the template directory, `/`-separated. */
async function templateFiles(): Promise<string[]> {
  const entries = await readdir(TEMPLATE, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(TEMPLATE, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** A template path → the scaffold's path. */
function outputPath(file: string): string {
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
  const name = file.slice(dir.length);
  return dir + (RENAMED[name] ?? name.replace(/\.tmpl$/, ""));
}

async function init(dir: string, switchboard: string | undefined): Promise<number> {
  const target = resolve(dir);
  const present = existsSync(target) ? await readdir(target).catch(() => undefined) : [];
  if (present === undefined) return fail(`${dir} exists and is not a directory: choose a new directory name, e.g. switchboard init my-agent.`);
  if (present.length > 0) {
    const shown = present.slice(0, 3).join(", ") + (present.length > 3 ? ", …" : "");
    const another = `${relative(process.cwd(), target) || "my-agent"}-2`;
    return fail(`${dir} is not empty (${shown}): init writes only into a new or empty directory, so nothing there is overwritten. Name a directory that does not exist yet (init creates it), e.g. switchboard init ${another}.`);
  }
  const manifest = ownManifest();
  const name = packageName(target);
  const spec = switchboard ?? switchboardSpec(PACKAGE_ROOT, target, manifest.version);
  const written: string[] = ["package.json"];
  try {
    await mkdir(target, { recursive: true });
    await writeFile(join(target, "package.json"), packageJson(name, spec, manifest));
    for (const file of await templateFiles()) {
      const out = outputPath(file);
      const content = (await readFile(join(TEMPLATE, file), "utf8")).replaceAll("{{name}}", name);
      await mkdir(dirname(join(target, out)), { recursive: true });
      await writeFile(join(target, out), content);
      written.push(out);
    }
  } catch (error) {
    return fail(`cannot write ${dir}: ${describe(error)}`);
  }
  const cd = relative(process.cwd(), target) || ".";
  process.stdout.write(
    `Created ${cd}: ${written.join(", ")}\n` +
      `switchboard dependency: ${spec}\n\n` +
      "Next:\n" +
      `  cd ${cd}\n` +
      "  npm install\n" +
      "  npm run dev       # serve it at http://127.0.0.1:3000/ (the offline stack until the keys in .env.example are set)\n" +
      "  npm test          # the test in agent.test.ts, no keys needed\n",
  );
  return EXIT.ok;
}

export const initCommand: Command = {
  name: "init",
  args: "<dir>",
  summary: "scaffold an agent project in a new directory: agent.ts, a tool, a test, package.json",
  optionHelp: `      --switchboard <spec>    the switchboard dependency to write in package.json (default: how
                              this switchboard was installed, e.g. file:../switchboard-0.1.0.tgz)
`,
  options: { switchboard: { type: "string" } },
  run: ([dir], values) => (dir === undefined ? Promise.resolve(fail("init needs a directory to create, e.g. switchboard init my-agent.", EXIT.usage)) : init(dir, text(values, "switchboard"))),
};
