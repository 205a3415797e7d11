import type { Logger } from "../log.js";

/** At most this many false-interruption resumes in a row (a caller turn resets the count). */
export const MAX_RESUMES_IN_A_ROW = 3;
/** How much of the heard reply a resume quotes (characters). */
export const RESUME_QUOTE_CHARS = 80;

/**
 * A barge-in that turns out to be noise (a cough, a "hmm": the utterance never produced a final)
 * resumes the cut reply from where the caller stopped hearing it (docs/protocol.md "Behaviour in
 * detail", `interruption.resumeFalseInterruption`). This holds the quote between the barge-in and
 * the watchdog's verdict, and the count of resumes in a row.
 */
export class FalseInterruption {
  readonly #log: Logger;
  #quote: string | undefined;
  #resumes = 0;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** A resume is pending the watchdog's verdict. */
  get armed(): boolean {
    return this.#quote !== undefined;
  }

  /** A barge-in cut the reply after `heard` (empty: nothing to resume). */
  arm(heard: string): void {
    if (heard !== "") this.#quote = heard.slice(-RESUME_QUOTE_CHARS);
  }

  /** The caller took a real turn (or the conversation was reset): nothing to resume, the count starts over. */
  reset(): void {
    this.#quote = undefined;
    this.#resumes = 0;
  }

  /** The watchdog found no turn: the quote to resume from, or undefined (none armed, busy, or the limit reached). */
  take(busy: boolean): string | undefined {
    const quote = this.#quote;
    this.#quote = undefined;
    if (quote === undefined || busy) return undefined;
    if (this.#resumes >= MAX_RESUMES_IN_A_ROW) {
      this.#log.info({ resumes: this.#resumes }, "false interruption not resumed: limit reached");
      return undefined;
    }
    this.#resumes += 1;
    this.#log.info({ resumes: this.#resumes }, "false interruption resumed");
    return quote;
  }
}
