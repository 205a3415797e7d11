/** What the streaming-STT fakes (Deepgram, AssemblyAI) share: reading a client's control frames, and audio-timed triggers. */

/** A client text frame as a record; anything that is not a JSON object becomes `{ type: "<invalid>", raw }`. */
export function parseClientMessage(buffer: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(buffer.toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { type: "<invalid>", raw: parsed };
  } catch {
    return { type: "<invalid>", raw: buffer.toString("utf8") };
  }
}

/** The `transcript` option: one text, a list (one utterance each, in order), or the default "hello world". */
export function transcriptList(option: string | readonly string[] | undefined): readonly string[] {
  return option === undefined ? ["hello world"] : typeof option === "string" ? [option] : option;
}

/**
 * Things that happen once a connection has sent enough audio: one-shot hooks (`at`), and in auto
 * mode the next transcript every `transcriptAfterMs` of audio.
 */
export class AudioTriggers<C extends { readonly audioMs: number }> {
  readonly #hooks: { readonly ms: number; readonly fn: (c: C) => void; fired: boolean }[] = [];
  readonly #spoken = new WeakMap<C, number>();

  constructor(
    private readonly transcripts: readonly string[],
    private readonly transcriptAfterMs: number | undefined,
  ) {}

  /** Run `fn` once, on the first connection whose audio reaches `ms`. */
  at(ms: number, fn: (c: C) => void): void {
    this.#hooks.push({ ms, fn, fired: false });
  }

  /** `c` sent more audio: fire due hooks; returns the next auto transcript when one is due. */
  advanced(c: C): string | undefined {
    for (const hook of this.#hooks) {
      if (!hook.fired && c.audioMs >= hook.ms) {
        hook.fired = true;
        hook.fn(c);
      }
    }
    const after = this.transcriptAfterMs;
    const spoken = this.#spoken.get(c) ?? 0;
    if (after === undefined || spoken >= this.transcripts.length || c.audioMs < after * (spoken + 1)) return undefined;
    this.#spoken.set(c, spoken + 1);
    return this.transcripts[spoken] ?? "";
  }
}
