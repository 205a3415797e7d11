import type { WaitingSounds } from "../audio/waiting-sound.js";
import { GatewayError } from "../errors.js";
import type { AgentConfig, ProviderDescriptor, ResolvedConfig, SessionMode, ToolTable } from "../manifest/index.js";
import type { S2sProvider } from "../s2s/s2s-port.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { WaitingCues } from "../transport/waiting-mix.js";
import type { ModeRunner, RunnerContext } from "./mode-runner.js";
import type { SegmentSwitcher } from "./hand-off.js";
import { declared, openReplyLoop, replyLoopSwitch, type ModelResolver } from "./reply-agent.js";
import { S2sRunner } from "./s2s-runner.js";
import { TextRunner } from "./text-runner.js";
import type { ToolRunner } from "./tool-runner.js";
import { VoiceRunner, type VoiceProviders } from "./voice-runner.js";
import { VoiceSwitch } from "./voice-switch.js";

/** The providers a gateway offers its sessions; a mode takes the ones it needs. */
export interface ModeProviders {
  readonly resolveModel: ModelResolver;
  /** Speech providers for pipeline sessions (STT, TTS, local VAD). */
  readonly voice?: VoiceProviders | undefined;
  /** Speech-to-speech providers for s2s sessions. */
  readonly s2s?: ((descriptor: ProviderDescriptor) => S2sProvider) | undefined;
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

/**
 * A voice mode's waiting sounds (docs/telephony.md "Audio while waiting"): `thinking` is the cue
 * the runner moves from its first turn; `start` plays them on the link once the runner has
 * opened (its audio formats declared). Text mode has none: the config refuses `waitingAudio`.
 */
function waitingSounds(opening: ModeOpening): { readonly thinking: (on: boolean) => void; start(): void } {
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
async function replyLoop(opening: ModeOpening) {
  const { config, settings, table, tools, ctx } = opening;
  if (config.llm === undefined) throw new GatewayError("internal", `a ${opening.mode} agent needs an llm provider.`, { fatal: true });
  const model = await opening.providers.resolveModel(config.llm);
  return openReplyLoop({ model, table, invoke: (call) => tools.call(call), config, settings, clock: ctx.clock, instructions: opening.instructions });
}

/** How each mode opens (docs/architecture.md "A session's life"): the only place a session's mode is built. */
export const MODES: Readonly<Record<SessionMode, (opening: ModeOpening) => Promise<ModeRunner>>> = {
  text: async (opening) => {
    const loop = await replyLoop(opening);
    opening.switchesAgent(replyLoopSwitch(loop, opening.providers.resolveModel));
    return new TextRunner(opening.ctx, loop, opening.settings.errorPhrase);
  },

  pipeline: async (opening) => {
    const voice = opening.providers.voice;
    if (voice === undefined) throw new GatewayError("internal", "this gateway has no speech providers configured for pipeline sessions.", { fatal: true });
    const loop = await replyLoop(opening);
    const speaking = new VoiceSwitch(voice, opening.link, opening.ctx.log, opening.config.tts);
    opening.switchesAgent(replyLoopSwitch(loop, opening.providers.resolveModel, speaking));
    const waiting = waitingSounds(opening);
    const runner = await VoiceRunner.open(opening.ctx, {
      config: opening.config,
      settings: opening.settings,
      loop,
      providers: speaking.providers,
      tools: opening.tools,
      audio: (pcm, ms) => opening.link.audio(pcm, ms),
      playbackRate: opening.link.playbackRate,
      useAudio: (audio) => opening.link.useAudio(audio),
      signal: opening.signal,
      thinking: waiting.thinking,
    });
    waiting.start();
    return runner;
  },

  s2s: async (opening) => {
    const { config, settings, link, ctx } = opening;
    const s2s = opening.providers.s2s;
    if (config.s2s === undefined || s2s === undefined) throw new GatewayError("s2s", "this gateway has no speech-to-speech provider configured.", { fatal: true });
    const provider = s2s(config.s2s);
    // A phone call in G.711 to a service that takes it: the bytes cross untouched both ways.
    const g711 = link.g711;
    const passthrough = g711 !== undefined && provider.audioFormats.includes(g711) ? g711 : undefined;
    const waiting = waitingSounds(opening);
    const runner = await S2sRunner.open(ctx, {
      settings,
      provider,
      tools: opening.tools,
      ...(passthrough === undefined ? {} : { audioFormat: passthrough }),
      signal: opening.signal,
      link,
      thinking: waiting.thinking,
      setup: {
        instructions: await opening.instructions(),
        tools: declared(opening.table),
        toolChoice: settings.toolChoice,
        interruptResponse: settings.interruption.enabled,
        transcriptionPrompt: config.sttPrompt,
      },
    });
    if (passthrough !== undefined && runner.audioFormat === passthrough) ctx.log.info({ format: passthrough }, "g711 passthrough");
    waiting.start();
    // A hand-off is one update of the service's session: the new agent's instructions, tools and tool choice (the voice stays).
    opening.switchesAgent(async (segment) => {
      if (!runner.canHandOff) throw new GatewayError("s2s", `this speech-to-speech service (${provider.kind}) cannot change its instructions and tools mid-session, so it cannot hand off.`);
      const next = { instructions: await segment.instructions(), tools: declared(segment.table), toolChoice: segment.settings.toolChoice };
      return { commit: () => runner.handOff(next, segment.settings.maxSteps), dispose: () => Promise.resolve() };
    });
    return runner;
  },
};
