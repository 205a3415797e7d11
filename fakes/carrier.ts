// A simulated carrier on loopback that frames and plays audio as each carrier *documents* it
// (Twilio, Telnyx, Plivo, Exotel, Vonage media streams): it dials the gateway's stream socket and
// behaves like the carrier's media server — its `start`, then the caller's audio in real time
// (silence, or queued speech) in the carrier's own framing, `dtmf` and `stop` on demand. Agent
// audio it receives is "played" in real time after a playback delay (the jitter buffer), at the
// rate the frame *declares* (Plivo plays a `playAudio` as its contentType says); each mark
// (Plivo: checkpoint) is echoed once everything queued before it has played; a clear drops the
// queue (Twilio and Telnyx echo the marks still pending). Frames that break the carrier's
// documented rules — Telnyx rtp payloads under 20 ms, Exotel chunks outside 3.2–100 KB or not a
// multiple of 320 bytes, Vonage frames that are not exactly 20 ms, a Plivo `playAudio` declaring
// another format than the stream's — are recorded in `violations`. When the socket closes, audio
// still unplayed is lost, as on a real call (`unplayedAtCloseMs`).
import { WebSocket } from "ws";
import { decodeMulaw } from "../src/audio/g711.js";

export type CarrierDialect = "twilio" | "telnyx" | "plivo" | "exotel" | "vonage";

export interface FakeCarrierOptions {
  readonly url: string;
  readonly dialect?: CarrierDialect;
  readonly headers?: Record<string, string>;
  readonly customParameters?: Record<string, string>;
  /** The call id its `start` names (Twilio `callSid`, Telnyx `call_control_id`, Plivo `callId`, Exotel `call_sid`); default a random one. */
  readonly callId?: string;
  /** Agent audio starts playing this long after it arrives (ms). Default 0. */
  readonly playbackDelayMs?: number;
  /** Send `start` right after connecting (default true). */
  readonly autoStart?: boolean;
}

/** μ-law silence (the G.711 code for +0). */
export const MULAW_SILENCE = 0xff;
const TICK_MS = 20;

/** What each carrier's media looks like on its stream (docs/vendors.md (Carriers)). */
interface Format {
  readonly encoding: "mulaw" | "l16";
  readonly sampleRate: number;
  /** Ms of caller audio per inbound media frame. */
  readonly frameMs: number;
}

const FORMATS: Readonly<Record<CarrierDialect, Format>> = {
  twilio: { encoding: "mulaw", sampleRate: 8000, frameMs: 20 },
  telnyx: { encoding: "mulaw", sampleRate: 8000, frameMs: 20 },
  // The gateway's answer XML asks Plivo for `audio/x-mulaw;rate=8000`.
  plivo: { encoding: "mulaw", sampleRate: 8000, frameMs: 20 },
  // Exotel's default raw/slin at 8 kHz, about 100 ms a frame.
  exotel: { encoding: "l16", sampleRate: 8000, frameMs: 100 },
  // The gateway's NCCO asks Vonage for `audio/l16;rate=16000`: 640-byte binary frames.
  vonage: { encoding: "l16", sampleRate: 16000, frameMs: 20 },
};

const bytesPerMs = (format: { encoding: "mulaw" | "l16"; sampleRate: number }): number => ((format.encoding === "l16" ? 2 : 1) * format.sampleRate) / 1000;

type Queued = { readonly kind: "audio"; ms: number; readonly arrived: number } | { readonly kind: "mark"; readonly name: string };

export class FakeCarrier {
  readonly ws: WebSocket;
  readonly dialect: CarrierDialect;
  readonly streamId = `MZ${Math.random().toString(16).slice(2, 14)}`;
  readonly callId: string;
  /** Every JSON frame the gateway sent, parsed. */
  readonly frames: Record<string, unknown>[] = [];
  /** Agent audio received, in order (decoded payloads). */
  readonly audio: Buffer[] = [];
  readonly marksReceived: string[] = [];
  readonly marksEchoed: { name: string; at: number }[] = [];
  /** Ms of agent audio received before each mark (in order): the mark cadence. */
  readonly audioMsAtMarks: number[] = [];
  clears = 0;
  /** Ms played when each clear arrived. */
  readonly playedAtClears: number[] = [];
  /** Caller audio sent, frame by frame (the carrier's payloads). */
  readonly sent: Buffer[] = [];
  /** Frames without the stream id (Twilio would drop them). */
  readonly unstamped: Record<string, unknown>[] = [];
  /** Frames that break the carrier's documented rules, described. */
  readonly violations: string[] = [];
  /** Ms of agent audio played so far. */
  playedMs = 0;
  /** Ms of agent audio received and not yet played when the socket closed: cut off the call. */
  unplayedAtCloseMs = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #options: FakeCarrierOptions;
  readonly #format: Format;
  readonly #queue: Queued[] = [];
  #receivedMs = 0;
  /** Caller audio waiting to go out, as 8 kHz μ-law (converted to the carrier's format per frame). */
  #caller: Buffer = Buffer.alloc(0);
  #seq = 0;
  #chunk = 0;
  #ticks = 0;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;

