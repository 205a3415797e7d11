import { describe, expect, it } from "vitest";
import { Base64Audio, type AudioPayload } from "../../../../src/audio/audio-payload.js";
import type { TransferTarget } from "../../../../src/manifest/index.js";
import { RecordingLink, type LinkTap } from "../../../../src/session/recording/recording-link.js";
import { MemoryLink } from "../../../../src/testing/index.js";
import type { ConnectionHandler } from "../../../../src/transport/client-connection.js";
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

/** A link that keeps the handler it was given, to play audio into it as a carrier bridge would. */
class HandlerLink extends MemoryLink {
  handler: ConnectionHandler | undefined;
  override attach(handler: ConnectionHandler): void {
    this.handler = handler;
    super.attach(handler);
  }
}

describe("RecordingLink", () => {
  it("records a carrier's undecoded caller audio as its bytes, and hands the session the payload as it came", () => {
    const recorded: Uint8Array[] = [];
    const inner = new HandlerLink();
    const link = new RecordingLink(inner, { ...tap, callerAudio: (bytes) => recorded.push(bytes) });
    const heard: AudioPayload[] = [];
    link.attach({ command: () => {}, audio: (chunk) => heard.push(chunk), playback: () => {}, closed: () => {} });
    const bytes = Uint8Array.from({ length: 160 }, (_, i) => (i * 3) % 256);
    const payload = new Base64Audio(Buffer.from(bytes).toString("base64"), bytes.byteLength);
    inner.handler?.audio(payload);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBe(payload);
    expect(recorded.map((r) => Buffer.from(r))).toEqual([Buffer.from(bytes)]);
  });

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
