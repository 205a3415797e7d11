// A simulated carrier on loopback (vendors.md §8a Twilio, §8b Telnyx): it dials the gateway's
// `/telephony/<carrier>` socket and behaves like the carrier's media server — `connected`, `start`,
// then a 20 ms μ-law `media` frame every 20 ms in real time (silence, or the caller's queued audio),
// `dtmf` and `stop` on demand. Agent audio it receives is "played" in real time after a playback
// delay (the carrier's jitter buffer), and each `mark` is echoed once everything queued before it
// has played; `clear` drops the queue and echoes the marks still pending, as Twilio does.
import { WebSocket } from "ws";

export type CarrierDialect = "twilio" | "telnyx";

export interface FakeCarrierOptions {
  readonly url: string;
  readonly dialect?: CarrierDialect;
  readonly headers?: Record<string, string>;
  readonly customParameters?: Record<string, string>;
  /** The call id its `start` names (Twilio `callSid`, Telnyx `call_control_id`); default a random one. */
  readonly callId?: string;
  /** Agent audio starts playing this long after it arrives (ms). Default 0. */
  readonly playbackDelayMs?: number;
  /** Send `start` right after connecting (default true). */
  readonly autoStart?: boolean;
}

/** μ-law silence (the G.711 code for +0). */
export const MULAW_SILENCE = 0xff;
const FRAME_BYTES = 160;
const FRAME_MS = 20;

type Queued = { readonly kind: "audio"; ms: number; readonly arrived: number } | { readonly kind: "mark"; readonly name: string };

export class FakeCarrier {
  readonly ws: WebSocket;
  readonly dialect: CarrierDialect;
  readonly streamId = `MZ${Math.random().toString(16).slice(2, 14)}`;
  readonly callId: string;
  /** Every frame the gateway sent, parsed. */
  readonly frames: Record<string, unknown>[] = [];
  /** Agent audio received, in order (decoded payloads). */
  readonly audio: Buffer[] = [];
  readonly marksReceived: string[] = [];
  readonly marksEchoed: { name: string; at: number }[] = [];
  clears = 0;
  /** Ms played when each `clear` arrived. */
  readonly playedAtClears: number[] = [];
  /** Caller audio sent, frame by frame (μ-law payloads). */
  readonly sent: Buffer[] = [];
  /** Frames without the stream id (Twilio would drop them). */
  readonly unstamped: Record<string, unknown>[] = [];
  /** Ms of agent audio played so far. */
  playedMs = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #options: FakeCarrierOptions;
  readonly #queue: Queued[] = [];
  #caller: Buffer = Buffer.alloc(0);
  #seq = 0;
  #chunk = 0;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;

