import type { ModelMessage } from "ai";

/**
 * A note from the gateway, not the caller, that the agent answers with one reply of its own at the
 * next polite moment: a workflow run it started has ended (docs/workflows.md "From a live session").
 * Every mode takes it through its runner's `note`; text and pipeline put `noteMessages` into the
 * model's context, s2s gives `text` to the service (`S2sSession.note`).
 */
export interface AgentNote {
  /** Unique within the session (`wfnote_<n>`): the synthetic call's id in the model history. */
  readonly id: string;
  /** What the model reads: bounded by its maker (session/workflow-notes.ts). */
  readonly text: string;
}

/** The name of the synthetic call a note enters the model history under. Not a tool the model can call. */
export const NOTE_TOOL_NAME = "workflow_update";

/**
 * The note as the model history takes it: an assistant call of `workflow_update` answered by a
 * tool result carrying the text. A tool exchange, because it is the one shape every `ai` provider
 * carries mid-conversation and that models read as data rather than as the caller's words: a
 * system message after the first is refused by Google's provider ("system messages are only
 * supported at the beginning of the conversation"), and a user message would let a run's output
 * (which may come from a webhook) speak as the caller. The reply that follows continues the
 * assistant's turn, as after any tool result.
 */
export function noteMessages(note: AgentNote): ModelMessage[] {
  return [
    { role: "assistant", content: [{ type: "tool-call", toolCallId: note.id, toolName: NOTE_TOOL_NAME, input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: note.id, toolName: NOTE_TOOL_NAME, output: { type: "text", value: note.text } }] },
  ];
}
