import type { Clock, Timer } from "../clock.js";
import { messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import {
  DEFAULTS,
  pickVariant,
  planDelayedLadder,
  refusalText,
  resultText,
  spokenDurationMs,
  toToolResult,
  type RandomSource,
  type ResolvedTool,
  type ToolContext,
  type ToolResult,
  type ToolTable,
  type ToolWorkflows,
} from "../manifest/index.js";
import type { ToolAnswer, ToolInvocation } from "../pipeline/tool-port.js";
import type { EventBody } from "../events.js";
import type { Conversation } from "./conversation.js";
import { MAX_TOOL_RESULT_CHARS, truncateToolResult } from "./conversation.js";
import { SmallMap } from "../small-map.js";
import { spread } from "../spread.js";

/** How a call ended. */
export type ToolStatus = "ok" | "failed" | "refused" | "invalid" | "unknown" | "timeout" | "cancelled";

export interface ToolOutcome extends ToolAnswer {
  readonly status: ToolStatus;
  readonly result: ToolResult;
}

/** A tool message line, as the session speaks (voice) or shows (text) it. */
export interface ToolLine {
  readonly toolCallId: string;
  readonly kind: "start" | "delayed" | "complete" | "failed";
  readonly text: string;
}

export interface ToolRunnerDeps {
  readonly table: ToolTable;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly log: Logger;
  readonly sessionId: string;
  /** The agent's per-session value (`sessionContext()`), as `ctx.session`. */
  readonly session: unknown;
  /**
   * The conversation record every settled call is written to (what `history.restored` and the
   * resume record carry), under the epoch the call started in: a reset strands it. One place for
   * every mode — pipeline, text, s2s — and every caller (the model, a keypad tool). Its dialogs
   * are what the calls read and move as `ctx.dialogs`.
   */
  readonly conversation?: Conversation;
  /** The agent's workflows, as its tools' `ctx.workflows` (absent when it declares none). */
  readonly workflows?: ToolWorkflows | undefined;
}

/** What the runner tells its session (the session's hooks object: methods, called on it). */
export interface ToolRunnerHooks {
  /** Sends an event to the client. */
  emit(event: EventBody): void;
  /**
   * Speaks or shows a filler or completion line (after `tool.message` is emitted). Filler
   * (start, delayed) is skipped while `userSpeaking()` says so.
   */
  line?(line: ToolLine): void;
  userSpeaking?(): boolean;
  /** Every settled call, for metrics and state projection. */
  toolSettled?(call: ToolInvocation, outcome: ToolOutcome): void;
}

/** The longest result text a `tool.completed` event carries (protocol.md). */
export const MAX_EVENT_RESULT_CHARS = 4000;

interface ClientCall {
  readonly result: Promise<ToolResult>;
  readonly resolve: (result: ToolResult) => void;
  settled: boolean;
}

function clientCall(): ClientCall {
  let resolve: (result: ToolResult) => void = () => {};
  const result = new Promise<ToolResult>((r) => {
    resolve = r;
  });
  return { result, resolve, settled: false };
}

/** "30 seconds", "0.5 seconds", "1 second". */
function seconds(ms: number): string {
  const value = Number((ms / 1000).toFixed(2));
  return `${value} ${value === 1 ? "second" : "seconds"}`;
}

/** Settle with `work`, or reject as soon as `signal` aborts. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function clip(text: string): string {
  return text.length <= MAX_EVENT_RESULT_CHARS ? text : `${text.slice(0, MAX_EVENT_RESULT_CHARS - 1)}…`;
}

/** An AbortSignal that fires when either parent does, or after `ms`. */
function linkedSignal(parent: AbortSignal, clock: Clock, ms: number): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", onAbort, { once: true });
  const timer = clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      timer.cancel();
      parent.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * The tool runner every mode shares: resolve, validate, gate, speak the start line, schedule
 * the delay ladder, execute (here or in the page) under a deadline and the reply's abort, then
 * the completion line and `tool.completed`. Every call is answered exactly once.
 */
export class ToolRunner {
  readonly #deps: ToolRunnerDeps;
  readonly #hooks: ToolRunnerHooks;
  /** Calls the page runs, in flight: none for most agents, a few at most. */
  readonly #clientCalls = new SmallMap<string, ClientCall>();
  #running = 0;
  #covering = 0;

  constructor(deps: ToolRunnerDeps, hooks: ToolRunnerHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
  }

  /** Calls in flight. */
  get runningCalls(): number {
    return this.#running;
  }

  /** Calls in flight that cover their own silence with start or delayed lines. */
  get coveringCalls(): number {
    return this.#covering;
  }

  /** Calls waiting on the page. */
  get pendingClientCalls(): number {
    return this.#clientCalls.entries().filter(([, c]) => !c.settled).length;
  }

  /** Settle a clientTool call from a `tool_result` command. False when no such call waits. */
  settleClientCall(toolCallId: string, result: string, error?: string | boolean): boolean {
    const call = this.#clientCalls.get(toolCallId);
    if (call === undefined || call.settled) return false;
    call.settled = true;
    const failed = error !== undefined && error !== false;
    call.resolve(failed ? { text: typeof error === "string" && error !== "" ? error : result, isError: true } : { text: result });
    return true;
  }

  /**
   * Run one call. `tool.called` opens it — for a clientTool only once its arguments and gate
   * passed, since for the page that event is the request to run it.
   */
  async call(request: ToolInvocation): Promise<ToolOutcome> {
    const { conversation } = this.#deps;
    const hooks = this.#hooks;
    const { toolCallId } = request;
    const epoch = conversation?.epoch;
    const opened = { done: false };
    const open = (): void => {
      if (opened.done) return;
      opened.done = true;
      hooks.emit({ type: "tool.called", toolCallId, toolName: request.toolName, args: request.args ?? {} });
    };
    const entry = this.#deps.table.resolve(request.toolName)?.entry;
    if (entry?.executor !== "client") open();
    const covers = entry?.def.messages?.start !== undefined || entry?.def.messages?.delayed !== undefined;
    this.#running += 1;
    if (covers) this.#covering += 1;
    let outcome: ToolOutcome;
    try {
      outcome = await this.#run(request, open);
    } finally {
      this.#running -= 1;
      if (covers) this.#covering -= 1;
    }
    hooks.emit({ type: "tool.completed", toolCallId, result: clip(outcome.modelText), ...(outcome.isError ? { isError: true } : {}) });
    if (conversation !== undefined && epoch !== undefined) {
      conversation.recordTool(epoch, { toolCallId, toolName: request.toolName, args: request.args, result: outcome.modelText, ...(outcome.isError ? { isError: true } : {}) });
    }
    hooks.toolSettled?.(request, outcome);
    return outcome;
  }

  /**
   * Every outcome is made here, for every mode and every kind of call (host, client
   * `tool_result`, refusal, timeout): the text the model reads is cut to MAX_TOOL_RESULT_CHARS,
   * with a marker saying how much was cut.
   */
  #settle(status: ToolStatus, result: ToolResult, verbatim?: string): ToolOutcome {
    const isError = result.isError === true || (status !== "ok" && status !== "cancelled");
    return { status, result, modelText: truncateToolResult(resultText(result)), isError, ...(verbatim === undefined ? {} : { verbatim }) };
  }

  async #run(request: ToolInvocation, open: () => void): Promise<ToolOutcome> {
    const { table, clock } = this.#deps;
    const { toolCallId, toolName, signal } = request;
    const resolved = table.resolve(toolName);
    if (resolved === undefined) {
      const known = table.tools.map((t) => t.name).join(", ");
      return this.#settle("unknown", { text: `There is no tool named ${toolName}. Available tools: ${known || "none"}.`, isError: true });
    }
    const checked = resolved.entry.def.parameters.validate(request.args ?? {});
    if (!checked.ok) {
      return this.#settle("invalid", { text: `Invalid arguments for ${toolName}: ${checked.errors.join("; ")}. Call it again with corrected arguments.`, isError: true });
    }
    const args = checked.value;
    const timeoutMs = resolved.entry.timeoutMs ?? DEFAULTS.toolTimeoutMs;
    const deadline = linkedSignal(signal, clock, timeoutMs);
    // The conversation's dialogs as the call starts: a reset meanwhile strands the call's moves with the old conversation.
    const dialogs = this.#deps.conversation?.dialogs;
    const { workflows } = this.#deps;
    const ctx: ToolContext = { toolCallId, signal: deadline.signal, sessionId: this.#deps.sessionId, session: this.#deps.session, dialogs, ...(workflows === undefined ? {} : { workflows }) };
    const timers: Timer[] = [];
    try {
      const refusal = resolved.toolset.gate(toolName, ctx);
      if (refusal !== undefined) return this.#settle("refused", { text: refusalText(toolName, refusal), isError: true });
      if (resolved.entry.executor === "client") this.#clientCalls.set(toolCallId, clientCall());
      open();

      await this.#startLine(resolved, toolCallId, args, deadline.signal);
      this.#scheduleLadder(resolved, toolCallId, args, timers);
      const result = await this.#execute(resolved, args, ctx, deadline.signal);
      for (const timer of timers) timer.cancel();
      return this.#complete(resolved, toolCallId, args, result);
    } catch (error) {
      for (const timer of timers) timer.cancel();
      if (signal.aborted) return this.#settle("cancelled", { text: "The call was cancelled.", isError: true });
      if (deadline.timedOut()) {
        this.#deps.log.warn({ tool: toolName, timeoutMs }, "tool timed out");
        return this.#complete(resolved, toolCallId, args, { text: `${toolName} did not answer within ${seconds(timeoutMs)}.`, isError: true }, "timeout");
      }
      const def = resolved.entry.def;
      const text = typeof def.onError === "function" ? def.onError(error) : (def.onError ?? `${toolName} failed: ${messageOf(error)}`);
      this.#deps.log.warn({ tool: toolName, err: error }, "tool failed");
      return this.#complete(resolved, toolCallId, args, { text, isError: true });
    } finally {
      deadline.dispose();
      this.#clientCalls.delete(toolCallId);
    }
  }

  #execute(resolved: ResolvedTool, args: unknown, ctx: ToolContext, signal: AbortSignal): Promise<ToolResult> {
    if (resolved.entry.executor === "host") {
      // A body that ignores its signal may run on, but the call settles when the signal fires.
      return raceAbort(resolved.toolset.execute(resolved.name, args, ctx).then(toToolResult), signal);
    }
    // A clientTool: `tool.called` asked the page to run it; its `tool_result` settles the call.
    const pending = this.#clientCalls.get(ctx.toolCallId);
    if (pending === undefined) return Promise.reject(new Error("client call was not registered"));
    return raceAbort(pending.result, signal);
  }

  async #startLine(resolved: ResolvedTool, toolCallId: string, args: unknown, signal: AbortSignal): Promise<void> {
    const start = pickVariant(resolved.entry.def.messages?.start, args, this.#deps.random);
    if (start === undefined || this.#hooks.userSpeaking?.() === true) return;
    this.#say({ toolCallId, kind: "start", text: start.content });
    if (start.blocking === true) await this.#deps.clock.sleep(spokenDurationMs(start.content), signal);
  }

  #scheduleLadder(resolved: ResolvedTool, toolCallId: string, args: unknown, timers: Timer[]): void {
    for (const step of planDelayedLadder(resolved.entry.def.messages?.delayed, args, this.#deps.random)) {
      timers.push(
        this.#deps.clock.setTimeout(() => {
          if (this.#hooks.userSpeaking?.() !== true) this.#say({ toolCallId, kind: "delayed", text: step.content });
        }, step.afterMs),
      );
    }
  }

  #complete(resolved: ResolvedTool, toolCallId: string, args: unknown, result: ToolResult, status?: ToolStatus): ToolOutcome {
    const failed = result.isError === true;
    const kind = failed ? "failed" : "complete";
    const line = pickVariant(resolved.entry.def.messages?.[kind], args, this.#deps.random);
    const settledStatus = status ?? (failed ? "failed" : "ok");
    if (line === undefined) return this.#settle(settledStatus, result);
    if (line.role === "system") {
      // The result is cut first, so the guidance is never what the cap cuts off.
      const guidance = `\n[guidance] ${line.content}`;
      const text = `${truncateToolResult(resultText(result), MAX_TOOL_RESULT_CHARS - guidance.length)}${guidance}`;
      return this.#settle(settledStatus, spread(result, { text }));
    }
    this.#say({ toolCallId, kind, text: line.content }, false);
    return this.#settle(settledStatus, result, line.content);
  }

  #say(line: ToolLine, announce = true): void {
    this.#hooks.emit({ type: "tool.message", toolCallId: line.toolCallId, kind: line.kind, text: line.text });
    if (announce) this.#hooks.line?.(line);
  }
}
