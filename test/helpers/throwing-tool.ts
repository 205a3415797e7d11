/**
 * A tool file that throws at its top level, on line 9 column 32 of its TypeScript (past erased
 * types, so a compiled line number would differ): "Cannot read properties of undefined (reading
 * 'description')". `from` is the module specifier `tool` is imported from, quoted.
 */
export function throwingToolSource(from: string): string {
  return [
    `import { tool } from ${from};`,
    "",
    "interface Entry {",
    "  description: string;",
    "}",
    "const entries: Record<string, Entry> = {};",
    "",
    "export default tool({",
    "  description: entries.missing.description,",
    '  execute: () => "x",',
    "});",
    "",
  ].join("\n");
}
