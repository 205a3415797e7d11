/** What the streaming-STT fakes (Deepgram, AssemblyAI) share: reading a client's control frames, audio-timed triggers, their common surface. */
import type { RawData } from "ws";
import { loopbackServer } from "./loopback.js";
import { audioFakeWaits, latestConnection, type AudioFakeState, type AudioFakeWaits, type WaitableConnection } from "./ws-waits.js";

/** A frame's bytes as one Buffer (ws hands over a Buffer, an ArrayBuffer or a list of fragments). */
export function frameBytes(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
}

/**
 * A client's control (text) frame: parsed, and recorded on its connection and over the whole fake;
 * undefined when the test asked the fake to ignore messages of its type (the `ignore` option).
 */
export function readControl(
  c: { readonly messages: Record<string, unknown>[] },
  buffer: Buffer,
  all: Record<string, unknown>[],
  ignore: readonly string[] | undefined,
): Record<string, unknown> | undefined {
  const message = parseClientMessage(buffer);
  c.messages.push(message);
  all.push(message);
  return typeof message.type === "string" && ignore?.includes(message.type) === true ? undefined : message;
}

/** A client text frame as a record; anything that is not a JSON object becomes `{ type: "<invalid>", raw }`. */
export function parseClientMessage(buffer: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(buffer.toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { type: "<invalid>", raw: parsed };
  } catch {
    return { type: "<invalid>", raw: buffer.toString("utf8") };
  }
}

/** The `transcript` option: one text, a list (one utterance each, in order), or the default "hello world". */
export function transcriptList(option: string | readonly string[] | undefined): readonly string[] {
  return option === undefined ? ["hello world"] : typeof option === "string" ? [option] : option;
}

/**
 * Things that happen once a connection has sent enough audio: one-shot hooks (`at`), and in auto
 * mode the next transcript every `transcriptAfterMs` of audio.
 */
export class AudioTriggers<C extends { readonly audioMs: number }> {
  readonly #hooks: { readonly ms: number; readonly fn: (c: C) => void; fired: boolean }[] = [];
  readonly #spoken = new WeakMap<C, number>();

  constructor(
    private readonly transcripts: readonly string[],
    private readonly transcriptAfterMs: number | undefined,
  ) {}

  /** Run `fn` once, on the first connection whose audio reaches `ms`. */
  at(ms: number, fn: (c: C) => void): void {
    this.#hooks.push({ ms, fn, fired: false });
  }

  /** `c` sent more audio: fire due hooks; returns the next auto transcript when one is due. */
  advanced(c: C): string | undefined {
    for (const hook of this.#hooks) {
      if (!hook.fired && c.audioMs >= hook.ms) {
        hook.fired = true;
        hook.fn(c);
      }
    }
    const after = this.transcriptAfterMs;
    const spoken = this.#spoken.get(c) ?? 0;
    if (after === undefined || spoken >= this.transcripts.length || c.audioMs < after * (spoken + 1)) return undefined;
    this.#spoken.set(c, spoken + 1);
    return this.transcripts[spoken] ?? "";
  }
}

/** What every streaming-STT fake offers besides its vendor's own script. */
export interface SttFakeBase<C extends WaitableConnection> extends AudioFakeWaits<C> {
  readonly url: string;
  readonly connections: C[];
  /** Audio bytes received over all connections. */
  readonly audioBytes: number;
  /** Every control message received, parsed, over all connections. */
  readonly messages: Record<string, unknown>[];
  /** Upgrades refused (bad key, bad query), with the reason given. */
  readonly rejected: { status: number; reason: string }[];
  /** Protocol violations seen. */
  readonly violations: string[];
  /** The latest connection (throws when there is none). */
  readonly latest: C;
  /** Send a raw text frame (e.g. malformed JSON). */
  sendRaw(text: string): void;
  /** Terminate the latest socket without a close frame (a network drop). */
  drop(): void;
  /** Close the latest socket with this code and reason. */
  closeWith(code: number, reason?: string): void;
  /** Run `fn` once, on the first connection whose audio reaches `ms`. */
  onAudio(ms: number, fn: (connection: C) => void): void;
}

/** What every streaming-STT fake records and serves on: made first, filled by the vendor's script, listed by `sttFakeBase`. */
export interface SttFakeState<C extends WaitableConnection & { readonly audioMs: number }> extends Omit<AudioFakeState<C>, "audioBytes"> {
  readonly path: string;
  readonly rejected: { status: number; reason: string }[];
  readonly violations: string[];
  readonly triggers: AudioTriggers<C>;
  /** Audio bytes received over all connections. */
  totalAudio: number;
}

/** The state of a fake named `fake` (in timeout errors) serving `path`, its auto transcripts from `options`. */
export function sttFakeState<C extends WaitableConnection & { readonly audioMs: number }>(
  fake: string,
  path: string,
  options: { readonly transcript?: string | readonly string[]; readonly transcriptAfterMs?: number },
): SttFakeState<C> {
  return {
    fake,
    path,
    connections: [],
    messages: [],
    rejected: [],
    violations: [],
    triggers: new AudioTriggers<C>(transcriptList(options.transcript), options.transcriptAfterMs),
    server: loopbackServer(),
    totalAudio: 0,
  };
}

/** Start listening on a loopback port and build the common surface; the vendor adds its script to it (`Object.assign`). */
export async function sttFakeBase<C extends WaitableConnection & { readonly audioMs: number }>(state: SttFakeState<C>): Promise<SttFakeBase<C>> {
  const { connections } = state;
  const audioBytes = (): number => state.totalAudio;
  const port = await state.server.listen();
  const latest = (): C => latestConnection(state.fake, connections);
  return {
    url: `ws://127.0.0.1:${port}${state.path}`,
    connections,
    get audioBytes() {
      return audioBytes();
    },
    messages: state.messages,
    rejected: state.rejected,
    violations: state.violations,
    get latest() {
      return latest();
    },
    sendRaw: (text) => latest().socket.send(text),
    drop: () => latest().socket.terminate(),
    closeWith: (code, reason = "") => latest().socket.close(code, reason),
    onAudio: (ms, fn) => state.triggers.at(ms, fn),
    ...audioFakeWaits({ ...state, audioBytes }),
  };
}
