import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The repository stands alone: what the code and docs rely on is written down inside it
// (docs/vendors.md for the vendors' wire facts, the other pages in docs/ for behaviour), so no
// tracked file may point at a build machine's files or at documents that are not in the tree.

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * An absolute path of a build machine: a path that *starts* with one of these roots —
 * - a workspace: the top-level directory `work`, followed by a slash;
 * - a home directory: `home/<user>/` or `Users/<user>/` (macOS), a user name being one segment;
 * - the superuser's home: `root/`, only with the slash after it, so a bare "/root" (a JSON pointer,
 *   a route, a tree's root in prose) is not a path of a machine.
 * "Starts" means the slash before the root is the first character of the line or follows
 * whitespace, a quote, a backtick, an opening bracket, `=`, `,`, `;`, `:`, `|` or `>` — or
 * `file://`. A URL's path (`https://host` followed by the same segments) or a relative path
 * (`a` + the same) has a host or segment character before that slash and is not matched.
 */
const MACHINE_PATH = /(?:^|[\s"'`([{<=,;:|>]|file:\/\/)(\/(?:work\/|home\/[^/\s"'`]+\/|Users\/[^/\s"'`]+\/|root\/)[^\s"'`)\]}>]*)/;

/**
 * A citation of a document that is not in the repository: the specification pack the project
 * started from (by that name, or its behaviour page), or a vendors page other than this
 * repository's docs/vendors.md. A vendors page is ours when written with `docs/` before it (from
 * anywhere), or bare (or after `./`) in a file directly under `docs/`, where it names the sibling
 * page: a Markdown link of docs/telephony.md to `vendors` + `.md#carriers` is fine.
 * (The patterns escape their dots, so this file does not match itself.)
 */
function foreignCitations(file: string, line: string): string[] {
  const found: string[] = [];
  if (/spec\s+pack/i.test(line)) found.push("cites the specification pack (cite a page of docs/ instead)");
  if (/behaviour\.md/i.test(line)) found.push("cites behaviour\u002emd, which is not in the repository (cite the page of docs/ that documents the rule)");
  for (const match of line.matchAll(/([\w./-]*?)vendors\.md/gi)) {
    const prefix = match[1] ?? "";
    const isOurs = prefix.endsWith("docs/") || (dirname(file) === "docs" && (prefix === "" || prefix === "./"));
    if (!isOurs) found.push(`cites ${match[0]} (write docs/vendors\u002emd and its section)`);
  }
  return found;
}

/** Tracked files, as in the working tree: deleted ones and package-lock.json skipped. */
function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return out
    .split("\0")
    .filter((file) => file.length > 0 && file !== "package-lock.json" && !file.endsWith("/package-lock.json"))
    .filter((file) => existsSync(join(root, file)));
}

/** The file's text, or undefined for a binary file (a NUL byte in its first 8000 bytes, as git decides). */
function textOf(file: string): string | undefined {
  const bytes = readFileSync(join(root, file));
  if (bytes.subarray(0, 8000).includes(0)) return undefined;
  return bytes.toString("utf8");
}

describe("the repository stands alone", () => {
  const files = trackedFiles();

  it("lists the tracked files", () => {
    expect(files).toContain("package.json");
    expect(files).toContain("docs/vendors.md");
  });

  it("has no absolute path of a build machine in any tracked text file", () => {
    const problems: string[] = [];
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      text.split("\n").forEach((line, index) => {
        const match = MACHINE_PATH.exec(line);
        if (match !== null) problems.push(`${file}:${index + 1}: absolute machine path ${match[1] ?? ""}`);
      });
    }
    expect(problems, "absolute paths of a build machine (cite a file of the repository instead)").toEqual([]);
  });

  it("cites no document outside the repository (the vendors page only as docs/vendors.md)", () => {
    const problems: string[] = [];
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      text.split("\n").forEach((line, index) => {
        for (const problem of foreignCitations(file, line)) problems.push(`${file}:${index + 1}: ${problem}`);
      });
    }
    expect(problems, "citations of documents that are not in the repository").toEqual([]);
  });
});

/**
 * The top-level folder (`bench`, `test`, `fakes`, …) each relative module specifier of `file`
 * (a path from the repository root) points into: static and dynamic imports, `export … from`, and
 * `new URL("…", import.meta.url)` (how the benches name the files they fork).
 */
