import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createLogger, REDACT_PATHS, REDACTED } from "../../../src/log.js";
import { seededRandom } from "../../../src/manifest/index.js";
import { pathSteps, redactingLogger } from "../../../src/log-redaction.js";

/** A logger writing into `lines`: pino's own redaction of REDACT_PATHS, or the gateway's. */
function logger(kind: "pino" | "ours", lines: string[]): pino.Logger {
  const destination = { write: (line: string) => void lines.push(line) };
  if (kind === "pino") return pino({ redact: { paths: [...REDACT_PATHS], censor: REDACTED }, base: null, timestamp: false }, destination);
  return redactingLogger((formatters) => pino({ formatters, base: null, timestamp: false }, destination), REDACT_PATHS, REDACTED);
}

/** Names a random log object is made of: the paths' own, and others. */
const NAMES = ["apiKey", "key", "token", "authorization", "secret", "headers", "req", "query", "sec-websocket-protocol", "url", "id", "err", "session", "a", "b"];

/** A seeded random JSON-like value (the same every run), up to `depth` deep. */
function generator(seed: number): (depth: number) => unknown {
  const next = seededRandom(seed);
  const value = (depth: number): unknown => {
    const kind = Math.floor(next() * (depth > 0 ? 9 : 6));
    if (kind === 0) return `v${Math.floor(next() * 100)}`;
    if (kind === 1) return Math.floor(next() * 1000);
    if (kind === 2) return next() < 0.5;
    if (kind === 3) return null;
    if (kind === 4) return undefined;
    if (kind === 5) return "sk-secret-value";
    if (kind === 6) return Array.from({ length: Math.floor(next() * 3) }, () => value(depth - 1));
    const object: Record<string, unknown> = {};
    const keys = 1 + Math.floor(next() * 4);
    for (let i = 0; i < keys; i++) object[NAMES[Math.floor(next() * NAMES.length)] as string] = value(depth - 1);
    return object;
  };
  return value;
}

describe("log redaction", () => {
  it("censors what pino's redaction censors, over 3,000 random log objects and child bindings", () => {
    const value = generator(0x1234567);
    const theirs: string[] = [];
    const ours: string[] = [];
    const loggers = [logger("pino", theirs), logger("ours", ours)];
    for (let i = 0; i < 3000; i++) {
      const object = value(4);
      const fields = typeof object === "object" && object !== null && !Array.isArray(object) ? object : { value: object };
      const bindings = value(3);
      for (const log of loggers) {
        const target = typeof bindings === "object" && bindings !== null && !Array.isArray(bindings) ? log.child(bindings) : log;
        target.info(fields, "line");
      }
    }
    expect(ours.length).toBe(3000);
    expect(ours).toEqual(theirs);
    expect(ours.filter((line) => line.includes(REDACTED)).length).toBeGreaterThan(500);
  });

  it("leaves the logged object as it was, and a line with no secret the object itself", () => {
    let log = (object: Record<string, unknown>): Record<string, unknown> => object;
    redactingLogger((formatters) => {
      log = (object) => formatters.log(object);
      return pino({ level: "silent" });
    }, REDACT_PATHS, REDACTED);
    const object = { port: 3000, req: { headers: { authorization: "Bearer x", host: "h" }, query: { token: "t" } }, nested: { apiKey: "k" } };
    const before = structuredClone(object);
    const out = log(object);
    expect(object).toEqual(before);
    expect(out).toEqual({ port: 3000, req: { headers: { authorization: REDACTED, host: "h" }, query: { token: REDACTED } }, nested: { apiKey: REDACTED } });
    const clean = { port: 3000, headers: { host: "h" }, tools: ["a", "b"] };
    expect(log(clean)).toBe(clean);
  });

  it("writes an Error's secret as pino writes the error, censored", () => {
    const error = Object.assign(new Error("refused"), { token: "t-123", code: "E1" });
    for (const kind of ["pino", "ours"] as const) {
      const lines: string[] = [];
      logger(kind, lines).warn({ err: error }, "failed");
      const line = JSON.parse(lines[0] ?? "") as { err: Record<string, unknown> };
      expect(line.err).toMatchObject({ type: "Error", message: "refused", token: REDACTED, code: "E1" });
    }
  });

  it("the gateway's logger censors the subprotocol a Realtime browser client carries its key in", () => {
    const lines: string[] = [];
    const log = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    log.info({ headers: { "sec-websocket-protocol": "realtime, openai-insecure-api-key.sk-1" } }, "upgrade");
    log.child({ apiKey: "sk-2" }).info({ req: { headers: { "sec-websocket-protocol": "x" } } }, "child");
    expect(lines.join("")).not.toMatch(/sk-1|sk-2|"x"/);
  });

  it("refuses a path it cannot read, with where", () => {
    expect(pathSteps('*.headers["sec-websocket-protocol"]')).toEqual(["*", "headers", "sec-websocket-protocol"]);
    expect(() => pathSteps("a..b")).toThrow(/expected a name, \* or \["name"\] at 2/);
    expect(() => pathSteps('a["b"]c')).toThrow(/expected \. or \[ at 6/);
    expect(() => pathSteps("")).toThrow(/empty/);
  });
});
