import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { Pacer } from "../../../src/transport/pacer.js";
import { stamp, type EventBody } from "../../../src/transport/protocol.js";

function harness(leadMs = 100) {
  const clock = virtualClock(0);
  const out: string[] = [];
  const pacer = new Pacer(
    {
      sendText: (text) => out.push((JSON.parse(text) as { type: string }).type),
      sendAudio: (chunk) => out.push(`audio:${chunk[0] ?? 0}`),
    },
    clock,
    { leadMs },
  );
  const event = (body: EventBody) => pacer.event(stamp(body, clock.now()));
  const chunk = (n: number) => pacer.audio(new Uint8Array([n]), 40);
  return { clock, out, pacer, event, chunk };
}

describe("Pacer", () => {
  it("sends events at once when no audio is held", () => {
    const { out, event } = harness();
    event({ type: "agent-transcript.updated", text: "hi" });
    event({ type: "reply.completed" });
    expect(out).toEqual(["agent-transcript.updated", "reply.completed"]);
  });

  it("releases audio with a bounded lead over real time", async () => {
    const { out, clock, chunk } = harness(100);
    for (let n = 1; n <= 6; n++) chunk(n);
    expect(out).toEqual(["audio:1", "audio:2", "audio:3"]);
    await clock.advance(40);
    expect(out).toEqual(["audio:1", "audio:2", "audio:3", "audio:4"]);
    await clock.advance(200);
    expect(out).toHaveLength(6);
  });

  it("counts the audio it holds as it is queued, sent and cleared", async () => {
    const { clock, chunk, pacer } = harness(100);
    for (let n = 1; n <= 6; n++) chunk(n);
    expect(pacer.heldMs).toBe(120); // 3 of 6 chunks of 40 ms sent within the lead
    await clock.advance(40);
    expect(pacer.heldMs).toBe(80);
    pacer.clear();
    expect(pacer.heldMs).toBe(0);
    chunk(7);
    expect(pacer.heldMs).toBe(0); // sent at once: nothing is ahead of it any more
  });

  it("holds audio.completed and reply.completed behind held audio; other events pass", async () => {
    const { out, clock, chunk, event } = harness(100);
    for (let n = 1; n <= 5; n++) chunk(n);
    event({ type: "audio.completed" });
    event({ type: "agent-transcript.committed", text: "done" });
    event({ type: "reply.completed" });
    expect(out).toEqual(["audio:1", "audio:2", "audio:3", "agent-transcript.committed"]);
    await clock.advance(200);
    expect(out.slice(4)).toEqual(["audio:4", "audio:5", "audio.completed", "reply.completed"]);
  });

  it("reply.cancelled clears held audio and boundaries and goes out at once", async () => {
    const { out, clock, chunk, event, pacer } = harness(100);
    for (let n = 1; n <= 5; n++) chunk(n);
    event({ type: "reply.completed" });
    event({ type: "reply.cancelled" });
    expect(pacer.heldMs).toBe(0);
    await clock.advance(1000);
    expect(out).toEqual(["audio:1", "audio:2", "audio:3", "reply.cancelled"]);
  });

  it("afterAudio runs at once when nothing is held, else behind the held audio, and never after a clear", async () => {
    const { out, clock, chunk, pacer } = harness(100);
    pacer.afterAudio(() => out.push("mark:0"));
    for (let n = 1; n <= 5; n++) chunk(n);
    pacer.afterAudio(() => out.push("mark:1"));
    expect(out).toEqual(["mark:0", "audio:1", "audio:2", "audio:3"]);
    await clock.advance(200);
    expect(out.slice(4)).toEqual(["audio:4", "audio:5", "mark:1"]);
    for (let n = 6; n <= 12; n++) chunk(n);
    pacer.afterAudio(() => out.push("mark:2"));
    pacer.clear();
    await clock.advance(1000);
    expect(out).not.toContain("mark:2");
  });
});
