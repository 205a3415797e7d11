/** How the terminal commands (`call`, `console`) show protocol events to a person. */
import type { ServerEvent } from "../transport/protocol.js";

/** One human line per event worth showing (`--json` prints them all). */
export function describeEvent(event: ServerEvent): string | undefined {
  switch (event.type) {
    case "user-transcript.committed":
      return `you:   ${event.text}`;
    case "agent-transcript.committed":
      return `agent: ${event.text}`;
    case "tool.called":
      return `tool:  ${event.toolName}(${JSON.stringify(event.args)})`;
    case "tool.message":
      return `tool:  (${event.kind}) "${event.text}"`;
    case "tool.completed":
      return `tool:  → ${event.result}${event.isError === true ? " (error)" : ""}`;
    case "reply.cancelled":
      return "agent: [interrupted]";
    case "error.reported":
      return `error: ${event.code}: ${event.message}${event.fatal ? " (fatal)" : ""}`;
    default:
      return undefined;
  }
}

