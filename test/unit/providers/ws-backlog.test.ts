import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_BACKLOG_BYTES, sendAudioOrDrop } from "../../../src/providers/ws-backlog.js";

const FRAME = new Uint8Array(640);

describe("the provider socket backlog", () => {
  it("sendAudioOrDrop: sends under the limit, drops over it or when not open", () => {
    const sent: unknown[] = [];
    const socket = { OPEN: 1, readyState: 1, bufferedAmount: 0, send: (d: unknown) => sent.push(d) };
    const ws = socket as unknown as WebSocket;
    expect(sendAudioOrDrop(ws, FRAME, 640)).toBe(0);
    socket.bufferedAmount = MAX_PROVIDER_BACKLOG_BYTES + 1;
    expect(sendAudioOrDrop(ws, FRAME, 640)).toBe(640);
    socket.bufferedAmount = 0;
    socket.readyState = 3;
    expect(sendAudioOrDrop(ws, FRAME, 640)).toBe(640);
    expect(sent).toHaveLength(1);
  });
});
