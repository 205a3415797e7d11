import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { PlaybackClock } from "../../../src/turn/playback-clock.js";
import { ClientConnection } from "../../../src/transport/client-connection.js";

/** The part of a ws socket a ClientConnection uses; the test plays the browser. */
class FakeBrowser extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  /** Ms of agent audio received (16-bit PCM at 24 kHz: 48 bytes a ms). */
  receivedMs = 0;
  send(data: string | Uint8Array): void {
    if (typeof data !== "string") this.receivedMs += data.byteLength / 48;
  }
  close(): void {}
  terminate(): void {}
  ping(): void {}
  pause(): void {}
  resume(): void {}
  command(command: object): void {
    this.emit("message", Buffer.from(JSON.stringify(command)), false);
  }
}

describe("ClientConnection playback reports", () => {
  it("count the audio the gateway still holds back, so a browser that falls behind moves the heard position back", async () => {
    const clock = virtualClock();
    const browser = new FakeBrowser();
    const connection = new ClientConnection(browser as unknown as WebSocket, { clock, log: silentLogger, leadMs: 500 });
    await connection.ready;
    const playback = new PlaybackClock(clock);
    const reports: number[] = [];
    connection.attach({
      command: () => {},
      playback: (bufferedMs) => {
        reports.push(bufferedMs);
        playback.report(bufferedMs);
      },
      audio: () => {},
      closed: () => {},
    });
    // A 5 s reply handed over at once, in 50 ms pieces: the pacer sends 500 ms ahead of real time and holds the rest.
    for (let i = 0; i < 100; i++) connection.audio(new Uint8Array(50 * 48), 50);
    playback.queued(5000, "model");
    await clock.advance(1000);
    // The browser's playout fell 500 ms behind: of the 1.5 s it received it played 500 ms.
    const played = 500;
    browser.command({ type: "playback_progress", bufferedMs: browser.receivedMs - played });
    // It reported 1 000 ms buffered; 3 500 ms more were still held here: 4 500 ms unplayed in all.
    expect(browser.receivedMs).toBe(1500);
    expect(reports).toEqual([4500]);
    expect(playback.playedMs).toBe(played);
  });
});

describe("ClientConnection events", () => {
  it("shows the event types its client chose (?events=), and every type without a choice", () => {
    const clock = virtualClock();
    const chosen = new ClientConnection(new FakeBrowser() as unknown as WebSocket, { clock, log: silentLogger, events: new Set(["reply.cancelled", "agent-transcript.committed"]) });
    expect(chosen.shows("agent-transcript.committed")).toBe(true);
    expect(chosen.shows("agent-transcript.updated")).toBe(false);
    const all = new ClientConnection(new FakeBrowser() as unknown as WebSocket, { clock, log: silentLogger });
    expect(all.shows("agent-transcript.updated")).toBe(true);
  });
});
