/**
 * `npm run bench:text-frame`: what one text frame costs from the string to the socket, and one
 * frame (text or binary) from the socket's read to the `message` listener, ws's way against the
 * gateway's (src/providers/text-frame.ts, src/providers/frame-reader.ts), measured in the same run.
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
 * `Duplex` that counts its writes and bytes and keeps nothing (no kernel).
 *
 * Read, the two a call reads every 20 ms: the caller's `media` (masked: the gateway is the server)
 * and the service's `response.output_audio.delta` (not masked); and the binary frame a browser,
 * a device or Vonage sends every 20 ms, 640 bytes of 16 kHz PCM (masked). Each read is a fresh copy of the
 * frame's bytes (a socket's read is a fresh buffer, and unmasking writes in place) emitted as the
 * socket's `data`, one frame a read, as they mostly come; the `message` listener counts bytes.
 * - ws's way (the baseline): ws's receiver, a `Writable` (its socket `data` listener writes to it).
 * - the gateway's way: `readFramesWhole` on the same kind of ws socket.
 *
 * ns of process CPU a frame: the median of REPS runs of FRAMES frames, the ways interleaved after
 * a warm-up. A few seconds. Options: --no-docs. Results go to stdout and to docs/benchmarks.md
 * between the bench:text-frame markers.
 */
import { cpus } from "node:os";
import { Duplex } from "node:stream";
import { WebSocket } from "ws";
import { readFramesWhole } from "../../src/providers/frame-reader.js";
import { textFrame, WholeTextFrames } from "../../src/providers/text-frame.js";
import { wsMasking } from "../../src/server/ws-masking.js";
import { docSection, publishSection, runBench } from "../shared/common.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:text-frame");
const FRAMES = 200_000;
const REPS = 7;
/** The carriers' socket limit (2 × MAX_TEXT_FRAME_CHARS, src/server/telephony/answering.ts): any limit reads these frames alike. */
const READ_MAX_PAYLOAD = 2 * 1024 * 1024;

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

/**
 * A ws socket on a counting socket (ws's `setSocket`, what its server and client call after the
 * upgrade), for one side: a client masks what it sends (RFC 6455 §5.3) and reads frames unmasked;
 * ws decides by its `_isServer` field, on each send and when `setSocket` builds its receiver.
 */
