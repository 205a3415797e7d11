import { virtualClock, type VirtualClock } from "../clock.js";
import { silentLogger } from "../log.js";
import { toAgentConfig, type ResolvedAgentDef } from "../manifest/index.js";
import { Session } from "../session/session.js";
import type { SessionDeps } from "../session/session-deps.js";
import { MemorySessionStore } from "../session/store.js";
import type { S2sProvider } from "../s2s/s2s-port.js";
import { FakeS2s } from "./fake-s2s.js";
import { MemoryLink } from "./memory-link.js";

export interface S2sSessionHarness {
  readonly session: Session;
  readonly link: MemoryLink;
  /** The scripted speech-to-speech service: play it (`start`, `speak`, `done`, `events`) and read `calls`. */
  readonly fake: FakeS2s;
  readonly clock: VirtualClock;
}

/**
 * A speech-to-speech session over an in-memory link, on a scripted service, under virtual time —
 * started (the greeting asked for, not yet spoken):
 *
 *   const { fake, link } = await s2sSession(myAgent);
 *   const reply = fake.start(); fake.speak(reply, "Hello.", 400); fake.done(reply);
 *   expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Hello.");
 */
export async function s2sSession<S>(
  agentDef: ResolvedAgentDef<S>,
  options: Partial<Pick<SessionDeps, "transport" | "maxCallDurationMs" | "store" | "resumeId" | "workflows">> & {
    /** Another service in place of the `FakeS2s` (`fake` is then unused). */
    readonly provider?: S2sProvider;
    /** `false`: the caller starts the session itself (to act while it is starting). Default true. */
    readonly start?: boolean;
  } = {},
): Promise<S2sSessionHarness> {
  const { provider, start = true, ...deps } = options;
  const def = agentDef as ResolvedAgentDef;
  const clock = virtualClock(0);
  const link = new MemoryLink(clock);
  const fake = new FakeS2s();
  const session = new Session({
    agent: { def, config: toAgentConfig(def) },
    link,
    clock,
    log: silentLogger,
    store: new MemorySessionStore(clock),
    resolveModel: () => {
      throw new Error("an s2s session has no language model");
    },
    s2s: () => provider ?? fake,
    ...deps,
  });
  if (start) await session.start();
  return { session, link, fake, clock };
}
