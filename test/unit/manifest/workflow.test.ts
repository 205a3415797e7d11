// The workflow author's API: declaration-time validation (every refusal names the field and
// the fix), retry policies and their delays, durations, and the types the body sees.
import { Type } from "@sinclair/typebox";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  parseDuration,
  retryDelayMs,
  step,
  ToolDefinitionError,
  workflow,
  type StepContext,
  type Duration,
  type WaitResult,
} from "../../../src/manifest/index.js";
import { resolveRetry } from "../../../src/manifest/workflow.js";

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolDefinitionError);
    return (err as Error).message;
  }
  throw new Error("expected a ToolDefinitionError");
};

describe("workflow({ steps }).body(fn)", () => {
  it("keeps the seed's form: description, input, body", () => {
    const def = workflow({ description: " Digest ", input: Type.Object({ day: Type.String() }) }).body(({ day }) => day);
    expect(def.description).toBe("Digest");
    expect(def.steps).toEqual({});
    expect(def.input.validate({ day: "mon" })).toEqual({ ok: true, value: { day: "mon" } });
  });

  it("resolves steps: a function gets the default policy, step() its own", () => {
    const def = workflow({
      description: "Two steps",
      steps: { plain: (n: number) => n, tuned: step({ retry: { attempts: 6, backoff: "exponential", delay: "2s", maxDelay: "10s" } }, (n: number) => n) },
    }).body(async (_input, ctx) => ctx.steps.plain(1));
    expect(def.steps.plain?.retry).toEqual({ attempts: 4, backoff: "fixed", delayMs: 1_000, maxDelayMs: 3_600_000 });
    expect(def.steps.tuned?.retry).toEqual({ attempts: 6, backoff: "exponential", delayMs: 2_000, maxDelayMs: 10_000 });
  });

  it("refuses bad step names, non-function steps and unknown fields, naming each", () => {
    expect(refusal(() => workflow({ description: "x", steps: { "no spaces": () => 1 } }))).toMatch(/steps\.no spaces: a step name is 1–64 letters/);
    expect(refusal(() => workflow({ description: "x", steps: { lookup: "orders.get" as never } }))).toMatch(/steps\.lookup: must be a function .* \(got a string\)/);
    expect(refusal(() => workflow({ description: "x", steps: [] as never }))).toMatch(/`steps` must be an object .* \(got an array\)/);
    expect(refusal(() => workflow({ description: "x", retry: 3 } as never))).toMatch(/retry is not a field; the fields are description, input, steps/);
    expect(refusal(() => workflow({ description: "" }))).toMatch(/`description` must be a non-empty string/);
    expect(refusal(() => workflow({ description: "x" }).body("run" as never))).toMatch(/`run` must be a function/);
  });

  it("refuses a retry policy that cannot work, naming the field and its bounds", () => {
    const fn = () => 1;
    expect(refusal(() => step({ retry: { attempts: 0 } }, fn))).toMatch(/retry\.attempts: must be a whole number of tries from 1 .* to 20 \(got 0\)/);
    expect(refusal(() => step({ retry: { attempts: 2.5 } }, fn))).toMatch(/retry\.attempts/);
    expect(refusal(() => step({ retry: { attempts: 3, backoff: "linear" as never } }, fn))).toMatch(/retry\.backoff: must be "fixed" or "exponential" \(got "linear"\)/);
    expect(refusal(() => step({ retry: { attempts: 3, delay: "500ms" } }, fn))).toMatch(/retry\.delay: must be at least 1s/);
    expect(refusal(() => step({ retry: { attempts: 3, delay: "soon" as never } }, fn))).toMatch(/retry\.delay: "soon" is not a duration/);
    expect(refusal(() => step({ retry: { attempts: 3, delay: "2d" } }, fn))).toMatch(/retry\.delay: "2d" is longer than the most it may be/);
    expect(refusal(() => step({ retry: { attempts: 3, delay: "10s", maxDelay: "5s" } }, fn))).toMatch(/retry\.maxDelay: must be at least delay/);
    expect(refusal(() => step({ retry: { attempts: 3, tries: 2 } as never }, fn))).toMatch(/tries is not a field; the fields are attempts, backoff, delay, maxDelay/);
    expect(refusal(() => step({ retries: 3 } as never, fn))).toMatch(/retries is not a field; the fields are retry/);
    expect(refusal(() => step({}, undefined as never))).toMatch(/fn must be a function/);
  });
});

describe("retry delays", () => {
  it("fixed waits the same; exponential doubles from delay up to maxDelay", () => {
    const fixed = resolveRetry({ attempts: 5, delay: "3s" }, "retry");
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(fixed, attempt))).toEqual([3_000, 3_000, 3_000, 3_000]);
    const exponential = resolveRetry({ attempts: 6, backoff: "exponential", delay: "1s", maxDelay: "5s" }, "retry");
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(exponential, attempt))).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
  });
});

describe("durations", () => {
  it("reads milliseconds and number-unit strings", () => {
    expect(parseDuration(1500, "d")).toBe(1500);
    expect(parseDuration("250ms", "d")).toBe(250);
    expect(parseDuration("30s", "d")).toBe(30_000);
    expect(parseDuration("5m", "d")).toBe(300_000);
    expect(parseDuration("2h", "d")).toBe(7_200_000);
    expect(parseDuration("3d", "d")).toBe(259_200_000);
    expect(parseDuration("1.5s", "d")).toBe(1_500);
  });

  it("refuses anything else, naming the field", () => {
    for (const bad of [-1, Number.NaN, Infinity, "5 minutes", "", "1w", null, {}]) {
      expect(refusal(() => parseDuration(bad, "ctx.sleep(duration)"))).toMatch(/^ctx\.sleep\(duration\): .* is not a duration/);
    }
  });
});

describe("types the body sees", () => {
  it("types step callers from the step functions, without their trailing StepContext", () => {
    workflow({
      description: "Types",
      input: Type.Object({ orderId: Type.String() }),
      steps: {
        lookup: (orderId: string) => ({ orderId, shipped: true }),
        callBack: step({ retry: { attempts: 2 } }, (to: string, why: string, ctx: StepContext) => Promise.resolve(`${to} ${why} ${ctx.attempt}`)),
      },
    }).body((input, ctx) => {
      expectTypeOf(input).toEqualTypeOf<{ orderId: string }>();
      expectTypeOf(ctx.steps.lookup).toEqualTypeOf<(orderId: string) => Promise<{ orderId: string; shipped: boolean }>>();
      expectTypeOf(ctx.steps.callBack).toEqualTypeOf<(to: string, why: string) => Promise<string>>();
      expectTypeOf(ctx.waitFor<{ carrier: string }>).returns.resolves.toEqualTypeOf<WaitResult<{ carrier: string }>>();
      expectTypeOf(ctx.sleep).parameter(0).toEqualTypeOf<Duration>();
      return ctx.runId;
    });
  });
});
