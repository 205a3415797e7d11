/**
 * What the socket TTS fakes (Cartesia, ElevenLabs) share besides their vendor's wording: reading a
 * client's JSON text frames, speaking one word per audio chunk, pacing the chunks, and the one-shot
 * drop the retry tests arm.
 */
import type { RawData, WebSocket } from "ws";

/**
 * A client frame as a JSON record, or, as a string, the protocol mistake it is (both vendors take
 * text frames holding a JSON object).
 */
export function readJsonFrame(data: RawData, isBinary: boolean): Record<string, unknown> | string {
  if (isBinary) return "binary frames are not accepted";
  let parsed: unknown;
  try {
    parsed = JSON.parse((data as Buffer).toString("utf8"));
  } catch {
    return "malformed JSON";
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : "a message must be a JSON object";
}

/** The next word of `rest` with the white space before and after it; all of `rest` when it holds no word. */
export function nextWordGroup(rest: string): string {
  return /^\s*\S*\s*/.exec(rest)?.[0] || rest;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counts the audio chunks a fake sends over all its connections, paces them, and breaks every
 * connection right after the n-th next one when a test arms it (a network drop mid-stream).
 */
export class ChunkPacer {
  readonly #clients = new Set<WebSocket>();
  #sent = 0;
  #dropAt: number | undefined;

  /** `delayMs`: the pause after each chunk (ms); 0 yields one turn of the event loop instead. */
  constructor(private readonly delayMs: number) {}

  /** Chunks sent so far. */
  get sent(): number {
    return this.#sent;
  }

  /** Track `ws` until it closes, so `dropAll` reaches it. */
  track(ws: WebSocket): void {
    this.#clients.add(ws);
    ws.on("close", () => this.#clients.delete(ws));
  }

  /** Terminate every open socket now (no close frame). */
  dropAll(): void {
    for (const client of this.#clients) client.terminate();
  }

  /** Send `text` as a raw text frame on every open socket. */
  sendRaw(text: string): void {
    for (const client of this.#clients) client.send(text);
  }

  /** Arm the drop: every socket is terminated right after the `n`th next chunk (one shot). */
  dropAfter(n: number): void {
    this.#dropAt = this.#sent + n;
  }

  /**
   * A chunk was sent: false when it was the armed one (every socket is dropped, stop speaking);
   * otherwise true once the pause after it is over.
   */
  async chunkSent(): Promise<boolean> {
    this.#sent++;
    if (this.#dropAt !== undefined && this.#sent >= this.#dropAt) {
      this.#dropAt = undefined;
      this.dropAll();
      return false;
    }
    if (this.delayMs > 0) await sleep(this.delayMs);
    else await new Promise((resolve) => setImmediate(resolve));
    return true;
  }
}
