import type { IncomingMessage } from "node:http";
import type { RealtimeServerEvent as OpenAiServerEvent } from "openai/resources/realtime/realtime";
import { describe, expect, it } from "vitest";
import { mintToken } from "../../src/server/auth.js";
import { RealtimeBinding, type SessionInput } from "../../src/realtime/binding.js";
import { clientToolRefusal } from "../../src/realtime/client-tools.js";
import type { RealtimeServerEvent } from "../../src/realtime/server-events.js";
import { realtimeAuthorized, realtimeCredential } from "../../src/server/realtime-route.js";
import { chooseRealtimeProtocol } from "../../src/server/realtime-handshake.js";
import { textPartEvents } from "../helpers/realtime-orders.js";

function bind(modality: "text" | "audio", options: { readonly outOfBand?: boolean } = {}) {
  const sent: RealtimeServerEvent[] = [];
  let n = 0;
  const binding = new RealtimeBinding({ modality, agent: "shop", send: (event) => sent.push(event), id: (prefix) => `${prefix}_${++n}`, ...options });
  binding.session({ type: "session.configured", audioFormat: "pcm16", sampleRate: 24000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "k", mode: modality === "text" ? "text" : "pipeline" });
  return { binding, sent, types: () => sent.map((e) => e.type) };
}

/** The events as the openai package's client reads them (its union, to narrow by `type`; the assertions check the fields). */
const asOpenAi = (events: RealtimeServerEvent[]): OpenAiServerEvent[] => events as unknown as OpenAiServerEvent[];

