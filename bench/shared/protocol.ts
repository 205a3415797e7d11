/**
 * What the bench processes agree on: the IPC messages between the runner, the load generator
 * and the baseline relay; how a mic frame says which client sent it; how a turn's text names
 * its client and turn, so every timestamp can be matched to one (client, turn).
 */

/** 20 ms of 16 kHz PCM16 mono: one mic frame. */
export const MIC_FRAME_BYTES = 640;

/**
 * A mic frame tagged with its sender: bytes 0–3 are the client number (uint32 LE), byte 4 is
 * 1 while the caller "speaks" and 0 in silence. The rest is low-level noise. The fake STT
 * reads the tag to learn which client a gateway session serves.
 */
export function micFrame(client: number, speech: boolean): Buffer {
  const frame = Buffer.alloc(MIC_FRAME_BYTES, speech ? 0x11 : 0x01);
  frame.writeUInt32LE(client, 0);
  frame[4] = speech ? 1 : 0;
  return frame;
}

export function readMicFrame(pcm: Uint8Array): { readonly client: number; readonly speech: boolean } | undefined {
  if (pcm.byteLength < 5) return undefined;
  const view = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  return { client: view.getUint32(0, true), speech: pcm[4] === 1 };
}

/** What the caller "said" in a turn (the fake STT's final). */
export function userLine(client: number, turn: number): string {
  return `This is caller ${client}, turn ${turn}: where is my order?`;
}

/** What the fake model answers (about 16 words, two sentences). */
export function replyLine(client: number, turn: number): string {
  return `Caller ${client}, turn ${turn}: your order shipped on Friday. It should reach you by Tuesday afternoon at the latest.`;
}

/** The opening of `replyLine`, which the fake TTS checks to catch a reply spoken to the wrong session. */
export function replyTag(client: number, turn: number): string {
  return `Caller ${client}, turn ${turn}:`;
}

export function parseUserLine(text: string): { readonly client: number; readonly turn: number } | undefined {
  const match = /caller (\d+), turn (\d+)/i.exec(text);
  if (match === null) return undefined;
  return { client: Number(match[1]), turn: Number(match[2]) };
}

/** Server-side timestamps of one turn (ms, `monoMs`). */
export interface TurnMarks {
  readonly client: number;
  readonly turn: number;
  /** The fake STT's `final` was called. */
  t0?: number;
  /** That call returned (the server's synchronous work on the final is done). */
  t0Returned?: number;
  /** The model's `doStream` was called. */
  t1?: number;
  /** The fake TTS emitted the reply's first audio chunk (just before its audio callback ran). */
  t2?: number;
  /** The audio callback for that chunk returned (the gateway's synchronous path to `ws.send` is done). */
  t2Returned?: number;
}

/** Client-side timestamp of one turn: the first binary frame of the reply arrived. */
export interface Arrival {
  readonly client: number;
  readonly turn: number;
  readonly t3: number;
}

export interface LoadPlan {
  readonly url: string;
  readonly sessions: number;
  readonly turns: number;
  /** Mic frames of "speech" before each final (20 ms each). */
  readonly speechFrames: number;
  /** A pause after each reply before the caller speaks again (ms). */
  readonly pauseMs: number;
  /**
   * Callers start their first turn at a random moment within this (ms) after "go", so they are
   * out of step as real callers are (all 50 finals in the same 20 ms would be a bench artifact).
   */
  readonly startSpreadMs: number;
}

/** What the callers received, and what the load process itself cost, over the turns. */
export interface LoadTally {
  readonly textFrames: number;
  readonly textBytes: number;
  readonly binaryFrames: number;
  readonly binaryBytes: number;
  /** CPU and event-loop delay of the load process (it queues frames too). */
  readonly window: { readonly wallMs: number; readonly cpuMs: number; readonly loopDelayP99Ms: number; readonly loopDelayMaxMs: number };
}

/** Runner → load generator. */
export type ToLoad = { readonly type: "run"; readonly plan: LoadPlan } | { readonly type: "go" } | { readonly type: "close" };

/** Load generator → runner. */
export type FromLoad =
  | { readonly type: "greeted" }
  | { readonly type: "final"; readonly client: number; readonly turn: number }
  | { readonly type: "finished"; readonly arrivals: readonly Arrival[]; readonly errors: readonly string[]; readonly tally?: LoadTally }
  | { readonly type: "closed" };

/** What a measured server (the gateway in the runner, or the relay child) can be asked. */
export type ServerCall = "memory" | "start" | "stop" | "marks";

/** Runner → relay. */
export type ToRelay = { readonly type: "call"; readonly id: number; readonly call: ServerCall } | { readonly type: "final"; readonly client: number; readonly turn: number };

/** Relay → runner. */
export type FromRelay = { readonly type: "listening"; readonly url: string } | { readonly type: "result"; readonly id: number; readonly value: unknown };

/** A child process's IPC channel, typed. */
export function send<T>(message: T): void {
  if (process.send === undefined) throw new Error("this bench process must be started by bench/pipeline/run.ts (it needs an IPC channel)");
  process.send(message);
}
