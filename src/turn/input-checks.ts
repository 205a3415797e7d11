/**
 * Caller turns through the input guardrails, in the order they came (docs/config.md
 * "Guardrails"): a turn's verdict is handed on only after every earlier turn's, so turns are
 * committed in the order the caller said or typed them. `drop()` (a cancel, a reset) discards
 * the verdicts still to come, as a queued turn would be discarded. Without input guardrails a
 * turn passes at once.
 */
import type { Logger } from "../log.js";
import type { GuardrailVerdict } from "../manifest/index.js";
import type { Guardrails } from "./guardrails.js";

export interface InputChecksOptions {
  readonly guardrails: Guardrails;
  readonly log: Logger;
  /** False once the mode has closed: verdicts that arrive after are dropped. */
  readonly live: () => boolean;
}

export class InputChecks {
  readonly #options: InputChecksOptions;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  /** Counts drops: a check that outlived one hands nothing on. */
  #drops = 0;

  constructor(options: InputChecksOptions) {
    this.#options = options;
  }

  /** Turns still being checked (or waiting for an earlier turn's check). */
  get pending(): number {
    return this.#pending;
  }

  /** `then` gets `text`'s verdict (undefined: it passed) once every earlier turn's has been handed on. */
  check(text: string, then: (verdict: GuardrailVerdict | undefined) => void): void {
    const { guardrails, log, live } = this.#options;
    if (!guardrails.checksInput) {
      then(undefined);
      return;
    }
    const drops = this.#drops;
    this.#pending += 1;
    this.#chain = this.#chain
      .then(async () => {
        let verdict: GuardrailVerdict | undefined;
        try {
          verdict = await guardrails.check("input", text);
        } finally {
          this.#pending -= 1;
        }
        if (live() && drops === this.#drops) then(verdict);
      })
      .catch((error: unknown) => log.error({ err: error }, "caller turn check failed"));
  }

  /** Verdicts of turns still being checked are not handed on. */
  drop(): void {
    this.#drops += 1;
  }
}
