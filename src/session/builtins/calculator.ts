/**
 * A safe arithmetic evaluator: a tokenizer and a recursive-descent parser that evaluates as it
 * parses. Nothing in the input is ever executed — it can only name the operators, functions and
 * constants listed here.
 *
 * Grammar (lowest precedence first):
 *
 *   expr    := term (("+" | "-") term)*
 *   term    := unary (("*" | "/" | "%") unary)*          left-associative; "%" here is modulo
 *   unary   := ("+" | "-") unary | power                  so -2^2 = -4
 *   power   := postfix (("^" | "**") unary)?              right-associative: 2^3^2 = 2^9
 *   postfix := primary ("%" ("of" unary)?)?               percent: 15% = 0.15, 15% of 80 = 12
 *   primary := number | constant | function "(" expr ("," expr)* ")" | "(" expr ")"
 *
 * A "%" directly followed by a number, a name or "(" is modulo (`7 % 3`); any other "%" is a
 * percent (`15%`, `50% + 1`, `15% of 80`). Trigonometric functions take radians; `log` is base
 * 10, `ln` is natural. Positions in messages are 1-based character positions.
 */

/** At most this many characters of input. */
export const MAX_EXPRESSION_LENGTH = 500;
/** At most this many nested groups, calls, signs and exponents. */
export const MAX_NESTING_DEPTH = 50;

/** Bad input or an undefined result; the message is written to be read back to a person. */
export class CalculationError extends Error {
  override readonly name = "CalculationError";
  /** 1-based character position of the problem, when it has one. */
  readonly position: number | undefined;

  /** Reads `<message> at <position>; <hint>`, each part only when given. */
  constructor(message: string, position?: number, hint?: string) {
    const at = position === undefined ? "" : ` at ${position}`;
    super(`${message}${at}${hint === undefined ? "" : `; ${hint}`}`);
    this.position = position;
  }
}

type TokenKind = "number" | "name" | "op" | "(" | ")" | "," | "end";

interface Token {
  readonly kind: TokenKind;
  /** The source text; for "op" the canonical operator (`**` stays `**`, `×` becomes `*`). */
  readonly text: string;
  readonly value: number;
  /** 1-based. */
  readonly position: number;
}

const OPERATOR_ALIASES: Readonly<Record<string, string>> = { "×": "*", "÷": "/", "−": "-" };
const SINGLE_OPERATORS = new Set(["+", "-", "*", "/", "%", "^"]);
const NUMBER = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
/** `1,234` or `12,345,678`: a comma followed by exactly three digits reads as a thousands separator. */
const THOUSANDS = /^,\d{3}(?!\d)/;

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const rest = input.slice(i);
    const char = String.fromCodePoint(rest.codePointAt(0) ?? 0);
    const position = i + 1;
    if (/\s/.test(char)) {
      i += 1;
      continue;
    }
    const number = NUMBER.exec(rest)?.[0];
    if (number !== undefined) {
      const value = Number(number);
      if (!Number.isFinite(value)) throw new CalculationError(`the number ${number} is too large`, position);
      if (THOUSANDS.test(input.slice(i + number.length))) {
        const digits = /^[\d,]+/.exec(rest)?.[0] ?? number;
        throw new CalculationError(
          "thousands separators are not supported",
          position,
          `write ${digits.replace(/,/g, "")} instead of ${digits} (to separate arguments, put a space after the comma)`,
        );
      }
      if (input[i + number.length] === ".") throw new CalculationError("unexpected '.'", position + number.length);
      tokens.push({ kind: "number", text: number, value, position });
      i += number.length;
      continue;
    }
    const name = NAME.exec(rest)?.[0];
    if (name !== undefined) {
      tokens.push({ kind: "name", text: name.toLowerCase(), value: 0, position });
      i += name.length;
      continue;
    }
    if (rest.startsWith("**")) {
      tokens.push({ kind: "op", text: "**", value: 0, position });
      i += 2;
      continue;
    }
    const op = OPERATOR_ALIASES[char] ?? char;
    if (SINGLE_OPERATORS.has(op)) tokens.push({ kind: "op", text: op, value: 0, position });
    else if (char === "(" || char === ")" || char === ",") tokens.push({ kind: char, text: char, value: 0, position });
    else throw new CalculationError(`unexpected character '${char}'`, position);
    i += char.length;
  }
  tokens.push({ kind: "end", text: "end of expression", value: 0, position: input.length + 1 });
  return tokens;
}

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ["pi", Math.PI],
  ["e", Math.E],
]);

