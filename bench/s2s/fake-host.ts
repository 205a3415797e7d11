/**
 * The s2s bench's provider: the loopback fake OpenAI Realtime server (fakes/openai-realtime.ts),
 * hosted in the process under test (the gateway's runner, or the relay child) so both servers pay
 * for it.
 *
 * Connection k (0-based, counted from the phase's first) is the bench's client k + 1, because
 * callers connect one at a time (bench/s2s/load.ts); `turn` plays the fake's `userSays` on it.
 * Each driven connection's socket `send` is wrapped to timestamp (monoMs) the fake handing the
 * first `response.output_audio.delta` of the turn to `ws`.
 */
import type WebSocket from "ws";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime, type FakeRealtimeConnection } from "../../fakes/openai-realtime.js";
import { userLine } from "../shared/protocol.js";
import { monoMs } from "../shared/stats.js";

/** Fake-side timestamp of one turn: the first audio delta handed to the socket. */
export interface DeltaMark {
  readonly client: number;
  readonly turn: number;
  readonly t2: number;
}

const DELTA = '"type":"response.output_audio.delta"';

export class FakeHost {
  readonly service: FakeOpenAiRealtime;
  readonly #marks: DeltaMark[] = [];
  /** Per connection index: the turn waiting for its first delta. */
  readonly #due = new Map<number, { client: number; turn: number }>();
  readonly #wrapped = new Set<number>();
  /** Connections from earlier phases: client k of this phase is connection base + k - 1. */
  #base = 0;

  private constructor(service: FakeOpenAiRealtime) {
    this.service = service;
  }

  static async start(): Promise<FakeHost> {
    return new FakeHost(await startFakeOpenAiRealtime({ apiKey: "test-key" }));
  }

  /** A whole caller turn on client `client`'s connection (retries briefly until it exists). */
  turn(client: number, turn: number, attempt = 0): void {
    const list = this.service.connections;
    const conn = list[this.#base + client - 1];
    if (conn === undefined || !conn.open) {
      if (attempt < 200) setTimeout(() => this.turn(client, turn, attempt + 1), 5);
      return;
    }
    this.#wrap(conn);
    this.#due.set(conn.index, { client, turn });
    this.service.userSays(userLine(client, turn), conn).catch(() => undefined);
  }

  /** This phase's marks; the next phase's clients start after the connections so far. */
  take(): { marks: DeltaMark[]; violations: number } {
    this.#base = this.service.connections.length;
    return { marks: this.#marks.splice(0), violations: this.service.violations.length };
  }

  #wrap(conn: FakeRealtimeConnection): void {
    if (this.#wrapped.has(conn.index)) return;
    this.#wrapped.add(conn.index);
    const ws = (conn as unknown as { ws: WebSocket }).ws;
    const send = ws.send.bind(ws) as (data: string) => void;
    (ws as unknown as { send: (data: string) => void }).send = (data: string) => {
      const due = this.#due.get(conn.index);
      if (due !== undefined && data.slice(0, 90).includes(DELTA)) {
        this.#marks.push({ ...due, t2: monoMs() });
        this.#due.delete(conn.index);
      }
      send(data);
    };
  }
}
