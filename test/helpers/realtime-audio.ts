// What a Realtime client appends in the /v1/realtime tests: 20 ms frames of a 24 kHz PCM16 tone, in real time.
import { setTimeout as sleep } from "node:timers/promises";
import type { FakeDeepgram } from "../../fakes/deepgram.js";
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

/**
 * A barge-in on the pipeline fakes (Deepgram STT), from the `openai` client: the user asks "where is
 * my order" (a final that ends the turn), the answer plays for `playMs` of wall time after its first
 * audio, then speech over it ("wait a moment please", 400 ms of tone) until its response ends.
 * `after`: the client's event count before the question. Returns the answer's first audio and the
 * `response.done` that ended it.
 */
export async function bargeInOnAnswer(client: RealtimeTestClient, stt: FakeDeepgram, playMs: number, after: number) {
  await speakFor(client, 100);
  stt.final("where is my order", { speechFinal: true });
  const first = await client.next("response.output_audio.delta", after);
  await sleep(playMs);
  stt.speechStarted();
  stt.partial("wait a moment");
  await speakFor(client, 400);
  stt.partial("wait a moment please");
  const cut = await client.next("response.done", after);
  return { first, cut };
}
