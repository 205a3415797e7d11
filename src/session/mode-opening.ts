/**
 * What every mode opens from (`ModeOpening`), and the parts two modes share: the reply loop over
 * the agent's model (text, pipeline) and the waiting sounds (pipeline, s2s). The openers live in
 * `modes.ts` (text) and in modules of their own, imported when a session of that mode first opens
 * (`pipeline-mode.ts`, `s2s-mode.ts`).
 */
import type { WaitingSounds } from "../audio/waiting-sound.js";
import { GatewayError } from "../errors.js";
import type { AgentConfig, ProviderDescriptor, ResolvedConfig, SessionMode, ToolTable } from "../manifest/index.js";
import type { Env } from "../pipeline/providers/keys.js";
import type { S2sProvider } from "../s2s/s2s-port.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { WaitingCues } from "../transport/waiting-mix.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import type { SegmentSwitcher } from "./hand-off.js";
import { openReplyLoop, type ModelResolver } from "./reply-agent.js";
import type { ReplyLoop } from "../pipeline/reply-loop.js";
import type { ToolRunner } from "./tool-runner.js";
import type { VoiceProviders } from "./voice-runner.js";

/** The providers a gateway offers its sessions; a mode takes the ones it needs. */
export interface ModeProviders {
  readonly resolveModel: ModelResolver;
  /** Speech providers for pipeline sessions (STT, TTS, local VAD); absent = the gateway's own adapters (`pipeline/providers`). */
  readonly voice?: VoiceProviders | undefined;
  /** Speech-to-speech providers for s2s sessions; absent = the gateway's own adapters (`s2s/providers`). */
  readonly s2s?: ((descriptor: ProviderDescriptor) => S2sProvider) | undefined;
  /** Where the gateway's own adapters read their keys. */
  readonly env: Env;
}

/** Everything a mode opens from: the session's context, the agent's settings, its tools, the link and the providers. */
export interface ModeOpening {
  readonly mode: SessionMode;
  readonly ctx: RunnerContext;
  readonly config: AgentConfig;
  readonly settings: ResolvedConfig;
  readonly table: ToolTable;
  /** The session's tool runner: every mode's calls go through it (and it records them). */
  readonly tools: ToolRunner;
  /** The system prompt, built per session (it may read the session's context). */
  readonly instructions: () => Promise<string>;
  /** The link: agent audio out, the rate it plays, the G.711 it could carry end to end, where the mode declares its audio formats, and where waiting sounds play. */
  readonly link: Pick<ClientLink, "audio" | "playbackRate" | "g711" | "useAudio" | "playWaiting">;
  /** The agent's waiting sounds (config.md `waitingAudio`), decoded: a voice mode plays them on the link once it has opened. */
  readonly waitingAudio?: WaitingSounds | undefined;
  readonly providers: ModeProviders;
  /** Aborts the providers' handshakes (the client hung up during start, or the start timed out). */
  readonly signal: AbortSignal;
  /** Where the mode says how it takes another agent (a hand-off, `session/hand-off.ts`). */
  readonly switchesAgent: (switcher: SegmentSwitcher) => void;
}

/** One mode's opener: the only place a session of that mode is built. */
export type ModeOpener = (opening: ModeOpening) => Promise<ModeRunner>;

/**
 * A voice mode's waiting sounds (docs/telephony.md "Audio while waiting"): `thinking` is the cue
 * the runner moves from its first turn; `start` plays them on the link once the runner has
 * opened (its audio formats declared). Text mode has none: the config refuses `waitingAudio`.
 */
export function waitingSounds(opening: ModeOpening): { readonly thinking: (on: boolean) => void; start(): void } {
  let cues: WaitingCues | undefined;
  return {
    thinking: (on) => cues?.thinking(on),
    start: () => {
      const sounds = opening.waitingAudio;
      if (sounds !== undefined) cues = opening.link.playWaiting?.(sounds);
    },
  };
}

/** The reply loop over the agent's model (text and pipeline). */
export async function replyLoop(opening: ModeOpening): Promise<ReplyLoop> {
  const { config, settings, table, tools, ctx } = opening;
  if (config.llm === undefined) throw new GatewayError("internal", `a ${opening.mode} agent needs an llm provider.`, { fatal: true });
  const model = await opening.providers.resolveModel(config.llm);
  return openReplyLoop({ model, table, invoke: (call) => tools.call(call), config, settings, clock: ctx.clock, instructions: opening.instructions });
}
