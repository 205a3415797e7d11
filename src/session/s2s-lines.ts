/**
 * A line the service speaks out of band, in the model's own voice: a tool's start or delayed
 * line (filler, never recorded), or a line recorded as the agent's once the service has spoken it
 * (the greeting, a farewell, a guardrail's replacement).
 */
import { SmallMap } from "../small-map.js";

/** "Say exactly" instructions for a line spoken in the model's own voice. */
export function sayExactly(text: string): string {
  return `Say exactly the following, word for word, and nothing else: "${text}"`;
}

/** `settle(heard)`: once the caller has heard the line whole (`true`), or a barge-in or cancel cut it (`false`). */
export type OutOfBandLine = { readonly kind: "tool" } | { readonly kind: "recorded"; readonly settle: (heard: boolean) => void };

/** A line's response running: the line, and the cuts counted when it started. */
interface Running {
  readonly line: OutOfBandLine;
  readonly cutsAtStart: number;
}

/** What `done` hands back: the line, and whether a barge-in or cancel has cut it since it started (asked later: it may still be playing). */
export interface DoneLine {
  readonly line: OutOfBandLine;
  readonly cut: () => boolean;
}

/**
 * The out-of-band lines asked of the service, matched to the responses that speak them. The
 * service names a response only when it starts it, and starts out-of-band responses in the order
 * they were asked for (OpenAI Realtime sends each `response.create` at once; Gemini Live answers
 * its requests oldest first), so each started one is the oldest line still waiting.
 */
export class OutOfBandLines {
  /** Asked for, not started yet: oldest first. */
  #asked: OutOfBandLine[] = [];
  /** Started and not done, by response id. */
  readonly #running = new SmallMap<string, Running>();
  /** Barge-ins and cancels so far: a line started before the latest one was cut. */
  #cuts = 0;

  ask(line: OutOfBandLine): void {
    this.#asked.push(line);
  }

  /** An out-of-band response started: the oldest line asked for. */
  started(responseId: string): void {
    this.#running.set(responseId, { line: this.#asked.shift() ?? { kind: "tool" }, cutsAtStart: this.#cuts });
  }

  /** The line a running out-of-band response speaks. */
  get(responseId: string): OutOfBandLine | undefined {
    return this.#running.get(responseId)?.line;
  }

  /** Its response is done: the line, no longer running. */
  done(responseId: string): DoneLine | undefined {
    const running = this.#running.get(responseId);
    if (running === undefined) return undefined;
    this.#running.delete(responseId);
    return { line: running.line, cut: () => this.#cuts !== running.cutsAtStart };
  }

  /** A barge-in or cancel: every line started so far, running or still playing, is cut. */
  cut(): void {
    this.#cuts += 1;
  }

  /** Responses speaking tool lines right now. */
  toolLines(): string[] {
    return this.#running.entries().filter(([, running]) => running.line.kind === "tool").map(([id]) => id);
  }
}
