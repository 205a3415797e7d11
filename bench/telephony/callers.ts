/**
 * The telephony bench's callers, run as their own process by bench/telephony/run.ts: each one is a
 * simulated Twilio Media Streams connection (docs/vendors.md (Carriers)). It sends `connected`
 * and `start`, then a 160-byte μ-law `media` frame every 20 ms, tagged with the caller's number
 * and its send time. Agent audio "plays" in real time from arrival, 20 ms per tick; a `mark` is
 * echoed once the audio before it has played; `clear` drops what is queued and echoes the pending
 * marks at once, as Twilio does. At the end: `stop`, then the socket closes.
 *
 * Measured here: each tagged agent frame on arrival (now − the fake's send time in the tag),
 * each `clear` on arrival, and the send time of each caller frame (to count losses).
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { CALLER_TAG, cpuMs, FRAME_MS, inWindow, MODEL_TAG, MULAW_BYTES_PER_MS, readTag, serveCalls, taggedFrame, type CallersTaken, type DialPlan, type Window } from "./protocol.js";
import { monoMs } from "../shared/stats.js";

type Queued = { ms: number } | { readonly mark: string };

const taken = {
  /** [fake's send time, arrival − send time] per tagged agent frame. */
  down: [] as number[],
  /** Send time of each caller frame. */
  sent: [] as number[],
  /** [arrival time, caller] per `clear`. */
  clears: [] as number[],
  marksReceived: 0,
  marksEchoed: 0,
  errors: [] as string[],
};

function error(text: string): void {
  if (taken.errors.length < 50) taken.errors.push(text);
}

const hex = (): string => Math.random().toString(16).slice(2, 14).padEnd(12, "0");

class Caller {
  readonly client: number;
  readonly #ws: WebSocket;
  readonly #streamSid = `MZ${hex()}${hex()}`;
  readonly #callSid = `CA${hex()}${hex()}`;
  readonly #queue: Queued[] = [];
  readonly heard: Promise<void>;
  readonly closed: Promise<void>;
  #heard: (() => void) | undefined;
  #seq = 0;
  #chunk = 0;
  #timer: NodeJS.Timeout | undefined;
  #hangingUp = false;

