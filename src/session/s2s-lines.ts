/**
 * A line the service speaks out of band, in the model's own voice: a tool's start or delayed
 * line (filler, never recorded), or a line recorded as the agent's once the service has spoken it
 * (the greeting, a farewell, a guardrail's replacement).
 */
/** "Say exactly" instructions for a line spoken in the model's own voice. */
export function sayExactly(text: string): string {
  return `Say exactly the following, word for word, and nothing else: "${text}"`;
}

export type OutOfBandLine = { readonly kind: "tool" } | { readonly kind: "recorded"; readonly settle: () => void };

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
  readonly #running = new Map<string, OutOfBandLine>();

  ask(line: OutOfBandLine): void {
    this.#asked.push(line);
  }

  /** An out-of-band response started: the oldest line asked for. */
  started(responseId: string): void {
    this.#running.set(responseId, this.#asked.shift() ?? { kind: "tool" });
  }

  /** The line a running out-of-band response speaks. */
  get(responseId: string): OutOfBandLine | undefined {
    return this.#running.get(responseId);
  }

  /** Its response is done: the line, no longer running. */
  done(responseId: string): OutOfBandLine | undefined {
    const line = this.#running.get(responseId);
    this.#running.delete(responseId);
    return line;
  }

  /** Responses speaking tool lines right now. */
  toolLines(): string[] {
    return [...this.#running].filter(([, line]) => line.kind === "tool").map(([id]) => id);
  }
}
