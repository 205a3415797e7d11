// docs/config.md documents offline.json (the `scripted` model's script): its example must load,
// and its field table must list exactly the fields the script schema takes.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/manifest/index.js";
import { scriptedModel } from "../../../src/pipeline/providers/llm/scripted.js";
import { DEFAULT_FALLBACK } from "../../../src/pipeline/providers/llm/script.js";

const doc = readFileSync(new URL("../../../docs/config.md", import.meta.url), "utf8");
const section = doc.slice(doc.indexOf("### offline.json: the `scripted` model's script"), doc.indexOf("## 7. Tools"));

/** The fields the schema knows at one level, as its "unknown key" error lists them. */
function knownFields(script: unknown): string[] {
  try {
    scriptedModel(script);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const known = /\(known: ([^)]+)\)/.exec((error as ConfigError).issues[0]?.message ?? "")?.[1];
    if (known !== undefined) return known.split(", ");
  }
  throw new Error("expected an unknown-field error");
}

describe("docs/config.md documents offline.json as scripted.ts reads it", () => {
  it("has the section, with an example that compiles", () => {
    expect(section).not.toBe("");
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    expect(() => scriptedModel(JSON.parse(example ?? ""))).not.toThrow();
  });

  it("lists every field of the script and of a rule in its table, and no other, and names each call field", () => {
    const rows = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    const top = knownFields({ extra: 1 });
    const rule = knownFields({ rules: [{ when: "x", say: "y", extra: 1 }] });
    const call = knownFields({ rules: [{ when: "x", call: { tool: "t", extra: 1 } }] });
    expect(rows).toEqual([...top, ...rule.map((field) => `rules[i].${field}`)]);
    const callRow = section.split("\n").find((line) => line.startsWith("| `rules[i].call`")) ?? "";
    for (const field of call) expect(callRow, field).toContain(`\`${field}\``);
  });

  it("gives the default fallback word for word", () => {
    expect(section).toContain(`\`"${DEFAULT_FALLBACK}"\``);
  });
});
