import type { GuardrailVerdict } from "../manifest/index.js";
import type { Guardrails } from "./guardrails.js";

/** Where one reply's checked words go. */
export interface GuardedOutputSink {
  /** A batch that passed: show or speak it now. */
  release(text: string): void;
  /** A batch tripped an output guardrail: nothing more of the reply is released; say the replacement instead. */
  tripped(verdict: GuardrailVerdict): void;
}

type OutputState = { readonly kind: "open" } | { readonly kind: "tripped"; readonly verdict: GuardrailVerdict } | { readonly kind: "stopped" };
/** The states without data, one object each for every reply (a reply starts one; most end another). */
const OPEN: OutputState = { kind: "open" };
const STOPPED: OutputState = { kind: "stopped" };

/** What waits for the check: a batch of the reply's words, or an action kept in order between them (a tool line). */
type Queued = { readonly kind: "text"; readonly text: string } | { readonly kind: "action"; readonly run: () => void };

/**
 * One reply's words on their way out (every mode; docs/config.md "Guardrails"). A batch is
 * checked as the reply so far — everything released plus the batch — so a pattern split across
 * batches is seen whole, and is released only once it passed. One check runs at a time: the
 * batches that arrive meanwhile are checked together by the next one, so a slow guardrail falls
 * behind by at most one check, whatever the rate of batches (an s2s transcript comes a word at a
 * time). The first check that trips ends the reply's release: its batches and every later one are
 * dropped. Without output guardrails a batch is released at once, in the same call.
 */
export class GuardedOutput {
  readonly #guardrails: Guardrails;
  readonly #sink: GuardedOutputSink;
  #state: OutputState = OPEN;
  #released = "";
  #queue: Queued[] = [];
  #checking = false;
  #idle: (() => void)[] = [];

  constructor(guardrails: Guardrails, sink: GuardedOutputSink) {
    this.#guardrails = guardrails;
    this.#sink = sink;
  }

  /** Batches wait for a check (the agent has output guardrails). */
  get checked(): boolean {
    return this.#guardrails.checksOutput;
  }

  /** The verdict that ended the release, if one did. */
  get verdict(): GuardrailVerdict | undefined {
    return this.#state.kind === "tripped" ? this.#state.verdict : undefined;
  }

  /** The reply's text released so far, as pushed (batches carry their own spacing). */
  get released(): string {
    return this.#released;
  }

  /** A batch of the reply's words: released once the reply so far, with it, has passed. */
  push(text: string): void {
    if (!this.checked) {
      this.#release(text);
      return;
    }
    this.#queue.push({ kind: "text", text });
    void this.#pump();
  }

  /** Run `action` in order with the batches queued before it (a tool line shown between two batches). */
  after(action: () => void): void {
    if (!this.checked) {
      action();
      return;
    }
    this.#queue.push({ kind: "action", run: action });
    void this.#pump();
  }

  /** Resolves once every batch queued so far has been checked, and released or dropped, or at `stop()`. */
  settled(): Promise<void> {
    if (!this.#checking && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The reply was cut (cancel, barge-in, reset): nothing still waiting for a check is released. */
  stop(): void {
    if (this.#state.kind === "open") this.#state = STOPPED;
    this.#queue = [];
    this.#wake();
  }

  /** Check what is queued up to the next action, release it or trip, run the action; until the queue is empty. */
  async #pump(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    while (this.#queue.length > 0 && this.#state.kind !== "stopped") {
      const head = this.#queue[0];
      if (head?.kind === "action") {
        this.#queue.shift();
        head.run();
        continue;
      }
      const until = this.#queue.findIndex((item) => item.kind === "action");
      const batches = this.#queue.splice(0, until === -1 ? this.#queue.length : until).map((item) => (item.kind === "text" ? item.text : ""));
      if (this.#state.kind !== "open") continue;
      const verdict = await this.#guardrails.check("output", this.#released + batches.join(""));
      if (this.#state.kind !== "open") continue;
      if (verdict !== undefined) {
        this.#state = { kind: "tripped", verdict };
        this.#sink.tripped(verdict);
        continue;
      }
      for (const text of batches) this.#release(text);
    }
    this.#checking = false;
    this.#wake();
  }

  #release(text: string): void {
    if (this.#state.kind !== "open") return;
    this.#released += text;
    this.#sink.release(text);
  }

  #wake(): void {
    if (this.#checking && this.#state.kind !== "stopped") return;
    for (const wake of this.#idle.splice(0)) wake();
  }
}
