// The waiting sounds the gateway tests play (docs/telephony.md "Audio while waiting"): constant
// sounds at 24 kHz, gain 1, so a sample says what it carries (the fake TTS speaks character codes,
// 32–126), and a tool slow enough for the thinking sound to start.
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { decodeWaitingSound, type WaitingSounds } from "../../src/audio/waiting-sound.js";
import { tool } from "../../src/manifest/index.js";
import { constantWav } from "./tone.js";

/** The bed's sample value. */
export const BED = 10_000;
/** The thinking sound's sample value (over the bed: BED + HUM). */
export const HUM = 20_000;

/** The thinking sound after 300 ms, and the bed. */
export const SOUNDS: WaitingSounds = {
  thinking: { sound: decodeWaitingSound(constantWav({ ms: 200, value: HUM, rate: 24000 })), gain: 1, afterMs: 300 },
  ambience: { sound: decodeWaitingSound(constantWav({ ms: 200, value: BED, rate: 24000 })), gain: 1 },
};

/** The agent's `waitingAudio` naming SOUNDS (the gateway option `waitingAudio` supplies them). */
export const WAITING_AUDIO = { thinking: { file: "hum.wav", afterMs: 300, volume: 1 }, ambience: { file: "bed.wav", volume: 1 } } as const;

/** What one sample carries: the bed, the thinking sound over it, the fake TTS's speech over the bed, or something else. */
export function sampleKind(sample: number): string {
  if (sample === BED) return "bed";
  if (sample === BED + HUM) return "thinking";
  if (sample > BED && sample < BED + 200) return "speech";
  return `other:${sample}`;
}

/** An order lookup that takes 1.2 s: long enough for the thinking sound. */
export const slowLookup = tool({
  description: "Look up an order (slowly)",
  parameters: Type.Object({ orderId: Type.String() }),
  execute: async ({ orderId }) => {
    await sleep(1200);
    return `Order ${orderId} shipped on Friday.`;
  },
});