describe("RealtimeBinding: one connection bound to one session", () => {
  it("starts with session.created, and maps a text reply's snapshots onto one response", () => {
    const { binding, sent, types } = bind("text");
    expect(binding.state).toBe("idle");
    binding.session({ type: "agent-transcript.updated", text: "Hel" });
    expect(binding.state).toBe("responding");
    binding.session({ type: "agent-transcript.updated", text: "Hello" });
    binding.session({ type: "agent-transcript.committed", text: "Hello" });
    binding.session({ type: "reply.completed" });
    expect(binding.state).toBe("idle");
    expect(types()).toEqual([
      "session.created",
      "response.created",
      "response.output_item.added",
      "conversation.item.added",
      ...textPartEvents(2),
      "conversation.item.done",
      "response.done",
    ]);
    const events = asOpenAi(sent);
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => (e.type === "response.output_text.delta" ? e.delta : ""))).toEqual(["Hel", "lo"]);
    expect(events.at(-1)).toMatchObject({ type: "response.done", response: { status: "completed", output: [{ role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello" }] }] } });
    expect(new Set(sent.map((e) => e.event_id)).size).toBe(sent.length);
  });

  it("shows a tool line the snapshot lacks (s2s speaks it out of band) before the reply, and one it holds (pipeline) once", () => {
    for (const snapshotHoldsLine of [false, true]) {
      const { binding, sent } = bind("audio");
      binding.session({ type: "tool.message", toolCallId: "c1", kind: "start", text: "Let me check." });
      binding.session({ type: "agent-transcript.updated", text: snapshotHoldsLine ? "Let me check. It shipped." : "It shipped." });
      binding.session({ type: "reply.completed" });
      const events = asOpenAi(sent);
      const deltas = events.flatMap((e) => (e.type === "response.output_audio_transcript.delta" ? [e.delta] : []));
      const done = events.find((e) => e.type === "response.output_audio_transcript.done");
      expect(done).toMatchObject({ transcript: "Let me check. It shipped." });
      expect(deltas.join("")).toBe("Let me check. It shipped.");
    }
  });

  it("holds typed items until response.create, then hands the session one user_text; its commit is not shown twice", () => {
    const { binding, types } = bind("text");
    expect(binding.client({ type: "conversation.item.create", text: "one" })).toEqual([]);
    expect(binding.client({ type: "conversation.item.create", itemId: "mine", text: "two" })).toEqual([]);
    const handed: SessionInput[] = binding.client({ type: "response.create" });
    expect(handed).toEqual([{ kind: "command", command: { type: "user_text", text: "one\ntwo" } }]);
    const before = types().length;
    binding.session({ type: "user-transcript.committed", text: "one\ntwo" });
    expect(types().length).toBe(before);
    expect(types().filter((t) => t === "conversation.item.added")).toHaveLength(2);
  });

  it("maps a spoken turn: speech edges on the appended-audio clock, then commit, item, transcription, done", () => {
    const { binding, sent, types } = bind("audio");
    binding.client({ type: "input_audio_buffer.append", audio: new Uint8Array(4800) }); // 100 ms at 24 kHz
    binding.session({ type: "speech.started" });
    binding.client({ type: "input_audio_buffer.append", audio: new Uint8Array(9600) });
    binding.session({ type: "speech.stopped" });
    binding.session({ type: "user-transcript.committed", text: "where is my order" });
    expect(types().slice(1)).toEqual([
      "input_audio_buffer.speech_started",
      "input_audio_buffer.speech_stopped",
      "input_audio_buffer.committed",
      "conversation.item.added",
      "conversation.item.input_audio_transcription.completed",
      "conversation.item.done",
    ]);
    const events = asOpenAi(sent);
    expect(events[1]).toMatchObject({ audio_start_ms: 100 });
    expect(events[2]).toMatchObject({ audio_end_ms: 300 });
    expect(events[5]).toMatchObject({ transcript: "where is my order", usage: { type: "duration", seconds: 0.2 } });
  });

  it("ends a response cut by a barge-in as cancelled (turn_detected), and one the client cancels as client_cancelled", () => {
    const { binding, sent } = bind("audio");
    binding.agentAudio(new Uint8Array(960));
    binding.session({ type: "reply.cancelled" });
    expect(binding.state).toBe("cancelling");
    binding.settle();
    expect(asOpenAi(sent).at(-1)).toMatchObject({ type: "response.done", response: { status: "cancelled", status_details: { reason: "turn_detected" } } });
    binding.session({ type: "agent-transcript.updated", text: "Sure" });
    expect(binding.client({ type: "response.cancel" })).toEqual([{ kind: "command", command: { type: "cancel" } }]);
    binding.session({ type: "reply.cancelled" });
    expect(asOpenAi(sent).at(-1)).toMatchObject({ response: { status: "cancelled", status_details: { reason: "client_cancelled" } } });
    expect(binding.client({ type: "response.cancel" })).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "response_cancel_not_active" } });
  });

  it("at a barge-in, sends the speech_started the session releases before the cancelled response's done events, and absorbs the client's echoing response.cancel once", () => {
    const { binding, types } = bind("audio");
    binding.agentAudio(new Uint8Array(960));
    binding.session({ type: "reply.cancelled" });
    binding.session({ type: "speech.started" });
    expect(binding.state).toBe("idle");
    const order = types();
    expect(order.indexOf("input_audio_buffer.speech_started")).toBeLessThan(order.indexOf("response.output_audio.done"));
    expect(order.at(-1)).toBe("response.done");
    // The Agents SDK sends response.cancel when speech_started arrives while it plays: nothing is active, and no error follows.
    const before = order.length;
    expect(binding.client({ type: "response.cancel" })).toEqual([]);
    expect(types().length).toBe(before);
    expect(binding.client({ type: "response.cancel" })).toEqual([]);
    expect(types().at(-1)).toBe("error");
  });

  it("ends a held cancelled response before any other event", () => {
    const { binding, types } = bind("audio");
    binding.agentAudio(new Uint8Array(960));
    binding.session({ type: "reply.cancelled" });
    binding.session({ type: "agent-transcript.updated", text: "Next" });
    const order = types();
    expect(order.indexOf("response.done")).toBeLessThan(order.lastIndexOf("response.created"));
    expect(binding.state).toBe("responding");
  });

  it("shows the agent's turn-taking as server VAD that answers and interrupts, unless its interruption is off", () => {
    const shown = (interrupts?: boolean) => {
      const sent: RealtimeServerEvent[] = [];
      const binding = new RealtimeBinding({ modality: "audio", agent: "shop", send: (event) => sent.push(event), id: (prefix) => prefix, ...(interrupts === undefined ? {} : { interrupts }) });
      binding.session({ type: "session.configured", audioFormat: "pcm16", sampleRate: 24000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "k", mode: "pipeline" });
      return (sent[0] as unknown as { session: { audio: { input: { turn_detection: unknown } } } }).session.audio.input.turn_detection;
    };
    expect(shown()).toEqual({ type: "server_vad", create_response: true, interrupt_response: true });
    expect(shown(false)).toEqual({ type: "server_vad", create_response: true, interrupt_response: false });
  });

  it("retrieves a recent item as last sent, and names one it does not hold", () => {
    const { binding, sent } = bind("audio");
    binding.session({ type: "speech.started" });
    binding.session({ type: "user-transcript.committed", text: "hello" });
    const itemId = (sent[1] as unknown as { item_id: string }).item_id;
    binding.client({ type: "conversation.item.retrieve", itemId });
    expect(sent.at(-1)).toMatchObject({ type: "conversation.item.retrieved", item: { id: itemId, role: "user", content: [{ type: "input_audio", transcript: "hello" }] } });
    binding.client({ type: "conversation.item.retrieve", itemId: "item_nope" });
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "item_not_found", param: "item_id" } });
  });

  it("hands back a failure for the agent's clientTool calls, and nothing for its server tools", () => {
    const sent: RealtimeServerEvent[] = [];
    const binding = new RealtimeBinding({ modality: "text", agent: "shop", send: (event) => sent.push(event), id: (prefix) => prefix, clientTools: new Map([["pick_colour", { description: "Ask the page for a colour", parameters: {} }]]) });
    expect(binding.session({ type: "tool.called", toolCallId: "c1", toolName: "pick_colour", args: {} })).toEqual([
      { kind: "command", command: { type: "tool_result", toolCallId: "c1", result: clientToolRefusal("pick_colour"), error: clientToolRefusal("pick_colour") } },
    ]);
    expect(binding.session({ type: "tool.called", toolCallId: "c2", toolName: "lookup_order", args: {} })).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("refuses output_modalities the agent does not speak, and sends nothing once closed", () => {
    const { binding, sent } = bind("text");
    binding.client({ type: "session.update", update: { outputModalities: ["audio"], ignored: [] } });
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { param: "session.output_modalities" } });
    binding.close();
    binding.session({ type: "agent-transcript.updated", text: "late" });
    expect(sent.at(-1)?.type).toBe("error");
    expect(binding.state).toBe("closed");
  });
});

