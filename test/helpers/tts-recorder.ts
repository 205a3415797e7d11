import { expect, vi } from "vitest";
import { bytesToSamples } from "../../src/audio/pcm.js";
import type { TtsSession, TtsStreamEvents, WordTiming } from "../../src/pipeline/tts-port.js";
import { textFromPcm } from "../../fakes/tts-pcm.js";

/** Collects a TTS stream's events; `ended` settles on done or error. */
export function ttsRecorder() {
  const chunks: Uint8Array[] = [];
  const words: WordTiming[] = [];
  const order: string[] = [];
  let doneCount = 0;
  let resolveEnd!: (value: "done" | Error) => void;
  let resolveAudio!: () => void;
  const ended = new Promise<"done" | Error>((resolve) => (resolveEnd = resolve));
  const firstAudio = new Promise<void>((resolve) => (resolveAudio = resolve));
  const events: TtsStreamEvents = {
    audio: (pcm) => {
      chunks.push(pcm);
      order.push("audio");
      resolveAudio();
    },
    words: (timings) => {
      words.push(...timings);
      order.push("words");
    },
    done: () => {
      doneCount++;
      order.push("done");
      resolveEnd("done");
    },
    error: (error) => {
      order.push("error");
      resolveEnd(error);
    },
  };
  const pcm = (): Buffer => Buffer.concat(chunks);
  return { events, chunks, words, order, ended, firstAudio, doneCount: () => doneCount, pcm, samples: () => bytesToSamples(pcm()) };
}

export type TtsRecorder = ReturnType<typeof ttsRecorder>;

/** Speaks `pushes` as one stream on `session` (pushed in order, then ended), checks that it ends done, and resolves with its recorder. */
export async function speak(session: TtsSession, ...pushes: string[]): Promise<TtsRecorder> {
  const rec = ttsRecorder();
  const stream = session.stream(rec.events);
  for (const text of pushes) stream.push(text);
  stream.end();
  expect(await rec.ended).toBe("done");
  return rec;
}

/** Two pushes the socket vendors' tests speak on one context, a word boundary between them. */
export const TWO_PUSHES = ["Hello there, ", "how are you?"] as const;

/**
 * Checks what a 16 kHz session heard of TWO_PUSHES from a fake TTS (10 ms a character, fakes/tts-pcm.ts):
 * `spoken` as audio (the text with the vendor's own spacing), and word timings that run on from the
 * first sample across both pushes (ms).
 */
export function expectTwoPushes(rec: TtsRecorder, spoken: string): void {
  // 10 ms a character: 160 samples at 16 kHz, 2 bytes each.
  expect(rec.pcm().length).toBe(spoken.length * 160 * 2);
  expect(textFromPcm(rec.pcm(), 16000)).toBe(spoken);
  expect(rec.words.map((w) => w.word)).toEqual(["Hello", "there,", "how", "are", "you?"]);
  expect(rec.words[0]).toEqual({ word: "Hello", startMs: 0, endMs: 50 });
  expect(rec.words[2]!.startMs).toBeCloseTo(130);
  expect(rec.words[4]!.endMs).toBeCloseTo(250);
}

/**
 * For each `[requested, offered]` pair (Hz): a session opened (`open`) at the requested rate runs at
 * the offered one, and `push` is heard as "Hi. " at it; `asked` checks the vendor was asked for the
 * offered rate. (`push` "Hi." for a vendor that ends every chunk with a space itself.)
 */
export async function expectNearestRates(
  pairs: readonly (readonly [number, number])[],
  open: (sampleRate: number) => Promise<TtsSession>,
  asked: (offered: number) => void,
  push = "Hi. ",
): Promise<void> {
  for (const [requested, offered] of pairs) {
    const session = await open(requested);
    expect(session.sampleRate).toBe(offered);
    const rec = await speak(session, push);
    asked(offered);
    expect(textFromPcm(rec.pcm(), offered)).toBe("Hi. ");
  }
}

/** Base64 texts Node's lenient decoder would take as some bytes and a strict one refuses: a URL-safe letter, a stray `=`, a space. */
export const NOT_BASE64 = ["AAA-AAAA", "AA=AAAAA", "AAAA AAA"] as const;

/**
 * Speaks TWO_PUSHES on one stream and, while its context is open, has the vendor send each of
 * NOT_BASE64 as that context's audio (`audioMessage` writes the vendor's message): the stream must
 * end done with only the words' audio, and the adapter warn once (`warnings` counts its lines).
 */
export async function expectBadAudioDropped(
  session: TtsSession,
  server: { readonly messages: readonly Record<string, unknown>[]; sendRaw(text: string): void },
  audioMessage: (contextId: unknown, data: string) => object,
  warnings: () => number,
): Promise<TtsRecorder> {
  const rec = ttsRecorder();
  const stream = session.stream(rec.events);
  stream.push(TWO_PUSHES[0]);
  await vi.waitFor(() => expect(server.messages.length).toBeGreaterThan(0), { timeout: 3000, interval: 5 });
  const contextId = server.messages[0]?.context_id;
  for (const data of NOT_BASE64) server.sendRaw(JSON.stringify(audioMessage(contextId, data)));
  await vi.waitFor(() => expect(warnings()).toBe(1), { timeout: 3000, interval: 5 });
  stream.push(TWO_PUSHES[1]);
  stream.end();
  expect(await rec.ended).toBe("done");
  expect(warnings()).toBe(1);
  return rec;
}
