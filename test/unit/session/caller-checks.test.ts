import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import type { Guardrail } from "../../../src/manifest/index.js";
import { CallerChecks } from "../../../src/session/caller-checks.js";
import { Guardrails } from "../../../src/turn/guardrails.js";

function checks(guardrail: Guardrail) {
  const clock = virtualClock(0);
  const guardrails = new Guardrails({ clock, log: silentLogger, sessionId: "s", session: () => undefined, input: [guardrail] });
  const passed: string[] = [];
  const refused: string[] = [];
  const callerChecks = new CallerChecks({
    guardrails,
    passed: (words) => passed.push(`${words.itemId ?? "-"}:${words.text}`),
    refused: (words, verdict) => refused.push(`${words.itemId ?? "-"}:${words.text}:${verdict.replacement}`),
  });
  return { callerChecks, passed, refused, clock };
}

describe("the caller's transcripts through the input guardrails (s2s)", () => {
  it("checks one transcript at a time, the next on the newest text, then the final if it differs; a final that passed is committed once", async () => {
    const seen: string[] = [];
    const { callerChecks, passed, refused, clock } = checks(async (text) => {
      seen.push(text);
      await clock.sleep(100);
      return undefined;
    });
    callerChecks.heard("where", false, "item_1");
    callerChecks.heard("where is", false, "item_1");
    callerChecks.heard("where is my", false, "item_1");
    await clock.advance(100);
    callerChecks.heard("where is my order", true, "item_1");
    await clock.advance(300);
    expect(seen).toEqual(["where", "where is my", "where is my order"]);
    expect(passed).toEqual(["item_1:where is my order"]);
    expect(refused).toEqual([]);
  });

  it("refuses an utterance on the first interim that trips, once, and never commits its final; utterances are kept apart by item", async () => {
    const { callerChecks, passed, refused, clock } = checks((text) => (/\d{4} \d{4}/.test(text) ? { replacement: "No card numbers." } : undefined));
    callerChecks.heard("my card is 4111 1111", false, "item_1");
    callerChecks.heard("hello", false, "item_2");
    callerChecks.heard("my card is 4111 1111 1111", false, "item_1");
    callerChecks.heard("my card is 4111 1111 1111 1111.", true, "item_1");
    callerChecks.heard("hello there", true, "item_2");
    await clock.advance(10);
    expect(refused).toEqual(["item_1:my card is 4111 1111:No card numbers."]);
    expect(passed).toEqual(["item_2:hello there"]);
  });

  it("a blank final checks and commits nothing", async () => {
    const seen: string[] = [];
    const { callerChecks, passed, clock } = checks((text) => void seen.push(text));
    callerChecks.heard("uh", false, undefined);
    callerChecks.heard("", true, undefined);
    await clock.advance(10);
    expect(seen).toEqual(["uh"]);
    expect(passed).toEqual([]);
  });
});