  private constructor(ws: WebSocket, options: FakeCarrierOptions) {
    this.ws = ws;
    this.#options = options;
    this.dialect = options.dialect ?? "twilio";
    this.callId = options.callId ?? `CA${Math.random().toString(16).slice(2, 14)}`;
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
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

  /** `connected` + `start`, then the 20 ms media cadence begins. */
  start(): void {
    const customParameters = this.#options.customParameters ?? {};
    if (this.dialect === "twilio") {
      this.sendJson({ event: "connected", protocol: "Call", version: "1.0.0" });
      this.sendJson({
        event: "start",
        sequenceNumber: String(++this.#seq),
        streamSid: this.streamId,
        start: {
          accountSid: "ACtest",
          streamSid: this.streamId,
          callSid: this.callId,
          tracks: ["inbound"],
          customParameters,
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
        },
      });
    } else {
      this.sendJson({ event: "connected", version: "1.0.0" });
      this.sendJson({
        event: "start",
        sequence_number: String(++this.#seq),
        stream_id: this.streamId,
        start: { call_control_id: this.callId, custom_parameters: customParameters, media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 } },
      });
    }
    this.#startedAt = Date.now();
    this.#timer = setInterval(() => this.#tick(), FRAME_MS);
  }

  /** Queue caller audio (μ-law bytes); it goes out 160 bytes per 20 ms frame instead of silence. */
  say(mulaw: Buffer): void {
    this.#caller = Buffer.concat([this.#caller, mulaw]);
  }

  /** Resolves when the queued caller audio has been sent. */
  async said(): Promise<void> {
    while (this.#caller.byteLength > 0 && this.ws.readyState === WebSocket.OPEN) await new Promise((r) => setTimeout(r, FRAME_MS));
  }

  dtmf(digit: string): void {
    const frame = this.dialect === "twilio" ? { event: "dtmf", sequenceNumber: String(++this.#seq), streamSid: this.streamId, dtmf: { track: "inbound_track", digit } } : { event: "dtmf", stream_id: this.streamId, dtmf: { digit } };
    this.sendJson(frame);
  }

  /** The caller hangs up: `stop`, then the socket closes. */
  hangUp(): void {
    const id = this.dialect === "twilio" ? { streamSid: this.streamId } : { stream_id: this.streamId };
    this.sendJson({ event: "stop", sequenceNumber: String(++this.#seq), ...id, stop: { callSid: this.callId } });
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

  #onFrame(frame: Record<string, unknown>): void {
    this.frames.push(frame);
    const idKey = this.dialect === "twilio" ? "streamSid" : undefined;
    if (idKey !== undefined && frame[idKey] !== this.streamId) this.unstamped.push(frame);
    switch (frame.event) {
      case "media": {
        const payload = Buffer.from(String((frame.media as { payload?: string }).payload ?? ""), "base64");
        this.audio.push(payload);
        this.#queue.push({ kind: "audio", ms: payload.byteLength / 8, arrived: Date.now() });
        return;
      }
      case "mark": {
        const name = String((frame.mark as { name?: string }).name);
        this.marksReceived.push(name);
        this.#queue.push({ kind: "mark", name });
        this.#play(0);
        return;
      }
      case "clear": {
        this.clears += 1;
        this.playedAtClears.push(this.playedMs);
        const pending = this.#queue.filter((q): q is Extract<Queued, { kind: "mark" }> => q.kind === "mark");
        this.#queue.length = 0;
        for (const mark of pending) this.#echo(mark.name);
        return;
      }
    }
  }

  /** Play up to `ms` of queued audio (only audio that has sat out the playback delay); echo marks reached. */
  #play(ms: number): void {
    let budget = ms;
    const delay = this.#options.playbackDelayMs ?? 0;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === "mark") {
        this.#queue.shift();
        this.#echo(head.name);
        continue;
      }
      if (budget <= 0 || Date.now() - head.arrived < delay) return;
      const take = Math.min(budget, head.ms);
      head.ms -= take;
      budget -= take;
      this.playedMs += take;
      if (head.ms <= 0) this.#queue.shift();
    }
  }

  #echo(name: string): void {
    this.marksEchoed.push({ name, at: Date.now() });
    const id = this.dialect === "twilio" ? { streamSid: this.streamId } : { stream_id: this.streamId };
    this.sendJson({ event: "mark", sequenceNumber: String(++this.#seq), ...id, mark: { name } });
  }

  #tick(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return this.#stopTimer();
    this.#play(FRAME_MS);
    let payload: Buffer;
    if (this.#caller.byteLength > 0) {
      payload = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);
      this.#caller.copy(payload, 0, 0, Math.min(FRAME_BYTES, this.#caller.byteLength));
      this.#caller = this.#caller.subarray(Math.min(FRAME_BYTES, this.#caller.byteLength));
    } else {
      payload = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);
    }
    this.sent.push(payload);
    const chunk = String(++this.#chunk);
    const timestamp = String(Date.now() - this.#startedAt);
    const media = { track: "inbound", chunk, timestamp, payload: payload.toString("base64") };
    if (this.dialect === "twilio") this.sendJson({ event: "media", sequenceNumber: String(++this.#seq), streamSid: this.streamId, media });
    else this.sendJson({ event: "media", sequence_number: String(++this.#seq), stream_id: this.streamId, media });
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
  const { twilioSignature } = await import("../../src/server/telephony/signatures.js");
  const webhook = `${base}/telephony/twilio/voice`;
  const body = new URLSearchParams({ CallSid: callSid, From: "+15550100", To: "+15550199" });
  const response = await fetch(webhook, { method: "POST", headers: { "x-twilio-signature": twilioSignature(authToken, webhook, [...body.entries()]) }, body });
  const twiml = await response.text();
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  if (response.status !== 200 || url === undefined) throw new Error(`the Twilio webhook was not answered: ${response.status} ${twiml}`);
  return { url, headers: { "x-twilio-signature": twilioSignature(authToken, url, []) }, callId: callSid };
}
