/**
 * What the telephony bench's processes agree on: the timing tags carried inside the μ-law
 * audio, the script's timings, and a small request/response channel over the fork IPC.
 *
 * Times are `monoMs()` (bench/shared/stats.ts): one monotonic clock for every process on the machine,
 * so a tag written in one process can be subtracted from a reading taken in another.
 */
import type { ChildProcess } from "node:child_process";
import { within } from "../shared/common.js";
import { send } from "../shared/protocol.js";

/** One Twilio media frame: 20 ms of 8 kHz μ-law, one byte per sample. */
export const FRAME_MS = 20;
export const FRAME_BYTES = 160;
/** μ-law bytes per ms of audio. */
export const MULAW_BYTES_PER_MS = 8;
/** μ-law silence (the G.711 code for +0). */
const MULAW_SILENCE = 0xff;

/** Tag kinds: the caller's frames (caller → provider) and the fake model's deltas (provider → caller). */
export const CALLER_TAG = 0x5a7b;
export const MODEL_TAG = 0x6d4c;
/** Tag layout: bytes 0–1 the kind (uint16 LE), 2–5 an id (uint32 LE), 6–13 the send time (float64 LE, monoMs). */
const TAG_BYTES = 14;
/** Base64 characters that cover the tag (20 characters decode to 15 bytes). */
const TAG_BASE64_CHARS = 20;

/** 160 bytes of μ-law silence whose first bytes carry `kind`, `id` and `at`. All three servers pass μ-law through untouched. */
export function taggedFrame(kind: number, id: number, at: number): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);
  frame.writeUInt16LE(kind, 0);
  frame.writeUInt32LE(id, 2);
  frame.writeDoubleLE(at, 6);
  return frame;
}

/** The tag at the start of a base64 payload, if it is of `kind`. Decodes only the tag's characters. */
export function readTag(payload: string, kind: number): { readonly id: number; readonly at: number } | undefined {
  if (payload.length < TAG_BASE64_CHARS) return undefined;
  return readFrameTag(Buffer.from(payload.slice(0, TAG_BASE64_CHARS), "base64"), kind);
}

/** The tag at the start of decoded audio, if it is of `kind`. */
export function readFrameTag(head: Buffer, kind: number): { readonly id: number; readonly at: number } | undefined {
  if (head.byteLength < TAG_BYTES || head.readUInt16LE(0) !== kind) return undefined;
  return { id: head.readUInt32LE(2), at: head.readDoubleLE(6) };
}

/** The fake model's script, per call (ms). */
export const SCRIPT = {
  /** The greeting's audio. */
  greetingMs: 600,
  /** The caller "speaks" this long between `speech_started` and `speech_stopped`. */
  userMs: 300,
  /** Each reply's audio, sent in real time (one 20 ms delta every 20 ms). */
  replyMs: 1000,
  /** In a barge-in turn the caller starts speaking this far into the reply, while it still plays. */
  bargeAtMs: 500,
  /**
   * After a reply that plays out, the caller waits this long before speaking again: past the
   * gateway's 750 ms "still audible" grace (AUDIBLE_GRACE_MS), so that turn is no barge-in.
   */
  gapMs: 1000,
  /** Turns start this long after `session.update` when no greeting is asked for. */
  noGreetingMs: 1000,
} as const;

// ── a request/response channel over the fork IPC ────────────────────────────────────────

interface Request {
  readonly type: "rpc";
  readonly id: number;
  readonly call: string;
  readonly args?: unknown;
}
type Message = { readonly type: "ready" } | { readonly type: "reply"; readonly id: number; readonly value?: unknown; readonly error?: string };

/** A child's request/response channel (`connectChild`). */
export type Call = <T>(call: string, args?: unknown) => Promise<T>;

/** The longest a child may take to start (ms), and to answer one call; dialling and hanging up get twice as long. */
export const CHILD_START_MS = 30_000;
export const CALL_LIMIT_MS = 15_000;
/** Frames in flight at a window's end arrive before the callers hang up (ms). */
export const DRAIN_MS = 300;
/** The unreported warm-up each server gets before it is measured: calls, the wait from its memory sample to its window, and the window (ms). */
export const WARM_UP = { calls: 10, windowMs: 3000, steadyMs: 1000 } as const;

