import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLOSE, ERROR_CODES } from "../../src/errors.js";
import { COMMAND_TYPES, DEFAULT_LIMITS, EVENT_TYPES } from "../../src/transport/protocol.js";

// docs/protocol.md is the client author's contract; these tests fail when the code grows a
// command, event, error code, close code or limit that the page does not document.

const doc = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");

/** The body of the section whose heading text starts with `title`, up to the next heading of the same or a higher level. */
function section(title: string): string {
  const lines = doc.split("\n");
  let inFence = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? "";
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence) continue;
    const heading = /^(#{1,6})\s+(.*?)\s*$/.exec(line);
    if (heading === null) continue;
    const depth = (heading[1] ?? "").length;
    if (start === -1) {
      if ((heading[2] ?? "").startsWith(title)) {
        start = i + 1;
        level = depth;
      }
    } else if (depth <= level) {
      return lines.slice(start, i).join("\n");
    }
  }
  if (start === -1) throw new Error(`docs/protocol.md has no section "${title}"`);
  return lines.slice(start).join("\n");
}

/** The first cell of every body row of the Markdown tables in `text` (header and separator rows skipped). */
function firstCells(text: string): string[] {
  const cells: string[] = [];
  let previousWasRow = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("|")) {
      previousWasRow = false;
      continue;
    }
    const isHeader = !previousWasRow;
    previousWasRow = true;
    if (isHeader || /^\|[\s:|-]+\|$/.test(line)) continue;
    cells.push((line.split("|")[1] ?? "").trim());
  }
  return cells;
}

/** `x` → x; anything else → undefined. */
function backticked(cell: string): string | undefined {
  return /^`([^`]+)`$/.exec(cell)?.[1];
}

describe("docs/protocol.md stays in sync with the code", () => {
  it("lists exactly ERROR_CODES in the Error codes table, one row each, in backticks", () => {
    const cells = firstCells(section("Error codes"));
    const codes = cells.map(backticked);
    expect(codes, "every first cell of the Error codes table is one code in backticks").not.toContain(undefined);
    expect(new Set(codes).size, "no code is listed twice").toBe(codes.length);
    expect([...codes].sort()).toEqual([...ERROR_CODES].sort());
  });

  it("documents every command type in the Commands section", () => {
    const commands = section("Commands (client → server)");
    const missing = COMMAND_TYPES.filter((type) => !commands.includes(`\`${type}\``));
    expect(missing, "command types missing from docs/protocol.md").toEqual([]);
  });

  it("documents every event type in the Events section", () => {
    const events = section("Events (server → client)");
    const missing = EVENT_TYPES.filter((type) => !events.includes(`\`${type}\``));
    expect(missing, "event types missing from docs/protocol.md").toEqual([]);
  });

  it("lists every CLOSE code in the Close codes table", () => {
    const listed = firstCells(section("Close codes")).map(backticked);
    const missing = Object.entries(CLOSE).filter(([, code]) => !listed.includes(String(code)));
    expect(missing, "close codes missing from docs/protocol.md").toEqual([]);
  });

  it("documents every limit in the Limits section", () => {
    const limits = section("Limits");
    const missing = Object.keys(DEFAULT_LIMITS).filter((name) => !limits.includes(`\`${name}\``));
    expect(missing, "limits missing from docs/protocol.md").toEqual([]);
  });

  it("parses tables the way the checks above rely on", () => {
    // Guards the helpers: a header row and its separator are not body rows.
    const cells = firstCells("| code | meaning |\n|---|---|\n| `a` | x |\n| `b` | y |\n\n| h |\n|---|\n| `c` |");
    expect(cells).toEqual(["`a`", "`b`", "`c`"]);
  });
});

describe("docs/security.md lists every entry point", () => {
  // It imports the whole gateway, cold: on a loaded machine that alone can pass vitest's default 5 s.
  it("names each entry point a gateway with every carrier and every secret reports", { timeout: 60_000 }, async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const { silentLogger } = await import("../../src/log.js");
    const { agent } = await import("../../src/manifest/index.js");
    const { createGateway } = await import("../../src/server/index.js");
    const security = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");
    const entries = security.slice(security.indexOf("## Entry points"), security.indexOf("Residual risks"));
    const telnyx = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
    const signed = { TWILIO_AUTH_TOKEN: "t", TELNYX_PUBLIC_KEY: telnyx, PLIVO_AUTH_TOKEN: "p", VONAGE_SIGNATURE_SECRET: "v", EXOTEL_API_KEY: "e", EXOTEL_API_TOKEN: "f" };
    const def = agent({ name: "doc", s2s: { kind: "openai-realtime", options: {} }, telephony: true });
    for (const env of [{ OPENAI_API_KEY: "k", ...signed }, { OPENAI_API_KEY: "k" }]) {
      const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, env, apiKey: "key", metricsToken: "m" });
      for (const point of gateway.entryPoints) for (const entry of point.entry.split(", ")) expect(entries, entry).toContain(entry);
      await gateway.close();
    }
  });
});

describe("docs/config.md tells what the providers do", () => {
  const config = readFileSync(new URL("../../docs/config.md", import.meta.url), "utf8");

  it("does not call a runnable provider unrunnable", () => {
    expect(config).not.toMatch(/not runnable yet|arrives with the s2s issue/);
  });

  it("documents every option the speech-to-speech adapters read", () => {
    const line = (kind: string): string => config.split("\n").find((l) => l.trimStart().startsWith(`- \`${kind}\`:`)) ?? "";
    for (const option of ["model", "voice", "transcription", "turnDetection", "url", "apiKeyEnv"]) expect(line("openai-realtime"), option).toContain(`${option}?`);
    for (const option of ["model", "voice", "language", "url", "apiKeyEnv"]) expect(line("gemini-live"), option).toContain(`${option}?`);
  });
});
