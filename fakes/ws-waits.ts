/**
 * Wait and shutdown plumbing shared by the loopback WebSocket fakes (STT vendors, Gemini Live).
 * Polls every 2 ms; timeouts are generous ceilings for a failing test, never a latency bar.
 */
import type { WebSocket } from "ws";
import type { Loopback } from "./loopback.js";

/** Resolve once `check()` holds; reject naming `what` after `timeoutMs`. */
export async function until(fake: string, check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${fake}: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export interface WaitableConnection {
  readonly socket: WebSocket;
  closed: boolean;
}

/** The last connection `fake` accepted; throws when there is none yet. */
export function latestConnection<C>(fake: string, connections: readonly C[]): C {
  const c = connections.at(-1);
  if (c === undefined) throw new Error(`${fake}: no connection yet`);
  return c;
}

/** Send `message` as a JSON text frame on `c`, unless it has closed (what a fake says to a gone client is lost). */
export function sendJson(c: WaitableConnection, message: object): void {
  if (!c.closed && c.socket.readyState === c.socket.OPEN) c.socket.send(JSON.stringify(message));
}

export interface AudioFakeWaits<C extends WaitableConnection> {
  /** Wait for the `count`-th connection (default: the next one). */
  waitForConnection(count?: number, timeoutMs?: number): Promise<C>;
  /** Wait until `count` control messages of `type` arrived (over all connections). */
  waitForMessage(type: string, count?: number, timeoutMs?: number): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number, timeoutMs?: number): Promise<void>;
  waitForClose(connection?: C, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface AudioFakeState<C extends WaitableConnection> {
  /** Name used in timeout errors, e.g. "fake deepgram". */
  readonly fake: string;
  readonly connections: C[];
  readonly messages: Record<string, unknown>[];
  /** Audio bytes received over all connections. */
  audioBytes(): number;
  /** The server the fake listens on (its close ends every connection). */
  readonly server: Loopback;
}

/** The waits and `close()` of a fake that receives audio and typed JSON control messages. */
export function audioFakeWaits<C extends WaitableConnection>(state: AudioFakeState<C>): AudioFakeWaits<C> {
  const { fake, connections, messages } = state;
  return {
    async waitForConnection(count = connections.length + 1, timeoutMs = 2000) {
      await until(fake, () => connections.length >= count, `connection #${count}`, timeoutMs);
      return connections[count - 1]!;
    },
    async waitForMessage(type, count = 1, timeoutMs = 2000) {
      const of = (): Record<string, unknown>[] => messages.filter((m) => m["type"] === type);
      await until(fake, () => of().length >= count, `${count} × ${type}`, timeoutMs);
      return of()[count - 1]!;
    },
    async waitForAudio(bytes, timeoutMs = 2000) {
      await until(fake, () => state.audioBytes() >= bytes, `${bytes} audio bytes`, timeoutMs);
    },
    async waitForClose(connection, timeoutMs = 2000) {
      const c = connection ?? latestConnection(fake, connections);
      await until(fake, () => c.closed, "the socket to close", timeoutMs);
    },
    close: () => state.server.close(),
  };
}
