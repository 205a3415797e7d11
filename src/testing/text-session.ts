import type { LanguageModel } from "ai";
import { systemClock, type Clock } from "../clock.js";
import { silentLogger } from "../log.js";
import { resolveTeam, toAgentConfig, type AgentConfig, type OutboundCall, type PhoneLine, type ResolvedAgentDef } from "../manifest/index.js";
import { VOICE_ONLY_FIELDS } from "../manifest/to-agent-config.js";
import { scriptedModel } from "../pipeline/providers/llm/scripted.js";
import { type Script } from "../pipeline/providers/llm/script.js";
import { Session } from "../session/session.js";
import { MemorySessionStore, type SessionStore } from "../session/store.js";
import { MemoryLink } from "./memory-link.js";
import type { WorkflowEngine } from "../workflows/index.js";
import { spread } from "../spread.js";

export interface TextSessionOptions {
  /**
   * The brain: a script for the `scripted` model, or any `ai` LanguageModel. It answers for the
   * agent and every sub-agent, except one whose llm is `scripted` with a script of its own.
   */
  readonly script?: Script;
  readonly model?: LanguageModel;
  readonly clock?: Clock;
  readonly store?: SessionStore;
  readonly resumeId?: string;
  readonly random?: () => number;
  /** The engine the agent's `workflows` run on (its tools' `ctx.workflows`). */
  readonly workflows?: WorkflowEngine;
  /** Play a phone call's line: what `sessionContext` and `onSessionEnd` get as `phone` (a gateway takes it from the carrier's verified webhook). */
  readonly phone?: PhoneLine;
  /** Play a call a workflow placed: what `sessionContext` and `onSessionEnd` get as `outbound`. */
  readonly outbound?: OutboundCall;
}

export interface TextSessionHarness {
  readonly session: Session;
  readonly link: MemoryLink;
  readonly store: SessionStore;
  /** Resolves once the session is live (greeted or restored). */
  readonly started: Promise<void>;
  /** Send a user turn and wait for its reply to finish (completed, or cancelled/failed). */
  readonly say: (text: string) => Promise<void>;
}

/**
 * A text-mode session over an in-memory link, in three lines:
 *
 *   const { say, link } = textSession(myAgent, { script: { rules: [...] } });
 *   await say("where is order 42?");
 *   expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("…");
 */
export function textSession<S>(agentDef: ResolvedAgentDef<S>, options: TextSessionOptions = {}): TextSessionHarness {
  const def = agentDef as ResolvedAgentDef;
  const clock = options.clock ?? systemClock;
  const link = new MemoryLink(clock);
  const store = options.store ?? new MemorySessionStore(clock);
  // The same agents with their voice left out (speech providers, turn-taking, telephony…: nothing a
  // text session has), so a voice agent's logic is testable by text as it stands: its team is
  // checked as written, then every config made textual (a scripted llm with a script of its own is kept).
  const textual = (config: AgentConfig): AgentConfig => {
    const kept = Object.fromEntries(Object.entries(config).filter(([field]) => !VOICE_ONLY_FIELDS.includes(field))) as AgentConfig;
    return spread(kept, { mode: "text", llm: config.llm?.kind === "scripted" ? config.llm : { kind: "scripted", options: {} } });
  };
  const team = resolveTeam(def, toAgentConfig(def, { warn: () => {} }), { warn: () => {}, adapt: textual });
  const config = team.root.config;
  const sleep = (ms: number, signal?: AbortSignal): Promise<void> => clock.sleep(ms, signal);
  const model = options.model ?? scriptedModel(options.script ?? { rules: [] }, { sleep });
  const session = new Session({
    agent: { def, config, team },
    link,
    clock,
    log: silentLogger,
    store,
    resumeId: options.resumeId,
    // A sub-agent whose scripted llm has a script of its own answers from it; every other agent from this model.
    resolveModel: (_descriptor, own) => (own === undefined ? model : scriptedModel(own, { sleep })),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(options.workflows === undefined ? {} : { workflows: options.workflows }),
    ...(options.phone === undefined ? {} : { phone: options.phone }),
    ...(options.outbound === undefined ? {} : { outbound: options.outbound }),
  });
  const started = session.start();
  const say = async (text: string): Promise<void> => {
    await started;
    const after = link.events.length;
    link.send({ type: "user_text", text });
    await link.next("metrics.turn", after);
  };
  return { session, link, store, started, say };
}
