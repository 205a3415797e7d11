/**
 * What `switchboard console` prints: the transcript (the agent's reply streamed as it grows, tool
 * lines once) and the turn in flight followed through its events to its latency line.
 */
import type { ServerEvent } from "../transport/protocol.js";
import { describeLatency } from "./events.js";

/** After a cancelled or failed reply, how long its `metrics.turn` may take (ms; a pipeline's failed reply sends none). */
const SETTLE_GRACE_MS = 1000;

/**
 * The console's transcript: whole lines, and the agent's reply streamed as it grows. Each
 * `agent-transcript.updated` is a snapshot of the reply so far; only what it adds is written. Tool
 * lines already shown as `tool:` lines (they are part of the snapshot too) are not repeated.
 */
export class TranscriptWriter {
  readonly #write: (text: string) => void;
  /** An "agent: " line is open (no newline yet). */
  #open = false;
  /** The snapshot written so far, for the reply in progress. */
  #shown = "";
  /** Tool lines shown since, that the next snapshots will carry. */
  #toolLines: string[] = [];

  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /** True while a reply's line is open. */
  get streaming(): boolean {
    return this.#open;
  }

  /** True when a snapshot has been written for the reply in progress. */
  get replying(): boolean {
    return this.#shown !== "";
  }

  line(text: string): void {
    this.#close();
    this.#write(`${text}\n`);
  }

  /** A tool line (`tool.message`): the next snapshot repeats it. */
  toolLine(text: string): void {
    this.#toolLines.push(text.trim());
  }

  /** An `agent-transcript.updated` snapshot. */
  snapshot(text: string): void {
    let fresh: string;
    if (text.startsWith(this.#shown)) {
      fresh = text.slice(this.#shown.length);
    } else {
      // Not a continuation (the error phrase replacing a failed reply): the new text, whole, on a new line.
      this.#close();
      fresh = text;
    }
    this.#shown = text;
    for (let line = this.#leadingToolLine(fresh); line !== undefined; line = this.#leadingToolLine(fresh)) {
      fresh = fresh.trimStart().slice(line.length);
      this.#toolLines.splice(this.#toolLines.indexOf(line), 1);
    }
    if (fresh.trim() === "") return;
    if (this.#open) {
      this.#write(fresh);
    } else {
      this.#write(`agent: ${fresh.trimStart()}`);
      this.#open = true;
    }
  }

  /** The reply ended: its line is closed, and the next snapshot starts a new reply. */
  endReply(): void {
    this.#close();
    this.#shown = "";
    this.#toolLines = [];
  }

  #leadingToolLine(text: string): string | undefined {
    const trimmed = text.trimStart();
    return this.#toolLines.find((line) => line !== "" && trimmed.startsWith(line));
  }

  #close(): void {
    if (!this.#open) return;
    this.#write("\n");
    this.#open = false;
  }
}


interface Turn {
  /** When the turn began: the typed line sent, or the spoken turn committed (ms). */
  readonly startedAt: number;
  readonly text: string;
  readonly typed: boolean;
  committed: boolean;
  firstTextAt?: number;
  grace?: NodeJS.Timeout;
  readonly settle: () => void;
}

/**
 * Follows the turn in flight through its events: the reply's first text (wall time), its
 * `metrics.turn` (the latency line), and when it is over (the input loop waits for that).
 */
export class TurnTracker {
  #turn: Turn | undefined;
  /** The model failed during the turn in flight. */
  #failed = false;
  readonly #latency: (line: string) => void;

  constructor(latency: (line: string) => void) {
    this.#latency = latency;
  }

  get pending(): boolean {
    return this.#turn !== undefined;
  }

  /** A typed line is about to be sent: resolves when its reply is over. */
  typed(text: string): Promise<void> {
    this.#drop();
    return new Promise((resolve) => {
      this.#turn = { startedAt: Date.now(), text, typed: true, committed: false, settle: resolve };
    });
  }

  event(event: ServerEvent): void {
    const turn = this.#turn;
    switch (event.type) {
      case "user-transcript.committed":
        if (turn?.typed === true && !turn.committed && event.text === turn.text) turn.committed = true;
        else {
          // A spoken turn (--voice): it supersedes whatever was in flight.
          this.#drop();
          this.#turn = { startedAt: Date.now(), text: event.text, typed: false, committed: true, settle: () => {} };
        }
        return;
      case "agent-transcript.updated":
        if (turn?.committed === true && turn.firstTextAt === undefined) turn.firstTextAt = Date.now();
        return;
      case "metrics.turn":
        if (turn?.committed !== true) return;
        // A spoken turn's wall time would start at its commit, after the endpointing: its stages say more.
        this.#latency(describeLatency(event, turn.typed && turn.firstTextAt !== undefined ? turn.firstTextAt - turn.startedAt : undefined, !turn.typed));
        this.#drop();
        return;
      case "reply.cancelled":
        if (turn !== undefined) this.#soon(turn);
        return;
      case "reply.completed":
        // A pipeline's failed reply ends with reply.completed after the error phrase, and no metrics.turn.
        if (turn?.committed === true && this.#failed) this.#soon(turn);
        return;
      case "error.reported":
        if (event.code === "llm") this.#failed = true;
        // A refused line (too long, …) never becomes a turn.
        if (event.code === "protocol" && turn?.typed === true && !turn.committed) this.#drop();
        return;
      default:
        return;
    }
  }

  /** The session ended: nothing is in flight any more. */
  end(): void {
    this.#drop();
  }

  #soon(turn: Turn): void {
    turn.grace ??= setTimeout(() => {
      if (this.#turn === turn) this.#drop();
    }, SETTLE_GRACE_MS);
  }

  #drop(): void {
    const turn = this.#turn;
    this.#turn = undefined;
    this.#failed = false;
    if (turn === undefined) return;
    if (turn.grace !== undefined) clearTimeout(turn.grace);
    turn.settle();
  }
}