interface MathFunction {
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly apply: (args: readonly number[]) => number;
}

const unary = (f: (x: number) => number): MathFunction => ({ minArgs: 1, maxArgs: 1, apply: ([x = NaN]) => f(x) });

/** `round(x)` to an integer, `round(x, digits)` to 0–15 decimal places (halves away from zero). */
function round([x = NaN, digits = 0]: readonly number[]): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15) return NaN;
  const scale = 10 ** digits;
  // toPrecision(15) drops binary noise first, so 1.005 rounds to 1.01 as written.
  return (Math.sign(x) * Math.round(Number((Math.abs(x) * scale).toPrecision(15)))) / scale;
}

const FUNCTIONS: ReadonlyMap<string, MathFunction> = new Map([
  ["sqrt", unary(Math.sqrt)],
  ["abs", unary(Math.abs)],
  ["round", { minArgs: 1, maxArgs: 2, apply: round }],
  ["floor", unary(Math.floor)],
  ["ceil", unary(Math.ceil)],
  ["min", { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.min(...args) }],
  ["max", { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.max(...args) }],
  ["log", unary(Math.log10)],
  ["ln", unary(Math.log)],
  ["exp", unary(Math.exp)],
  ["sin", unary(Math.sin)],
  ["cos", unary(Math.cos)],
  ["tan", unary(Math.tan)],
]);

function describe(token: Token): string {
  return token.kind === "end" ? "end of expression" : `'${token.text}'`;
}

/** Whether a token can begin an operand (and so a "%" before it is modulo). */
function startsOperand(token: Token): boolean {
  return token.kind === "number" || token.kind === "(" || (token.kind === "name" && token.text !== "of");
}

/** A result that must be a finite number, or the error that says why not. */
function finite(value: number, what: string, position: number, infinite = "gives a number too large to use"): number {
  if (Number.isNaN(value)) throw new CalculationError(`${what} has no real-number result`, position);
  if (!Number.isFinite(value)) throw new CalculationError(`${what} ${infinite}`, position);
  return value;
}

class Parser {
  readonly #tokens: readonly Token[];
  #index = 0;
  #depth = 0;

  constructor(tokens: readonly Token[]) {
    this.#tokens = tokens;
  }

  parse(): number {
    const value = this.#expr();
    const next = this.#peek();
    if (next.kind !== "end") {
      const hint = startsOperand(next) ? "use * to multiply" : undefined;
      throw new CalculationError(`unexpected ${describe(next)}`, next.position, hint);
    }
    return value;
  }

