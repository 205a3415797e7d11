import { describe, expect, it } from "vitest";
import { CalculationError, evaluate, MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH } from "../../../src/session/builtins/calculator.js";

/** The CalculationError `expression` throws. */
function failure(expression: string): CalculationError {
  try {
    evaluate(expression);
  } catch (error) {
    if (error instanceof CalculationError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to fail`);
}

describe("numbers", () => {
  it.each([
    ["42", 42],
    ["3.25", 3.25],
    [".5", 0.5],
    ["5.", 5],
    ["1e3", 1000],
    ["2.5E-2", 0.025],
    ["1e+2", 100],
    ["  7  ", 7],
  ])("%s = %d", (input, expected) => {
    expect(evaluate(input)).toBe(expected);
  });

  it("refuses thousands separators, saying how to write the number", () => {
    const error = failure("1,234 * 2");
    expect(error.message).toBe("thousands separators are not supported at 1; write 1234 instead of 1,234 (to separate arguments, put a space after the comma)");
    expect(error.position).toBe(1);
    expect(failure("12,345,678").message).toContain("write 12345678 instead of 12,345,678");
  });

  it("refuses an ambiguous argument list but accepts it with a space or fewer digits", () => {
    expect(failure("max(1,234)").message).toContain("thousands separators are not supported at 5");
    expect(evaluate("max(1, 234)")).toBe(234);
    expect(evaluate("max(1,23)")).toBe(23);
    expect(evaluate("max(1,2345)")).toBe(2345);
  });

  it("refuses a number with two decimal points", () => {
    expect(failure("1.2.3").message).toBe("unexpected '.' at 4");
  });

  it("refuses a literal too large to represent", () => {
    expect(failure("1e400").message).toBe("the number 1e400 is too large at 1");
  });

  it("never answers minus zero", () => {
    expect(Object.is(evaluate("-0"), 0)).toBe(true);
    expect(Object.is(evaluate("0 * -1"), 0)).toBe(true);
  });
});

describe("operators", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3],
    ["100 / 10 / 5", 2],
    ["2 * 3 + 4 * 5", 26],
    ["7 % 3", 1],
    ["7%3", 1],
    ["-7 % 3", -1],
    ["7 % (-2)", 1],
    ["10 - 7 % 4", 7],
    ["2 ^ 10", 1024],
    ["2 ** 10", 1024],
    ["2 ^ 3 ^ 2", 512],
    ["2 ** 3 ** 2", 512],
    ["(2 ^ 3) ^ 2", 64],
    ["2 * 3 ^ 2", 18],
    ["2 ^ -1", 0.5],
    ["4 ^ 0.5", 2],
    ["2 × 3 ÷ 4 − 1", 0.5],
  ])("%s = %d", (input, expected) => {
    expect(evaluate(input)).toBe(expected);
  });

  it("binds unary minus looser than power and tighter than products", () => {
    expect(evaluate("-2 ^ 2")).toBe(-4);
    expect(evaluate("(-2) ^ 2")).toBe(4);
    expect(evaluate("-3 * -3")).toBe(9);
    expect(evaluate("--5")).toBe(5);
    expect(evaluate("+-+5")).toBe(-5);
    expect(evaluate("2 - -3")).toBe(5);
    expect(evaluate("-(1 + 2)")).toBe(-3);
  });

  it("rounds nothing itself: 0.1 + 0.2 is the float sum", () => {
    expect(evaluate("0.1 + 0.2")).toBeCloseTo(0.3, 15);
  });
});

describe("percent", () => {
  it.each([
    ["15%", 0.15],
    ["15% of 80", 12],
    ["15 % of 80", 12],
    ["50% + 1", 1.5],
    ["200 * 15%", 30],
    ["(20 + 30)%", 0.5],
    ["-50%", -0.5],
    ["10% of 50% of 200", 10],
    ["15% of 80 + 1", 13],
    ["15% of 2 ^ 3", 1.2],
    ["max(10%, 5%)", 0.1],
    ["2 ^ 50%", Math.SQRT2],
  ])("%s = %d", (input, expected) => {
    expect(evaluate(input)).toBeCloseTo(expected, 12);
  });

  it("reads % before a number, a name or a group as modulo", () => {
    expect(evaluate("10 % 4")).toBe(2);
    expect(evaluate("10 % pi")).toBeCloseTo(10 % Math.PI, 12);
    expect(evaluate("10 % (3)")).toBe(1);
  });

  it("accepts 'of' only after a percent", () => {
    expect(failure("15 of 80").message).toBe("unexpected 'of' at 4");
    expect(failure("of 80").message).toMatch(/^unknown name 'of' at 1/);
  });
});

describe("functions and constants", () => {
  it.each([
    ["sqrt(16)", 4],
    ["abs(-3.5)", 3.5],
    ["round(2.5)", 3],
    ["round(-2.5)", -3],
    ["round(3.14159, 2)", 3.14],
    ["round(1.005, 2)", 1.01],
    ["floor(-1.5)", -2],
    ["ceil(1.2)", 2],
    ["min(3, 1, 2)", 1],
    ["max(3, 1, 2)", 3],
    ["max(4)", 4],
    ["log(1000)", 3],
    ["ln(e)", 1],
    ["exp(0)", 1],
    ["sin(0)", 0],
    ["cos(pi)", -1],
    ["tan(0)", 0],
    ["pi", Math.PI],
    ["e", Math.E],
    ["PI * 2", 2 * Math.PI],
    ["SQRT(9)", 3],
    ["sqrt(3 ^ 2 + 4 ^ 2)", 5],
    ["max(1, min(5, 3), 2) * 2", 6],
  ])("%s = %d", (input, expected) => {
    expect(evaluate(input)).toBeCloseTo(expected, 12);
  });

  it("checks the argument count", () => {
    expect(failure("sqrt(1, 2)").message).toBe("sqrt takes 1 argument but got 2 at 1");
    expect(failure("round(1, 2, 3)").message).toBe("round takes 1 to 2 arguments but got 3 at 1");
    expect(failure("min()").message).toBe("unexpected ')' at 5");
  });

  it("refuses results outside the real numbers", () => {
    expect(failure("sqrt(-1)").message).toBe("sqrt(-1) has no real-number result at 1");
    expect(failure("1 + log(0)").message).toBe("log(0) has no finite result at 5");
    expect(failure("ln(-1)").message).toBe("ln(-1) has no real-number result at 1");
    expect(failure("round(1, 0.5)").message).toBe("round(1, 0.5) has no real-number result at 1");
    expect(failure("(-8) ^ (1/3)").message).toBe("'^' has no real-number result at 6");
  });

  it("needs parentheses after a function name", () => {
    expect(failure("sqrt 4").message).toBe("expected '(' after sqrt but found '4' at 6");
  });
});

describe("errors", () => {
  it.each([
    ["(1 + 2))", "unexpected ')' at 8"],
    ["(1 + 2", "expected ')' but found end of expression at 7"],
    ["1 +", "unexpected end of expression at 4"],
    ["* 2", "unexpected '*' at 1"],
    ["1 + * 2", "unexpected '*' at 5"],
    ["()", "unexpected ')' at 2"],
    ["2(3)", "unexpected '(' at 2; use * to multiply"],
    ["2 pi", "unexpected 'pi' at 3; use * to multiply"],
    ["max(1 2)", "expected ',' or ')' but found '2' at 7"],
    ["3!", "unexpected character '!' at 2"],
    ["1 😀 2", "unexpected character '😀' at 3"],
  ])("%s → %s", (input, message) => {
    expect(failure(input).message).toBe(message);
  });

  it("reports the position as a number", () => {
    const error = failure("1 + (2 * 3))");
    expect(error).toBeInstanceOf(CalculationError);
    expect(error.name).toBe("CalculationError");
    expect(error.position).toBe(12);
  });

  it("refuses division and modulo by zero", () => {
    expect(failure("1 / 0").message).toBe("division by zero at 3");
    expect(failure("5 % (2 - 2)").message).toBe("modulo by zero at 3");
    expect(failure("0 ^ -1").message).toBe("division by zero at 3");
  });

  it("refuses results too large to use", () => {
    expect(failure("10 ^ 400").message).toBe("'^' gives a number too large to use at 4");
    expect(failure("1e308 * 10").message).toBe("'*' gives a number too large to use at 7");
    expect(failure("1e308 + 1e308").message).toBe("'+' gives a number too large to use at 7");
    expect(failure("exp(1000)").message).toBe("exp(1000) has no finite result at 1");
  });

  it("refuses empty input", () => {
    expect(failure("").message).toBe("the expression is empty");
    expect(failure("   ").message).toBe("the expression is empty");
    expect(failure("").position).toBeUndefined();
  });
});

describe("no code execution", () => {
  it.each([
    ["constructor", "unknown name 'constructor' at 1"],
    ["__proto__", "unknown name '__proto__' at 1"],
    ["toString()", "unknown name 'tostring' at 1"],
    ["x", "unknown name 'x' at 1"],
    ["process.exit()", "unexpected character '.' at 8"],
    ["a=1", "unexpected character '=' at 2"],
    ["1; 2", "unexpected character ';' at 2"],
    ["globalThis", "unknown name 'globalthis' at 1"],
    ["Function('return 1')()", "unexpected character ''' at 10"],
    ["require('fs')", "unexpected character ''' at 9"],
    ["require(1)", "unknown name 'require' at 1"],
    ["[1][0]", "unexpected character '[' at 1"],
    ["`1`", "unexpected character '`' at 1"],
    ["1 && 2", "unexpected character '&' at 3"],
    ["eval(1)", "unknown name 'eval' at 1"],
  ])("%s is refused", (input, message) => {
    expect(failure(input).message.slice(0, message.length)).toBe(message);
  });

  it("lists the names it knows", () => {
    expect(failure("foo(1)").message).toBe(
      "unknown name 'foo' at 1; known names: pi, e, sqrt, abs, round, floor, ceil, min, max, log, ln, exp, sin, cos, tan",
    );
  });

  it("refuses a value that is not a string", () => {
    expect(() => evaluate(42 as unknown as string)).toThrow(CalculationError);
  });
});

