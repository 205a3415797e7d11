import type { WordTiming } from "./tts-port.js";

/** Ear lag: audio counts as heard this long after it played (ms; docs/protocol.md "Behaviour in detail", "Barge-in order"). */
export const EAR_LAG_MS = 150;

/** One spoken segment of a reply: its text, audio length, and word timings when the TTS gave them. */
export interface SpokenSegment {
  readonly text: string;
  /** Model text (recorded) or filler (tool lines, dead-air cover: never recorded). */
  readonly kind: "model" | "filler";
  /** Ms of audio received for it. */
  audioMs: number;
  /** Ms into the reply's audio timeline where this segment's audio starts. */
  readonly startMs: number;
  readonly words: WordTiming[];
}

/** The longest prefix of `text` that ends at a word boundary within `chars` characters. */
export function snapToWord(text: string, chars: number): string {
  if (chars >= text.length) return text;
  if (chars <= 0) return "";
  const cut = text.slice(0, chars);
  if (/\s/.test(text.charAt(chars))) return cut.trimEnd();
  const space = cut.search(/\s\S*$/);
  return space <= 0 ? "" : cut.slice(0, space).trimEnd();
}

/** The part of one segment heard by `heardMs` into the reply's audio. */
export function heardOf(segment: SpokenSegment, heardMs: number): string {
  const into = heardMs - segment.startMs;
  if (into <= 0) return "";
  if (segment.audioMs > 0 && into >= segment.audioMs) return segment.text;
  if (segment.words.length > 0) {
    const spoken = segment.words.filter((w) => w.endMs <= into).map((w) => w.word);
    return matchWords(segment.text, spoken.length);
  }
  if (segment.audioMs <= 0) return "";
  return snapToWord(segment.text, Math.floor((segment.text.length * into) / segment.audioMs));
}

/** The prefix of `text` holding its first `count` words, as written. */
function matchWords(text: string, count: number): string {
  if (count <= 0) return "";
  const pattern = /\S+/g;
  let end = 0;
  for (let i = 0; i < count; i++) {
    const match = pattern.exec(text);
    if (match === null) return text;
    end = match.index + match[0].length;
  }
  return text.slice(0, end);
}

/**
 * What the caller heard of a reply's model text, given how far playback got (ms of the reply's
 * audio timeline, ear lag already applied).
 */
export function heardModelText(segments: readonly SpokenSegment[], heardMs: number): string {
  return segments
    .filter((s) => s.kind === "model")
    .map((s) => heardOf(s, heardMs))
    .filter((t) => t.trim() !== "")
    .map((t) => t.trim())
    .join(" ");
}
