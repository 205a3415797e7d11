// A test-only TCP proxy that injects network faults between two loopback peers. It listens on
// 127.0.0.1 (port 0) and pipes every accepted connection to one target port with raw `node:net`,
// so it carries HTTP, SSE and WebSocket alike without parsing anything. Every control works
// mid-connection:
//
// - `sever()`: destroy every live connection, both ways at once (a network drop: no close frame,
//   no HTTP end, the peers see the socket end);
// - `severAfter(bytes, direction)`: forward exactly `bytes` more bytes in that direction (split
//   inside a chunk if need be), then sever — a cut mid-frame, mid-utterance, mid-sentence;
// - `delay(ms)`: hold each chunk `ms` milliseconds before forwarding it (order kept);
// - `stall()` / `unstall()`: stop forwarding and stop reading (both ways, or one direction),
//   keeping the sockets open (a peer that stops reading: the sender's kernel buffers fill and
//   backpressure builds), then resume.
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/** `upstream`: client → target (what the proxied client sends); `downstream`: target → client. */
export type Direction = "upstream" | "downstream";

export interface FaultProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Live connections (each a client socket and its target socket). */
  readonly connections: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Cuts made so far (by `sever()` or a `severAfter` that fired). */
  readonly cuts: number;
  /** `url("ws", "/v1/listen")` → `ws://127.0.0.1:PORT/v1/listen`. */
  url(scheme: string, path?: string): string;
  /** Destroy every live connection now, both ways. */
  sever(): void;
  /** Sever once `bytes` more bytes have been forwarded in `direction` (over all connections). Resolves when the cut is made. */
  severAfter(bytes: number, direction: Direction): Promise<void>;
  /** Forward each chunk `ms` milliseconds after it arrived (0: at once). */
  delay(ms: number): void;
  /** Stop forwarding and reading in `direction` (default: both); sockets stay open. */
  stall(direction?: Direction): void;
  /** Forward again in `direction` (default: both), what was held first. */
  unstall(direction?: Direction): void;
  /** Sever everything and stop listening. */
  close(): Promise<void>;
}

/** One direction of one connection: a queue of chunks, each due at a time (ms since the epoch). */
interface Pipe {
  readonly direction: Direction;
  readonly from: Socket;
  readonly to: Socket;
  readonly queue: { chunk: Buffer; due: number }[];
  /** Waiting for `to` to drain. */
  blocked: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Bytes queued in the proxy per direction (beyond what is in flight) before it stops reading. */
const MAX_QUEUED_BYTES = 256 * 1024;

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const pairs = new Set<{ client: Socket; target: Socket; pipes: Pipe[] }>();
  let accepted = 0;
  let cuts = 0;
  let delayMs = 0;
  const stalled: Record<Direction, boolean> = { upstream: false, downstream: false };
  let armed: { direction: Direction; left: number; fired: () => void } | undefined;
  /** A `severAfter` fired: nothing more is forwarded until the cut is made. */
  let cutting = false;

  const queuedBytes = (pipe: Pipe): number => pipe.queue.reduce((sum, item) => sum + item.chunk.byteLength, 0);

  /** Read from `from` only while forwarding is possible (not stalled, not blocked, queue small). */
  const flow = (pipe: Pipe): void => {
    if (stalled[pipe.direction] || pipe.blocked || queuedBytes(pipe) > MAX_QUEUED_BYTES) pipe.from.pause();
    else pipe.from.resume();
  };

  const sever = (): void => {
    cutting = false;
    if (pairs.size > 0) cuts++;
    for (const pair of pairs) {
      for (const pipe of pair.pipes) clearTimeout(pipe.timer);
      pair.client.destroy();
      pair.target.destroy();
    }
    pairs.clear();
  };

  /** Forward what is due, in order; counts down an armed `severAfter` on the bytes actually written. */
  const pump = (pipe: Pipe): void => {
    clearTimeout(pipe.timer);
    pipe.timer = undefined;
    while (!stalled[pipe.direction] && !cutting && !pipe.blocked && pipe.queue.length > 0 && !pipe.to.destroyed) {
      const head = pipe.queue[0];
      if (head === undefined) break;
      const wait = head.due - Date.now();
      if (wait > 0) {
        pipe.timer = setTimeout(() => pump(pipe), wait);
        break;
      }
      pipe.queue.shift();
      let chunk = head.chunk;
      let cut: (() => void) | undefined;
      if (armed !== undefined && armed.direction === pipe.direction) {
        if (chunk.byteLength >= armed.left) {
          chunk = chunk.subarray(0, armed.left);
          cut = armed.fired;
          armed = undefined;
          cutting = true;
        } else {
          armed.left -= chunk.byteLength;
        }
      }
      if (chunk.byteLength > 0 && !pipe.to.write(chunk)) {
        pipe.blocked = true;
        pipe.to.once("drain", () => {
          pipe.blocked = false;
          pump(pipe);
        });
      }
      if (cut !== undefined) {
        // Let the partial chunk reach the kernel before both ends go.
        setImmediate(() => {
          sever();
          cut?.();
        });
        return;
      }
    }
    flow(pipe);
  };

  const server: Server = createServer((client) => {
    accepted++;
    const target = connect(targetPort, "127.0.0.1");
    const pipe = (direction: Direction, from: Socket, to: Socket): Pipe => {
      const p: Pipe = { direction, from, to, queue: [], blocked: false, timer: undefined };
      from.on("data", (chunk: Buffer) => {
        p.queue.push({ chunk, due: Date.now() + delayMs });
        pump(p);
      });
      return p;
    };
    const pair = { client, target, pipes: [pipe("upstream", client, target), pipe("downstream", target, client)] };
    pairs.add(pair);
    for (const p of pair.pipes) flow(p);
    const end = (): void => {
      if (!pairs.delete(pair)) return;
      for (const p of pair.pipes) clearTimeout(p.timer);
      client.destroy();
      target.destroy();
    };
    // Either side going away takes the other with it (after what was already forwarded).
    client.on("close", end);
    target.on("close", end);
    client.on("error", end);
    target.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const everyPipe = (): Pipe[] => [...pairs].flatMap((pair) => pair.pipes);

  return {
    port,
    get connections() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    get cuts() {
      return cuts;
    },
    url: (scheme, path = "") => `${scheme}://127.0.0.1:${port}${path}`,
    sever,
    severAfter(bytes, direction) {
      return new Promise<void>((resolve) => {
        armed = { direction, left: Math.max(0, Math.floor(bytes)), fired: resolve };
        // Zero bytes: cut at once.
        if (armed.left === 0) {
          armed = undefined;
          sever();
          resolve();
        }
      });
    },
    delay(ms) {
      delayMs = Math.max(0, ms);
    },
    stall(direction) {
      for (const d of direction === undefined ? (["upstream", "downstream"] as const) : [direction]) stalled[d] = true;
      for (const pipe of everyPipe()) flow(pipe);
    },
    unstall(direction) {
      for (const d of direction === undefined ? (["upstream", "downstream"] as const) : [direction]) stalled[d] = false;
      for (const pipe of everyPipe()) pump(pipe);
    },
    close() {
      armed = undefined;
      sever();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
