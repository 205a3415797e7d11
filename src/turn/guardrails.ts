import type { Clock } from "../clock.js";
import { messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import { DEFAULTS } from "../manifest/defaults.js";
import type { Guardrail, GuardrailVerdict } from "../manifest/index.js";

/** Which side of the conversation a check is about: the caller's turn, or the agent's words. */
export type GuardrailDirection = "input" | "output";

/**
 * What the model history records in place of a refused caller turn (docs/config.md
 * "Guardrails"): the model learns a turn was refused, never what it said.
 */
export const REFUSED_TURN_PROMPT = "[The caller's message was withheld by an input guardrail and answered with a fixed reply.]";

export interface GuardrailsDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly sessionId: string;
  /** The session's value (`sessionContext`), as tools and gates receive it. */
  readonly session: () => unknown;
  readonly input?: readonly Guardrail[] | undefined;
  readonly output?: readonly Guardrail[] | undefined;
  /** One check's budget (ms); default `DEFAULTS.guardrailBudgetMs`. */
  readonly budgetMs?: number;
}

/** A guardrail's answer, read strictly: `undefined` passes, a verdict trips, anything else is a failure. */
type Answer = { readonly kind: "passed" } | { readonly kind: "tripped"; readonly verdict: GuardrailVerdict } | { readonly kind: "failed"; readonly error: string };

/** A guardrail's name for logs and `check`: the function's own, else its place in the list. */
export function guardrailName(guardrail: Guardrail, index: number): string {
  return guardrail.name !== "" ? guardrail.name : `#${index + 1}`;
}

function read(value: unknown): Answer {
  if (value === undefined || value === null) return { kind: "passed" };
  if (typeof value === "object" && typeof (value as { replacement?: unknown }).replacement === "string") {
    const { replacement, reason } = value as { replacement: string; reason?: unknown };
    if (replacement.trim() === "") return { kind: "failed", error: "its verdict's replacement is blank" };
    return { kind: "tripped", verdict: { replacement: replacement.trim(), ...(typeof reason === "string" ? { reason } : {}) } };
  }
  return { kind: "failed", error: "it returned neither undefined nor a verdict { replacement, reason? }" };
}

/**
 * The agent's guardrails for one session (docs/config.md "Guardrails"). A check runs a
 * direction's guardrails in order, each after the one before it passed; the first verdict wins
 * and the rest are not called. The whole check has one budget on the session's clock.
 *
 * A guardrail that throws, rejects, returns something that is not a verdict, or is still running
 * when the budget runs out has failed, and a failed check **fails closed**: the text is treated
 * as refused, and `DEFAULTS.guardrailFailedPhrase` is said instead (logged at warn with the
 * guardrail and the error). Checks are asynchronous even when every guardrail answers at once.
 */
export class Guardrails {
  readonly #deps: GuardrailsDeps;
  readonly #input: readonly Guardrail[];
  readonly #output: readonly Guardrail[];
  readonly #budgetMs: number;

  constructor(deps: GuardrailsDeps) {
    this.#deps = deps;
    this.#input = deps.input ?? [];
    this.#output = deps.output ?? [];
    this.#budgetMs = deps.budgetMs ?? DEFAULTS.guardrailBudgetMs;
  }

  /** The agent has input guardrails: caller turns are checked before the model sees them. */
  get checksInput(): boolean {
    return this.#input.length > 0;
  }

  /** The agent has output guardrails: its words are checked before they are spoken or shown. */
  get checksOutput(): boolean {
    return this.#output.length > 0;
  }

  /** Check `text`: the verdict that wins (a failed check's is the failure phrase), or undefined when it passes. */
  async check(direction: GuardrailDirection, text: string): Promise<GuardrailVerdict | undefined> {
    const list = direction === "input" ? this.#input : this.#output;
    const { clock, log } = this.#deps;
    const deadline = clock.now() + this.#budgetMs;
    const ctx = { sessionId: this.#deps.sessionId, session: this.#deps.session() };
    for (const [index, guardrail] of list.entries()) {
      const answer = await this.#run(guardrail, text, ctx, deadline - clock.now());
      const name = guardrailName(guardrail, index);
      if (answer.kind === "passed") continue;
      if (answer.kind === "tripped") {
        log.info({ direction, guardrail: name, reason: answer.verdict.reason }, "guardrail tripped");
        return answer.verdict;
      }
      log.warn({ direction, guardrail: name, err: answer.error, budgetMs: this.#budgetMs }, "guardrail failed; the text is refused");
      return { replacement: DEFAULTS.guardrailFailedPhrase, reason: `guardrail ${name} failed: ${answer.error}` };
    }
    return undefined;
  }

  /** One guardrail, raced against what is left of the budget (ms). */
  #run(guardrail: Guardrail, text: string, ctx: { readonly sessionId: string; readonly session: unknown }, leftMs: number): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const timer = this.#deps.clock.setTimeout(() => resolve({ kind: "failed", error: `no answer within the ${this.#budgetMs} ms budget` }), Math.max(0, leftMs));
      const answered = (answer: Answer): void => {
        timer.cancel();
        resolve(answer);
      };
      // A synchronous throw is a failure like a rejection.
      new Promise<unknown>((settle) => settle(guardrail(text, ctx))).then(
        (value) => answered(read(value)),
        (error: unknown) => answered({ kind: "failed", error: `it threw: ${messageOf(error)}` }),
      );
    });
  }
}
