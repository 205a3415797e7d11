import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { bytesToSamples, samplesToBytes } from "../../../src/audio/pcm.js";
import { decodeWaitingSound, type WaitingSounds } from "../../../src/audio/waiting-sound.js";
import { FILL_CHUNK_MS, FILL_LEAD_MS, Pacer } from "../../../src/transport/pacer.js";
import { stamp } from "../../../src/transport/protocol.js";
import { WaitingMix, waitingFeed } from "../../../src/transport/waiting-mix.js";
import { constantWav } from "../../helpers/tone.js";

const RATE = 8000;
const BED = 100;
const HUM = 1000;
const VOICE = 10_000;

/** A link in miniature, as ClientConnection wires it: PCM at 8 kHz, the mix under agent audio, the feed in silences. */
function link(sounds: { ambience?: boolean; thinking?: { afterMs: number } }) {
  const clock = virtualClock(0);
  const sent: { at: number; first: number; ms: number }[] = [];
  const texts: string[] = [];
  const pacer = new Pacer(
    {
      sendText: (text) => texts.push((JSON.parse(text) as { type: string }).type),
      sendAudio: (chunk) => {
        const samples = bytesToSamples(chunk);
        sent.push({ at: clock.now(), first: samples[0] ?? 0, ms: (samples.length / RATE) * 1000 });
      },
    },
    clock,
    { leadMs: 1500 },
  );
  const waiting: WaitingSounds = {
    ...(sounds.ambience === true ? { ambience: { sound: decodeWaitingSound(constantWav({ ms: 100, value: BED })), gain: 1 } } : {}),
    ...(sounds.thinking === undefined ? {} : { thinking: { sound: decodeWaitingSound(constantWav({ ms: 100, value: HUM })), gain: 1, afterMs: sounds.thinking.afterMs } }),
  };
  const mix = new WaitingMix(waiting, () => clock.now(), () => pacer.wake());
  pacer.feed(waitingFeed(mix, () => RATE, (samples) => [{ data: samplesToBytes(samples), ms: (samples.length / RATE) * 1000 }]));
  const speak = (ms: number): void => {
    const voice = new Int16Array((ms * RATE) / 1000).fill(VOICE);
    pacer.audio(samplesToBytes(mix.under(voice, RATE)), ms);
  };
  const total = (first?: number): number => sent.filter((s) => first === undefined || s.first === first).reduce((sum, s) => sum + s.ms, 0);
  return { clock, pacer, mix, sent, texts, speak, total };
}

describe("waiting audio on a paced link", () => {
  it("keeps the bed going in the silences, in real time with a small lead", async () => {
    const l = link({ ambience: true });
    expect(l.total(BED)).toBeGreaterThan(0);
    await l.clock.advance(1000);
    expect(l.sent.every((s) => s.first === BED)).toBe(true);
    // Sent = played so far plus at most the filler's lead and one chunk.
    expect(l.total()).toBeGreaterThanOrEqual(1000);
    expect(l.total()).toBeLessThanOrEqual(1000 + FILL_LEAD_MS + FILL_CHUNK_MS);
  });

  it("mixes the bed under the agent's speech, which goes out behind no more than the filler's lead", async () => {
    const l = link({ ambience: true });
    await l.clock.advance(200);
    const before = l.total();
    l.speak(300);
    const voice = l.sent.filter((s) => s.first === VOICE + BED);
    expect(voice).toHaveLength(1);
    // What was already sent ahead of the speech: the filler lead over real time.
    expect(before - l.clock.now()).toBeLessThanOrEqual(FILL_LEAD_MS + FILL_CHUNK_MS);
    // No filler is sent while speech is still ahead of the filler's lead; then the bed goes on.
    await l.clock.advance(150);
    expect(l.sent.at(-1)?.first).toBe(VOICE + BED);
    await l.clock.advance(400);
    expect(l.sent.at(-1)?.first).toBe(BED);
  });

  it("plays the thinking sound only after afterMs of thinking, stops it at the agent's first audio and when thinking ends", async () => {
    const l = link({ thinking: { afterMs: 500 } });
    await l.clock.advance(1000);
    expect(l.sent).toHaveLength(0);
    l.mix.thinking(true);
    await l.clock.advance(499);
    expect(l.sent).toHaveLength(0);
    await l.clock.advance(101);
    expect(l.total(HUM)).toBeGreaterThan(0);
    expect(l.mix.thinkingAudible).toBe(true);
    const hum = l.total(HUM);
    l.speak(200);
    expect(l.mix.thinkingAudible).toBe(false);
    // Never under speech, and not again until afterMs of silence after the speech has played.
    await l.clock.advance(200 + FILL_LEAD_MS + 400);
    expect(l.total(HUM)).toBe(hum);
    expect(l.sent.at(-1)?.first).toBe(VOICE);
    await l.clock.advance(300);
    expect(l.total(HUM)).toBeGreaterThan(hum);
    l.mix.thinking(false);
    const stopped = l.sent.length;
    await l.clock.advance(1000);
    // At most what was already within the lead.
    expect(l.sent.length - stopped).toBe(0);
  });

  it("with both: the thinking sound rides on the bed, and the bed alone goes on after it", async () => {
    const l = link({ ambience: true, thinking: { afterMs: 100 } });
    l.mix.thinking(true);
    await l.clock.advance(400);
    expect(l.total(BED + HUM)).toBeGreaterThan(0);
    l.mix.thinking(false);
    await l.clock.advance(400);
    expect(l.sent.at(-1)?.first).toBe(BED);
  });

  it("tells the session the agent's own backlog: filler after its last audio is left out", async () => {
    const l = link({ ambience: true });
    l.speak(300);
    // The listener holds everything sent: the filler lead before the speech, and the speech.
    expect(l.pacer.agentBacklogMs(l.total())).toBe(l.total());
    await l.clock.advance(500);
    const tail = l.sent.filter((s) => s.at > 0).reduce((sum, s) => sum + s.ms, 0);
    expect(tail).toBeGreaterThan(0);
    // Only filler is left at the listener: nothing of the agent's.
    expect(l.pacer.agentBacklogMs(tail)).toBe(0);
    expect(l.pacer.agentBacklogMs(tail + 40)).toBe(40);
  });

  it("a clearing event drops what is held, goes out, and the bed goes on after it", async () => {
    const l = link({ ambience: true });
    await l.clock.advance(100);
    l.speak(3000);
    const sentBefore = l.sent.length;
    l.pacer.event(stamp({ type: "reply.cancelled" }, l.clock.now()));
    expect(l.texts).toEqual(["reply.cancelled"]);
    const after = l.sent.slice(sentBefore);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((s) => s.first === BED)).toBe(true);
    expect(l.pacer.heldMs).toBe(0);
  });

  it("stops for good when the session ends", async () => {
    const l = link({ ambience: true });
    l.mix.stop();
    const n = l.sent.length;
    await l.clock.advance(1000);
    expect(l.sent.length).toBe(n);
  });
});
