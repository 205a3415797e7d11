/**
 * `GET /workflows/runs/<id>/events` (docs/workflows.md "HTTP API"): a run's journal as
 * Server-Sent Events — what it holds so far, then each event as the engine writes it, then an
 * `end` event and the stream closes. Live events come from the engine's `onRunEvent` signal
 * (no polling); a comment line every `HEARTBEAT_MS` keeps proxies from cutting an idle stream.
 *
 * Streams are bounded: `MAX_STREAMS_PER_ADDRESS` at once per client address and `MAX_STREAMS`
 * for the process; a client that stops reading is cut once `MAX_BUFFERED_BYTES` wait unsent. A
 * client that disconnects frees everything (its listeners and its timer) at once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../log.js";
import type { EndStatus, RunEvent, WorkflowEngine } from "../workflows/engine.js";

/** A comment line this often while nothing else is sent (ms). */
export const HEARTBEAT_MS = 15_000;
/** Open event streams one client address may hold at once. */
export const MAX_STREAMS_PER_ADDRESS = 4;
/** Open event streams the process holds at once. */
export const MAX_STREAMS = 256;
/** Bytes a stream may have written but not yet sent before the client is taken to have stopped reading. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

const ENDED: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/** One SSE message: `id`, `event` and one `data` line of JSON. */
function message(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Counts open streams per address and in all; refuses past the bounds. */
export class StreamSlots {
  readonly #byAddress = new Map<string, number>();
  #total = 0;

  constructor(
    readonly perAddress = MAX_STREAMS_PER_ADDRESS,
    readonly total = MAX_STREAMS,
  ) {}

  /** Take a slot for `address`: the release function, or a refusal saying which bound. */
  take(address: string): (() => void) | { readonly refusal: string } {
    const held = this.#byAddress.get(address) ?? 0;
    if (held >= this.perAddress) return { refusal: `this address already holds ${this.perAddress} event streams; close one first` };
    if (this.#total >= this.total) return { refusal: `the gateway already holds ${this.total} event streams; retry later` };
    this.#byAddress.set(address, held + 1);
    this.#total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total -= 1;
      const left = (this.#byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.#byAddress.delete(address);
      else this.#byAddress.set(address, left);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.#total;
  }
}

export interface StreamDeps {
  readonly engine: WorkflowEngine;
  readonly clock: Clock;
  readonly log: Logger;
}

/**
 * Stream run `runId`'s journal on `res` (the run exists: the caller checked). `release` is
 * called once, when the stream is over for whatever reason. Resolves once the stream is set up.
 */
export async function streamRunEvents(req: IncomingMessage, res: ServerResponse, runId: string, deps: StreamDeps, release: () => void): Promise<void> {
  const { engine, clock, log } = deps;
  // A client reconnecting (EventSource does) says the last event it saw.
  const lastSeen = req.headers["last-event-id"];
  let after = typeof lastSeen === "string" && lastSeen !== "" && lastSeen.length <= 128 ? lastSeen : undefined;
  let over = false;
  let ended: EndStatus | undefined;
  let pumping = false;
  let again = false;
  let heartbeat: Timer | undefined;
  const unsubscribers: (() => void)[] = [];

  const finish = (): void => {
    if (over) return;
    over = true;
    heartbeat?.cancel();
    for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
    release();
    if (!res.writableEnded) res.end();
  };
  res.on("close", finish);

  const write = (text: string): boolean => {
    if (over) return false;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      log.warn({ runId, remote: req.socket.remoteAddress }, "event stream cut: the client stopped reading");
      res.destroy();
      return false;
    }
    return true;
  };
  const beat = (): void => {
    heartbeat = clock.setTimeout(() => {
      if (write(": keep-alive\n\n")) beat();
    }, HEARTBEAT_MS);
  };

  /** Send every journal event after `after`; once the run has ended, the `end` event and close. */
  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        for (;;) {
          const page: RunEvent[] | undefined = await engine.events(runId, after === undefined ? {} : { after });
          if (page === undefined || page.length === 0 || over) break;
          for (const event of page) if (!write(message(event.type, event, event.id))) return;
          after = page.at(-1)?.id;
        }
      } while (again && !over);
      if (ended !== undefined && !over) {
        write(message("end", { runId, status: ended }));
        finish();
      }
    } finally {
      pumping = false;
    }
  };
  const pumpSafely = (): void => {
    pump().catch((err: unknown) => {
      log.error({ err, runId }, "event stream failed");
      finish();
      res.destroy();
    });
  };

  // Listen before the first read, so an event written in between is not missed.
  unsubscribers.push(
    engine.onRunEvent((id) => {
      if (id === runId) pumpSafely();
    }),
    engine.onRunEnd((end) => {
      if (end.runId !== runId) return;
      ended = end.status;
      pumpSafely();
    }),
  );
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" });
  res.flushHeaders();
  const run = await engine.get(runId);
  if (run === undefined) {
    // Pruned between the caller's check and now.
    write(message("end", { runId, status: "gone" }));
    return finish();
  }
  if (ENDED.has(run.status)) ended = run.status as EndStatus;
  beat();
  await pump();
}
