import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { Guardrails } from "../../../src/turn/guardrails.js";
import { InputChecks } from "../../../src/turn/input-checks.js";

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

function checks(live = () => true) {
  const clock = virtualClock();
  const guardrails = new Guardrails({
    clock,
    log: silentLogger,
    sessionId: "s",
    session: () => undefined,
    input: [(text) => (/card/.test(text) ? { replacement: "I can't take card numbers here." } : undefined)],
  });
  return new InputChecks({ guardrails, log: silentLogger, live });
}

describe("InputChecks", () => {
  it("hands verdicts on in the order the turns came, and counts those pending", async () => {
    const input = checks();
    const seen: string[] = [];
    input.check("my card is 4111", (verdict) => seen.push(`1 ${verdict?.replacement ?? "passed"}`));
    input.check("thanks", (verdict) => seen.push(`2 ${verdict?.replacement ?? "passed"}`));
    expect(input.pending).toBe(2);
    await flush();
    expect(seen).toEqual(["1 I can't take card numbers here.", "2 passed"]);
    expect(input.pending).toBe(0);
  });

  it("hands nothing on for turns dropped (a cancel, a reset) or once the mode has closed", async () => {
    let live = true;
    const input = checks(() => live);
    const seen: string[] = [];
    input.check("hello", () => seen.push("dropped"));
    input.drop();
    input.check("again", () => seen.push("kept"));
    await flush();
    live = false;
    input.check("late", () => seen.push("after close"));
    await flush();
    expect(seen).toEqual(["kept"]);
  });
});
