/**
 * How each mode opens (docs/architecture.md "A session's life"). Text opens here; pipeline and s2s
 * open from modules of their own, imported when a session of that mode first opens (`loadMode`
 * imports them ahead, so a gateway's first session does not wait): a gateway holds in memory only
 * the modes it runs, with their runners and provider adapters (issue 23, docs/benchmarks.md "bench:idle").
 */
import type { SessionMode } from "../manifest/index.js";
import type { ModeRunner } from "./mode-runner.js";
import { replyLoop, type ModeOpener, type ModeOpening } from "./mode-opening.js";
import { replyLoopSwitch } from "./reply-agent.js";
import { TextRunner } from "./text-runner.js";

export type { ModeOpening, ModeProviders } from "./mode-opening.js";

async function openText(opening: ModeOpening): Promise<ModeRunner> {
  const loop = await replyLoop(opening);
  opening.switchesAgent(replyLoopSwitch(loop, opening.providers.resolveModel));
  return new TextRunner(opening.ctx, loop, opening.settings.errorPhrase);
}

/**
 * Each mode's opener, imported by the first session of that mode and kept: later sessions await
 * the settled promise. An `import()` of a module already loaded is not free: about 2.6 µs on
 * Node 20, and with customization hooks registered (tsx, for an agent written in TypeScript) about
 * 100 µs, a round trip to the hooks' thread for each resolution; a kept promise, about 0.1 µs.
 */
let pipelineOpener: Promise<ModeOpener> | undefined;
let s2sOpener: Promise<ModeOpener> | undefined;
const OPENERS: Readonly<Record<SessionMode, () => Promise<ModeOpener>>> = {
  text: () => Promise.resolve(openText),
  pipeline: () => (pipelineOpener ??= import("./pipeline-mode.js").then((m) => m.openPipeline)),
  s2s: () => (s2sOpener ??= import("./s2s-mode.js").then((m) => m.openS2s)),
};

/** Imports what sessions of `mode` open with (its runner and provider adapters), ahead of the first one. */
export async function loadMode(mode: SessionMode): Promise<void> {
  await OPENERS[mode]();
}

/** Open a session's mode: the only place a session's mode is built. */
export async function openMode(opening: ModeOpening): Promise<ModeRunner> {
  const open = await OPENERS[opening.mode]();
  return open(opening);
}
