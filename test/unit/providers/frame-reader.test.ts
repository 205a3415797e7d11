import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Duplex, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import * as wsModule from "ws";
import { WebSocket, WebSocketServer } from "ws";
import { FrameScanner } from "../../../src/providers/frame-reader.js";
import { newWebSocket } from "../../../src/providers/ws-connect.js";
import { acceptUpgrade } from "../../../src/server/upgrade.js";
import { TLS_CERT, TLS_KEY } from "../../helpers/tls-fixture.js";

const MAX_PAYLOAD = 20_000;

/** ws's own frame reader (ws exports it; @types/ws does not declare it): the reference the scanner is held to. */
const Receiver = (wsModule as unknown as { Receiver: new (options: { isServer: boolean; maxPayload: number }) => Writable }).Receiver;

interface FrameSpec {
  readonly opcode: number;
  readonly payload: Buffer;
  readonly fin?: boolean;
  readonly rsv?: number;
  /** Masked, or the opposite of what the reader expects when "wrong". */
  readonly mask?: "wrong";
}

/** One frame's bytes (RFC 6455 §5.2), masked with a fixed key when `masked`. */
function frame(spec: FrameSpec, masked: boolean): Buffer {
  const withMask = spec.mask === "wrong" ? !masked : masked;
  const length = spec.payload.length;
  const lengthBytes = length <= 125 ? 0 : length <= 0xffff ? 2 : 8;
  const out = Buffer.alloc(2 + lengthBytes + (withMask ? 4 : 0) + length);
  out[0] = ((spec.fin ?? true) ? 0x80 : 0) | (spec.rsv ?? 0) | spec.opcode;
  out[1] = (withMask ? 0x80 : 0) | (lengthBytes === 0 ? length : lengthBytes === 2 ? 126 : 127);
  if (lengthBytes === 2) out.writeUInt16BE(length, 2);
  if (lengthBytes === 8) out.writeBigUInt64BE(BigInt(length), 2);
  let at = 2 + lengthBytes;
  const key = [0x12, 0x9a, 0x3c, 0xe5];
  if (withMask) {
    Buffer.from(key).copy(out, at);
    at += 4;
  }
  for (let i = 0; i < length; i++) out[at + i] = (spec.payload[i] as number) ^ (withMask ? (key[i & 3] as number) : 0);
  return out;
}

const text = (s: string, more: Partial<FrameSpec> = {}): FrameSpec => ({ opcode: 1, payload: Buffer.from(s, "utf8"), ...more });
const binary = (bytes: number[]): FrameSpec => ({ opcode: 2, payload: Buffer.from(bytes) });
const ping = (s: string): FrameSpec => ({ opcode: 9, payload: Buffer.from(s) });
const pong = (s: string): FrameSpec => ({ opcode: 10, payload: Buffer.from(s) });
const close = (code: number): FrameSpec => {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return { opcode: 8, payload };
};
const continuation = (s: string, fin: boolean): FrameSpec => ({ opcode: 0, payload: Buffer.from(s), fin });
const NOT_UTF8 = { opcode: 1, payload: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]) } satisfies FrameSpec;

type Seen = readonly (string | number | boolean)[];

/** A message as the tests record it: binary as hex (ws's "nodebuffer" gives a Buffer; "arraybuffer" an ArrayBuffer, recorded as such). */
const message = (data: Buffer | ArrayBuffer, isBinary: boolean): Seen =>
  ["message", data instanceof ArrayBuffer ? `arraybuffer:${Buffer.from(data).toString("hex")}` : isBinary ? data.toString("hex") : data.toString("utf8"), isBinary];

