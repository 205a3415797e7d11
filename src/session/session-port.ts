/**
 * The hooks the parts of a session take — call controls (idle timer, call ending, transfer,
 * keypad), the runner context, the tool runner, the ledger, hand-off's team segments, the
 * answering-machine screen — and the link's handler, as one type: the session gives every part
 * the same object (each reads only its own hooks), so each hook is written once.
 */
import type { ConnectionHandler } from "../transport/client-connection.js";
import type { LedgerDeps } from "../turn/ledger.js";
import type { CallEndingHooks } from "./call-ending.js";
import type { CallTransferHooks } from "./call-transfer.js";
import type { IdleHooks } from "./idle-timer.js";
import type { KeypadHooks } from "./keypad.js";
import type { RunnerContext } from "./mode-runner.js";
import type { TeamSegmentParts } from "./team-segments.js";
import type { ToolRunnerDeps } from "./tool-runner.js";
import type { VoicemailScreenHooks } from "./voicemail-screen.js";

export type SessionPort = CallEndingHooks &
  CallTransferHooks &
  KeypadHooks &
  IdleHooks &
  Pick<RunnerContext, "emit" | "activity" | "admitTurn" | "fatal" | "count" | "audioDropped"> &
  Required<Pick<ToolRunnerDeps, "line" | "userSpeaking" | "toolSettled">> &
  Pick<LedgerDeps, "replySettled"> &
  Pick<TeamSegmentParts, "spent" | "meter" | "endCall" | "transferCall"> &
  VoicemailScreenHooks &
  ConnectionHandler;

