/**
 * What a link holds from its peer until the session attaches (docs/protocol.md "Limits":
 * `preStartAudioBytes`, `preStartCommands`): a client may speak before the providers have opened,
 * and a carrier streams from the moment it answers. Bounded three ways, so a stranger cannot
 * fill memory before any session exists: audio bytes, other items (commands, digits), and frames
 * of either kind (a peer sending one-byte frames pays per frame, not per byte).
 */

/** Frames held at most, whatever their size: 200 s of 20 ms frames, far past any start timeout. */
export const PRE_ATTACH_MAX_FRAMES = 10_000;

export interface PreAttachLimits {
  /** Audio bytes held at most (`preStartAudioBytes`). */
  readonly audioBytes: number;
  /** Items other than audio held at most (`preStartCommands`). */
  readonly commands: number;
}

export class PreAttachBuffer<T> {
  readonly #limits: PreAttachLimits;
  /** Audio bytes in `item`, or undefined when it is not audio. */
  readonly #audioBytes: (item: T) => number | undefined;
  readonly #overflow: (heldAudioBytes: number) => void;
  #held: T[] = [];
  #heldAudioBytes = 0;
  #heldCommands = 0;
  #overflowed = false;

  /** `overflow` is called once, at the first item dropped past the limits. */
  constructor(limits: PreAttachLimits, audioBytes: (item: T) => number | undefined, overflow: (heldAudioBytes: number) => void) {
    this.#limits = limits;
    this.#audioBytes = audioBytes;
    this.#overflow = overflow;
  }

  /** Holds `item`, or drops it when it is past the limits. */
  hold(item: T): void {
    const bytes = this.#audioBytes(item);
    const over =
      this.#held.length >= PRE_ATTACH_MAX_FRAMES ||
      (bytes === undefined ? this.#heldCommands >= this.#limits.commands : this.#heldAudioBytes + bytes > this.#limits.audioBytes);
    if (over) {
      if (!this.#overflowed) this.#overflow(this.#heldAudioBytes);
      this.#overflowed = true;
      return;
    }
    if (bytes === undefined) this.#heldCommands += 1;
    else this.#heldAudioBytes += bytes;
    this.#held.push(item);
  }

  /** Everything held, in arrival order; the buffer is empty afterwards. */
  drain(): T[] {
    const held = this.#held;
    this.#held = [];
    this.#heldAudioBytes = 0;
    this.#heldCommands = 0;
    return held;
  }
}
