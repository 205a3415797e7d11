import { joinSpoken } from "../pipeline/join-spoken.js";
import type { ReplyLoop, ReplyResult } from "../pipeline/reply-loop.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import type { ToolLine } from "./tool-runner.js";

/**
 * Text mode: `user_text` in, the reply loop's text out as `agent-transcript.*` snapshots (tool
 * lines shown inline), one turn at a time; no audio at all.
 */
export class TextRunner implements ModeRunner {
  readonly #ctx: RunnerContext;
  readonly #loop: ReplyLoop;
  readonly #errorPhrase: string;
  #queue: string[] = [];
  #pumping = false;
  #reply: AbortController | undefined;
  #shown: string[] = [];
  #modelText = "";
  #audioWarned = false;
  #closed = false;

  constructor(ctx: RunnerContext, loop: ReplyLoop, errorPhrase: string) {
    this.#ctx = ctx;
    this.#loop = loop;
    this.#errorPhrase = errorPhrase;
  }

  get userSpeaking(): boolean {
    return false;
  }

  get busy(): boolean {
    return this.#reply !== undefined || this.#queue.length > 0;
  }

  /** Typed turns not yet started (the one running has left the queue). */
  get queuedTurns(): number {
    return this.#queue.length;
  }

  greet(text: string): void {
    if (text === "") return;
    const { ledger, emit } = this.#ctx;
    emit({ type: "agent-transcript.updated", text });
    ledger.settle(ledger.epoch, { status: "spoken", text, messages: [{ role: "assistant", content: text }], report: false });
  }

  userText(text: string): void {
    this.#queue.push(text);
    void this.#pump();
  }

  cancel(): void {
    this.strand();
  }

  strand(): void {
    this.#queue = [];
    this.#reply?.abort(new Error("cancelled"));
    this.#ctx.ledger.cancelled();
  }

  audio(): void {
    if (this.#audioWarned) return;
    this.#audioWarned = true;
    this.#ctx.emit({ type: "error.reported", code: "audio", message: "this is a text agent: audio frames are ignored; send user_text", fatal: false });
  }

  playbackProgress(): void {}

  manual(command: string): void {
    this.#ctx.log.debug({ command }, "manual turn command ignored in text mode");
  }

  toolLine(line: ToolLine): void {
    const model = joinSpoken([this.#modelText]);
    this.#shown.push(...(model === "" ? [] : [model]), line.text);
    this.#modelText = "";
    this.#snapshot();
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#queue = [];
    this.#reply?.abort(new Error("session ended"));
    return Promise.resolve();
  }

  /** One turn at a time: queued texts run in order; a cancel or reset strands the queue. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (let text = this.#queue.shift(); text !== undefined && !this.#closed; text = this.#queue.shift()) await this.#turn(text);
    } finally {
      this.#pumping = false;
    }
  }

  async #turn(text: string): Promise<void> {
    if (!this.#ctx.admitTurn()) return;
    const { ledger } = this.#ctx;
    const epoch = ledger.epoch;
    const turnId = ledger.nextTurnId();
    ledger.user(text, { prompt: true });
    const controller = new AbortController();
    this.#reply = controller;
    this.#shown = [];
    this.#modelText = "";
    let firstTokenMs: number | undefined;
    const result = await this.#loop.run(ledger.history, controller.signal, {
      text: (delta) => {
        this.#modelText += delta;
        this.#snapshot();
      },
      firstToken: (ms) => {
        firstTokenMs = ms;
      },
    });
    if (this.#reply === controller) this.#reply = undefined;
    if (epoch !== ledger.epoch || this.#closed) return;
    this.#settle(epoch, turnId, result, firstTokenMs);
  }

  #snapshot(): void {
    this.#ctx.emit({ type: "agent-transcript.updated", text: joinSpoken([...this.#shown, this.#modelText]) });
  }

  #settle(epoch: number, turnId: string, result: ReplyResult, firstTokenMs: number | undefined): void {
    const { ledger } = this.#ctx;
    const settled = { metrics: { turnId, ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }) }, usage: result.usage, llmFirstTokenMs: firstTokenMs };
    // What was shown of an interrupted step is what the reader saw.
    const shown = joinSpoken([result.partialText ?? ""]);
    const messages = result.status === "cancelled" && shown !== "" ? [...result.messages, { role: "assistant" as const, content: `${shown} [interrupted]` }] : result.messages;
    if (result.status === "failed") {
      this.#ctx.log.warn({ err: result.error }, "llm failed");
      ledger.modelFailed(result.error);
      this.#ctx.emit({ type: "agent-transcript.updated", text: this.#errorPhrase });
      ledger.settle(epoch, { status: "failed", text: this.#errorPhrase, record: false, messages, ...settled });
      return;
    }
    ledger.settle(epoch, { status: result.status, text: result.text, messages, ...settled });
  }
}
