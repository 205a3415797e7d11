/**
 * `switchboard/testing`: what an author needs to test their own agents and tools without a
 * gateway, a network or a clock.
 */
import {
  DialogStore,
  invokeTool,
  refusalText,
  toToolResult,
  type AnyToolDef,
  type ToolContext,
  type ToolDef,
  type ToolResult,
} from "../manifest/index.js";

export { seededRandom, toolNameOf } from "../manifest/index.js";
export { virtualClock, type Clock, type VirtualClock } from "../clock.js";
export { scriptedModel } from "../pipeline/providers/llm/scripted.js";
export { ScriptSchema, DEFAULT_FALLBACK, type Script, type ScriptRule } from "../pipeline/providers/llm/script.js";
export { MemoryLink } from "./memory-link.js";
export { textSession, type TextSessionHarness, type TextSessionOptions } from "./text-session.js";
export { voiceSession, type VoiceSessionHarness, type VoiceSessionOptions } from "./voice-session.js";
export type { FakeStt, FakeSttSession, FakeTts } from "./fake-speech.js";
export { s2sSession, type S2sSessionHarness } from "./s2s-session.js";
export { FakeS2s } from "./fake-s2s.js";
export { streamingModel } from "./streaming-model.js";

/**
 * A ToolContext for a test: a fresh signal, a fixed call id, the session value given, and a fresh
 * `DialogStore` (every dialog at its start; pass one `dialogs` to several calls to follow a dialog).
 */
export function toolContext<Session = undefined>(
  overrides: Partial<ToolContext<Session>> & { readonly session?: Session } = {},
): ToolContext<Session> {
  return {
    toolCallId: "call_test",
    signal: new AbortController().signal,
    sessionId: "session_test",
    session: undefined as Session,
    dialogs: new DialogStore(),
    ...overrides,
  };
}

/** What a tool call came to, as the model would read it. */
export interface ToolCallOutcome {
  readonly status: "ok" | "refused" | "invalid" | "failed";
  /** The normalized result; `text` is what the model reads. */
  readonly result: ToolResult;
}

/**
 * Call a tool the way the gateway does — validate the arguments with its schema, check its
 * gate, run it, normalize the result — and return what the model would read. Never throws
 * for a tool's own failure: a throw becomes a `failed` outcome, as it would on a call.
 */
export async function callTool<Args, Details, Session>(
  def: ToolDef<Args, Details, Session>,
  args: unknown,
  ctx: ToolContext<Session> = toolContext<Session>(),
  name = "tool",
): Promise<ToolCallOutcome> {
  const erased = def as unknown as AnyToolDef;
  const checked = erased.parameters.validate(args);
  if (!checked.ok) {
    return { status: "invalid", result: { text: `Invalid arguments for ${name}: ${checked.errors.join("; ")}`, isError: true } };
  }
  const refusal = def.gate?.(ctx);
  if (refusal !== undefined) return { status: "refused", result: { text: refusalText(name, refusal), isError: true } };
  try {
    const result = toToolResult(await invokeTool(erased, checked.value, ctx));
    return { status: result.isError === true ? "failed" : "ok", result };
  } catch (error) {
    const text = typeof def.onError === "function" ? def.onError(error) : (def.onError ?? `${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return { status: "failed", result: { text, isError: true } };
  }
}
