/**
 * The service's tool calls in s2s mode. Each call runs once through the session's `ToolRunner`,
 * or is refused without running: a turn past its agent's `maxSteps`, or a call of a reply that
 * answers a caller turn an input guardrail refused. The results of one response go back as one
 * batch, asking for the next response — or, when every result is a verbatim completion line,
 * speaking those lines instead of a model turn (docs/config.md §8 "Tool messages").
 */
import type { S2sSession, S2sToolCall } from "../s2s/s2s-port.js";
import { sayExactly } from "./s2s-lines.js";
import type { Reply } from "./s2s-replies.js";
import type { ToolOutcome, ToolRunner } from "./tool-runner.js";

/** A tool call of a reply that answers a refused caller turn: answered, never run. */
const REFUSED_CALL = "Not run: the caller's turn was refused by an input guardrail.";
const STEP_LIMIT = "Tool step limit reached for this turn. Answer the caller now without tools.";

/** What the runner lends: the tools, the session's signal, its service, and a word when a call settles. */
export interface S2sToolCallsPort {
  readonly tools: Pick<ToolRunner, "call">;
  /** Aborted when the session ends: running calls stop. */
  readonly signal: AbortSignal;
  /** The service's session, once open; undefined or `ended()`: results are not sent. */
  session(): Pick<S2sSession, "sendToolResults" | "createResponse"> | undefined;
  ended(): boolean;
  /** A call settled (its tool lines, spoken out of band, stop). */
  settled(): void;
}

export class S2sToolCalls {
  readonly #port: S2sToolCallsPort;
  /** Tool steps a turn may take (the agent segment's `maxSteps`). */
  #maxSteps: number;
  #stepsSinceUser = 0;

  constructor(port: S2sToolCallsPort, maxSteps: number) {
    this.#port = port;
    this.#maxSteps = maxSteps;
  }

  /** A caller turn: its tool steps start over. */
  userTurn(): void {
    this.#stepsSinceUser = 0;
  }

  /** A hand-off: the new agent's `maxSteps` caps tool steps from now on. */
  limitSteps(maxSteps: number): void {
    this.#maxSteps = maxSteps;
  }

  /** A call the service made for `reply` (run, or refused); one outside any reply is answered at once. */
  call(call: S2sToolCall, reply: Reply | undefined): void {
    const refusal = reply?.forget === true ? REFUSED_CALL : this.#stepsSinceUser >= this.#maxSteps ? STEP_LIMIT : undefined;
    const outcome =
      refusal !== undefined
        ? Promise.resolve<ToolOutcome>({ status: "refused", result: { text: refusal, isError: true }, modelText: refusal, isError: true })
        : this.#port.tools.call({ toolCallId: call.callId, toolName: call.name, args: call.args, signal: this.#port.signal });
    // Tool lines cover the call's silence only: once it settles, any line still being spoken stops.
    void outcome.then(() => this.#port.settled());
    if (reply !== undefined) (reply.calls ??= new Map()).set(call.callId, outcome);
    else void this.#answer([call.callId], [outcome], true);
  }

  /**
   * `reply`'s response is done: its calls' results as one batch (each call answered exactly once),
   * a step of the turn taken; `respond` asks for the next response. Undefined when it made no calls.
   */
  answer(reply: Reply, respond: boolean): Promise<void> | undefined {
    if (reply.calls === undefined) return undefined;
    this.#stepsSinceUser += 1;
    return this.#answer([...reply.calls.keys()], [...reply.calls.values()], respond);
  }

  async #answer(callIds: readonly string[], outcomes: readonly Promise<ToolOutcome>[], respond: boolean): Promise<void> {
    const settled = await Promise.all(outcomes);
    const session = this.#port.session();
    if (this.#port.ended() || session === undefined) return;
    const verbatim = settled.map((o) => o.verbatim).filter((v): v is string => v !== undefined);
    const allVerbatim = verbatim.length === settled.length && settled.length > 0;
    session.sendToolResults(
      settled.map((outcome, i) => ({ callId: callIds[i] ?? "", output: outcome.modelText })),
      respond && !allVerbatim,
    );
    if (respond && allVerbatim) session.createResponse({ instructions: sayExactly(verbatim.join(" ")), outOfBand: true });
  }
}
