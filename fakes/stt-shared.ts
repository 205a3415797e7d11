/** What the streaming-STT fakes (Deepgram, AssemblyAI) share: reading a client's control frames, audio-timed triggers, their common surface. */
import type { AddressInfo } from "node:net";
import { audioFakeWaits, type AudioFakeState, type AudioFakeWaits, type WaitableConnection } from "./ws-waits.js";

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

/** Start listening on a loopback port and build the common surface; the vendor adds its script to it (`Object.assign`). */
export async function sttFakeBase<C extends WaitableConnection & { readonly audioMs: number }>(
  state: Omit<AudioFakeState<C>, "audioBytes"> & {
    readonly path: string;
    readonly audioBytes: () => number;
    readonly rejected: { status: number; reason: string }[];
    readonly violations: string[];
    readonly triggers: AudioTriggers<C>;
  },
): Promise<SttFakeBase<C>> {
  const { http, connections } = state;
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  const latest = (): C => {
    const c = connections.at(-1);
    if (c === undefined) throw new Error(`${state.fake}: no connection yet`);
    return c;
  };
  return {
    url: `ws://127.0.0.1:${port}${state.path}`,
    connections,
    get audioBytes() {
      return state.audioBytes();
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
    ...audioFakeWaits(state),
  };
}
