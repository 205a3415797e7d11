import type { ModelMessage } from "ai";
import { countWords } from "../pipeline/barge-in.js";
import { fixedReply } from "../pipeline/fixed-reply.js";
import { joinSpoken } from "../pipeline/join-spoken.js";
import { recordHeard, recordReplaced } from "../pipeline/record-heard.js";
import type { ReplyLoop, ReplyObserver, ReplyResult } from "../pipeline/reply-loop.js";
import { SentenceBatcher } from "../pipeline/sentence-batcher.js";
import { noteMessages, type AgentNote } from "../turn/agent-note.js";
import { GuardedOutput } from "../turn/guarded-output.js";
import type { OutOfBandAsk, OutOfBandSink } from "../transport/protocol.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import { respondOutOfBand } from "./out-of-band.js";
import type { ToolLine } from "./tool-runner.js";
import { spread } from "../spread.js";

/**
 * Text mode: `user_text` in, the reply loop's text out as `agent-transcript.*` snapshots (tool
 * lines shown inline), one turn at a time; no audio at all. Input guardrails check each turn
 * before the model sees it (a refused one is answered with the verdict's replacement); with
 * output guardrails the reply is shown in sentence batches, each checked before it goes out
 * (docs/config.md "Guardrails").
 */
export class TextRunner implements ModeRunner {
  readonly #ctx: RunnerContext;
  readonly #loop: ReplyLoop;
  readonly #errorPhrase: string;
  /** Typed turns, and notes (a workflow run ended), answered one at a time in order. */
  #queue: (string | AgentNote)[] = [];
  #pumping = false;
  #reply: AbortController | undefined;
  #shown: string[] = [];
  #modelText = "";
  /** The reply in flight's words on their way out (checked by the output guardrails). */
  #output: GuardedOutput | undefined;
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

  /** Typed turns not yet started (the one running has left the queue); notes do not count. */
  get queuedTurns(): number {
    return this.#queue.filter((item) => typeof item === "string").length;
  }

  get takesNotes(): boolean {
    return true;
  }

