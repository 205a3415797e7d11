/**
 * A session's side of the agent's durable workflows (docs/workflows.md "From a live session"):
 * the `ctx.workflows` its tools get — `start` (the agent's workflows only, the run's context the
 * session's plain data) and `find` (a key's runs, newest first) — and, for runs started with
 * `notify: true`, the note the agent is told when one ends while the session is live: held until a
 * polite moment (nobody speaking, nothing in flight or playing), then given to the mode, which
 * puts it in the model's context and runs one reply. Several runs ending before that moment make
 * one note. A run that ends after the session has ended tells nobody: it is found by its key.
 */
import type { Clock, Timer } from "../clock.js";
import { messageOf } from "../errors.js";
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import type { RunContextData, ToolWorkflows, WorkflowRunView, WorkflowStartOptions } from "../manifest/index.js";
import { NOTE_TOOL_NAME, type AgentNote } from "../turn/agent-note.js";
import { WorkflowRequestError, type EndStatus, type RunEnd, type RunInfo, type WorkflowEngine } from "../workflows/engine.js";
import type { Conversation } from "./conversation.js";
import type { SessionIdentity } from "./session-deps.js";
import { spread } from "../spread.js";

/** Ended runs one note tells (runs): more are counted in it, not listed. */
export const MAX_PENDING_NOTES = 4;
/** Runs started with `notify: true` that one session waits on at a time (runs); one more such start is refused. */
export const MAX_NOTIFY_RUNS = 16;
/** Runs `find(key)` returns, the newest (runs). */
export const MAX_FOUND_RUNS = 20;
/** A run's output in a note, as JSON (characters; longer is cut with "…"). */
export const MAX_NOTE_OUTPUT_CHARS = 1_000;
/** A failed run's error message in a note (characters). */
export const MAX_NOTE_ERROR_CHARS = 500;
/** How often a held note asks again for a polite moment (ms, on the session's clock). */
export const NOTE_RETRY_MS = 250;

/** What the session lends the notes (its port: methods, called on it). */
export interface WorkflowNoteHooks {
  readonly clock: Clock;
  readonly log: Logger;
  readonly conversation: Conversation;
  emit(event: EventBody): void;
  /** Nobody is speaking and nothing is in flight or playing: the agent may speak up now. */
  politeMoment(): boolean;
  /** The mode can give the model a note (false: an s2s service that cannot). */
  takesNotes(): boolean;
  /** Give the mode the note (one reply follows); false when it cannot take it now. */
  note(note: AgentNote): boolean;
}

interface EndedRun {
  readonly runId: string;
  readonly workflow: string;
  readonly status: EndStatus;
  readonly output?: unknown;
  readonly error?: string;
}

const TERMINAL: ReadonlySet<string> = new Set<EndStatus>(["completed", "failed", "cancelled"]);

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A run's output as bounded JSON. */
function outputText(output: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch {
    json = undefined;
  }
  return clip(json ?? "null", MAX_NOTE_OUTPUT_CHARS);
}

/** What the model reads: who it is from, what to do with it, and each run's outcome (bounded). */
export function noteText(runs: readonly EndedRun[], more: number): string {
  const lines = runs.map((run) => {
    const head = `- workflow "${run.workflow}" (run ${run.runId})`;
    if (run.status === "completed") return `${head} completed; its output: ${outputText(run.output)}`;
    if (run.status === "failed") return `${head} failed: ${clip(run.error ?? "no reason given", MAX_NOTE_ERROR_CHARS)}`;
    return `${head} was cancelled`;
  });
  if (more > 0) lines.push(`- ${more} more ${more === 1 ? "run" : "runs"} ended (not listed)`);
  return [`Workflow update from the system, not from the caller. Tell the caller what it means for them, in your own words and briefly:`, ...lines].join("\n");
}

/** A run as `find` lists it: plain data, no engine fields beyond these. */
function view(run: RunInfo): WorkflowRunView {
  return {
    runId: run.runId,
    workflow: run.workflow,
    status: run.status,
    ...(run.key === undefined ? {} : { key: run.key }),
    ...(run.output === undefined ? {} : { output: run.output }),
    ...(run.error === undefined ? {} : { error: run.error }),
    createdAt: run.createdAt,
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    ...(run.completedAt === undefined ? {} : { completedAt: run.completedAt }),
  };
}

export class WorkflowNotes {
  /** `ctx.workflows`: what the session's tools get. */
  readonly tools: ToolWorkflows;
  readonly #engine: WorkflowEngine;
  readonly #names: ReadonlySet<string>;
  readonly #context: RunContextData;
  readonly #hooks: WorkflowNoteHooks;
  /** Runs started with notify that have not been told yet: runId → workflow. */
  readonly #watched = new Map<string, string>();
  #pending: EndedRun[] = [];
  /** Runs that ended past MAX_PENDING_NOTES before the note went out. */
  #more = 0;
  #timer: Timer | undefined;
  #notes = 0;
  #closed = false;
  readonly #unsubscribe: () => void;

  /** The agent's `declared` workflows the gateway's engine runs; none (undefined) without an engine or workflows. */
  static for(engine: WorkflowEngine | undefined, declared: readonly string[], identity: SessionIdentity, hooks: WorkflowNoteHooks): WorkflowNotes | undefined {
    if (engine === undefined || declared.length === 0) return undefined;
    // A workflow added by a reload after the engine opened is not in it: starting it says so.
    const missing = declared.filter((name) => !engine.workflows.has(name));
    if (missing.length > 0) identity.log.warn({ missing }, "workflows the engine was not opened with (added by a reload?): restart the gateway to run them");
    const context = { sessionId: identity.sessionId, agent: identity.agentName, mode: identity.mode, transport: identity.transport };
    return new WorkflowNotes(engine, declared.filter((name) => engine.workflows.has(name)), context, hooks);
  }

