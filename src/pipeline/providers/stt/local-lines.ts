/**
 * pocketsphinx_continuous's output with `-time yes`, read into utterances. Per utterance it prints
 * its hypothesis, then one line per segment: `word start end confidence`, times in seconds of
 * stream time (since the first byte of input), e.g.
 *
 *     hello there
 *     <s> 0.000 0.640 0.999600
 *     hello(2) 0.650 1.020 0.999400
 *     there 1.030 1.400 0.980687
 *     </s> 1.650 1.730 1.000000
 *
 * (0.8+5prealpha, Debian's `pocketsphinx`: keyword mode prints `hello ` then `hello  0.700 0.830
 * 0.833334`; grammar mode ends with `<sil>` rather than `</s>`.) No line closes a block, but the
 * recognizer flushes stdout once per utterance, so a read that ends at a line boundary after a
 * segment line ends the block; so does the next hypothesis. A block split by the pipe at a line
 * boundary (one over 4 KiB, a long monologue) ends early: its end is then its last segment read.
 * Pure: text in, utterances out.
 */

/** One utterance: its hypothesis line and where it ends (stream ms; undefined if no segment line came). */
export interface Utterance {
  readonly text: string;
  readonly endMs: number | undefined;
}

/** `word start end confidence`: a segment line (hypothesis words are dictionary words, never numbers). */
const SEGMENT = /^\S+\s+-?\d+(?:\.\d+)?\s+(-?\d+(?:\.\d+)?)\s+-?[\d.]+(?:e[-+]?\d+)?$/i;

export class UtteranceLines {
  #tail = "";
  #pending: { text: string; endMs: number | undefined } | undefined;

  /** A read from stdout: the utterances it completes, in order. */
  push(chunk: string): Utterance[] {
    const done: Utterance[] = [];
    this.#tail += chunk;
    let newline: number;
    while ((newline = this.#tail.indexOf("\n")) >= 0) {
      this.#line(this.#tail.slice(0, newline), done);
      this.#tail = this.#tail.slice(newline + 1);
    }
    if (this.#tail === "" && this.#pending?.endMs !== undefined) this.#close(done);
    return done;
  }

  /** The output ended (the recognizer exited): what is left. */
  end(): Utterance[] {
    const done: Utterance[] = [];
    if (this.#tail !== "") this.#line(this.#tail, done);
    this.#tail = "";
    this.#close(done);
    return done;
  }

  #line(raw: string, done: Utterance[]): void {
    const line = raw.trim();
    const segment = SEGMENT.exec(line);
    if (segment !== null && this.#pending !== undefined) {
      const endMs = Math.round(Number(segment[1]) * 1000);
      this.#pending.endMs = Math.max(this.#pending.endMs ?? endMs, endMs);
      return;
    }
    this.#close(done);
    this.#pending = { text: line, endMs: undefined };
  }

  #close(done: Utterance[]): void {
    if (this.#pending !== undefined) done.push(this.#pending);
    this.#pending = undefined;
  }
}
