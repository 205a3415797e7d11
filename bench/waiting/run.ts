/**
 * `npm run bench:waiting`: what an ambience bed costs (docs/benchmarks.md "Audio while waiting").
 * N live links — Twilio μ-law calls (`CarrierBridge`) and browser sockets (`ClientConnection`,
 * PCM16 24 kHz) — each fed the same agent speech (600 ms every 2 s, as a TTS hands it over: three
 * 200 ms chunks at once), with and without the agent's ambience bed, in the same process, rounds
 * alternating so both saw the same machine. The bed is the only difference: links without one send
 * nothing between replies; links with one send 40 ms of mixed filler every 40 ms, and mix it under
 * the speech. CPU is the process's (user + system) over the window on the real clock; sockets are
 * in-process fakes that count bytes, so the figure is the link's own work (mixing, encoding, pacing,
 * framing, timers), not the kernel's.
 *
 * Options: --calls N (BENCH_CALLS, default 100 of each kind), --window S (BENCH_WINDOW_S, default
 * 10), --rounds R (default 2), --no-docs (print only). Results go to stdout and to
 * docs/benchmarks.md between the bench:waiting markers.
 */
import type { WebSocket } from "ws";
import { loadResampler } from "../../src/audio/resample.js";
import { pcm16 } from "../../src/audio/rates.js";
import { decodeWaitingSound, type WaitingSounds } from "../../src/audio/waiting-sound.js";
import { writeWav } from "../../src/audio/wav.js";
import { systemClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log.js";
import { CarrierBridge } from "../../src/transport/carrier-bridge.js";
import { twilioCodec } from "../../src/transport/carriers/twilio.js";
import { ClientConnection, type ClientLink } from "../../src/transport/client-connection.js";
import { countOption, docSection, flagValue, ratio, runBench, sleep, writeSection } from "../shared/common.js";
import { CountingSocket } from "../shared/counting-socket.js";

const { path: DOCS, start: START, end: END } = docSection("bench:waiting");
const SPEECH_EVERY_MS = 2000;
const SPEECH_CHUNK_MS = 200;
const SPEECH_CHUNKS = 3;

/** A 2 s office-like bed: noise under a slow swell, 16 kHz mono, resampled once per link rate as the gateway does. */
function bed(): WaitingSounds {
  const rate = 16000;
  const samples = new Int16Array(rate * 2);
  let seed = 1;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * 3000 * (0.6 + 0.4 * Math.sin((2 * Math.PI * i) / rate)));
  }
  return { ambience: { sound: decodeWaitingSound(writeWav(samples, rate)), gain: 0.1 } };
}

interface Live {
  readonly link: ClientLink;
  readonly socket: CountingSocket;
  /** Agent speech at the link's session output rate, one chunk. */
  readonly chunk: Uint8Array;
}

async function openLinks(calls: number, sounds: WaitingSounds | undefined): Promise<Live[]> {
  const live: Live[] = [];
  for (let i = 0; i < calls; i++) {
    const socket = new CountingSocket();
    const bridge = new CarrierBridge(socket as unknown as WebSocket, { codec: twilioCodec, clock: systemClock, log: silentLogger });
    socket.emit(
      "message",
      Buffer.from(JSON.stringify({ event: "start", streamSid: `MZ${i}`, start: { streamSid: `MZ${i}`, callSid: `CA${i}`, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } } })),
      false,
    );
    await bridge.ready;
    // A pipeline call: the TTS was asked for the call's 8 kHz.
    bridge.useAudio({ input: pcm16(16000), output: pcm16(8000) });
    bridge.attach({ command: () => {}, audio: () => {}, playback: () => {}, closed: () => {} });
    if (sounds !== undefined) bridge.playWaiting(sounds);
    live.push({ link: bridge, socket, chunk: speech(8000) });

    const browserSocket = new CountingSocket();
    const browser = new ClientConnection(browserSocket as unknown as WebSocket, { clock: systemClock, log: silentLogger });
    await browser.ready;
    browser.useAudio({ input: pcm16(16000), output: pcm16(24000) });
    browser.attach({ command: () => {}, audio: () => {}, playback: () => {}, closed: () => {} });
    if (sounds !== undefined) browser.playWaiting(sounds);
    live.push({ link: browser, socket: browserSocket, chunk: speech(24000) });
  }
  return live;
}

