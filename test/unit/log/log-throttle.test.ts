import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, LogThrottle } from "../../../src/log.js";

describe("LogThrottle", () => {
  it("writes one line per kind per interval and carries the count of the rest on the next one", () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }) });
    let now = 0;
    const throttle = new LogThrottle(() => now, 10_000);
    for (let i = 0; i < 1000; i++) throttle.warn(log, { i }, "client sent invalid json");
    throttle.warn(log, {}, "another kind");
    expect(lines.map((l) => l.msg)).toEqual(["client sent invalid json", "another kind"]);
    now = 10_000;
    throttle.warn(log, { i: 1000 }, "client sent invalid json");
    expect(lines.at(-1)).toMatchObject({ msg: "client sent invalid json", i: 1000, suppressed: 999 });
  });
});
