/**
 * The hooks the parts of a session take — call controls (idle timer, call ending, transfer,
 * keypad), the runner context (the ledger and guardrails with it), the tool runner, the ledger,
 * the hand-off, the answering-machine screen, the workflow notes — and the link's handler, as one type: the session
 * gives every part the same object (each reads only its own hooks). Its hooks are methods, called
 * on it (never taken off it: lint's unbound-method holds that), so a session holds one object for
 * them, not a closure per hook.
 */
import type { ConnectionHandler } from "../transport/client-connection.js";
import type { LedgerHooks } from "../turn/ledger.js";
import type { CallEndingHooks } from "./call-ending.js";
import type { CallTransferHooks } from "./call-transfer.js";
import type { HandOffHooks } from "./hand-off.js";
import type { IdleHooks } from "./idle-timer.js";
import type { KeypadHooks } from "./keypad.js";
import type { RunnerContext } from "./mode-runner.js";
import type { ToolRunnerHooks } from "./tool-runner.js";
import type { VoicemailScreenHooks } from "./voicemail-screen.js";
import type { WorkflowNoteHooks } from "./workflow-notes.js";

export type SessionPort = CallEndingHooks &
  CallTransferHooks &
  KeypadHooks &
  IdleHooks &
  RunnerContext &
  Required<ToolRunnerHooks> &
  LedgerHooks &
  HandOffHooks &
  VoicemailScreenHooks &
  WorkflowNoteHooks &
  ConnectionHandler;
