// What a Realtime client appends in the /v1/realtime tests: 20 ms frames of a 24 kHz PCM16 tone, in real time.
import { setTimeout as sleep } from "node:timers/promises";
import type { RealtimeTestClient } from "./realtime-client.js";

/** 20 ms of a 24 kHz PCM16 tone, base64. */
export function toneFrame(): string {
  const samples = new Int16Array(480);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 24_000));
  return Buffer.from(samples.buffer).toString("base64");
}

/** Append `ms` of tone in 20 ms `input_audio_buffer.append` events, in real time. */
export async function speakFor(rt: RealtimeTestClient, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 20) {
    rt.rt.send({ type: "input_audio_buffer.append", audio: toneFrame() });
    await sleep(20);
  }
}
