// What the warm-transfer tests share (test/integration/transfer*.test.ts): the caller asking for
// the desk, what the agent's observers saw, the caller back with the agent, and requests signed as
// Telnyx signs its webhooks.
import { generateKeyPairSync, sign } from "node:crypto";
import { expect } from "vitest";
import type { AgentDef } from "../../src/manifest/index.js";
import type { FakeCarrier } from "../../fakes/carrier.js";
import type { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";

type Realtime = Awaited<ReturnType<typeof startFakeOpenAiRealtime>>;

export const SUMMARY = "Ann Lee; order 1234 arrived broken; she wants a refund.";

/** The caller asks for a person: the model calls transfer_call (the desk, with a summary), then announces it. */
export function askForTheDesk(service: Realtime): void {
  service.enqueue({ toolCall: { name: "transfer_call", args: { destination: "desk", summary: SUMMARY } } }, { say: "Let me get someone from the desk for you.", audioMs: 300 });
  void service.userSays("I want to talk to a person");
}

/** What the agent's observers saw: a resumed session's restored messages, and each agent line once committed (heard). */
export function restoredLog(): { restored: { sessionId: string; messages: string[] }[]; committed: string[]; events: NonNullable<AgentDef["events"]> } {
  const restored: { sessionId: string; messages: string[] }[] = [];
  const committed: string[] = [];
  return {
    restored,
    committed,
    events: {
      "history.restored": (event, info) => void restored.push({ sessionId: info.sessionId, messages: event.messages.map((m) => m.text) }),
      "agent-transcript.committed": (event) => void committed.push(event.text),
    },
  };
}

/**
 * Nobody took the warm transfer and the caller's line streams again: the session is resumed (its
 * record restored, the announcement in it, so no greeting), and the notice is what the agent says first.
 * The caller closes `line`.
 */
export async function expectBackWithTheAgent(line: FakeCarrier, service: Realtime, restored: readonly { messages: string[] }[]): Promise<void> {
  await line.until(() => line.audio.length > 0, "the agent speaks again");
  await line.until(() => restored.length > 0, "history.restored");
  expect(restored[0]?.messages).toContain("Let me get someone from the desk for you.");
  const second = service.messages.filter((m) => m.connection === 1).map((m) => JSON.stringify(m.message));
  expect(second.some((m) => m.includes("nobody at desk could take your call just now"))).toBe(true);
  expect(second.some((m) => m.includes("Say exactly: Hello."))).toBe(false);
}

/** A Telnyx key pair: `TELNYX_PUBLIC_KEY` (raw, base64) and a form POST signed as Telnyx signs its webhooks (Ed25519 over `timestamp|body`). */
export function telnyxSigner(): { publicKey: string; post(url: string, params: Record<string, string>): Promise<Response> } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    publicKey: publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64"),
    post(url, params) {
      const body = new URLSearchParams(params).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");
      return fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp }, body });
    },
  };
}
