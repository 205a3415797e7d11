// The local STT's voiced-speech tracker on its own (no pocketsphinx): fvad's speech segments, the
// voicing check that tells a voice from a cough, and the gate on pocketsphinx's lines.
// test/unit/pipeline/stt-local.test.ts drives it inside the adapter, with the recognizer.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readWav } from "../../../src/audio/wav.js";
import { VoicedSpeech } from "../../../src/pipeline/providers/stt/local-voicing.js";
import { NO_LOG, type ProviderLog } from "../../../src/providers/provider-log.js";
import { createVad, type Vad } from "../../../src/pipeline/vad.js";
import { fakeVad } from "../../../src/testing/fake-speech.js";

const RATE = 16000;
const FRAME_BYTES = 640; // 20 ms at 16 kHz

function clip(name: string): Uint8Array {
  const wav = readWav(new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url))));
  return new Uint8Array(wav.samples.buffer, wav.samples.byteOffset, wav.samples.byteLength);
}

/** A microphone's noise floor: ±20 LSB (≈ −64 dBFS), deterministic. */
function noise(ms: number, amplitude = 20, seed = 7): Uint8Array {
  const samples = new Int16Array((ms * RATE) / 1000);
  let state = seed;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples[i] = (state % (2 * amplitude + 1)) - amplitude;
  }
  return new Uint8Array(samples.buffer);
}

/** A steady vowel-like tone: `hz` (in the 80–500 Hz pitch range), amplitude 3000. */
function tone(ms: number, hz = 200): Uint8Array {
  const samples = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(3000 * Math.sin((2 * Math.PI * hz * i) / RATE));
  return new Uint8Array(samples.buffer);
}

function silence(ms: number): Uint8Array {
  return new Uint8Array((ms * RATE * 2) / 1000);
}

/** A tracker recording its events in order, with the ms of audio pushed when each fired. */
function tracker(vad: Vad, log: ProviderLog = NO_LOG) {
  const events: string[] = [];
  let pushedMs = 0;
  const voiced = new VoicedSpeech(vad, log, { started: () => events.push(`started@${pushedMs}`), ended: () => events.push(`ended@${pushedMs}`) });
  const play = (pcm: Uint8Array): void => {
    for (let offset = 0; offset < pcm.byteLength; offset += FRAME_BYTES) {
      const frame = pcm.subarray(offset, offset + FRAME_BYTES);
      pushedMs += frame.byteLength / 32;
      voiced.push(frame);
    }
  };
  return { voiced, events, play };
}

describe("VoicedSpeech over a stand-in VAD (every non-zero frame is speech)", () => {
  it("a voiced segment: started once its voiced frames reach 60 ms, ended after 500 ms of silence; its line counts once", () => {
    const { voiced, events, play } = tracker(fakeVad(RATE));
    play(tone(400));
    // The detector starts on the 3rd speech frame (60 ms); voicing counts from that frame: 60 ms voiced at 100 ms.
    expect(events).toEqual(["started@100"]);
    play(silence(600));
    expect(events).toEqual(["started@100", "ended@900"]);
    expect(voiced.takeLine()).toBe(true);
    expect(voiced.takeLine()).toBe(false); // the count started over
  });

  it("a line takes only the voice before its utterance's end: a second segment already judged waits for its own line", () => {
    const { voiced, play } = tracker(fakeVad(RATE));
    play(tone(400)); // voiced 40–400 ms (the detector starts on the 3rd frame)
    play(silence(600));
    play(tone(400)); // voiced 1040–1400 ms
    play(silence(600));
    expect(voiced.takeLine(1000)).toBe(true);
    expect(voiced.takeLine(1020)).toBe(false); // nothing voiced between the two ends
    expect(voiced.takeLine(2000)).toBe(true);
    expect(voiced.takeLine()).toBe(false);
  });

  it("a line ending inside a voiced run takes the part before its end; the rest counts for the next", () => {
    const { voiced, play } = tracker(fakeVad(RATE));
    play(tone(400)); // voiced 40–400 ms
    expect(voiced.takeLine(300)).toBe(true);
    expect(voiced.takeLine(340)).toBe(false); // 40 ms of the run were left before 340
    expect(voiced.takeLine(400)).toBe(true); // and 60 more
  });

  it("a segment without pitch (loud noise): ended, never started, and a line for it does not count", () => {
    const { voiced, events, play } = tracker(fakeVad(RATE));
    play(noise(400, 8000));
    play(silence(600));
    expect(events).toEqual(["ended@900"]);
    expect(voiced.takeLine()).toBe(false);
  });

  it("a VAD that throws on a chunk: the chunk is skipped with a warning, and the next ones are judged", () => {
    const inner = fakeVad(RATE);
    let fail = true;
    const vad: Vad = {
      ...inner,
      push: (pcm) => {
        if (fail) {
          fail = false;
          throw new Error("fvad broke");
        }
        return inner.push(pcm);
      },
    };
    const warnings: object[] = [];
    const { events, play } = tracker(vad, { ...NO_LOG, warn: (fields) => void warnings.push(fields) });
    play(tone(400));
    expect(warnings).toEqual([{ err: "fvad broke" }]);
    expect(events).toEqual(["started@120"]); // one frame later than an unbroken VAD
  });

  it("close() closes the VAD", () => {
    const vad = fakeVad(RATE);
    const { voiced, play, events } = tracker(vad);
    voiced.close();
    play(tone(400));
    expect(events).toEqual([]);
  });
});

describe("VoicedSpeech over fvad: the fixtures", () => {
  it("hello.wav over a noise floor: one voiced start, one end; a cough adds neither a start nor a line", async () => {
    const { voiced, events, play } = tracker(await createVad({ sampleRate: RATE }));
    play(noise(500));
    play(clip("hello.wav"));
    play(noise(1000));
    expect(events.map((e) => e.split("@")[0])).toEqual(["started", "ended"]);
    expect(voiced.takeLine()).toBe(true);
    play(clip("cough.wav"));
    play(noise(1000));
    expect(events.filter((e) => e.startsWith("started"))).toHaveLength(1);
    expect(voiced.takeLine()).toBe(false);
    voiced.close();
  });
});