function importedFolders(file: string, text: string): { spec: string; folder: string }[] {
  const found: { spec: string; folder: string }[] = [];
  const specs = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)["'`](\.{1,2}\/[^"'`]*)["'`]/g;
  for (const match of text.matchAll(specs)) {
    const spec = match[1] ?? "";
    const target = normalize(join(dirname(file), spec));
    found.push({ spec, folder: target.split("/")[0] ?? "" });
  }
  return found;
}

/** The TypeScript files under `folder` (a path from the repository root), tracked or not. */
function sourcesUnder(folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((entry) => entry.endsWith(".ts"))
    .map((entry) => relative(root, join(dir, entry)));
}

describe("tests and benches stay apart (what both use lives in fakes/)", () => {
  const crossing = (from: string, to: string): string[] =>
    sourcesUnder(from).flatMap((file) =>
      importedFolders(file, readFileSync(join(root, file), "utf8"))
        .filter(({ folder }) => folder === to)
        .map(({ spec }) => `${file} imports ${spec}`),
    );

  it("no file under bench/ imports from test/", () => {
    expect(crossing("bench", "test")).toEqual([]);
  });

  it("no file under test/ imports from bench/", () => {
    expect(crossing("test", "bench")).toEqual([]);
  });

  it("no file under fakes/ imports from test/ or bench/", () => {
    expect([...crossing("fakes", "test"), ...crossing("fakes", "bench")]).toEqual([]);
  });

  it("finds every kind of import it looks for, and only relative ones", () => {
    const text = [
      `import { a } from "../../test/helpers/a.js";`,
      `export { b } from '../../test/b.js';`,
      `const c = await import("../../test/c.js");`,
      `import "../../test/d.js";`,
      `fork(fileURLToPath(new URL("../../test/e.ts", import.meta.url)));`,
      `import { f } from "../../fakes/f.js";`,
      `import { g } from "test";`,
      `import { h } from "./test/h.js";`,
    ].join("\n");
    expect(importedFolders("bench/s2s/x.ts", text).map((i) => i.folder)).toEqual(["test", "test", "test", "test", "test", "fakes", "bench"]);
  });
});

describe("the checks above", () => {
  // Built from pieces so that this file does not contain what it looks for.
  const path = (...segments: string[]): string => ["", ...segments].join("/");

  it("find an absolute machine path wherever it starts", () => {
    for (const line of [
      `see ${path("work", "shared", "spec", "x.md")}`,
      `\`${path("work", "x")}\``,
      `"${path("home", "alice", "repo", "a.ts")}"`,
      `(${path("Users", "bob", "src")})`,
      `cd ${path("root", ".cache")}`,
      `file://${path("work", "x")}`,
      `PATH=${path("home", "ci", "bin")}`,
      `${path("work", "main")} at the start of a line`,
    ]) {
      expect(MACHINE_PATH.test(line), line).toBe(true);
    }
  });

  it("leave URLs, relative paths and a bare root alone", () => {
    for (const line of [
      `https://example.com${path("work", "x")}`,
      `http://host:8080${path("home", "alice", "x")}`,
      `src${path("work", "x")}`,
      `../${path("work", "x").slice(1)}`,
      `"${path("root")}"`,
      `the tree's ${path("root")} node`,
      `${path("home")} alone`,
      `${path("Users")} alone`,
    ]) {
      expect(MACHINE_PATH.test(line), line).toBe(false);
    }
  });

  it("tell our vendors page from a foreign one", () => {
    const vendors = ["vendors", "md"].join(".");
    expect(foreignCitations("src/a.ts", `as docs/${vendors} (Deepgram) describes`)).toEqual([]);
    expect(foreignCitations("test/a.ts", `see ../docs/${vendors}`)).toEqual([]);
    expect(foreignCitations("docs/telephony.md", `[${vendors}](${vendors}#carriers)`)).toEqual([]);
    expect(foreignCitations("src/a.ts", `(${vendors} §8a)`)).toHaveLength(1);
    expect(foreignCitations("README.md", `architecture.md, ${vendors}`)).toHaveLength(1);
    expect(foreignCitations("docs/guide/a.md", `[page](${vendors})`)).toHaveLength(1);
    expect(foreignCitations("src/a.ts", `(${["behaviour", "md"].join(".")})`)).toHaveLength(1);
    expect(foreignCitations("docs/a.md", ["the Spec", "Pack"].join(" "))).toHaveLength(1);
  });
});