  note(note: AgentNote): boolean {
    if (this.#closed) return false;
    this.#queue.push(note);
    void this.#pump();
    return true;
  }

  greet(text: string): void {
    if (text === "") return;
    const { ledger } = this.#ctx;
    if (this.#ctx.wants("agent-transcript.updated")) this.#ctx.emit({ type: "agent-transcript.updated", text });
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

  outOfBand(ask: OutOfBandAsk, sink: OutOfBandSink): void {
    void respondOutOfBand(this.#loop, this.#ctx, ask, sink);
  }

  manual(command: string): void {
    this.#ctx.log.debug({ command }, "manual turn command ignored in text mode");
  }

  toolLine(line: ToolLine): void {
    const show = (): void => {
      const model = joinSpoken([this.#modelText]);
      this.#shown.push(...(model === "" ? [] : [model]), line.text);
      this.#modelText = "";
      this.#snapshot();
    };
    // After the model text before the call, which may still be waiting for its check.
    if (this.#output === undefined) show();
    else this.#output.after(show);
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
      for (let item = this.#queue.shift(); item !== undefined && !this.#closed; item = this.#queue.shift()) await this.#turn(item);
    } finally {
      this.#pumping = false;
    }
  }

  /** A typed turn, or a note (no caller line: its messages go into the model's context with the reply). */
  async #turn(item: string | AgentNote): Promise<void> {
    if (!this.#ctx.admitTurn()) return;
    const { ledger, guardrails } = this.#ctx;
    const epoch = ledger.epoch;
    const turnId = ledger.nextTurnId();
    const controller = new AbortController();
    this.#reply = controller;
    const text = typeof item === "string" ? item : undefined;
    // The model never sees a turn an input guardrail refused: the replacement answers it.
    const refusal = text !== undefined && guardrails.checksInput ? await guardrails.check("input", text) : undefined;
    if (controller.signal.aborted || epoch !== ledger.epoch || this.#closed) {
      if (this.#reply === controller) this.#reply = undefined;
      return;
    }
    const prompt = typeof item === "string" ? [] : noteMessages(item);
    if (text !== undefined) ledger.user(text, { prompt: true, refused: refusal !== undefined });
    this.#shown = [];
    this.#modelText = "";
    const output = new GuardedOutput(guardrails, {
      release: (released) => {
        if (controller.signal.aborted) return;
        this.#modelText += released;
        this.#snapshot();
      },
      tripped: () => controller.abort(new Error("output guardrail")),
    });
    this.#output = output;
    // Checked output is shown a sentence at a time: a check per token would cost more than it shows.
    const batcher = output.checked ? new SentenceBatcher((batch) => output.push(batch)) : undefined;
    let firstTokenMs: number | undefined;
    const observer: ReplyObserver = {
      text: (delta) => (batcher === undefined ? output.push(delta) : batcher.push(delta)),
      toolCall: () => batcher?.flush(),
      firstToken: (ms) => {
        firstTokenMs = ms;
      },
    };
    const result = refusal === undefined ? await this.#loop.run([...ledger.history, ...prompt], controller.signal, observer) : fixedReply(refusal.replacement, observer);
    batcher?.flush();
    await output.settled();
    output.stop();
    if (this.#output === output) this.#output = undefined;
    if (this.#reply === controller) this.#reply = undefined;
    if (epoch !== ledger.epoch || this.#closed) return;
    // A note's messages are recorded with its reply (as a spoken turn's prompt is), whatever the reply's end.
    this.#settle(epoch, turnId, prompt.length === 0 ? result : spread(result, { messages: [...prompt, ...result.messages] }), firstTokenMs, output);
  }

  #snapshot(): void {
    if (this.#ctx.wants("agent-transcript.updated")) this.#ctx.emit({ type: "agent-transcript.updated", text: joinSpoken([...this.#shown, this.#modelText]) });
  }

  #settle(epoch: number, turnId: string, result: ReplyResult, firstTokenMs: number | undefined, output: GuardedOutput): void {
    const { ledger } = this.#ctx;
    const settled = { metrics: { turnId, ...(firstTokenMs === undefined ? {} : { llmFirstTokenMs: firstTokenMs }) }, usage: result.usage, llmFirstTokenMs: firstTokenMs };
    const verdict = output.verdict;
    if (verdict !== undefined) {
      // An output guardrail cut the reply: what was shown, then the replacement, is what it said.
      const text = joinSpoken([output.released, verdict.replacement]);
      this.#modelText = joinSpoken([this.#modelText, verdict.replacement]);
      this.#snapshot();
      const messages = recordReplaced(result.messages, result.partialText, countWords(output.released), verdict.replacement);
      ledger.settle(epoch, { status: "completed", text, messages, ...settled });
      return;
    }
    const messages = result.status === "cancelled" ? this.#shownOf(result, output) : result.messages;
    if (result.status === "failed") {
      this.#ctx.log.warn({ err: result.error }, "llm failed");
      ledger.modelFailed(result.error);
      if (this.#ctx.wants("agent-transcript.updated")) this.#ctx.emit({ type: "agent-transcript.updated", text: this.#errorPhrase });
      ledger.settle(epoch, { status: "failed", text: this.#errorPhrase, record: false, messages, ...settled });
      return;
    }
    ledger.settle(epoch, { status: result.status, text: result.text, messages, ...settled });
  }

  /** A cancelled reply's history: what was shown of it, `[interrupted]` after the last shown word. */
  #shownOf(result: ReplyResult, output: GuardedOutput): ModelMessage[] {
    // Checked output shows only what passed; the text still waiting for its check was never seen.
    if (output.checked) return recordHeard(result.messages, result.partialText, countWords(output.released));
    // Unchecked, every delta was shown at once: the unfinished step's text whole.
    const shown = joinSpoken([result.partialText ?? ""]);
    return shown === "" ? result.messages : [...result.messages, { role: "assistant" as const, content: `${shown} [interrupted]` }];
  }
}