function wsOn(socket: CountingSocket, client: boolean): WebSocket {
  // As ws's server builds one before `setSocket` (its options: autoPong, closeTimeout).
  const ws = new (WebSocket as unknown as new (address: null, protocols: undefined, options: object) => WebSocket)(null, undefined, { autoPong: true });
  (ws as unknown as { _isServer: boolean })._isServer = !client;
  (ws as unknown as { setSocket(socket: Duplex, head: Buffer, options: object): void }).setSocket(socket, Buffer.alloc(0), { maxPayload: READ_MAX_PAYLOAD, skipUTF8Validation: false });
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

interface ReadSide {
  readonly name: string;
  /** The peer masks: it is a client (the caller's carrier), and the gateway the server. */
  readonly masked: boolean;
  /** The frames' bytes as they come off the socket, varied so nothing is hoisted. */
  readonly frames: readonly Buffer[];
}

/** 20 ms of 16 kHz, 16-bit mono PCM: a browser's or Vonage's frame. */
const PCM_FRAME_BYTES = 640;

const READ_SIDES: readonly ReadSide[] = [
  {
    name: "caller `media` (the gateway a server: masked)",
    masked: true,
    frames: Array.from({ length: 64 }, (_, i) =>
      textFrame(`{"event":"media","sequenceNumber":"${i + 2}","media":{"track":"inbound","chunk":"${i + 1}","timestamp":"${i * 20}","payload":"${ulaw(i)}"},"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"}`, true),
    ),
  },
  {
    name: "service delta (the gateway a client: not masked)",
    masked: false,
    frames: Array.from({ length: 64 }, (_, i) =>
      textFrame(`{"type":"response.output_audio.delta","event_id":"event_${i}","response_id":"resp_1","item_id":"item_1","output_index":0,"content_index":0,"delta":"${ulaw(i)}"}`, false),
    ),
  },
  {
    name: "browser or Vonage PCM, binary (the gateway a server: masked)",
    masked: true,
    frames: Array.from({ length: 64 }, (_, i) => binaryFrame(Buffer.alloc(PCM_FRAME_BYTES, (i * 37) & 0x7f), true)),
  },
];


/** A binary frame (RFC 6455 §5.2): text-frame.ts's header and masking with the binary opcode (payload bytes below 0x80: their UTF-8 is themselves). */
function binaryFrame(payload: Buffer, masked: boolean): Buffer {
  const frame = textFrame(payload.toString("latin1"), masked);
  frame[0] = 0x82;
  return frame;
}

interface ReadWay {
  readonly name: string;
  /** Sets up `ws` on `socket` to read this way. */
  readonly install: (ws: WebSocket, socket: CountingSocket, masked: boolean) => void;
}

const READ_WAYS: readonly ReadWay[] = [
  { name: "ws's receiver (the baseline)", install: () => {} },
  { name: "`readFramesWhole` (src/providers/frame-reader.ts)", install: (ws, socket, masked) => readFramesWhole(ws, socket, masked, READ_MAX_PAYLOAD) },
];

function timedRead(side: ReadSide, way: ReadWay): Run {
  const socket = new CountingSocket();
  const ws = wsOn(socket, !side.masked);
  way.install(ws, socket, side.masked);
  let messages = 0;
  let bytes = 0;
  ws.on("message", (data: Buffer) => {
    messages += 1;
    bytes += data.byteLength;
  });
  const frames = side.frames;
  const before = process.cpuUsage();
  for (let i = 0; i < FRAMES; i++) socket.emit("data", Buffer.from(frames[i & 63] as Buffer));
  const used = process.cpuUsage(before);
  if (messages !== FRAMES) throw new Error(`${way.name} delivered ${messages} of ${FRAMES} frames`);
  return { ns: ((used.user + used.system) * 1000) / FRAMES, writes: 0, bytes: bytes / FRAMES };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Each way's median run over one side (the ways interleaved after a warm-up), with its ratio to the first way's. */
function compared<S, W extends { readonly name: string }>(side: S, ways: readonly W[], time: (side: S, way: W) => Run): { way: W; ns: number; ratio: number; first: Run | undefined }[] {
  for (const way of ways) time(side, way);
  const runs = ways.map((): Run[] => []);
  for (let rep = 0; rep < REPS; rep++) ways.forEach((way, i) => runs[i]?.push(time(side, way)));
  const medians = runs.map((mine) => median(mine.map((run) => run.ns)));
  const baseline = medians[0] ?? Number.NaN;
  return ways.map((way, i) => ({ way, ns: medians[i] ?? Number.NaN, ratio: (medians[i] ?? Number.NaN) / baseline, first: runs[i]?.[0] }));
}

function main(): Promise<number> {
  const began = Date.now();
  const rows = SIDES.flatMap((side) =>
    compared(side, WAYS, timed).map(
      ({ way, ns, ratio, first }) => `| ${side.name} | ${way.name} | ${ns.toFixed(0)} | ${ratio.toFixed(2)}× | ${first?.writes.toFixed(0) ?? "?"} | ${first?.bytes.toFixed(0) ?? "?"} |`,
    ),
  );
  const readRows = READ_SIDES.flatMap((side) =>
    compared(side, READ_WAYS, timedRead).map(({ way, ns, ratio, first }) => `| ${side.name} | ${way.name} | ${ns.toFixed(0)} | ${ratio.toFixed(2)}× | ${first?.bytes.toFixed(0) ?? "?"} |`),
  );
  const masking = wsMasking();
  const body = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ws masking ${masking.native ? "natively (bufferutil)" : `in JavaScript (${masking.why})`}; ${FRAMES} frames a run, the median of ${REPS} runs a way, interleaved; ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    "| frame | sent by | CPU a frame (ns) | ÷ ws | socket writes a frame | bytes a frame |",
    "|---|---|--:|--:|--:|--:|",
    ...rows,
    "",
    "| frame | read by | CPU a frame, read to listener (ns) | ÷ ws | payload bytes a frame |",
    "|---|---|--:|--:|--:|",
    ...readRows,
  ].join("\n");
  publishSection("bench:text-frame", SECTION, body);
  return Promise.resolve(0);
}

runBench("bench:text-frame", RUN_LIMIT_MS, main);
