import type { Logger } from "../log.js";
import type { TurnInput } from "./turn-input.js";

/**
 * What waits for a reply (caller turns, greetings, resumes, nudges), answered one at a time in the
 * order it came (voice-loop.ts). `answer` runs one input's whole reply; the next starts after it.
 */
export class TurnQueue {
  #inputs: TurnInput[] = [];
  #running = false;
  readonly #answer: (input: TurnInput) => Promise<void>;
  readonly #log: Logger;

  constructor(answer: (input: TurnInput) => Promise<void>, log: Logger) {
    this.#answer = answer;
    this.#log = log;
  }

  get length(): number {
    return this.#inputs.length;
  }

  /** Caller turns waiting (greetings, resumes and nudges do not count). */
  get userTurns(): number {
    let count = 0;
    for (const input of this.#inputs) if (input.kind === "user") count += 1;
    return count;
  }

  /** The last caller turn still waiting, if any (a continuation may join it). */
  lastUser(): TurnInput | undefined {
    return this.#inputs.findLast((input) => input.kind === "user");
  }

  push(input: TurnInput): void {
    this.#inputs.push(input);
    void this.#run();
  }

  /** Back to the front: a turn whose reply was cancelled to be answered again (merged with what followed). */
  putBack(input: TurnInput): void {
    this.#inputs.unshift(input);
  }

  /** Drops everything waiting (the reply in flight is the loop's to stop). */
  clear(): void {
    this.#inputs = [];
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let input = this.#inputs.shift(); input !== undefined; input = this.#inputs.shift()) await this.#answer(input);
    } catch (error) {
      this.#log.error({ err: error }, "voice loop failed");
    } finally {
      this.#running = false;
    }
  }
}
