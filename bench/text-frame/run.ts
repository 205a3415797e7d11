/**
 * `npm run bench:text-frame`: what one text frame costs from the string to the socket, ws's way
 * against the gateway's (src/providers/text-frame.ts), measured in the same run.
 *
 * - ws's way (the baseline): `WebSocket.send(text)` on a ws socket, as the gateway sent every text
 *   frame before: ws measures the text, builds an options object and a header buffer (a client, a
 *   buffer of the text to mask, masked by `bufferutil` when it loads) and corks the socket around
 *   two writes, which leave as one `writev`.
 * - the gateway's way: `WholeTextFrames.send(text)`: the header, the key and the payload in one
 *   buffer, one write.
 *
 * Two frames, each the one a call sends every 20 ms: the OpenAI Realtime `input_audio_buffer.append`
 * of 20 ms of μ-law from the gateway as a client (masked), and the Twilio `media` frame of 20 ms of
 * μ-law from the gateway as a server (not masked). Both ways write to the same kind of socket, a
 * `Duplex` that counts its writes and bytes and keeps nothing (no kernel). ns of process CPU a
 * frame: the median of REPS runs of FRAMES frames, the ways interleaved after a warm-up. A few
 * seconds. Options: --no-docs. Results go to stdout and to docs/benchmarks.md between the
 * bench:text-frame markers.
 */
import { cpus } from "node:os";
import { Duplex } from "node:stream";
import { WebSocket } from "ws";
import { WholeTextFrames } from "../../src/providers/text-frame.js";
import { wsMasking } from "../../src/server/ws-masking.js";
import { docSection, publishSection, runBench } from "../shared/common.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:text-frame");
const FRAMES = 200_000;
const REPS = 7;

/** A socket that counts what it is given and drops it: what a frame costs up to the kernel. */
class CountingSocket extends Duplex {
  writes = 0;
  bytes = 0;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.writes += 1;
    this.bytes += chunk.byteLength;
    done();
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    this.writes += 1;
    for (const { chunk } of chunks) this.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    done();
  }

  override _read(): void {}
  // What ws calls on the socket it takes (net.Socket's).
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
}

/** The ws frames of one side: a ws socket on a counting socket (ws's `setSocket`, what its server and client call after the upgrade). */
function wsOn(socket: CountingSocket, client: boolean): WebSocket {
  // As ws's server builds one before `setSocket` (its options: autoPong, closeTimeout).
  const ws = new (WebSocket as unknown as new (address: null, protocols: undefined, options: object) => WebSocket)(null, undefined, { autoPong: true });
  (ws as unknown as { setSocket(socket: Duplex, head: Buffer, options: object): void }).setSocket(socket, Buffer.alloc(0), { maxPayload: 0, skipUTF8Validation: false });
  // A client masks what it sends (RFC 6455 §5.3); ws decides by this field on each send.
  (ws as unknown as { _isServer: boolean })._isServer = !client;
  return ws;
}

interface Side {
  readonly name: string;
  readonly masked: boolean;
  /** The frames a run sends, varied so nothing is hoisted. */
  readonly texts: readonly string[];
}

const ulaw = (i: number): string => Buffer.alloc(160, (i * 37) & 0xff).toString("base64");
const SIDES: readonly Side[] = [
  { name: "service append (the gateway a client: masked)", masked: true, texts: Array.from({ length: 64 }, (_, i) => `{"type":"input_audio_buffer.append","audio":"${ulaw(i)}"}`) },
  { name: "carrier `media` (the gateway a server: not masked)", masked: false, texts: Array.from({ length: 64 }, (_, i) => `{"event":"media","streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0","media":{"payload":"${ulaw(i)}"}}`) },
];

interface Way {
  readonly name: string;
  readonly sender: (socket: CountingSocket, masked: boolean) => (text: string) => void;
}

const WAYS: readonly Way[] = [
  {
    name: "`ws.send` (the baseline)",
    sender: (socket, masked) => {
      const ws = wsOn(socket, masked);
      return (text) => ws.send(text);
    },
  },
  {
    name: "`WholeTextFrames.send` (src/providers/text-frame.ts)",
    sender: (socket, masked) => {
      const frames = new WholeTextFrames(socket, masked);
      return (text) => frames.send(text);
    },
  },
];

interface Run {
  readonly ns: number;
  readonly writes: number;
  readonly bytes: number;
}

function timed(side: Side, way: Way): Run {
  const socket = new CountingSocket();
  const send = way.sender(socket, side.masked);
  const texts = side.texts;
  const before = process.cpuUsage();
  for (let i = 0; i < FRAMES; i++) send(texts[i & 63] as string);
  const used = process.cpuUsage(before);
  return { ns: ((used.user + used.system) * 1000) / FRAMES, writes: socket.writes / FRAMES, bytes: socket.bytes / FRAMES };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function main(): Promise<number> {
  const began = Date.now();
  const rows: string[] = [];
  for (const side of SIDES) {
    for (const way of WAYS) timed(side, way);
    const runs = WAYS.map((): Run[] => []);
    for (let rep = 0; rep < REPS; rep++) WAYS.forEach((way, i) => runs[i]?.push(timed(side, way)));
    const baseline = median((runs[0] ?? []).map((run) => run.ns));
    WAYS.forEach((way, i) => {
      const mine = runs[i] ?? [];
      const ns = median(mine.map((run) => run.ns));
      const first = mine[0];
      rows.push(`| ${side.name} | ${way.name} | ${ns.toFixed(0)} | ${(ns / baseline).toFixed(2)}× | ${first?.writes.toFixed(0) ?? "?"} | ${first?.bytes.toFixed(0) ?? "?"} |`);
    });
  }
  const masking = wsMasking();
  const body = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ws masking ${masking.native ? "natively (bufferutil)" : `in JavaScript (${masking.why})`}; ${FRAMES} frames a run, the median of ${REPS} runs a way, interleaved; ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    "| frame | sent by | CPU a frame (ns) | ÷ ws | socket writes a frame | bytes a frame |",
    "|---|---|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
  publishSection("bench:text-frame", SECTION, body);
  return Promise.resolve(0);
}

runBench("bench:text-frame", RUN_LIMIT_MS, main);
