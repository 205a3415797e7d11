import { CLOSE, GatewayError } from "../errors.js";
import { addUsage, type TurnUsage } from "../turn/ledger.js";

/**
 * A session's token usage, summed over its replies (per session, not per conversation: a reset
 * does not lift `usageLimits`), and the limit that ends the session at the next turn once crossed.
 */
export class UsageMeter {
  readonly #limit: number | undefined;
  #usage: TurnUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, steps: 0 };

  /** `limit`: `usageLimits.totalTokens`, if the agent sets one. */
  constructor(limit: number | undefined) {
    this.#limit = limit;
  }

  get usage(): TurnUsage {
    return this.#usage;
  }

  /** Add one reply's usage; returns the new totals. */
  add(usage: TurnUsage): TurnUsage {
    this.#usage = addUsage(this.#usage, usage);
    return this.#usage;
  }

  /** Before a model reply: undefined to go on, or the fatal error that ends the session (close 1008). */
  refusal(): GatewayError | undefined {
    const limit = this.#limit;
    if (limit === undefined || this.#usage.totalTokens < limit) return undefined;
    return new GatewayError("llm", `usage limit reached: ${this.#usage.totalTokens} of ${limit} tokens used`, { fatal: true, closeCode: CLOSE.policy });
  }
}