describe("/v1/realtime credentials", () => {
  const KEY = "sk-realtime";
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  const url = new URL("ws://gw/v1/realtime?model=x");

  it("reads the bearer header, then the key subprotocol, then ?token=", () => {
    expect(realtimeCredential(req({ authorization: "Bearer abc" }), url)).toBe("abc");
    expect(realtimeCredential(req({ "sec-websocket-protocol": "realtime, openai-insecure-api-key.xyz, openai-beta.realtime-v1" }), url)).toBe("xyz");
    expect(realtimeCredential(req({}), new URL("ws://gw/v1/realtime?token=t1"))).toBe("t1");
    expect(realtimeCredential(req({}), url)).toBeUndefined();
  });

  it("takes the key or a token for this agent; refuses the rest with a reason that names no key", () => {
    const now = 1_000_000;
    expect(realtimeAuthorized(KEY, KEY, "shop", now)).toEqual({ ok: true });
    expect(realtimeAuthorized(KEY, mintToken(KEY, "shop", now).token, "shop", now)).toEqual({ ok: true });
    expect(realtimeAuthorized(KEY, undefined, "shop", now)).toMatchObject({ ok: false, reason: expect.stringContaining("is required") });
    expect(realtimeAuthorized(KEY, "sk-other", "shop", now)).toEqual({ ok: false, reason: "the API key or session token is not valid" });
    expect(realtimeAuthorized(KEY, mintToken(KEY, "other", now).token, "shop", now)).toMatchObject({ ok: false, reason: "the session token was minted for another agent" });
    expect(realtimeAuthorized(KEY, mintToken(KEY, "shop", now, 10).token, "shop", now + 11)).toMatchObject({ ok: false, reason: "the session token has expired: mint a new one" });
  });

  it("answers with the realtime subprotocol when offered, and never one carrying a key", () => {
    expect(chooseRealtimeProtocol(new Set(["openai-insecure-api-key.sk", "realtime"]))).toBe("realtime");
    expect(chooseRealtimeProtocol(new Set(["openai-insecure-api-key.sk"]))).toBe(false);
  });
});

