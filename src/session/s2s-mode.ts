/**
 * How an s2s session opens: the agent's speech-to-speech service set up with its instructions and
 * tools, G.711 carried end to end where the service takes the call's own format, the waiting
 * sounds, and hand-offs as one update of the service's session. Imported by `modes.ts` when the
 * first s2s session opens, with the service adapters: a gateway that runs no s2s session never
 * loads them (issue 23, docs/benchmarks.md "bench:idle").
 */
import { GatewayError } from "../errors.js";
import { resolveS2s } from "../s2s/providers/index.js";
import type { ModeRunner } from "./mode-runner.js";
import { waitingSounds, type ModeOpening } from "./mode-opening.js";
import { declared } from "./reply-agent.js";
import { S2sRunner } from "./s2s-runner.js";
import "./voice-resampler.js";

export async function openS2s(opening: ModeOpening): Promise<ModeRunner> {
  const { config, settings, link, ctx } = opening;
  if (config.s2s === undefined) throw new GatewayError("s2s", "an s2s agent needs an s2s provider.", { fatal: true });
  const { env } = opening.providers;
  // The gateway's own adapters (`s2s/providers`) unless the host gave its own.
  const provider = opening.providers.s2s?.(config.s2s) ?? resolveS2s(config.s2s, env, ctx.log);
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
}
