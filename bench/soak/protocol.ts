/**
 * What the soak's processes agree on: the IPC between the runner (bench/soak/run.ts) and the gateway
 * child (bench/soak/gateway.ts), what one sample of the child holds, and each turn's intent.
 *
 * A turn's intent is a pure function of (client, turn), so the callers (in the runner) and the
 * fake model (in the child) agree on it without talking: the caller knows whether to expect a
 * tool call or to barge in, and the model knows whether to call the tool or to talk at length.
 */

/** The session types the soak mixes. */
export type Kind = "text" | "pipeline" | "s2s" | "phone";
export const KINDS: readonly Kind[] = ["text", "pipeline", "s2s", "phone"];

/** What a turn does: a plain question, one that needs the order tool, or one the caller interrupts (a long reply). */
export type Intent = "plain" | "tool" | "long";

/** Words of a long reply (20 ms of TTS audio each in pipeline: 2 s), streamed `LONG_WORD_DELAY_MS` apart. */
export const LONG_WORDS = 100;
export const LONG_WORD_DELAY_MS = 5;

/** About 60 % plain, 25 % tool, 15 % long; a cheap integer hash, the same in every process. */
export function intentOf(client: number, turn: number): Intent {
  let h = Math.imul(client, 0x9e3779b1) ^ Math.imul(turn, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  const r = ((h ^ (h >>> 13)) >>> 0) % 100;
  return r < 60 ? "plain" : r < 85 ? "tool" : "long";
}

/** Where the child's gateways listen. */
export interface SoakUrls {
  readonly text: string;
  readonly pipeline: string;
  readonly s2s: string;
  readonly phone: string;
}

/** One look at the gateway process: after a full GC, and over the window since the last look. */
export interface GatewaySample {
  readonly rss: number;
  readonly heapUsed: number;
  /** `process.getActiveResourcesInfo().length`: sockets, servers, ref'd timers, pending requests. */
  readonly handles: number;
  readonly handleTypes: Readonly<Record<string, number>>;
  /** Event-loop delay over the window (ms, sampling resolution taken off; the sample's GC is outside it). */
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  /** User + system CPU over the window, and the window's length (ms). */
  readonly cpuMs: number;
  readonly wallMs: number;
  /** Live sessions, per gateway. */
  readonly sessions: Readonly<Record<"text" | "pipeline" | "s2s", number>>;
}

/** Runner → gateway child. */
export type ToGateway = { readonly type: "final"; readonly client: number; readonly turn: number } | { readonly type: "sample"; readonly id: number } | { readonly type: "stop" };

/** Gateway child → runner. */
export type FromGateway =
  | { readonly type: "listening"; readonly urls: SoakUrls }
  | { readonly type: "sample"; readonly id: number; readonly sample: GatewaySample }
  | { readonly type: "stopped" };