describe("RealtimeBinding: conversation.item.truncate", () => {
  /** A voice reply with `ms` of 24 kHz audio sent, completed. */
  function replied(ms: number) {
    const bound = bind("audio");
    bound.binding.session({ type: "agent-transcript.updated", text: "Your order shipped on Friday." });
    bound.binding.agentAudio(new Uint8Array(48 * ms));
    bound.binding.session({ type: "reply.completed" });
    const item = (asOpenAi(bound.sent).find((e) => e.type === "response.output_item.added") as { item: { id: string } } | undefined)?.item.id ?? "";
    return { ...bound, item };
  }
  const truncate = (itemId: string, audioEndMs: number, contentIndex = 0) => ({ type: "conversation.item.truncate" as const, itemId, contentIndex, audioEndMs, eventId: "e1" });

  it("answers conversation.item.truncated and hands the session truncate_heard for the latest reply", () => {
    const { binding, sent, item } = replied(1000);
    expect(binding.client(truncate(item, 400))).toEqual([{ kind: "command", command: { type: "truncate_heard", audioMs: 400 } }]);
    expect(sent.at(-1)).toMatchObject({ type: "conversation.item.truncated", item_id: item, content_index: 0, audio_end_ms: 400 });
    // The whole audio is allowed; past it is not.
    expect(binding.client(truncate(item, 1000))).toHaveLength(1);
    expect(binding.client(truncate(item, 1001))).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "invalid_value", param: "audio_end_ms", event_id: "e1" } });
  });

  it("keeps the reply heard last the latest while the next one has words but no audio yet (as the session counts it)", () => {
    const { binding, sent, item } = replied(500);
    binding.session({ type: "agent-transcript.updated", text: "All right" });
    expect(binding.client(truncate(item, 300))).toEqual([{ kind: "command", command: { type: "truncate_heard", audioMs: 300 } }]);
    binding.agentAudio(new Uint8Array(48 * 100));
    expect(binding.client(truncate(item, 300))).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "unsupported_value", param: "item_id" } });
  });

  it("takes the reply still in flight, and refuses an earlier one, a user item, another part, a text agent's", () => {
    const { binding, sent, item } = replied(500);
    binding.client({ type: "conversation.item.create", itemId: "item_u", text: "hi" });
    binding.session({ type: "agent-transcript.updated", text: "Hello" });
    binding.agentAudio(new Uint8Array(48 * 200));
    const open = (asOpenAi(sent).filter((e) => e.type === "response.output_item.added").at(-1) as { item: { id: string } } | undefined)?.item.id ?? "";
    expect(binding.client(truncate(open, 100))).toHaveLength(1);
    const codes = [truncate(item, 0), truncate("item_u", 0), truncate(open, 0, 1), truncate("nope", 0)].map((event) => {
      binding.client(event);
      const last = sent.at(-1) as { error?: { code: string; param: string } };
      return [last.error?.code, last.error?.param];
    });
    expect(codes).toEqual([
      ["unsupported_value", "item_id"],
      ["invalid_value", "item_id"],
      ["invalid_value", "content_index"],
      ["item_not_found", "item_id"],
    ]);
    const text = bind("text");
    text.binding.session({ type: "agent-transcript.updated", text: "Hi" });
    text.binding.session({ type: "reply.completed" });
    const textItem = (asOpenAi(text.sent).find((e) => e.type === "response.output_item.added") as { item: { id: string } } | undefined)?.item.id ?? "";
    expect(text.binding.client(truncate(textItem, 0))).toEqual([]);
    expect(text.sent.at(-1)).toMatchObject({ type: "error", error: { code: "invalid_value", message: expect.stringContaining("answers in text") } });
  });
});

describe("RealtimeBinding: out-of-band responses", () => {
  const ask = { type: "response.create" as const, outOfBand: { instructions: "Classify.", metadata: { k: "v" } } };

  it("streams the session's text as a response outside the conversation, and refuses for an s2s agent", () => {
    const { binding, sent } = bind("audio", { outOfBand: true });
    const [input] = binding.client(ask);
    const command = input?.kind === "command" ? input.command : undefined;
    if (command?.type !== "respond_out_of_band") throw new Error("expected the out-of-band command");
    expect(command.ask).toMatchObject({ instructions: "Classify." });
    command.sink.delta("bil");
    command.sink.delta("ling");
    command.sink.done({ status: "completed", text: "billing" });
    command.sink.delta("late");
    expect(sent.slice(1).map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      ...textPartEvents(2),
      "response.done",
    ]);
    expect(sent.at(-1)).toMatchObject({ response: { conversation_id: null, metadata: { k: "v" }, output_modalities: ["text"], output: [{ content: [{ type: "output_text", text: "billing" }] }] } });
    expect(binding.state).toBe("idle");

    const s2s = bind("audio");
    expect(s2s.binding.client(ask)).toEqual([]);
    expect(s2s.sent.at(-1)).toMatchObject({ type: "error", error: { code: "unsupported_value", param: "response.conversation", message: expect.stringContaining("speech-to-speech service holds its conversation") } });
  });

  it("aborts the model call when the client cancels it by id, or the socket closes", () => {
    const { binding, sent } = bind("text", { outOfBand: true });
    const [first] = binding.client(ask);
    const command = first?.kind === "command" ? first.command : undefined;
    if (command?.type !== "respond_out_of_band") throw new Error("expected the out-of-band command");
    const id = (sent.find((e) => e.type === "response.created") as { response: { id: string } } | undefined)?.response.id ?? "";
    expect(binding.client({ type: "response.cancel", responseId: id })).toEqual([]);
    expect(command.ask.signal.aborted).toBe(true);
    command.sink.done({ status: "cancelled", text: "" });
    expect(sent.at(-1)).toMatchObject({ type: "response.done", response: { status: "cancelled" } });
    const [second] = binding.client(ask);
    const again = second?.kind === "command" ? second.command : undefined;
    binding.close();
    expect(again?.type === "respond_out_of_band" && again.ask.signal.aborted).toBe(true);
  });
});