  constructor(client: number, url: string) {
    this.client = client;
    this.#ws = new WebSocket(url, { perMessageDeflate: false });
    this.heard = new Promise((resolve) => (this.#heard = resolve));
    this.closed = new Promise((resolve) =>
      this.#ws.once("close", (code) => {
        clearInterval(this.#timer);
        if (!this.#hangingUp) error(`caller ${client}: socket closed by the server (${code})`);
        resolve();
      }),
    );
    this.#ws.on("error", (err) => error(`caller ${client}: ${err.message}`));
    this.#ws.on("message", (data, isBinary) => this.#receive(data as Buffer, isBinary));
    this.#ws.once("open", () => this.#start());
  }

  /** The caller hangs up: `stop`, then a normal close. */
  hangUp(): void {
    this.#hangingUp = true;
    clearInterval(this.#timer);
    if (this.#ws.readyState === WebSocket.OPEN) {
      this.#send({ event: "stop", sequenceNumber: String(++this.#seq), streamSid: this.#streamSid, stop: { accountSid: "ACbench", callSid: this.#callSid } });
      this.#ws.close(1000, "caller hung up");
    } else {
      this.#ws.terminate();
    }
  }

  #start(): void {
    this.#send({ event: "connected", protocol: "Call", version: "1.0.0" });
    this.#send({
      event: "start",
      sequenceNumber: String(++this.#seq),
      streamSid: this.#streamSid,
      start: {
        accountSid: "ACbench",
        streamSid: this.#streamSid,
        callSid: this.#callSid,
        tracks: ["inbound"],
        customParameters: {},
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
    });
    // Callers tick out of step, as real calls do.
    setTimeout(() => {
      if (!this.#hangingUp) this.#timer = setInterval(() => this.#tick(), FRAME_MS);
    }, Math.random() * FRAME_MS);
  }

  /** One carrier tick: 20 ms of agent audio plays, then one caller frame goes out. */
  #tick(): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.#play(FRAME_MS);
    this.#chunk += 1;
    const at = monoMs();
    const payload = taggedFrame(CALLER_TAG, this.client, at).toString("base64");
    // Twilio's `timestamp` is the frame's position in the stream (ms), not the wall clock.
    const media = { track: "inbound", chunk: String(this.#chunk), timestamp: String((this.#chunk - 1) * FRAME_MS), payload };
    this.#send({ event: "media", sequenceNumber: String(++this.#seq), streamSid: this.#streamSid, media });
    taken.sent.push(at);
  }

  #receive(data: Buffer, isBinary: boolean): void {
    const at = monoMs();
    if (isBinary) return error(`caller ${this.client}: binary frame`);
    const frame = JSON.parse(data.toString("utf8")) as { event?: string; streamSid?: string; media?: { payload?: string }; mark?: { name?: string } };
    if (frame.streamSid !== this.#streamSid) error(`caller ${this.client}: ${String(frame.event)} frame with streamSid ${JSON.stringify(frame.streamSid)}, not this stream's`);
    switch (frame.event) {
      case "media": {
        const payload = frame.media?.payload ?? "";
        const tag = readTag(payload, MODEL_TAG);
        if (tag !== undefined) taken.down.push(tag.at, at - tag.at);
        this.#queue.push({ ms: Buffer.byteLength(payload, "base64") / MULAW_BYTES_PER_MS });
        this.#heard?.();
        this.#heard = undefined;
        return;
      }
      case "mark":
        taken.marksReceived += 1;
        this.#queue.push({ mark: String(frame.mark?.name) });
        this.#play(0);
        return;
      case "clear":
        taken.clears.push(at, this.client);
        for (const item of this.#queue.splice(0)) if ("mark" in item) this.#echo(item.mark);
        return;
      default:
        error(`caller ${this.client}: unexpected ${String(frame.event)} frame`);
    }
  }

  /** Plays up to `ms` of queued audio; echoes each mark reached. */
  #play(ms: number): void {
    let budget = ms;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if ("mark" in head) {
        this.#queue.shift();
        this.#echo(head.mark);
        continue;
      }
      if (budget <= 0) return;
      const take = Math.min(budget, head.ms);
      head.ms -= take;
      budget -= take;
      if (head.ms <= 0) this.#queue.shift();
    }
  }

  #echo(name: string): void {
    taken.marksEchoed += 1;
    this.#send({ event: "mark", sequenceNumber: String(++this.#seq), streamSid: this.#streamSid, mark: { name } });
  }

  #send(frame: object): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(frame));
  }
}

let callers: Caller[] = [];

/** Places the calls over the ramp; resolves with how many heard agent audio in time. */
async function dial(plan: DialPlan): Promise<{ heard: number }> {
  callers = [];
  for (let i = 1; i <= plan.calls; i++) {
    callers.push(new Caller(i, plan.url));
    if (i < plan.calls) await sleep(plan.rampMs / plan.calls);
  }
  let heard = 0;
  const all = Promise.all(callers.map((caller) => caller.heard.then(() => void (heard += 1))));
  await Promise.race([all, sleep(plan.greetMs)]);
  return { heard };
}

/** Every caller hangs up; resolves when the sockets closed (or after 5 s). */
async function hangUp(): Promise<{ open: number }> {
  let open = callers.length;
  for (const caller of callers) {
    caller.hangUp();
    void caller.closed.then(() => (open -= 1));
  }
  await Promise.race([Promise.all(callers.map((caller) => caller.closed)), sleep(5000)]);
  callers = [];
  return { open };
}

serveCalls({
  dial,
  hangUp,
  cpu: () => cpuMs(),
  /** This window's figures; everything taken so far is dropped. */
  collect: (window: Window): CallersTaken => {
    const result = {
      down: inWindow(taken.down, window),
      sent: taken.sent.filter((t) => t >= window.from && t <= window.to).length,
      clears: taken.clears.splice(0),
      marksReceived: taken.marksReceived,
      marksEchoed: taken.marksEchoed,
      errors: taken.errors.splice(0),
    };
    Object.assign(taken, { down: [], sent: [], marksReceived: 0, marksEchoed: 0 });
    return result;
  },
});
