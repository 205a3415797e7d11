// Logs for people on a terminal (pino-pretty: time, level, message, fields) and JSON lines
// otherwise; LOG_FORMAT overrides; secrets are redacted in both.
import { execFile } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createLogger, logFormat } from "../../../src/log.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../..", import.meta.url));

function capture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  return { lines, destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) };
}

/** What a fresh process logs on stdout (a pipe: not a terminal) with `env`. */
async function logged(env: Record<string, string>): Promise<string> {
  const source = 'import { createLogger } from "./src/log.ts"; createLogger().info({ port: 3000, apiKey: "sk-SECRET" }, "listening");';
  const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], { cwd: root, env: { ...process.env, LOG_LEVEL: "info", ...env } });
  return stdout;
}

describe("logFormat", () => {
  it("is pretty on a terminal and JSON otherwise; LOG_FORMAT=json|pretty overrides either way", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ LOG_FORMAT: " Pretty " }, false)).toBe("pretty");
    expect(logFormat({ LOG_FORMAT: "yaml" }, true)).toBe("pretty");
  });
});

describe("createLogger", () => {
  it("writes pretty lines (time, level, message, fields) with secrets redacted", () => {
    const { lines, destination } = capture();
    const log = createLogger({ format: "pretty", destination });
    log.info({ port: 3000, apiKey: "sk-SECRET-1", headers: { authorization: "Bearer SECRET-2" }, token: "SECRET-3" }, "listening");
    const text = lines.join("");
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: listening\n/);
    expect(text).toMatch(/port: 3000/);
    expect(text).toMatch(/apiKey: "\[redacted\]"/);
    expect(text).not.toMatch(/SECRET/);
    // Plain text into a stream: no colour codes.
    expect(text).not.toContain("\u001b[");
  });

  it("writes JSON into a destination unless told otherwise", () => {
    const { lines, destination } = capture();
    createLogger({ destination }).warn({ secret: "SECRET" }, "careful");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ level: 40, msg: "careful", secret: "[redacted]" });
  });

  it("on stdout: JSON when it is not a terminal, pretty with LOG_FORMAT=pretty, and a warning for a format it does not know", async () => {
    expect(JSON.parse(await logged({}))).toMatchObject({ msg: "listening", port: 3000, apiKey: "[redacted]" });
    const pretty = await logged({ LOG_FORMAT: "pretty" });
    expect(pretty).toMatch(/INFO: listening\n {4}port: 3000\n {4}apiKey: "\[redacted\]"/);
    expect(pretty).not.toContain("\u001b[");
    const [warning, line] = (await logged({ LOG_FORMAT: "xml" })).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warning).toMatchObject({ level: 40, LOG_FORMAT: "xml", format: "json" });
    expect(line).toMatchObject({ msg: "listening" });
  }, 30_000);
});