  /** `names`: the agent's workflows this engine runs; `context`: the plain data every run started here carries. */
  constructor(engine: WorkflowEngine, names: readonly string[], context: RunContextData, hooks: WorkflowNoteHooks) {
    this.#engine = engine;
    this.#names = new Set(names);
    this.#context = context;
    this.#hooks = hooks;
    this.#unsubscribe = engine.onRunEnd((end) => void this.#ended(end.runId, end));
    this.tools = {
      start: (name, input, options) => this.#start(name, input, options),
      find: (key) => this.#find(key),
    };
  }

  /** Runs this session waits on, and ended runs whose note is held. */
  get waiting(): { readonly runs: number; readonly notes: number } {
    return { runs: this.#watched.size, notes: this.#pending.length + this.#more };
  }

  /** The session ended: nothing more is told here (the runs go on, found by their keys). */
  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#watched.clear();
    this.#pending = [];
    this.#more = 0;
  }

  async #start(name: string, input: unknown, options: WorkflowStartOptions = {}): Promise<{ readonly runId: string }> {
    if (this.#closed) throw new Error("the session has ended: no workflow can be started from it");
    if (typeof name !== "string" || !this.#names.has(name)) {
      throw new Error(`there is no workflow ${JSON.stringify(name)} for this agent; its workflows are ${[...this.#names].join(", ")}`);
    }
    const notify = options.notify === true;
    if (notify && !this.#hooks.takesNotes()) {
      throw new Error("notify: this speech-to-speech service cannot be told of a run's end during the call; start the run without notify and find it by its key later");
    }
    if (notify && this.#watched.size >= MAX_NOTIFY_RUNS) {
      throw new Error(`notify: this call already waits on ${MAX_NOTIFY_RUNS} runs; start this one without notify and find it by its key later`);
    }
    let runId: string;
    try {
      ({ runId } = await this.#engine.start(name, input, spread(options.key === undefined ? {} : { key: options.key }, { context: this.#context })));
    } catch (error) {
      if (error instanceof WorkflowRequestError) throw new Error(`workflow "${name}" was not started: ${error.message}`, { cause: error });
      throw error;
    }
    if (notify && !this.#closed) {
      this.#watched.set(runId, name);
      // A run may end before it was watched (a body with nothing to wait for): it is told all the same.
      void this.#ended(runId);
    }
    return { runId };
  }

  async #find(key: string): Promise<readonly WorkflowRunView[]> {
    try {
      const runs = await this.#engine.find(key);
      return runs.slice(-MAX_FOUND_RUNS).reverse().map(view);
    } catch (error) {
      if (error instanceof WorkflowRequestError) throw new Error(`no runs could be looked up: ${error.message}`, { cause: error });
      throw error;
    }
  }

  /** A run ended (the engine said so, `end`), or may have (just started): told once, if watched. */
  async #ended(runId: string, end?: RunEnd): Promise<void> {
    if (this.#closed || !this.#watched.has(runId)) return;
    let run: RunInfo | undefined;
    try {
      run = await this.#engine.get(runId);
    } catch (error) {
      this.#hooks.log.warn({ runId, err: messageOf(error) }, "a workflow run could not be read for its note");
    }
    const status = run !== undefined && TERMINAL.has(run.status) ? (run.status as EndStatus) : end?.status;
    // Not ended yet: its end comes through onRunEnd.
    if (status === undefined) return;
    const workflow = this.#watched.get(runId);
    // Told once, and never after the session ended.
    if (this.#closed || workflow === undefined || !this.#watched.delete(runId)) return;
    const ended: EndedRun = {
      runId,
      workflow,
      status,
      ...(status === "completed" && run?.output !== undefined ? { output: run.output } : {}),
      ...(status === "failed" && run?.error !== undefined ? { error: run.error.message } : {}),
    };
    if (this.#pending.length < MAX_PENDING_NOTES) this.#pending.push(ended);
    else this.#more += 1;
    if (this.#timer === undefined) this.#attempt();
  }

  /** Give the held note now if the moment is polite; else ask again shortly. */
  #attempt(): void {
    this.#timer = undefined;
    if (this.#closed || this.#pending.length === 0) return;
    const hooks = this.#hooks;
    if (hooks.politeMoment()) {
      const runs = this.#pending;
      const note: AgentNote = { id: `wfnote_${this.#notes + 1}`, text: noteText(runs, this.#more) };
      if (hooks.note(note)) {
        this.#notes += 1;
        this.#pending = [];
        this.#more = 0;
        const told = runs.map(({ runId, workflow, status }) => ({ runId, workflow, status }));
        hooks.emit({ type: "workflow.updated", runs: told, note: note.text });
        // In the conversation's record (history.restored, the call record) as the call it is in the model's context.
        hooks.conversation.recordTool(hooks.conversation.epoch, { toolCallId: note.id, toolName: NOTE_TOOL_NAME, args: { runs: told }, result: note.text });
        hooks.log.info({ runs: told.length }, "workflow note given");
        return;
      }
    }
    this.#timer = hooks.clock.setTimeout(() => this.#attempt(), NOTE_RETRY_MS);
  }
}
