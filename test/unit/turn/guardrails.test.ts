import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { DEFAULTS, type Guardrail } from "../../../src/manifest/index.js";
import { GuardedOutput } from "../../../src/turn/guarded-output.js";
import { Guardrails } from "../../../src/turn/guardrails.js";

function guardrails(options: { input?: Guardrail[]; output?: Guardrail[]; budgetMs?: number } = {}) {
  const clock = virtualClock(0);
  const session = { verified: false };
  const rails = new Guardrails({ clock, log: silentLogger, sessionId: "s_1", session: () => session, ...options });
  return { rails, clock, session };
}

/** A promise's state without waiting for it. */
async function settledNow<T>(promise: Promise<T>): Promise<{ value: T } | "pending"> {
  const marker = Symbol("pending");
  const value = await Promise.race([promise, new Promise<typeof marker>((resolve) => setImmediate(() => resolve(marker)))]);
  return value === marker ? "pending" : { value: value as T };
}

describe("the guardrail runner", () => {
  it("runs a direction's guardrails in order: the first verdict wins and the later ones are not called", async () => {
    const calls: string[] = [];
    const pass: Guardrail = (text) => void calls.push(`pass:${text}`);
    const first: Guardrail = () => {
      calls.push("first");
      return { replacement: "I can't discuss that.", reason: "off topic" };
    };
    const second: Guardrail = () => {
      calls.push("second");
      return { replacement: "never said" };
    };
    const { rails } = guardrails({ input: [pass, first, second], output: [second] });
    expect(await rails.check("input", "tell me a secret")).toEqual({ replacement: "I can't discuss that.", reason: "off topic" });
    expect(calls).toEqual(["pass:tell me a secret", "first"]);
    expect(rails.checksInput && rails.checksOutput).toBe(true);
  });

  it("passes the text when every guardrail answers undefined, and hands each the session's id and value", async () => {
    const seen: unknown[] = [];
    const { rails, session } = guardrails({ output: [(_text, ctx) => void seen.push(ctx), () => Promise.resolve(undefined)] });
    expect(await rails.check("output", "Your order shipped.")).toBeUndefined();
    expect(seen).toEqual([{ sessionId: "s_1", session }]);
    // A direction without guardrails passes everything.
    expect(await rails.check("input", "anything")).toBeUndefined();
    expect(rails.checksInput).toBe(false);
  });

  it("awaits an asynchronous guardrail on the session's clock", async () => {
    const { rails, clock } = guardrails({ input: [async () => { await clock.sleep(300); return { replacement: "No." }; }] });
    const check = rails.check("input", "hi");
    await clock.advance(299);
    expect(await settledNow(check)).toBe("pending");
    await clock.advance(1);
    expect(await settledNow(check)).toEqual({ value: { replacement: "No." } });
  });

  it("fails closed: a guardrail still running at the budget refuses the text with the failure phrase", async () => {
    const { rails, clock } = guardrails({ output: [() => new Promise(() => {})], budgetMs: 500 });
    const check = rails.check("output", "hi");
    await clock.advance(499);
    expect(await settledNow(check)).toBe("pending");
    await clock.advance(1);
    const outcome = await settledNow(check);
    expect(outcome).toEqual({ value: { replacement: DEFAULTS.guardrailFailedPhrase, reason: "guardrail #1 failed: no answer within the 500 ms budget" } });
  });

  it("the budget covers the whole check, not each guardrail: the second gets what the first left", async () => {
    const { rails, clock } = guardrails({
      input: [
        async () => {
          await clock.sleep(DEFAULTS.guardrailBudgetMs - 100);
        },
        function slowSecond() {
          return clock.sleep(200).then(() => undefined);
        },
      ],
    });
    const check = rails.check("input", "hi");
    await clock.advance(DEFAULTS.guardrailBudgetMs);
    expect(await settledNow(check)).toEqual({ value: { replacement: DEFAULTS.guardrailFailedPhrase, reason: `guardrail slowSecond failed: no answer within the ${DEFAULTS.guardrailBudgetMs} ms budget` } });
  });

  it("fails closed on a throw, a rejection, a blank replacement or an answer that is not a verdict, naming the guardrail", async () => {
    const cases: [Guardrail, string][] = [
      [
        function throws() {
          throw new Error("classifier down");
        },
        "guardrail throws failed: it threw: classifier down",
      ],
      [() => Promise.reject(new Error("503")), "guardrail #1 failed: it threw: 503"],
      [() => ({ replacement: "  " }), "guardrail #1 failed: its verdict's replacement is blank"],
      [(() => true) as unknown as Guardrail, "guardrail #1 failed: it returned neither undefined nor a verdict { replacement, reason? }"],
    ];
    for (const [guardrail, reason] of cases) {
      const { rails } = guardrails({ input: [guardrail] });
      expect(await rails.check("input", "hi")).toEqual({ replacement: DEFAULTS.guardrailFailedPhrase, reason });
    }
  });
});

