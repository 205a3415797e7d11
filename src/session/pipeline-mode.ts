/**
 * How a pipeline session opens: the reply loop over the agent's model, its voice (STT, TTS, the
 * local VAD) behind a `VoiceSwitch`, and the waiting sounds. Imported by `modes.ts` when the
 * first pipeline session opens, with the speech adapters it names: a gateway that runs no
 * pipeline session never loads them (issue 23, docs/benchmarks.md "bench:idle").
 */
import { resolveStt } from "../pipeline/providers/stt/index.js";
import { resolveTts } from "../pipeline/providers/tts/index.js";
import type { ModeRunner } from "./mode-runner.js";
import { replyLoop, waitingSounds, type ModeOpening } from "./mode-opening.js";
import { replyLoopSwitch } from "./reply-agent.js";
import { VoiceRunner, type VoiceProviders } from "./voice-runner.js";
import { VoiceSwitch } from "./voice-switch.js";
import "./voice-resampler.js";

/** The gateway's own speech adapters (`pipeline/providers`), reading their keys from `opening.providers.env`. */
function ownVoice(opening: ModeOpening): VoiceProviders {
  const { env } = opening.providers;
  const log = opening.ctx.log;
  return { stt: (descriptor) => resolveStt(descriptor, env, log), tts: (descriptor) => resolveTts(descriptor, env, log) };
}

export async function openPipeline(opening: ModeOpening): Promise<ModeRunner> {
  const voice = opening.providers.voice ?? ownVoice(opening);
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
}
