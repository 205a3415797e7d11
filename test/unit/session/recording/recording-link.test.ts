import { describe, expect, it } from "vitest";
import type { TransferTarget } from "../../../../src/manifest/index.js";
import { RecordingLink, type LinkTap } from "../../../../src/session/recording/recording-link.js";
import { MemoryLink } from "../../../../src/testing/index.js";
import type { WaitingCues } from "../../../../src/transport/waiting-mix.js";

const tap: LinkTap = { formats: () => {}, callerAudio: () => {}, agentAudio: () => {}, playback: () => {}, event: () => {} };

/** A phone call's link: it can transfer and play waiting sounds. */
class CallLink extends MemoryLink {
  readonly transfers: string[] = [];
  readonly transferModes = ["cold"] as const;
  transferRefusal(target: TransferTarget): string | undefined {
    return target.address.kind === "sip" ? "no SIP here" : undefined;
  }
  transfer(target: TransferTarget, sessionId: string): Promise<void> {
    this.transfers.push(`${target.name} ${sessionId}`);
    return Promise.resolve();
  }
  playWaiting(): WaitingCues {
    return { thinking: () => {} };
  }
}

describe("RecordingLink", () => {
  it("offers what the link it records offers: a call's transfer and waiting sounds go through to it", async () => {
    const inner = new CallLink();
    const link = new RecordingLink(inner, tap);
    expect(link.transferModes).toEqual(["cold"]);
    await link.transfer?.({ name: "desk", mode: "cold", address: { kind: "number", number: "+14155550123" }, ringTimeoutS: 20 }, "s1");
    expect(inner.transfers).toEqual(["desk s1"]);
    expect(link.transferRefusal?.({ name: "pbx", mode: "cold", address: { kind: "sip", uri: "sip:desk@pbx.example.com" }, ringTimeoutS: 20 })).toBe("no SIP here");
    expect(link.playWaiting).toBeTypeOf("function");
  });

  it("offers nothing a browser link does not: its client is told of a transfer instead", () => {
    const link = new RecordingLink(new MemoryLink(), tap);
    expect(link.transferModes).toBeUndefined();
    expect(link.transfer).toBeUndefined();
    expect(link.transferRefusal).toBeUndefined();
    expect(link.playWaiting).toBeUndefined();
  });
});
