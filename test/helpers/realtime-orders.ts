// The order of the Realtime server events the /v1/realtime tests expect (docs/realtime.md "Client tools").

/** A client tool's call inside its response, from its item's addition to its item's done (`response.done` follows). */
export const FUNCTION_CALL_EVENTS = [
  "response.output_item.added",
  "conversation.item.added",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.output_item.done",
  "conversation.item.done",
] as const;

/** A text message's part inside its response, from the part's addition to the item's done: `deltas` text deltas. */
export function textPartEvents(deltas: number): string[] {
  return ["response.content_part.added", ...Array.from({ length: deltas }, () => "response.output_text.delta"), "response.output_text.done", "response.content_part.done", "response.output_item.done"];
}
