import type { SessionCommand } from "../transport/protocol.js";
import { MAX_QUEUED_TURNS } from "./conversation.js";
import type { ModeRunner } from "./mode-runner.js";

/** What a client command may ask of the session beyond its mode (docs/protocol.md "Commands"). */
export interface CommandHooks {
  /** Conversational activity (re-arms the idle timer). */
  readonly activity: () => void;
  /** `reset`: strand the reply, clear the conversation, greet again. */
  readonly reset: () => void;
  /** `tool_result` for a client tool call; false when no call by that id is waiting. */
  readonly toolResult: (toolCallId: string, result: string, error: string | boolean | undefined) => boolean;
  /** A non-fatal `protocol` error for the client. */
  readonly report: (message: string) => void;
}

/** One client command, for a live session: to its mode runner, or to the session through `hooks` (playback reports come through the link's own port). */
export function routeCommand(command: SessionCommand, mode: ModeRunner, hooks: CommandHooks): void {
  switch (command.type) {
    case "user_text":
      hooks.activity();
      // Bounded: a client typing faster than the agent answers does not grow the queue.
      if (mode.queuedTurns >= MAX_QUEUED_TURNS) {
        hooks.report(`too many turns waiting (${MAX_QUEUED_TURNS}): this one was dropped; wait for the reply`);
        return;
      }
      mode.userText(command.text);
      return;
    case "cancel":
      mode.cancel();
      return;
    case "reset":
      hooks.reset();
      return;
    case "tool_result":
      if (!hooks.toolResult(command.toolCallId, command.result, command.error)) hooks.report(`tool_result: no call ${command.toolCallId} is waiting for a result`);
      return;
    case "audio_ready":
      return;
    case "user_turn_start":
      mode.manual("start");
      return;
    case "user_turn_commit":
      mode.manual("commit");
      return;
    case "user_turn_clear":
      mode.manual("clear");
      return;
    case "truncate_heard":
      mode.truncateHeard?.(command.audioMs);
      return;
    case "respond_out_of_band":
      if (mode.outOfBand === undefined) command.sink.done({ status: "failed", text: "", error: "this agent's speech-to-speech service holds its conversation: no out-of-band responses" });
      else mode.outOfBand(command.ask, command.sink);
      return;
  }
}