function speech(rate: number): Uint8Array {
  const samples = new Int16Array((rate * SPEECH_CHUNK_MS) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(Math.sin((2 * Math.PI * 220 * i) / rate) * 8000);
  return new Uint8Array(samples.buffer);
}

/** Every link speaks on its own phase of the 2 s cycle, so the load is spread as real calls spread it. */
function drive(live: readonly Live[]): () => void {
  const timers = live.map((l, i) => {
    const speak = (): void => {
      for (let c = 0; c < SPEECH_CHUNKS; c++) l.link.audio(l.chunk, SPEECH_CHUNK_MS);
      l.link.emit({ type: "audio.completed" });
    };
    let interval: NodeJS.Timeout | undefined;
    const first = setTimeout(() => {
      speak();
      interval = setInterval(speak, SPEECH_EVERY_MS);
    }, (i * SPEECH_EVERY_MS) / live.length);
    return () => {
      clearTimeout(first);
      clearInterval(interval);
    };
  });
  return () => timers.forEach((stop) => stop());
}

interface Measured {
  readonly cpuMs: number;
  readonly bytesPerLinkSecond: number;
}

async function measure(calls: number, windowMs: number, sounds: WaitingSounds | undefined): Promise<Measured> {
  const live = await openLinks(calls, sounds);
  const stop = drive(live);
  await sleep(SPEECH_EVERY_MS);
  const bytesBefore = live.reduce((sum, l) => sum + l.socket.bytes, 0);
  const before = process.cpuUsage();
  await sleep(windowMs);
  const used = process.cpuUsage(before);
  const bytes = live.reduce((sum, l) => sum + l.socket.bytes, 0) - bytesBefore;
  stop();
  for (const l of live) l.link.close(1000, "bench over");
  await sleep(200);
  return { cpuMs: (used.user + used.system) / 1000, bytesPerLinkSecond: bytes / live.length / (windowMs / 1000) };
}

runBench("bench:waiting", 600_000, async () => {
  const argv = process.argv.slice(2);
  const calls = countOption(flagValue(argv, "calls") ?? process.env.BENCH_CALLS, 100, "calls");
  const windowMs = countOption(flagValue(argv, "window") ?? process.env.BENCH_WINDOW_S, 10, "window") * 1000;
  const rounds = countOption(flagValue(argv, "rounds"), 2, "rounds");
  const engine = await loadResampler();
  const sounds = bed();
  const without: Measured[] = [];
  const withBed: Measured[] = [];
  for (let r = 0; r < rounds; r++) {
    without.push(await measure(calls, windowMs, undefined));
    withBed.push(await measure(calls, windowMs, sounds));
  }
  const mean = (list: readonly Measured[], key: keyof Measured): number => list.reduce((sum, m) => sum + m[key], 0) / list.length;
  const links = calls * 2;
  const perLink = (cpuMs: number): number => cpuMs / links / (windowMs / 1000);
  const base = mean(without, "cpuMs");
  const bedded = mean(withBed, "cpuMs");
  const lines = [
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${process.version}: \`npm run bench:waiting -- --calls ${calls} --window ${windowMs / 1000} --rounds ${rounds}\` (resampler: ${engine}).`,
    `${calls} Twilio μ-law calls and ${calls} browser PCM16 sockets, each speaking 600 ms every 2 s; mean of ${rounds} alternating rounds of ${windowMs / 1000} s.`,
    "",
    "| links | CPU ms per link-second | bytes sent per link-second | CPU ÷ without |",
    "|---|---|---|---|",
    `| without a bed | ${perLink(base).toFixed(3)} | ${Math.round(mean(without, "bytesPerLinkSecond"))} | 1.00× |`,
    `| with the ambience bed | ${perLink(bedded).toFixed(3)} | ${Math.round(mean(withBed, "bytesPerLinkSecond"))} | ${ratio(bedded, base)} |`,
    "",
    `Per round (CPU ms, without → with): ${without.map((m, i) => `${m.cpuMs.toFixed(0)} → ${withBed[i]?.cpuMs.toFixed(0) ?? "–"}`).join("; ")}.`,
  ];
  const body = `${START}\n${lines.join("\n")}\n${END}`;
  console.log(lines.join("\n"));
  if (!argv.includes("--no-docs")) writeSection(DOCS, START, END, body);
  return 0;
});