  private constructor(ws: WebSocket, options: FakeCarrierOptions) {
    this.ws = ws;
    this.#options = options;
    this.dialect = options.dialect ?? "twilio";
    this.#format = FORMATS[this.dialect];
    this.callId = options.callId ?? `CA${Math.random().toString(16).slice(2, 14)}`;
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => {
        this.unplayedAtCloseMs = this.bufferedMs;
        resolve({ code, reason: reason.toString() });
      }),
    );
    ws.on("message", (data, isBinary) => {
      if (isBinary) return this.#onBinary(data as Buffer);
      this.#onFrame(JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>);
    });
    ws.on("close", () => this.#stopTimer());
  }

  static async dial(options: FakeCarrierOptions): Promise<FakeCarrier> {
    const ws = new WebSocket(options.url, { headers: options.headers ?? {} });
    const carrier = new FakeCarrier(ws, options);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)));
    });
    if (options.autoStart !== false) carrier.start();
    return carrier;
  }

  /** The carrier's `connected` and `start` (Vonage: `websocket:connected`), then the caller's media cadence begins. */
  start(): void {
    const customParameters = this.#options.customParameters ?? {};
    const seq = (): string => String(++this.#seq);
    switch (this.dialect) {
      case "twilio":
        this.sendJson({ event: "connected", protocol: "Call", version: "1.0.0" });
        this.sendJson({
          event: "start",
          sequenceNumber: seq(),
          streamSid: this.streamId,
          start: { accountSid: "ACtest", streamSid: this.streamId, callSid: this.callId, tracks: ["inbound"], customParameters, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } },
        });
        break;
      case "telnyx":
        this.sendJson({ event: "connected", version: "1.0.0" });
        this.sendJson({ event: "start", sequence_number: seq(), stream_id: this.streamId, start: { call_control_id: this.callId, custom_parameters: customParameters, media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 } } });
        break;
      case "plivo":
        this.sendJson({
          event: "start",
          sequenceNumber: 1,
          start: { streamId: this.streamId, callId: this.callId, accountId: "MAtest", tracks: ["inbound"], mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 } },
          extra_headers: JSON.stringify(customParameters),
        });
        break;
      case "exotel":
        this.sendJson({ event: "connected" });
        this.sendJson({
          event: "start",
          sequence_number: seq(),
          stream_sid: this.streamId,
          start: { stream_sid: this.streamId, call_sid: this.callId, account_sid: "ACtest", custom_parameters: customParameters, media_format: { encoding: "audio/x-raw", sample_rate: "8000", bit_rate: "16" } },
        });
        break;
      case "vonage":
        this.sendJson({ event: "websocket:connected", "content-type": "audio/l16;rate=16000", ...customParameters });
        break;
    }
    this.#startedAt = Date.now();
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  /** Queue caller audio (8 kHz μ-law bytes); it goes out in the carrier's framing instead of silence. */
  say(mulaw: Buffer): void {
    this.#caller = Buffer.concat([this.#caller, mulaw]);
  }

  /** Resolves when the queued caller audio has been sent. */
  async said(): Promise<void> {
    while (this.#caller.byteLength > 0 && this.ws.readyState === WebSocket.OPEN) await new Promise((r) => setTimeout(r, TICK_MS));
  }

  dtmf(digit: string): void {
    switch (this.dialect) {
      case "twilio":
        return this.sendJson({ event: "dtmf", sequenceNumber: String(++this.#seq), streamSid: this.streamId, dtmf: { track: "inbound_track", digit } });
      case "vonage":
        return this.sendJson({ event: "websocket:dtmf", digit, duration: 260 });
      case "exotel":
        return this.sendJson({ event: "dtmf", sequence_number: String(++this.#seq), stream_sid: this.streamId, dtmf: { digit, duration: "100" } });
      case "plivo":
        return this.sendJson({ event: "dtmf", streamId: this.streamId, dtmf: { digit } });
      case "telnyx":
        return this.sendJson({ event: "dtmf", stream_id: this.streamId, dtmf: { digit } });
    }
  }

  /** The caller hangs up: `stop` where the carrier sends one, then the socket closes. */
  hangUp(): void {
    if (this.dialect === "twilio") this.sendJson({ event: "stop", sequenceNumber: String(++this.#seq), streamSid: this.streamId, stop: { callSid: this.callId } });
    else if (this.dialect === "telnyx") this.sendJson({ event: "stop", sequence_number: String(++this.#seq), stream_id: this.streamId, stop: { call_control_id: this.callId } });
    else if (this.dialect === "exotel") this.sendJson({ event: "stop", sequence_number: String(++this.#seq), stream_sid: this.streamId, stop: { call_sid: this.callId, reason: "callended" } });
    this.#stopTimer();
    this.ws.close(1000);
  }

  sendJson(frame: unknown): void {
    this.sendRaw(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data, { binary });
  }

  /** Agent audio received so far, as one buffer. */
  audioBytes(): Buffer {
    return Buffer.concat(this.audio);
  }

  /** Ms of agent audio queued and not yet played. */
  get bufferedMs(): number {
    return this.#queue.reduce((sum, q) => sum + (q.kind === "audio" ? q.ms : 0), 0);
  }

  async until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`fake carrier: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.#stopTimer();
    this.ws.terminate();
  }

  // ── gateway → carrier ─────────────────────────────────────────────────────────────────

  #onBinary(data: Buffer): void {
    if (this.dialect !== "vonage") return void this.violations.push(`${this.dialect} got a binary frame`);
    // Vonage: binary frames of exactly 20 ms (640 bytes at 16 kHz), played in real time.
    if (data.byteLength !== 640) this.violations.push(`vonage frame of ${data.byteLength} bytes (must be exactly 640)`);
    this.#enqueueAudio(Buffer.from(data), bytesPerMs(this.#format));
  }

  #onFrame(frame: Record<string, unknown>): void {
    this.frames.push(frame);
    if (this.dialect === "twilio" && frame.streamSid !== this.streamId) this.unstamped.push(frame);
    const kind = this.dialect === "vonage" ? frame.action : frame.event;
    switch (kind) {
      case "media":
        return this.#onMedia(frame);
      case "playAudio":
        return this.#onPlayAudio(frame);
      case "mark":
      case "checkpoint": {
        const name = String(kind === "mark" ? (frame.mark as { name?: string }).name : frame.name);
        this.marksReceived.push(name);
        this.audioMsAtMarks.push(this.#receivedMs);
        this.#queue.push({ kind: "mark", name });
        this.#play(0, Date.now());
        return;
      }
      case "clear":
      case "clearAudio": {
        this.clears += 1;
        this.playedAtClears.push(this.playedMs);
        const pending = this.#queue.filter((q): q is Extract<Queued, { kind: "mark" }> => q.kind === "mark");
        this.#queue.length = 0;
        // Twilio and Telnyx send back the marks still pending; Plivo answers `clearedAudio`, Vonage `websocket:cleared`.
        if (this.dialect === "twilio" || this.dialect === "telnyx") for (const mark of pending) this.#echo(mark.name);
        if (this.dialect === "plivo") this.sendJson({ event: "clearedAudio", streamId: this.streamId });
        if (this.dialect === "vonage") this.sendJson({ event: "websocket:cleared" });
        return;
      }
    }
  }

  #onMedia(frame: Record<string, unknown>): void {
    const payload = Buffer.from(String((frame.media as { payload?: string }).payload ?? ""), "base64");
    const rate = bytesPerMs(this.#format);
    if (this.dialect === "telnyx" && payload.byteLength < 20 * rate) this.violations.push(`telnyx rtp payload of ${payload.byteLength} bytes (${payload.byteLength / rate} ms; at least 20 ms)`);
    if (this.dialect === "exotel" && (payload.byteLength < 3200 || payload.byteLength > 100 * 1024 || payload.byteLength % 320 !== 0)) {
      this.violations.push(`exotel chunk of ${payload.byteLength} bytes (3.2–100 KB, a multiple of 320)`);
    }
    this.#enqueueAudio(payload, rate);
  }

  /** Plivo plays `playAudio` as the format it declares: declared wrong, it plays at the wrong speed. */
  #onPlayAudio(frame: Record<string, unknown>): void {
    const media = (frame.media ?? {}) as { contentType?: string; sampleRate?: number; payload?: string };
    const payload = Buffer.from(String(media.payload ?? ""), "base64");
    const declared = { encoding: media.contentType === "audio/x-mulaw" ? ("mulaw" as const) : ("l16" as const), sampleRate: Number(media.sampleRate ?? 8000) };
    if (declared.encoding !== this.#format.encoding || declared.sampleRate !== this.#format.sampleRate) {
      this.violations.push(`plivo playAudio declares ${media.contentType ?? "?"} at ${media.sampleRate ?? "?"} Hz on an ${this.#format.encoding} ${this.#format.sampleRate} Hz stream`);
    }
    this.#enqueueAudio(payload, bytesPerMs(declared));
  }

  #enqueueAudio(payload: Buffer, rate: number): void {
    this.audio.push(payload);
    const ms = payload.byteLength / rate;
    this.#receivedMs += ms;
    this.#queue.push({ kind: "audio", ms, arrived: Date.now() });
  }

  /** Play up to `ms` of queued audio that arrived by `arrivedBy` (it has sat out the playback delay); echo marks reached. */
  #play(ms: number, arrivedBy: number): void {
    let budget = ms;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === "mark") {
        this.#queue.shift();
        this.#echo(head.name);
        continue;
      }
      if (budget <= 0 || head.arrived > arrivedBy) return;
      const take = Math.min(budget, head.ms);
      head.ms -= take;
      budget -= take;
      this.playedMs += take;
      if (head.ms <= 0) this.#queue.shift();
    }
  }

  #echo(name: string): void {
    this.marksEchoed.push({ name, at: Date.now() });
    if (this.ws.readyState !== WebSocket.OPEN) return;
    switch (this.dialect) {
      case "twilio":
        return this.sendJson({ event: "mark", sequenceNumber: String(++this.#seq), streamSid: this.streamId, mark: { name } });
      case "telnyx":
        return this.sendJson({ event: "mark", sequence_number: String(++this.#seq), stream_id: this.streamId, mark: { name } });
      case "exotel":
        return this.sendJson({ event: "mark", sequence_number: String(++this.#seq), stream_sid: this.streamId, mark: { name } });
      case "plivo":
        return this.sendJson({ event: "playedStream", streamId: this.streamId, name });
      case "vonage":
        return;
    }
  }

  // ── carrier → gateway: the caller ─────────────────────────────────────────────────────

  #tick(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return this.#stopTimer();
    this.#play(TICK_MS, Date.now() - (this.#options.playbackDelayMs ?? 0));
    this.#ticks += 1;
    if ((this.#ticks * TICK_MS) % this.#format.frameMs !== 0) return;
    const mulaw = Buffer.alloc(8 * this.#format.frameMs, MULAW_SILENCE);
    const take = Math.min(mulaw.byteLength, this.#caller.byteLength);
    this.#caller.copy(mulaw, 0, 0, take);
    this.#caller = this.#caller.subarray(take);
    const payload = this.#inFormat(mulaw);
    this.sent.push(payload);
    const chunk = String(++this.#chunk);
    const timestamp = String(Date.now() - this.#startedAt);
    const media = { track: "inbound", chunk, timestamp, payload: payload.toString("base64") };
    switch (this.dialect) {
      case "twilio":
        return this.sendJson({ event: "media", sequenceNumber: String(++this.#seq), streamSid: this.streamId, media });
      case "telnyx":
        return this.sendJson({ event: "media", sequence_number: String(++this.#seq), stream_id: this.streamId, media });
      case "plivo":
        return this.sendJson({ event: "media", sequenceNumber: ++this.#seq, streamId: this.streamId, media: { ...media, chunk: Number(chunk) } });
      case "exotel":
        return this.sendJson({ event: "media", sequence_number: String(++this.#seq), stream_sid: this.streamId, media: { chunk, timestamp, payload: media.payload } });
      case "vonage":
        return this.sendRaw(payload, true);
    }
  }

  /** 8 kHz μ-law → the carrier's caller format (16 kHz L16 by sample doubling: a test signal, not hi-fi). */
  #inFormat(mulaw: Buffer): Buffer {
    if (this.#format.encoding === "mulaw") return mulaw;
    const samples = decodeMulaw(mulaw);
    const factor = this.#format.sampleRate / 8000;
    const out = Buffer.alloc(samples.length * factor * 2);
    for (let i = 0; i < samples.length * factor; i++) out.writeInt16LE(samples[Math.floor(i / factor)] ?? 0, i * 2);
    return out;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Answer a call as Twilio does against a gateway with `TWILIO_AUTH_TOKEN` set: the signed voice
 * webhook for `callSid`, then the stream URL from its TwiML (the ticket in its path) with the
 * upgrade's own signature — what `FakeCarrier.dial` needs to stream that call.
 */
export async function answerTwilio(base: string, authToken: string, callSid: string): Promise<{ url: string; headers: Record<string, string>; callId: string }> {
  const { twilioSignature } = await import("../src/server/telephony/signatures.js");
  const webhook = `${base}/telephony/twilio/voice`;
  const body = new URLSearchParams({ CallSid: callSid, From: "+15550100", To: "+15550199" });
  const response = await fetch(webhook, { method: "POST", headers: { "x-twilio-signature": twilioSignature(authToken, webhook, [...body.entries()]) }, body });
  const twiml = await response.text();
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  if (response.status !== 200 || url === undefined) throw new Error(`the Twilio webhook was not answered: ${response.status} ${twiml}`);
  return { url, headers: { "x-twilio-signature": twilioSignature(authToken, url, []) }, callId: callSid };
}
