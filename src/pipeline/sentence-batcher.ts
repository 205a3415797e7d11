/**
 * Text → TTS batching (docs/architecture.md "Data flow per mode"): the first chunk of a segment
 * goes out at once (time to first audio); after that text is released at sentence ends
 * (. ! ? …), never split on commas; `flush()` releases the rest (before a tool call, at the end of
 * a reply).
 */
export class SentenceBatcher {
  readonly #send: (text: string) => void;
  #buffer = "";
  #started = false;

  constructor(send: (text: string) => void) {
    this.#send = send;
  }

  push(delta: string): void {
    if (delta === "") return;
    if (!this.#started) {
      this.#started = true;
      if (delta.trim() !== "") {
        this.#send(delta);
        return;
      }
    }
    this.#buffer += delta;
    const end = lastSentenceEnd(this.#buffer);
    if (end > 0) {
      const ready = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end);
      if (ready.trim() !== "") this.#send(ready);
    }
  }

  /** Release whatever is buffered; the next push starts a new segment. */
  flush(): void {
    const rest = this.#buffer;
    this.#buffer = "";
    this.#started = false;
    if (rest.trim() !== "") this.#send(rest);
  }
}

/** Index just past the last sentence end that is followed by whitespace, or 0. */
export function lastSentenceEnd(text: string): number {
  let found = 0;
  const pattern = /[.!?…]+["')\]]*\s+/g;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) found = match.index + match[0].length;
  return found;
}
