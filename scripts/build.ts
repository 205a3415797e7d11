/**
 * `npm run build`: `src/` compiled to `dist/` (tsconfig.build.json), in two emits of one checked
 * program:
 * - the declarations (`.d.ts`, their maps), with every comment: what a user's editor shows;
 * - the JavaScript (and its source maps) without comments, and in ASCII (`ascii-only.ts`: every
 *   character past `~` as its `\u` escape, which means the same where `src/` writes one).
 * V8 keeps each module's source for the life of the process (lazy compilation,
 * `Function.prototype.toString`), at two bytes a character when any character is past Latin-1:
 * the comments, and one `—` per file, held about 1 MiB of an idle gateway's heap (issue 23,
 * docs/benchmarks.md "bench:idle"). A source-mapped column on a line with an escaped character is
 * off by the escapes' extra length (five a character); lines stay exact.
 * Exit 1 with the compiler's diagnostics when the program has errors; nothing is written then.
 */
import { rmSync } from "node:fs";
import ts from "typescript";
import { asciiOnly } from "./ascii-only.js";

const CONFIG = "tsconfig.build.json";

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => ts.sys.getCurrentDirectory(), getNewLine: () => ts.sys.newLine };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.exit(1);
}

const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => fail([diagnostic]) });
if (parsed === undefined) throw new Error(`${CONFIG} could not be read`);
if (parsed.errors.length > 0) fail(parsed.errors);
const declarations = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, emitDeclarationOnly: true } });
const errors = ts.getPreEmitDiagnostics(declarations);
if (errors.length > 0) fail(errors);
rmSync(parsed.options.outDir ?? "dist", { recursive: true, force: true });
const emitted = [declarations.emit()];
// The same files again, re-using the checked program's trees: only the emit options differ.
const code = ts.createProgram({
  rootNames: parsed.fileNames,
  options: { ...parsed.options, declaration: false, declarationMap: false, removeComments: true },
  oldProgram: declarations,
});
emitted.push(code.emit(undefined, (file, text, bom) => ts.sys.writeFile(file, file.endsWith(".js") ? asciiOnly(text) : text, bom)));
const emitErrors = emitted.flatMap((result) => result.diagnostics);
if (emitErrors.length > 0) fail(emitErrors);
