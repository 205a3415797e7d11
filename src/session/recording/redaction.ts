import type { RedactionRule } from "../../manifest/index.js";
import { spread } from "../../spread.js";

/**
 * Redaction of the call record (docs/config.md "Recording", `redact`): each rule finds spans of
 * text and replaces them with `[redacted <rule>]`. Pure.
 *
 * - `card`: a payment card number, 13–19 digits passing the Luhn check (ISO/IEC 7812-1), written
 *   with or without spaces and hyphens ("4111 1111-1111 1111") or as a recognizer writes spoken
 *   digits ("four one one one …", "oh" and "o" for zero, "double"/"triple" before a digit), or a mix.
 * - `ssn`: a US Social Security number written in its groups, ddd-dd-dddd or ddd dd dddd.
 * - `email`: an address written with "@" (a spoken "at … dot com" is not matched).
 * - custom: `{ name, pattern, flags }`, a regular expression; every match is replaced.
 */

const DIGIT_WORDS: Readonly<Record<string, string>> = {
  zero: "0", oh: "0", o: "0", one: "1", two: "2", three: "3", four: "4", five: "5", six: "6", seven: "7", eight: "8", nine: "9",
};
const REPEATS: Readonly<Record<string, number>> = { double: 2, triple: 3 };

/** Card numbers are 13–19 digits (ISO/IEC 7812-1). */
const CARD_MIN_DIGITS = 13;
const CARD_MAX_DIGITS = 19;

const SSN = /\b\d{3}([- ])\d{2}\1\d{4}\b/g;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** Luhn's mod-10 check over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

interface Span {
  readonly start: number;
  readonly end: number;
}

interface DigitToken extends Span {
  readonly digits: string;
}

/**
 * Runs of digit tokens (numerals, digit words, "double five") separated only by spaces, hyphens,
 * commas or dots: where a number someone read out or typed can be.
 */
function digitRuns(text: string): DigitToken[][] {
  const runs: DigitToken[][] = [];
  let run: DigitToken[] = [];
  let repeat = 1;
  let repeatStart: number | undefined;
  const close = (): void => {
    if (run.length > 0) runs.push(run);
    run = [];
    repeat = 1;
    repeatStart = undefined;
  };
  const token = /[A-Za-z]+|\d+|[^A-Za-z\d]+/g;
  for (let match = token.exec(text); match !== null; match = token.exec(text)) {
    const word = match[0];
    const start = match.index;
    const end = start + word.length;
    if (/^\d+$/.test(word)) {
      run.push({ start: repeatStart ?? start, end, digits: word.repeat(repeat) });
      repeat = 1;
      repeatStart = undefined;
      continue;
    }
    const lower = word.toLowerCase();
    const digit = DIGIT_WORDS[lower];
    if (digit !== undefined) {
      run.push({ start: repeatStart ?? start, end, digits: digit.repeat(repeat) });
      repeat = 1;
      repeatStart = undefined;
    } else if (REPEATS[lower] !== undefined && repeat === 1) {
      repeat = REPEATS[lower];
      repeatStart = start;
    } else if (!/^[\s,.-]+$/.test(word)) {
      close();
    }
  }
  close();
  return runs;
}

/** Card numbers inside the runs: at each token, the longest window of 13–19 digits that passes Luhn. */
function cardSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const run of digitRuns(text)) {
    let i = 0;
    while (i < run.length) {
      let found: Span | undefined;
      let next = i + 1;
      let digits = "";
      for (let j = i; j < run.length; j++) {
        digits += (run[j] as DigitToken).digits;
        if (digits.length > CARD_MAX_DIGITS) break;
        if (digits.length >= CARD_MIN_DIGITS && luhnValid(digits)) {
          found = { start: (run[i] as DigitToken).start, end: (run[j] as DigitToken).end };
          next = j + 1;
        }
      }
      if (found !== undefined) spans.push(found);
      i = next;
    }
  }
  return spans;
}

function regexSpans(text: string, pattern: RegExp): Span[] {
  const spans: Span[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0].length === 0) {
      pattern.lastIndex += 1;
      continue;
    }
    spans.push({ start: match.index, end: match.index + match[0].length });
  }
  return spans;
}

interface CompiledRule {
  readonly name: string;
  readonly find: (text: string) => Span[];
}

function compile(rule: RedactionRule): CompiledRule {
  if (rule === "card") return { name: "card", find: cardSpans };
  if (rule === "ssn") return { name: "ssn", find: (text) => regexSpans(text, new RegExp(SSN.source, "g")) };
  if (rule === "email") return { name: "email", find: (text) => regexSpans(text, new RegExp(EMAIL.source, "g")) };
  const pattern = new RegExp(rule.pattern, `${rule.flags ?? ""}g`);
  return { name: rule.name, find: (text) => regexSpans(text, pattern) };
}

/** What redacting one text did: the text to keep, and the rules that matched (empty: untouched). */
export interface Redacted {
  readonly text: string;
  readonly rules: readonly string[];
}

/** Values nested deeper than this in tool args and results are replaced whole (a record is not a place for unbounded structures). */
const MAX_DEPTH = 16;

/** The agent's `redact` rules, compiled once per session. */
export class Redactor {
  readonly #rules: readonly CompiledRule[];
  /** Replacements made so far, by rule. */
  readonly counts = new Map<string, number>();

  constructor(rules: readonly RedactionRule[]) {
    this.#rules = rules.map(compile);
  }

  get names(): readonly string[] {
    return this.#rules.map((rule) => rule.name);
  }

  /** `text` with every rule's matches replaced by `[redacted <rule>]`; overlapping matches merge, the first rule naming them. */
  text(text: string): Redacted {
    if (this.#rules.length === 0 || text === "") return { text, rules: [] };
    const found: (Span & { name: string })[] = [];
    for (const rule of this.#rules) for (const span of rule.find(text)) found.push(spread(span, { name: rule.name }));
    if (found.length === 0) return { text, rules: [] };
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = "";
    let at = 0;
    const rules = new Set<string>();
    for (const span of found) {
      if (span.end <= at) continue;
      const start = Math.max(span.start, at);
      out += `${text.slice(at, start)}${start === span.start ? `[redacted ${span.name}]` : ""}`;
      at = span.end;
      rules.add(span.name);
      this.counts.set(span.name, (this.counts.get(span.name) ?? 0) + 1);
    }
    return { text: out + text.slice(at), rules: [...rules] };
  }

  /** A JSON-like value (tool args, a result) with every string in it redacted; the rules that matched are added to `hits`. */
  value(value: unknown, hits: Set<string>, depth = 0): unknown {
    if (typeof value === "string") {
      const redacted = this.text(value);
      for (const rule of redacted.rules) hits.add(rule);
      return redacted.text;
    }
    if (typeof value === "number" && this.#rules.length > 0) {
      // A card number passed as a JSON number is still a card number.
      const redacted = this.text(String(value));
      if (redacted.rules.length === 0) return value;
      for (const rule of redacted.rules) hits.add(rule);
      return redacted.text;
    }
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_DEPTH) return "[nested too deep]";
    if (Array.isArray(value)) return value.map((item) => this.value(item, hits, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.value(item, hits, depth + 1)]));
  }
}