/** ws's receiver, recording what it emits (its errors arrive a tick later, as on a socket). */
function receiver(masked: boolean, seen: Seen[], maxPayload = MAX_PAYLOAD, binaryType = "nodebuffer"): Writable {
  const r = new Receiver({ isServer: masked, maxPayload });
  (r as unknown as { _binaryType: string })._binaryType = binaryType;
  r.on("message", (data: Buffer | ArrayBuffer, isBinary: boolean) => seen.push(message(data, isBinary)));
  r.on("ping", (data: Buffer) => seen.push(["ping", data.toString()]));
  r.on("pong", (data: Buffer) => seen.push(["pong", data.toString()]));
  r.on("conclude", (code: number) => seen.push(["conclude", code]));
  r.on("error", (err: Error & { code?: string }) => seen.push(["error", err.code ?? err.message]));
  return r;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What ws alone emits for `stream`, read in one piece. */
async function reference(stream: Buffer, masked: boolean, maxPayload = MAX_PAYLOAD): Promise<Seen[]> {
  const seen: Seen[] = [];
  receiver(masked, seen, maxPayload).write(Buffer.from(stream));
  await tick();
  return seen;
}

/**
 * What the scanner and ws behind it emit for `stream` read in `pieces`, a tick between reads (as a
 * socket's reads come); binary frames delivered whole unless ws's `binaryType` is another.
 */
async function scanned(stream: Buffer, masked: boolean, cuts: readonly number[], maxPayload = MAX_PAYLOAD, binaryType = "nodebuffer"): Promise<{ seen: Seen[]; delivered: number }> {
  const seen: Seen[] = [];
  const ws = receiver(masked, seen, maxPayload, binaryType);
  let delivered = 0;
  const scanner = new FrameScanner(
    masked,
    maxPayload,
    (payload, isBinary) => {
      delivered += 1;
      seen.push(message(payload, isBinary));
    },
    (bytes) => ws.write(bytes),
    () => binaryType === "nodebuffer",
  );
  ws.on("error", () => scanner.stop());
  const copy = Buffer.from(stream);
  let from = 0;
  for (const cut of [...cuts, copy.length]) {
    scanner.read(copy.subarray(from, cut));
    from = cut;
    await tick();
  }
  return { seen, delivered };
}

const streamOf = (frames: readonly FrameSpec[], masked: boolean): Buffer => Buffer.concat(frames.map((f) => frame(f, masked)));

/** Every way to cut `length` bytes in two, and a few in many (a fixed pseudo-random sequence), and byte by byte. */
function cuttings(length: number): number[][] {
  const out: number[][] = [[]];
  for (let cut = 1; cut < length; cut += length > 400 ? 7 : 1) out.push([cut]);
  let seed = 7;
  for (let n = 0; n < 20; n++) {
    const cuts = new Set<number>();
    for (let k = 0; k < 6; k++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      cuts.add(1 + (seed % (length - 1)));
    }
    out.push([...cuts].sort((a, b) => a - b));
  }
  if (length < 2000) out.push(Array.from({ length: length - 1 }, (_, i) => i + 1));
  return out;
}

const STREAMS: Record<string, readonly FrameSpec[]> = {
  "text, binary, ping and pong of every length class": [
    text("{}"),
    text(""),
    text("x".repeat(125)),
    text("é".repeat(63)),
    binary([1, 2, 3]),
    ping("are you there"),
    text("y".repeat(126)),
    pong("yes"),
    text("z".repeat(300)),
    text("🎧 ".repeat(20)),
  ],
  "binary frames of every length class, between text": [
    binary([]),
    text("a"),
    binary(Array.from({ length: 125 }, (_, i) => i)),
    binary(Array.from({ length: 126 }, (_, i) => 255 - i)),
    text("b"),
    binary(Array.from({ length: 640 }, (_, i) => (i * 7) & 255)),
    pong("p"),
    binary([0xc3, 0x28]),
  ],
  "a fragmented binary message, then more": [binary([1]), { opcode: 2, payload: Buffer.from([2, 3]), fin: false }, ping("mid"), { opcode: 0, payload: Buffer.from([4]), fin: true }, binary([5])],
  "a binary payload past maxPayload": [binary([1]), { opcode: 2, payload: Buffer.alloc(MAX_PAYLOAD + 1, 9) }, binary([2])],
  "a fragmented message, then more": [text("one"), text("fr", { fin: false }), ping("mid"), continuation("ag", false), continuation("ment", true), text("after")],
  "a close frame, then frames ws never reads": [text("before"), close(1000), text("after the close")],
  "text that is not UTF-8, then more": [text("before"), NOT_UTF8, text("after")],
  "reserved bits set": [text("before"), text("rsv", { rsv: 0x40 }), text("after")],
  "the wrong mask bit": [text("before"), text("unmasked", { mask: "wrong" }), text("after")],
  "a payload past maxPayload": [text("before"), { opcode: 1, payload: Buffer.alloc(MAX_PAYLOAD + 1, 0x61) }, text("after")],
  "a ping over 125 bytes": [text("before"), ping("p".repeat(126)), text("after")],
  "a fragmented ping": [text("before"), { opcode: 9, payload: Buffer.from("p"), fin: false }, text("after")],
  "a continuation with no message": [text("before"), continuation("stray", true), text("after")],
  "an unknown opcode": [text("before"), { opcode: 3, payload: Buffer.from("?") }, text("after")],
  "a text frame mid-message": [text("a", { fin: false }), text("b"), text("after")],
};

describe("FrameScanner: what ws alone reads, at every cut of the stream", () => {
  for (const masked of [true, false]) {
    for (const [name, frames] of Object.entries(STREAMS)) {
      it(`${name} (${masked ? "a client's masked frames" : "a server's frames"})`, async () => {
        const stream = streamOf(frames, masked);
        const expected = await reference(stream, masked);
        for (const cuts of cuttings(stream.length)) {
          const { seen } = await scanned(stream, masked, cuts);
          expect(seen, `cut at ${cuts.join(",")}`).toEqual(expected);
        }
      });
    }
  }

  it("delivers the data frames whole in one read itself, and leaves ws the rest", async () => {
    const around = [text("a"), { opcode: 2, payload: Buffer.alloc(15_000, 7) }, ping("p"), text("b"), text("c")] satisfies FrameSpec[];
    const stream = streamOf(around, true);
    expect((await scanned(stream, true, [])).delivered).toBe(4);
    // Cut inside the binary frame: ws reads it across the two reads (it cannot fail on it, so what follows in that read is still the scanner's).
    const binaryAt = frame(text("a"), true).length;
    expect((await scanned(stream, true, [binaryAt + 100])).delivered).toBe(3);
    // Cut inside a long text frame: ws reads it, and what follows it in the read where it ends (ws may be failing the connection).
    const long = streamOf([text("a"), text("l".repeat(15_000)), text("c")], true);
    expect((await scanned(long, true, [])).delivered).toBe(3);
    const split = await scanned(long, true, [binaryAt + 100]);
    expect(split.delivered).toBe(1);
    expect(split.seen).toEqual(await reference(long, true));
  });

  it("a binary frame for another binaryType is ws's to make (an ArrayBuffer here), in order with the rest", async () => {
    for (const masked of [true, false]) {
      const stream = streamOf([text("a"), binary([1, 2, 3]), text("b"), binary([4])], masked);
      const expected = await reference(stream, masked);
      const whole = await scanned(stream, masked, []);
      expect(whole.delivered).toBe(4);
      expect(whole.seen).toEqual(expected);
      const seen: Seen[] = [];
      receiver(masked, seen, MAX_PAYLOAD, "arraybuffer").write(Buffer.from(stream));
      await tick();
      const other = await scanned(stream, masked, [], MAX_PAYLOAD, "arraybuffer");
      expect(other.delivered).toBe(2);
      expect(other.seen).toEqual(seen);
      expect(other.seen[1]).toEqual(["message", "arraybuffer:010203", true]);
    }
  });

  it("a text frame split across reads that is not UTF-8: nothing after it in that read is delivered", async () => {
    const stream = streamOf([text("before"), NOT_UTF8, text("after"), text("later")], true);
    const notUtf8At = frame(text("before"), true).length;
    const { seen } = await scanned(stream, true, [notUtf8At + 3]);
    expect(seen).toEqual([["message", "before", false], ["error", "WS_ERR_INVALID_UTF8"]]);
  });

  it("a 64-bit length and a 16-bit length at their boundaries", async () => {
    for (const length of [0xffff, 0x10000, 70_000]) {
      const stream = streamOf([text("q".repeat(length)), text("next")], false);
      const { seen, delivered } = await scanned(stream, false, [], length + 1);
      expect(delivered).toBe(2);
      expect(seen).toEqual(await reference(stream, false, length + 1));
    }
  });
});

describe("readFramesWhole on real sockets", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server whose upgrades go through `acceptUpgrade` (as the gateway's), echoing what it reads; over TLS when `tls`. */
  async function echoServer(tls = false): Promise<{ url: string; accepted: Promise<{ ws: WebSocket; socket: Duplex }> }> {
    const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false });
    let accept!: (value: { ws: WebSocket; socket: Duplex }) => void;
    const accepted = new Promise<{ ws: WebSocket; socket: Duplex }>((resolve) => (accept = resolve));
    server = tls ? createTlsServer({ cert: TLS_CERT, key: TLS_KEY }) : createServer();
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      acceptUpgrade(wss, req, socket, head, (ws) => {
        ws.on("message", (data: Buffer, isBinary: boolean) => ws.send(isBinary ? data : `echo:${data.toString()}`));
        accept({ ws, socket });
      }),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return { url: `${tls ? "wss" : "ws"}://127.0.0.1:${(server.address() as AddressInfo).port}`, accepted };
  }

  /** A plain ws client on an echo server, open, and the server's side of it. */
  async function connected(): Promise<{ client: WebSocket; ws: WebSocket }> {
    const { url, accepted } = await echoServer();
    const client = new WebSocket(url);
    await once(client, "open");
    return { client, ws: (await accepted).ws };
  }

  it.each([
    ["plain", false],
    ["TLS (a provider's wss://, a gateway serving its own TLS)", true],
  ])("both ends read whole (%s): the server's socket and a provider socket hand ws's listener no text frame", async (_name, tls) => {
    const { url, accepted } = await echoServer(tls);
    const client = newWebSocket(url, tls ? { ca: TLS_CERT } : {});
    const got: string[] = [];
    client.on("message", (data: Buffer, isBinary: boolean) => got.push(isBinary ? `binary:${data.length}` : data.toString()));
    await once(client, "open");
    const { socket } = await accepted;
    // ws's own `data` listener is gone from both sockets: the reader's is there instead.
    const clientSocket = (client as unknown as { _socket: Duplex })._socket;
    for (const under of [socket, clientSocket]) {
      expect(under.listeners("data")).toHaveLength(1);
      expect(under.listeners("data")[0]?.name).toBe("read");
    }
    // 200 KB: more than one socket read, so ws reads it (and the frames after it in that read).
    const sent = ["small", "x".repeat(200_000), "é🎧", ""];
    for (const s of sent) client.send(s);
    client.send(Buffer.alloc(3000, 1));
    client.ping();
    const [pongData] = (await once(client, "pong")) as [Buffer];
    expect(pongData.length).toBe(0);
    while (got.length < sent.length + 1) await once(client, "message");
    expect(got).toEqual([...sent.map((s) => `echo:${s}`), "binary:3000"]);
    client.close(1000, "done");
    const [code] = (await once(client, "close")) as [number];
    expect(code).toBe(1000);
  });

  it("a binary frame arrives as the socket's binaryType asks, read whole or by ws", async () => {
    const { client, ws } = await connected();
    const got: unknown[] = [];
    ws.on("message", (data: unknown, isBinary: boolean) => got.push([isBinary, data instanceof ArrayBuffer ? "ArrayBuffer" : Buffer.isBuffer(data) ? "Buffer" : typeof data, (data as { byteLength: number }).byteLength]));
    const echoed = once(client, "message");
    client.send(Buffer.alloc(640, 3));
    await echoed;
    ws.binaryType = "arraybuffer";
    const second = once(client, "message");
    client.send(Buffer.alloc(640, 4));
    const [data, isBinary] = (await second) as [Buffer, boolean];
    expect(isBinary).toBe(true);
    expect(data.length).toBe(640);
    expect(got).toEqual([
      [true, "Buffer", 640],
      [true, "ArrayBuffer", 640],
    ]);
    client.close(1000, "done");
    await once(client, "close");
  });

  it("text that is not UTF-8 fails the connection with 1007, as ws would", async () => {
    const { client, ws } = await connected();
    const errors: string[] = [];
    ws.on("error", (err: Error & { code?: string }) => errors.push(err.code ?? ""));
    // Written raw on the client's socket: ws's own send would refuse to build it.
    (client as unknown as { _socket: Duplex })._socket.write(frame(NOT_UTF8, true));
    const [code] = (await once(client, "close")) as [number];
    expect(code).toBe(1007);
    expect(errors).toEqual(["WS_ERR_INVALID_UTF8"]);
  });
});