describe("limits", () => {
  it(`accepts ${MAX_EXPRESSION_LENGTH} characters and refuses one more`, () => {
    const ok = `1${" + 1".repeat((MAX_EXPRESSION_LENGTH - 1) / 4)}`.padEnd(MAX_EXPRESSION_LENGTH, " ");
    expect(ok).toHaveLength(MAX_EXPRESSION_LENGTH);
    expect(evaluate(ok)).toBe(125);
    expect(failure(`${ok} `).message).toBe(`the expression is too long (501 characters; at most ${MAX_EXPRESSION_LENGTH})`);
  });

  it(`accepts ${MAX_NESTING_DEPTH} nested parentheses and refuses one more`, () => {
    const nest = (n: number): string => `${"(".repeat(n)}1${")".repeat(n)}`;
    expect(evaluate(nest(MAX_NESTING_DEPTH))).toBe(1);
    const error = failure(nest(MAX_NESTING_DEPTH + 1));
    expect(error.message).toBe(`the expression is nested too deeply (at most ${MAX_NESTING_DEPTH} levels) at ${MAX_NESTING_DEPTH + 1}`);
  });

  it("counts function calls, signs and exponents as nesting", () => {
    expect(() => evaluate(`${"abs(".repeat(MAX_NESTING_DEPTH + 1)}1${")".repeat(MAX_NESTING_DEPTH + 1)}`)).toThrow(/nested too deeply/);
    expect(() => evaluate(`${"-".repeat(MAX_NESTING_DEPTH + 1)}1`)).toThrow(/nested too deeply/);
    expect(() => evaluate(`1${"^1".repeat(MAX_NESTING_DEPTH + 1)}`)).toThrow(/nested too deeply/);
    expect(evaluate(`1${"^1".repeat(MAX_NESTING_DEPTH)}`)).toBe(1);
  });
});
