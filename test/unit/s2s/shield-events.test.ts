// The s2s event guard on its own: arguments pass through untouched; a handler that throws is reported and ignored.
import { describe, expect, it } from "vitest";
import type { S2sEvents } from "../../../src/s2s/s2s-port.js";
import { ShieldedEvents } from "../../../src/s2s/shield-events.js";

function recording(throwOn?: keyof S2sEvents) {
  const calls: [string, ...unknown[]][] = [];
  const handler =
    (name: keyof S2sEvents) =>
    (...args: unknown[]): void => {
      calls.push([name, ...args]);
      if (name === throwOn) throw new Error(`${name} broke`);
    };
  const names: (keyof S2sEvents)[] = ["audio", "agentTranscript", "speechStarted", "speechStopped", "userTranscript", "responseStarted", "responseDone", "toolCall", "error", "reconnected", "closed"];
  const events = Object.fromEntries(names.map((name) => [name, handler(name)])) as unknown as S2sEvents;
  return { events, calls };
}

describe("ShieldedEvents", () => {
  it("passes every argument through as given (a speech end the service only inferred stays inferred)", () => {
    const { events, calls } = recording();
    const shielded = new ShieldedEvents(events, () => {});
    const pcm = new Uint8Array(4);
    shielded.audio(pcm, { responseId: "r1", itemId: "i1" });
    shielded.agentTranscript("Hi", { responseId: "r1", itemId: "i1" });
    shielded.speechStarted();
    shielded.speechStopped({ inferred: true });
    shielded.userTranscript("hello", { final: true, itemId: "u1" });
    shielded.responseStarted({ responseId: "r2", outOfBand: false });
    shielded.responseDone({ responseId: "r2", outOfBand: false, status: "completed" });
    shielded.toolCall({ callId: "c1", name: "lookup", args: {}, responseId: "r2" });
    shielded.reconnected();
    shielded.closed({ expected: true });
    expect(calls).toEqual([
      ["audio", pcm, { responseId: "r1", itemId: "i1" }],
      ["agentTranscript", "Hi", { responseId: "r1", itemId: "i1" }],
      ["speechStarted"],
      ["speechStopped", { inferred: true }],
      ["userTranscript", "hello", { final: true, itemId: "u1" }],
      ["responseStarted", { responseId: "r2", outOfBand: false }],
      ["responseDone", { responseId: "r2", outOfBand: false, status: "completed" }],
      ["toolCall", { callId: "c1", name: "lookup", args: {}, responseId: "r2" }],
      ["reconnected"],
      ["closed", { expected: true }],
    ]);
  });

  it("a handler that throws is reported with its name and ignored; a handler the session has not set is skipped", () => {
    for (const name of ["audio", "toolCall"] as const) {
      const { events } = recording(name);
      const threw: string[] = [];
      const shielded = new ShieldedEvents(events, (event, error) => threw.push(`${event}: ${(error as Error).message}`));
      expect(() => shielded.audio(new Uint8Array(2), { responseId: "r", itemId: "i" })).not.toThrow();
      expect(() => shielded.toolCall({ callId: "c", name: "t", args: {}, responseId: "r" })).not.toThrow();
      expect(threw).toEqual([`${name}: ${name} broke`]);
    }
    const { events } = recording();
    const withoutReconnected = Object.fromEntries(Object.entries(events).filter(([name]) => name !== "reconnected")) as unknown as S2sEvents;
    expect(() => new ShieldedEvents(withoutReconnected, () => {}).reconnected()).not.toThrow();
  });
});
