/**
 * One counted process of `bench:turn-counts` (bench/session/turn-counts.ts), run by it under
 * cachegrind as plain JavaScript. Arguments: `sessions:rounds`, the URL of a build's `dist/`, and
 * `alloc` to sample what the counted rounds allocate instead (bench/shared/allocation.ts: printed
 * as JSON, the last line of output; run outside cachegrind).
 *
 * `sessions` speech-to-speech sessions, as a deployed gateway runs them (logs at info written
 * nowhere, its Prometheus metrics, one in-memory session store for all), each on the package's scripted
 * service (testing/fake-s2s.ts) and a link that, like a carrier's, takes events without stamping
 * or keeping them (`CallLink`), under virtual time.
 * A round is three turns of every session, as bench:telephony's callers take them: the caller
 * speaks (speech started and stopped, a final transcript), a reply of 1 s of audio (one chunk) starts; two
 * replies play out, the third is barged in on 500 ms into it. Warm-up rounds (the JIT's work),
 * the heap collected, then `rounds` rounds. Imports only node builtins, the allocation sampler and the build.
 */
import { sampleAllocations } from "../shared/allocation.js";
import type * as ClockModule from "../../src/clock.js";
import type * as LogModule from "../../src/log.js";
import type * as ManifestModule from "../../src/manifest/index.js";
import type * as MetricsModule from "../../src/server/metrics.js";
import type * as SessionModule from "../../src/session/session.js";
import type * as StoreModule from "../../src/session/store.js";
import type * as FakeModule from "../../src/testing/fake-s2s.js";
import type { ClientLink, ConnectionHandler } from "../../src/transport/client-connection.js";

/** A reply's audio, and where in it the caller barges in (ms): bench/telephony/protocol.ts's script. */
const REPLY_MS = 1000;
const BARGE_AT_MS = 500;
/** The caller speaks this long; after a reply that played out, this long passes (past the 750 ms audible grace). */
const USER_MS = 300;
const GAP_MS = 1500;
/**
 * Rounds before the counted ones (12,000 turns at 50 sessions): the JIT optimizes a turn's code
 * over the first few thousand turns, and its work is not a turn's. Each session also passes the
 * points a long call passes once: its transcript at the cap (200 lines, turn 100) and the first
 * compaction of its list (turn 200, src/snapshot-list.ts), where V8 re-optimizes what inlined it.
 */
const WARM_UP_ROUNDS = 80;
/** A reply's audio as the scripted service speaks it (24 kHz PCM16), made once: what the harness allocates is not the gateway's. */
const REPLY_AUDIO = new Uint8Array(48 * REPLY_MS);

async function load(root: URL) {
  const at = (path: string): string => new URL(path, root).href;
  const [clock, session, fake, store, metrics, manifest, log] = await Promise.all([
    import(at("clock.js")) as Promise<typeof ClockModule>,
    import(at("session/session.js")) as Promise<typeof SessionModule>,
    import(at("testing/fake-s2s.js")) as Promise<typeof FakeModule>,
    import(at("session/store.js")) as Promise<typeof StoreModule>,
    import(at("server/metrics.js")) as Promise<typeof MetricsModule>,
    import(at("manifest/index.js")) as Promise<typeof ManifestModule>,
    import(at("log.js")) as Promise<typeof LogModule>,
  ]);
  return { ...clock, ...session, ...fake, ...store, ...metrics, ...manifest, ...log };
}

/**
 * The session's link, as a carrier's is to it: it takes the events that move audio and returns
 * nothing (no event is stamped or kept), and counts the audio. The package's MemoryLink stamps
 * and keeps every event, work a carrier call does not do and this count should not hold.
 */
class CallLink implements ClientLink {
  readonly open = true;
  readonly ready = Promise.resolve({ audioFormat: "pcm16" as const, sampleRate: 16_000, ttsSampleRate: 24_000 });
  readonly hungUp = new Promise<void>(() => {});
  readonly playbackRate = 24_000;
  handler: ConnectionHandler | undefined;
  audioBytes = 0;
  /** Shows its caller no events, as a carrier's link (the session then builds no transcript snapshot). */
  shows(): boolean {
    return false;
  }
  emit(): undefined {
    return undefined;
  }
  audio(chunk: Uint8Array): void {
    this.audioBytes += chunk.byteLength;
  }
  close(): void {}
  attach(handler: ConnectionHandler): void {
    this.handler = handler;
  }
  useAudio(): void {}
}

interface Line {
  readonly link: CallLink;
  readonly fake: FakeModule.FakeS2s;
}

async function main(spec: string, root: string | undefined, mode: string | undefined): Promise<void> {
  const [sessionsText, roundsText] = spec.split(":");
  const sessions = Number(sessionsText);
  const rounds = Number(roundsText);
  if (root === undefined || !(sessions > 0) || !(rounds >= 0) || (mode !== undefined && mode !== "alloc")) throw new Error("usage: turn-counts-child sessions:rounds DIST_URL [alloc]");
  const m = await load(new URL(root));
  const def = m.agent({ name: "bench-turns", greeting: "", s2s: { kind: "openai-realtime", options: {} } });
  const config = m.toAgentConfig(def);
  const clock = m.virtualClock(0);
  const metrics = new m.GatewayMetrics({ processMetrics: false });
  const logger = m.createLogger({ level: "info", destination: { write: () => {} } });
  // One store for every session, as a gateway keeps (src/server/index.ts).
  const store = new m.MemorySessionStore(clock);
  const lines: Line[] = [];
  for (let s = 0; s < sessions; s++) {
    const link = new CallLink();
    const fake = new m.FakeS2s();
    const session = new m.Session({
      agent: { def, config },
      link,
      clock,
      log: logger.child({ sessionId: `bench-${s}`, agent: def.name, mode: "s2s" }),
      metrics,
      store,
      transport: "twilio",
      resolveModel: () => {
        throw new Error("an s2s session has no language model");
      },
      s2s: () => fake,
    });
    await session.start();
    lines.push({ link, fake });
  }
  const turn = async (bargeIn: boolean): Promise<void> => {
    for (const { fake } of lines) {
      fake.events.speechStarted();
      fake.events.speechStopped();
      fake.events.userTranscript("where is my order", { final: true });
    }
    await clock.advance(USER_MS);
    const replies = lines.map(({ fake }) => fake.start());
    lines.forEach(({ fake }, i) => {
      const info = { responseId: replies[i] ?? "", itemId: `item_${replies[i] ?? ""}` };
      fake.events.audio(REPLY_AUDIO, info);
      fake.events.agentTranscript("It shipped on Friday and arrives Monday.", info);
    });
    await clock.advance(BARGE_AT_MS);
    if (bargeIn) {
      for (const { fake } of lines) fake.events.speechStarted();
      lines.forEach(({ fake }, i) => fake.done(replies[i] ?? "", "cancelled"));
      for (const { fake } of lines) fake.events.speechStopped();
      await clock.advance(GAP_MS);
    } else {
      lines.forEach(({ fake }, i) => fake.done(replies[i] ?? ""));
      await clock.advance(REPLY_MS - BARGE_AT_MS + GAP_MS);
    }
  };
  const round = async (): Promise<void> => {
    await turn(false);
    await turn(false);
    await turn(true);
  };
  for (let r = 0; r < WARM_UP_ROUNDS; r++) await round();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc");
  gc();
  const counted = async (): Promise<void> => {
    for (let r = 0; r < rounds; r++) await round();
  };
  if (mode === "alloc") console.log(JSON.stringify(await sampleAllocations(counted)));
  else await counted();
}

await main(process.argv[2] ?? "", process.argv[3], process.argv[4]);
