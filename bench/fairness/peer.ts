/**
 * A fairness-bench peer (bench/fairness/run.ts forks one per role): the victim, which takes typed
 * turns and times each one from `user_text` sent to the reply's first audio frame, or an abuser,
 * which floods one way until told to stop. Its own process, so an abuser's client-side work never
 * sits in the victim's measuring loop.
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import type { AbuseMode, FromPeer, ToPeer } from "./protocol.js";
import { monoMs } from "../shared/stats.js";

/** What an abuser keeps queued on its side before it waits: it sends as fast as the gateway reads. */
const ABUSER_BACKLOG_BYTES = 8 * 1024 * 1024;

function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on("error", () => {});
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

function reply(message: FromPeer): void {
  process.send?.(message);
}

/** Typed turns, one at a time: latency to the reply's first binary frame, and to its `reply.completed`. */
async function victim(url: string, turns: number, gapMs: number): Promise<void> {
  const ws = await open(url);
  let onAudio: (() => void) | undefined;
  let onCompleted: (() => void) | undefined;
  const errors: string[] = [];
  ws.on("message", (data, isBinary) => {
    if (isBinary) {
      onAudio?.();
      onAudio = undefined;
      return;
    }
    const event = JSON.parse((data as Buffer).toString("utf8")) as { type: string; message?: string };
    if (event.type === "reply.completed") {
      onCompleted?.();
      onCompleted = undefined;
    }
    if (event.type === "error.reported") errors.push(event.message ?? "");
  });
  await new Promise<void>((resolve) => (onCompleted = resolve)); // the greeting
  const firstAudioMs: number[] = [];
  const completedMs: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const audio = new Promise<void>((resolve) => (onAudio = resolve));
    const completed = new Promise<void>((resolve) => (onCompleted = resolve));
    const sent = monoMs();
    ws.send(JSON.stringify({ type: "user_text", text: `fairness turn ${turn}` }));
    await audio;
    firstAudioMs.push(monoMs() - sent);
    await completed;
    completedMs.push(monoMs() - sent);
    await sleep(gapMs);
  }
  ws.close();
  reply({ type: "victim-done", firstAudioMs, completedMs, errors });
}

/** One flood: what each frame is, and the socket's query string. */
const FLOODS: Record<Exclude<AbuseMode, "all">, { readonly query: string; readonly frame: () => string | Buffer }> = {
  cancel: { query: "", frame: () => '{"type":"cancel"}' },
  "invalid-json": { query: "", frame: () => "{not json" },
  // 1 MiB of 48 kHz PCM16 (about 11 s of audio) a frame: the costliest audio path (resampling to 16 kHz).
  audio: { query: "?sampleRate=48000", frame: () => AUDIO_FRAME },
  typed: { query: "", frame: () => TYPED_FRAME },
};
const AUDIO_FRAME = Buffer.alloc(1024 * 1024, 1);
const TYPED_FRAME = JSON.stringify({ type: "user_text", text: "z".repeat(19_999) });

let stopping = false;

async function flood(url: string, mode: Exclude<AbuseMode, "all">, tally: { sent: number; bytes: number }): Promise<void> {
  const { query, frame } = FLOODS[mode];
  const ws = await open(`${url}${query}`);
  while (!stopping && ws.readyState === WebSocket.OPEN) {
    if (ws.bufferedAmount > ABUSER_BACKLOG_BYTES) {
      await sleep(5);
      continue;
    }
    const data = frame();
    ws.send(data);
    tally.sent += 1;
    tally.bytes += typeof data === "string" ? data.length : data.byteLength;
    if (tally.sent % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  ws.terminate();
}

async function abuse(url: string, mode: AbuseMode): Promise<void> {
  const tally = { sent: 0, bytes: 0 };
  const modes = mode === "all" ? (Object.keys(FLOODS) as Exclude<AbuseMode, "all">[]) : [mode];
  reply({ type: "abusing" });
  await Promise.all(modes.map((m) => flood(url, m, tally)));
  reply({ type: "abuser-stopped", sent: tally.sent, bytes: tally.bytes });
}

process.on("message", (message: ToPeer) => {
  const failed = (error: unknown): void => reply({ type: "failed", error: String(error) });
  switch (message.type) {
    case "victim":
      victim(message.url, message.turns, message.gapMs).catch(failed);
      return;
    case "abuse":
      abuse(message.url, message.mode).catch(failed);
      return;
    case "stop":
      stopping = true;
      return;
  }
});
