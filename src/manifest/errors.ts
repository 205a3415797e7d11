/** One problem found in an agent definition: where it is, and what to do about it. */
export interface ConfigIssue {
  /** Dotted field path (`turnTaking.minSilenceMs`, `voicePresets[2]`) or a file path. */
  readonly path: string;
  /** What is wrong and how to fix it, written for the author. */
  readonly message: string;
}

/**
 * An agent definition that cannot run. Lists every problem found, not only the first, so an
 * author fixes them in one pass.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly issues: readonly ConfigIssue[];

  constructor(subject: string, issues: readonly ConfigIssue[]) {
    const lines = issues.map((i) => `  - ${i.path}: ${i.message}`);
    const noun = issues.length === 1 ? "problem" : "problems";
    super(`${subject}: ${issues.length} ${noun}\n${lines.join("\n")}`);
    this.issues = issues;
  }
}

/** A tool (or workflow) declared in a way that cannot work; the message names the fix. */
export class ToolDefinitionError extends Error {
  override readonly name = "ToolDefinitionError";
}

/** What a value is, for a message: `undefined`, `null`, `an array`, `a function`, `an object`, `a string`… */
export function kindOf(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Collects issues across several checks and throws once. */
export class IssueList {
  readonly #issues: ConfigIssue[] = [];

  add(path: string, message: string): void {
    this.#issues.push({ path, message });
  }

  get issues(): readonly ConfigIssue[] {
    return this.#issues;
  }

  get empty(): boolean {
    return this.#issues.length === 0;
  }

  throwIfAny(subject: string): void {
    if (this.#issues.length > 0) throw new ConfigError(subject, this.#issues);
  }
}

/** The closest candidate to `word` within a small edit distance, for "did you mean" hints. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  const lower = word.toLowerCase();
  for (const candidate of candidates) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, O(a·b) time, O(b) space. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** ` Did you mean \`x\`?` or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match === undefined ? "" : ` Did you mean \`${match}\`?`;
}