/** `calls` calls to `url`, placed 10 ms apart (2 s at most); each must hear the greeting within 8 s of the last. */
export function dialPlan(url: string, calls: number): DialPlan {
  return { url, calls, rampMs: Math.min(2000, calls * 10), greetMs: 8000 };
}

/** A child's channel once it is ready (CHILD_START_MS at most), every call bounded (CALL_LIMIT_MS; dialling and hanging up, twice that). */
export async function boundedChild(child: ChildProcess, what: string): Promise<Call> {
  const call = await within(connectChild(child, what), CHILD_START_MS, `starting ${what}`);
  return (name, args) => within(call(name, args), name === "dial" || name === "hangUp" ? 2 * CALL_LIMIT_MS : CALL_LIMIT_MS, `${what}: ${name}`);
}

/** The runner's end: resolves once the child is ready, then `call` asks it things. */
export async function connectChild(child: ChildProcess, what: string): Promise<Call> {
  let nextId = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", (code, signal) => {
      const error = new Error(`${what} exited (${signal ?? `code ${String(code)}`})`);
      reject(error);
      for (const p of pending.values()) p.reject(error);
    });
    child.on("message", (message: Message) => {
      if (message.type === "ready") return resolve();
      const p = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) p?.reject(new Error(`${what}: ${message.error}`));
      else p?.resolve(message.value);
    });
  });
  await ready;
  return <T>(call: string, args?: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve: (value) => resolve(value as T), reject });
      child.send({ type: "rpc", id, call, args } satisfies Request);
    });
}

/** A child's end: answers the runner's calls; exits when the runner goes away. */
export function serveCalls(handlers: Readonly<Record<string, (args: never) => unknown>>): void {
  process.on("message", (message: Request) => {
    if (message.type !== "rpc") return;
    const handler = handlers[message.call];
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new Error(`no call ${message.call}`);
        return handler(message.args as never);
      })
      .then(
        (value) => send<Message>({ type: "reply", id: message.id, value: value ?? null }),
        (error: unknown) => send<Message>({ type: "reply", id: message.id, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  process.on("disconnect", () => process.exit(0));
  send<Message>({ type: "ready" });
}

/** This process's user + system CPU so far (ms). */
export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** A measurement window on the monotonic clock (ms). */
export interface Window {
  readonly from: number;
  readonly to: number;
}

/** Flat [t, value, t, value, …] pairs → the values whose t lies in the window. */
export function inWindow(pairs: readonly number[], window: Window): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const t = pairs[i]!;
    if (t >= window.from && t <= window.to) out.push(pairs[i + 1]!);
  }
  return out;
}

/** The callers' `dial`. */
export interface DialPlan {
  readonly url: string;
  readonly calls: number;
  /** Calls are placed evenly over this long (ms). */
  readonly rampMs: number;
  /** Every call must hear agent audio within this long after the last was placed (ms). */
  readonly greetMs: number;
}

/** What the fake service measured in a window (`collect`). */
export interface FakeTaken {
  /** Caller frame → provider append latencies (ms), by caller send time in the window. */
  readonly up: number[];
  /** Tagged deltas the fake sent in the window. */
  readonly deltasSent: number;
  /** [speech_started send time, caller] per barge-in since the last collect. */
  readonly barges: number[];
  /** Barge-ins on sockets whose caller was not known yet (not measured). */
  readonly unattributed: number;
  readonly violations: string[];
}

/** What the callers measured in a window (`collect`). */
export interface CallersTaken {
  /** Provider delta → caller frame latencies (ms), by the fake's send time in the window. */
  readonly down: number[];
  /** Caller frames sent in the window. */
  readonly sent: number;
  /** [arrival time, caller] per `clear` since the last collect. */
  readonly clears: number[];
  readonly marksReceived: number;
  readonly marksEchoed: number;
  readonly errors: string[];
}
