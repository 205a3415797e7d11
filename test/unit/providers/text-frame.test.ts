import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { textFrame, WholeTextFrames, xorWithKey } from "../../../src/providers/text-frame.js";
import { newWebSocket, ProviderSocket } from "../../../src/providers/ws-connect.js";

/** Texts around every length boundary of RFC 6455 §5.2 (7-bit, 16-bit, 64-bit), ASCII and not. */
const TEXTS = [
  "",
  "a",
  "x".repeat(125),
  "x".repeat(126),
  "x".repeat(127),
  "x".repeat(0xffff),
  "x".repeat(0x10000),
  "y".repeat(70_001),
  `{"type":"input_audio_buffer.append","audio":"${Buffer.alloc(160, 0xff).toString("base64")}"}`,
  "é",
  "naïve — ☎ 📞",
  "é".repeat(63) + "z", // 127 UTF-8 bytes from 64 characters: the length is the bytes'
];

/** A WebSocket server on a loopback port whose upgrades hand their raw socket to `accepted`. */
async function server(accepted: (ws: WebSocket, socket: Duplex) => void): Promise<{ url: string; http: Server; wss: WebSocketServer }> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const http = createServer();
  http.on("upgrade", (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => accepted(ws, socket)));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}`, http, wss };
}

function received(ws: WebSocket, count: number): Promise<(string | Buffer)[]> {
  const got: (string | Buffer)[] = [];
  return new Promise((resolve, reject) => {
    ws.on("error", reject);
    ws.on("close", (code) => reject(new Error(`closed ${code} after ${got.length} messages`)));
    ws.on("message", (data, binary) => {
      got.push(binary ? (data as Buffer) : (data as Buffer).toString("utf8"));
      if (got.length === count) resolve(got);
    });
  });
}

/** A promise and its resolve (Node 20 has no `Promise.withResolvers`). */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void } {
  let resolve: (value: T | PromiseLike<T>) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const opened = (ws: WebSocket): Promise<void> => new Promise((resolve, reject) => ws.once("open", () => resolve()).once("error", reject));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function closeAll(http: Server, wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}

describe("textFrame (RFC 6455 §5.2)", () => {
  it("writes FIN + text, the length in 7, 16 or 64 bits, and the UTF-8 payload (a server's frame: no mask)", () => {
    expect([...textFrame("hi", false)]).toEqual([0x81, 2, 0x68, 0x69]);
    const f126 = textFrame("x".repeat(126), false);
    expect([...f126.subarray(0, 4)]).toEqual([0x81, 126, 0, 126]);
    expect(f126.byteLength).toBe(4 + 126);
    const f64k = textFrame("x".repeat(0x10000), false);
    expect([...f64k.subarray(0, 10)]).toEqual([0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(textFrame("é", false).subarray(2).toString("utf8")).toBe("é");
    expect(textFrame("é", false)[1]).toBe(2);
  });

  it("masks a client's frame with a fresh key each time: the MASK bit, the key, the payload XORed (§5.3)", () => {
    const text = "the payload of a masked frame";
    const keys = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const frame = textFrame(text, true);
      expect(frame[0]).toBe(0x81);
      expect(frame[1]).toBe(0x80 | Buffer.byteLength(text));
      const key = frame.subarray(2, 6);
      keys.add(key.toString("hex"));
      const payload = Buffer.from(frame.subarray(6).map((byte, j) => byte ^ (key[j % 4] as number)));
      expect(payload.toString("utf8")).toBe(text);
    }
    // 3,000 keys cross a refill of the 8 KiB pool; random 32-bit keys almost never repeat.
    expect(keys.size).toBeGreaterThan(2990);
  });

  it("masks every payload size alike, a byte or a 32-bit word at a time, ASCII or not", () => {
    for (const size of [0, 1, 3, 4, 5, 63, 64, 65, 125, 126, 127, 263, 1001, 0xffff, 0x10000, 70_001]) {
      for (const filler of ["a", "é"]) {
        const text = filler.repeat(size);
        const frame = textFrame(text, true);
        const bytes = Buffer.byteLength(text);
        const at = bytes <= 125 ? 2 : bytes <= 0xffff ? 4 : 10;
        expect(frame[1]! & 0x80).toBe(0x80);
        expect(frame.byteLength).toBe(at + 4 + bytes);
        const key = frame.subarray(at, at + 4);
        const payload = Buffer.from(frame.subarray(at + 4).map((byte, j) => byte ^ (key[j % 4] as number)));
        expect(payload.toString("utf8")).toBe(text);
      }
    }
  });

  it("XORs a payload with the key before it wherever it lies in memory (a socket's read puts it anywhere), and undoes itself", () => {
    const backing = Buffer.alloc(400);
    for (let offset = 0; offset < 8; offset++) {
      for (let length = 0; length <= 140; length++) {
        const frame = backing.subarray(offset, offset + 4 + length);
        for (let i = 0; i < frame.length; i++) frame[i] = (i * 37 + offset * 11 + length) & 0xff;
        const before = Buffer.from(frame);
        xorWithKey(frame, 4, length);
        const expected = Buffer.from(before.map((byte, i) => (i < 4 ? byte : byte ^ (before[(i - 4) % 4] as number))));
        expect(frame.equals(expected), `offset ${offset}, length ${length}`).toBe(true);
        xorWithKey(frame, 4, length);
        expect(frame.equals(before)).toBe(true);
      }
    }
  });
});

describe("text frames written whole, read by ws", () => {
  it("a server's frames (unmasked) arrive as sent, in order with ws's own binary sends", async () => {
    let frames: WholeTextFrames | undefined;
    let serverWs: WebSocket | undefined;
    const ready = deferred<void>();
    const { url, http, wss } = await server((ws, socket) => {
      serverWs = ws;
      frames = new WholeTextFrames(socket, false);
      ready.resolve();
    });
    cleanups.push(() => closeAll(http, wss));
    const client = new WebSocket(url);
    cleanups.push(() => client.terminate());
    const got = received(client, TEXTS.length * 2);
    await ready.promise;
    TEXTS.forEach((text, i) => {
      frames?.send(text);
      serverWs?.send(Buffer.from([i]));
    });
    expect(await got).toEqual(TEXTS.flatMap((text, i) => [text, Buffer.from([i])]));
  });

  it("a provider socket's text sends leave whole and masked, interleaved with ws's binary sends and pings", async () => {
    const inbox = deferred<(string | Buffer)[]>();
    const pinged = vi.fn();
    const { url, http, wss } = await server((ws) => {
      ws.on("ping", pinged);
      inbox.resolve(received(ws, TEXTS.length * 2));
    });
    cleanups.push(() => closeAll(http, wss));
    const wsSend = vi.spyOn(WebSocket.prototype, "send");
    const client = newWebSocket(url, {});
    cleanups.push(() => client.terminate());
    expect(client).toBeInstanceOf(ProviderSocket);
    await opened(client);
    TEXTS.forEach((text, i) => {
      client.send(text);
      client.send(Buffer.from([i]));
      client.ping();
    });
    expect(await inbox.promise).toEqual(TEXTS.flatMap((text, i) => [text, Buffer.from([i])]));
    expect(pinged).toHaveBeenCalledTimes(TEXTS.length);
    // Only the binary sends went through ws's own send.
    expect(wsSend.mock.calls.map(([data]) => typeof data)).toEqual(TEXTS.map(() => "object"));
  });

  it("a provider socket hands ws what it does not write itself: a send with a callback or options, and any send before it opens", async () => {
    const inbox = deferred<(string | Buffer)[]>();
    const { url, http, wss } = await server((ws) => inbox.resolve(received(ws, 2)));
    cleanups.push(() => closeAll(http, wss));
    const client = newWebSocket(url, {});
    cleanups.push(() => client.terminate());
    // As ws does: a send while connecting throws.
    expect(() => client.send("too early")).toThrow(/CONNECTING/);
    await opened(client);
    const wsSend = vi.spyOn(WebSocket.prototype, "send");
    const sent = deferred<Error | null | undefined>();
    client.send("with a callback", (err) => sent.resolve(err));
    client.send("with options", { binary: false });
    expect(await sent.promise).toBeFalsy();
    expect(await inbox.promise).toEqual(["with a callback", "with options"]);
    expect(wsSend).toHaveBeenCalledTimes(2);
  });
});