  #peek(offset = 0): Token {
    const last = this.#tokens[this.#tokens.length - 1];
    const token = this.#tokens[this.#index + offset] ?? last;
    if (token === undefined) throw new CalculationError("empty expression");
    return token;
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== "end") this.#index += 1;
    return token;
  }

  #isOp(...ops: string[]): boolean {
    const token = this.#peek();
    return token.kind === "op" && ops.includes(token.text);
  }

  #expect(kind: TokenKind, what: string): Token {
    const token = this.#peek();
    if (token.kind !== kind) throw new CalculationError(`expected ${what} but found ${describe(token)}`, token.position);
    return this.#next();
  }

  /** Run `parse` one level deeper; refuses past MAX_NESTING_DEPTH. */
  #nested<T>(position: number, parse: () => T): T {
    if (this.#depth >= MAX_NESTING_DEPTH) {
      throw new CalculationError(`the expression is nested too deeply (at most ${MAX_NESTING_DEPTH} levels)`, position);
    }
    this.#depth += 1;
    try {
      return parse();
    } finally {
      this.#depth -= 1;
    }
  }

  #expr(): number {
    let value = this.#term();
    while (this.#isOp("+", "-")) {
      const op = this.#next();
      const right = this.#term();
      value = finite(op.text === "+" ? value + right : value - right, `'${op.text}'`, op.position);
    }
    return value;
  }

  #term(): number {
    let value = this.#unary();
    while (this.#isOp("*", "/", "%")) {
      const op = this.#next();
      const right = this.#unary();
      if (op.text !== "*" && right === 0) {
        throw new CalculationError(op.text === "/" ? "division by zero" : "modulo by zero", op.position);
      }
      const result = op.text === "*" ? value * right : op.text === "/" ? value / right : value % right;
      value = finite(result, `'${op.text}'`, op.position);
    }
    return value;
  }

  #unary(): number {
    if (this.#isOp("+", "-")) {
      const op = this.#next();
      const operand = this.#nested(op.position, () => this.#unary());
      return op.text === "-" ? -operand : operand;
    }
    return this.#power();
  }

  #power(): number {
    const base = this.#postfix();
    if (!this.#isOp("^", "**")) return base;
    const op = this.#next();
    const exponent = this.#nested(op.position, () => this.#unary());
    if (base === 0 && exponent < 0) throw new CalculationError("division by zero", op.position);
    return finite(base ** exponent, `'${op.text}'`, op.position);
  }

  #postfix(): number {
    const value = this.#primary();
    if (!this.#isOp("%") || startsOperand(this.#peek(1))) return value;
    this.#next();
    const percent = value / 100;
    const of = this.#peek();
    if (of.kind !== "name" || of.text !== "of") return percent;
    this.#next();
    const whole = this.#nested(of.position, () => this.#unary());
    return finite(percent * whole, "'of'", of.position);
  }

  #primary(): number {
    const token = this.#next();
    switch (token.kind) {
      case "number":
        return token.value;
      case "(": {
        const value = this.#nested(token.position, () => this.#expr());
        this.#expect(")", "')'");
        return value;
      }
      case "name":
        return this.#name(token);
      default:
        throw new CalculationError(`unexpected ${describe(token)}`, token.position);
    }
  }

  #name(token: Token): number {
    const constant = CONSTANTS.get(token.text);
    if (constant !== undefined) return constant;
    const fn = FUNCTIONS.get(token.text);
    if (fn === undefined) {
      const known = [...CONSTANTS.keys(), ...FUNCTIONS.keys()].join(", ");
      throw new CalculationError(`unknown name '${token.text}'`, token.position, `known names: ${known}`);
    }
    this.#expect("(", `'(' after ${token.text}`);
    const args = this.#nested(token.position, () => this.#arguments());
    if (args.length < fn.minArgs || args.length > fn.maxArgs) {
      const wanted = fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : fn.maxArgs === Infinity ? `at least ${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
      throw new CalculationError(`${token.text} takes ${wanted} argument${wanted === "1" ? "" : "s"} but got ${args.length}`, token.position);
    }
    return finite(fn.apply(args), `${token.text}(${args.join(", ")})`, token.position, "has no finite result");
  }

  #arguments(): number[] {
    const args = [this.#expr()];
    while (this.#peek().kind === ",") {
      this.#next();
      args.push(this.#expr());
    }
    this.#expect(")", "',' or ')'");
    return args;
  }
}

/** Evaluate an arithmetic expression. Throws `CalculationError` for anything it cannot compute. */
export function evaluate(expression: string): number {
  if (typeof expression !== "string") throw new CalculationError("the expression must be text");
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new CalculationError(`the expression is too long (${expression.length} characters; at most ${MAX_EXPRESSION_LENGTH})`);
  }
  if (expression.trim() === "") throw new CalculationError("the expression is empty");
  const value = new Parser(tokenize(expression)).parse();
  // -0 reads as "minus zero"; a person means zero.
  return value === 0 ? 0 : value;
}
