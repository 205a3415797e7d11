// Client tools on /v1/realtime (docs/realtime.md "Client tools"): parsing the declaration and the
// output, the binding's events for a call, the answer, and the response.create after it.
import type { RealtimeServerEvent as OpenAiServerEvent } from "openai/resources/realtime/realtime";
import { describe, expect, it } from "vitest";
import { RealtimeBinding } from "../../src/realtime/binding.js";
import { parseClientEvent } from "../../src/realtime/client-events.js";
import { clientToolRefusal } from "../../src/realtime/client-tools.js";
import type { RealtimeServerEvent } from "../../src/realtime/server-events.js";
import { FUNCTION_CALL_EVENTS } from "../helpers/realtime-orders.js";

const parse = (value: unknown) => parseClientEvent(JSON.stringify(value));
const refusal = (parsed: ReturnType<typeof parse>) => (parsed.kind === "refused" ? parsed.error : undefined);
const asOpenAi = (events: RealtimeServerEvent[]): OpenAiServerEvent[] => events as unknown as OpenAiServerEvent[];

const AGENT_TOOLS = new Map([["pick_colour", { description: "Ask the client for a colour", parameters: { type: "object", properties: { palette: { type: "string" } } } }]]);

function bind(modality: "text" | "audio" = "text") {
  const sent: RealtimeServerEvent[] = [];
  let n = 0;
  const binding = new RealtimeBinding({ modality, agent: "shop", send: (event) => sent.push(event), id: (prefix) => `${prefix}_${++n}`, clientTools: AGENT_TOOLS });
  binding.session({ type: "session.configured", audioFormat: "pcm16", sampleRate: 24000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "k", mode: modality === "text" ? "text" : "pipeline" });
  const since = (from: number) => sent.slice(from).map((e) => e.type);
  return { binding, sent, since };
}

function declared(modality: "text" | "audio" = "text") {
  const bound = bind(modality);
  bound.binding.client({ type: "session.update", update: { tools: ["pick_colour"], ignored: [] } });
  return bound;
}

describe("client tools: parsing", () => {
  it("reads the declared function tools' names, and a function_call_output bounded as tool_result is", () => {
    const update = parse({ type: "session.update", session: { tools: [{ type: "function", name: "pick_colour", description: "x", parameters: {} }] } });
    expect(update).toMatchObject({ kind: "event", event: { update: { tools: ["pick_colour"] } } });
    expect(refusal(parse({ type: "session.update", session: { tools: [{ type: "function" }] } }))).toMatchObject({ param: "session.tools.0.name" });
    expect(refusal(parse({ type: "session.update", session: { tools: "pick_colour" } }))).toMatchObject({ param: "session.tools" });

    const output = (item: unknown) => parse({ type: "conversation.item.create", event_id: "e1", item });
    expect(output({ type: "function_call_output", id: "out_1", call_id: "call_1", output: "amber" })).toEqual({
      kind: "event",
      event: { type: "function_call_output", eventId: "e1", itemId: "out_1", callId: "call_1", output: "amber" },
    });
    expect(refusal(output({ type: "function_call_output", call_id: "", output: "x" }))).toMatchObject({ param: "item.call_id" });
    expect(refusal(output({ type: "function_call_output", call_id: "c".repeat(257), output: "x" }))).toMatchObject({ param: "item.call_id" });
    expect(refusal(output({ type: "function_call_output", call_id: "c" }))).toMatchObject({ param: "item.output" });
    expect(refusal(output({ type: "function_call_output", call_id: "c", output: "x".repeat(1_000_001) }))).toMatchObject({ param: "item.output" });
  });
});

