import type { TtsStreamEvents, WordTiming } from "../../src/pipeline/tts-port.js";

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
  return { events, chunks, words, order, ended, firstAudio, doneCount: () => doneCount, pcm: () => Buffer.concat(chunks) };
}

export type TtsRecorder = ReturnType<typeof ttsRecorder>;