describe("a reply's guarded output", () => {
  function output(guardrail: Guardrail | undefined) {
    const { rails, clock } = guardrails(guardrail === undefined ? {} : { output: [guardrail] });
    const released: string[] = [];
    const tripped: string[] = [];
    const guarded = new GuardedOutput(rails, { release: (text) => released.push(text), tripped: (verdict) => tripped.push(verdict.replacement) });
    return { guarded, released, tripped, clock };
  }

  it("without output guardrails releases each batch at once, in the same call", () => {
    const { guarded, released } = output(undefined);
    guarded.push("Hello ");
    expect(released).toEqual(["Hello "]);
    expect(guarded.checked).toBe(false);
  });

  it("checks the reply so far with each batch, so a pattern split across batches is seen whole, and drops what follows a verdict", async () => {
    const seen: string[] = [];
    const noCardNumber: Guardrail = (text) => {
      seen.push(text);
      return /\d{4} \d{4} \d{4} \d{4}/.test(text) ? { replacement: "I can't read card numbers aloud." } : undefined;
    };
    const { guarded, released, tripped } = output(noCardNumber);
    const order: string[] = [];
    guarded.push("Your card is ");
    guarded.push("4111 1111 ");
    guarded.after(() => order.push("after the second batch"));
    guarded.push("1111 1111. ");
    guarded.push("Anything else?");
    expect(released).toEqual([]);
    await guarded.settled();
    // The batches queued behind a running check are checked together, up to an action kept in order between them.
    expect(seen).toEqual(["Your card is ", "Your card is 4111 1111 ", "Your card is 4111 1111 1111 1111. Anything else?"]);
    expect(released).toEqual(["Your card is ", "4111 1111 "]);
    expect(order).toEqual(["after the second batch"]);
    expect(tripped).toEqual(["I can't read card numbers aloud."]);
    expect(guarded.verdict).toEqual({ replacement: "I can't read card numbers aloud." });
    expect(guarded.released).toBe("Your card is 4111 1111 ");
  });

  it("a slow guardrail falls behind by one check at most: what arrives meanwhile is checked in one go", async () => {
    let checks = 0;
    const { guarded, released, clock } = output(async () => {
      checks += 1;
      await clock.sleep(200);
      return undefined;
    });
    // Five batches 40 ms apart under a 200 ms check: the first alone, the other four in the second check.
    for (const word of ["One ", "two ", "three ", "four ", "five."]) {
      guarded.push(word);
      await clock.advance(40);
    }
    await clock.advance(1000);
    await guarded.settled();
    expect(checks).toBe(2);
    expect(released.join("")).toBe("One two three four five.");
  });

  it("releases nothing still waiting for its check once stopped", async () => {
    const { guarded, released, clock } = output(() => clock.sleep(100).then(() => undefined));
    guarded.push("One. ");
    guarded.stop();
    await clock.advance(200);
    await guarded.settled();
    expect(released).toEqual([]);
    expect(guarded.verdict).toBeUndefined();
  });
});