describe("client tools: the binding", () => {
  it("shows the declared tools as the agent declares them, and refuses one the agent lacks with nothing applied", () => {
    const { binding, sent } = declared();
    expect(asOpenAi(sent).at(-1)).toMatchObject({ type: "session.updated", session: { tools: [{ type: "function", name: "pick_colour", description: "Ask the client for a colour" }] } });
    binding.client({ type: "session.update", update: { tools: ["weather"], ignored: [] } });
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "unsupported_value", param: "session.tools.0.name", message: expect.stringContaining("clientTool(") } });
    // Still declared: the refused update applied nothing.
    expect(binding.waitsForAudio({ type: "tool.called", toolCallId: "c1", toolName: "pick_colour", args: {} })).toBe(true);
    binding.client({ type: "session.update", update: { tools: [], ignored: [] } });
    expect(binding.waitsForAudio({ type: "tool.called", toolCallId: "c1", toolName: "pick_colour", args: {} })).toBe(false);
    // Undeclared: the call fails at once, as before.
    expect(binding.session({ type: "tool.called", toolCallId: "c1", toolName: "pick_colour", args: {} })).toEqual([
      { kind: "command", command: { type: "tool_result", toolCallId: "c1", result: clientToolRefusal("pick_colour"), error: clientToolRefusal("pick_colour") } },
    ]);
  });

  it("ends the response at a declared call, after its message, in the API's order; the continuation is a new response with only its own text", () => {
    const { binding, sent, since } = declared();
    const from = sent.length;
    binding.session({ type: "agent-transcript.updated", text: "One moment." });
    expect(binding.session({ type: "tool.called", toolCallId: "call_1", toolName: "pick_colour", args: { palette: "warm" } })).toEqual([]);
    expect(binding.state).toBe("idle");
    expect(since(from)).toEqual([
      "response.created",
      "response.output_item.added",
      "conversation.item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "conversation.item.done",
      ...FUNCTION_CALL_EVENTS,
      "response.done",
    ]);
    const events = asOpenAi(sent.slice(from));
    const args = JSON.stringify({ palette: "warm" });
    expect(events[9]).toMatchObject({ output_index: 1, item: { type: "function_call", call_id: "call_1", name: "pick_colour", arguments: "", status: "in_progress" } });
    expect(events[11]).toMatchObject({ output_index: 1, call_id: "call_1", delta: args });
    expect(events[12]).toMatchObject({ output_index: 1, call_id: "call_1", name: "pick_colour", arguments: args });
    expect(events.at(-1)).toMatchObject({
      response: { status: "completed", output: [{ type: "message", content: [{ text: "One moment." }] }, { type: "function_call", call_id: "call_1", arguments: args, status: "completed" }] },
    });

    // The answer: the session's tool_result, the output item added and done.
    const answered = sent.length;
    expect(binding.client({ type: "function_call_output", callId: "call_1", output: "amber" })).toEqual([{ kind: "command", command: { type: "tool_result", toolCallId: "call_1", result: "amber" } }]);
    expect(since(answered)).toEqual(["conversation.item.added", "conversation.item.done"]);
    expect(binding.client({ type: "response.create" })).toEqual([]);
    expect(since(answered)).toEqual(["conversation.item.added", "conversation.item.done"]);

    // The session's snapshots cover the whole reply: the continuation shows what is new.
    binding.session({ type: "tool.completed", toolCallId: "call_1", result: "amber" });
    binding.session({ type: "agent-transcript.updated", text: "One moment. Your colour is amber." });
    binding.session({ type: "reply.completed" });
    expect(asOpenAi(sent).at(-1)).toMatchObject({ type: "response.done", response: { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "Your colour is amber." }] }] } });
    expect(sent.filter((e) => e.type === "response.created")).toHaveLength(2);
  });

  it("opens a response for a call with no words before it; refuses an unknown, answered or settled call_id", () => {
    const { binding, sent } = declared("audio");
    binding.session({ type: "tool.called", toolCallId: "call_1", toolName: "pick_colour", args: {} });
    expect(asOpenAi(sent).at(-1)).toMatchObject({ type: "response.done", response: { output: [{ type: "function_call", call_id: "call_1", arguments: "{}" }] } });
    expect(asOpenAi(sent).find((e) => e.type === "response.output_item.added")).toMatchObject({ output_index: 0 });
    binding.session({ type: "tool.called", toolCallId: "call_2", toolName: "pick_colour", args: {} });

    binding.client({ type: "function_call_output", callId: "call_9", output: "x" });
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { type: "invalid_request_error", param: "item.call_id" } });
    binding.client({ type: "function_call_output", callId: "call_1", output: "x" });
    expect(binding.client({ type: "function_call_output", callId: "call_1", output: "y" })).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { param: "item.call_id", message: expect.stringContaining("already answered") } });
    // Timed out (or cancelled) in the session: no longer answerable.
    binding.session({ type: "tool.completed", toolCallId: "call_2", result: "pick_colour did not answer within 30 seconds.", isError: true });
    expect(binding.client({ type: "function_call_output", callId: "call_2", output: "late" })).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { param: "item.call_id" } });
  });

  it("owes an absorbed response.create a response: the continuation, or an empty one when the reply ended silent", () => {
    const { binding, sent } = declared();
    binding.session({ type: "tool.called", toolCallId: "call_1", toolName: "pick_colour", args: {} });
    binding.client({ type: "function_call_output", callId: "call_1", output: "amber" });
    // The reply ends with nothing more to say: the absorbed response.create gets an empty response then.
    binding.client({ type: "response.create" });
    binding.session({ type: "reply.completed" });
    expect(asOpenAi(sent.slice(-2))).toMatchObject([{ type: "response.created" }, { type: "response.done", response: { status: "completed", output: [] } }]);

    // Sent after the reply already ended: answered at once.
    binding.session({ type: "tool.called", toolCallId: "call_2", toolName: "pick_colour", args: {} });
    binding.client({ type: "function_call_output", callId: "call_2", output: "red" });
    binding.session({ type: "agent-transcript.updated", text: "Red it is." });
    binding.session({ type: "reply.completed" });
    const count = sent.length;
    binding.client({ type: "response.create" });
    expect(sent.slice(count).map((e) => e.type)).toEqual([]);
    // The continuation opened before this create arrived: it answered it; nothing is owed.
    binding.session({ type: "tool.called", toolCallId: "call_3", toolName: "pick_colour", args: {} });
    binding.client({ type: "function_call_output", callId: "call_3", output: "blue" });
    binding.session({ type: "reply.completed" });
    const before = sent.length;
    binding.client({ type: "response.create" });
    expect(sent.slice(before).map((e) => e.type)).toEqual(["response.created", "response.done"]);
    // Once: a second response.create has nothing to answer.
    binding.client({ type: "response.create" });
    expect(sent.at(-1)).toMatchObject({ type: "error", error: { code: "no_new_input" } });
  });
});
