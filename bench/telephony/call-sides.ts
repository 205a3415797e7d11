/**
 * The gateway's whole path for a call's frames, for `bench:carrier-counts`: per call, a Twilio
 * `CarrierBridge` over a counting socket, a `Session` on it as the gateway's server starts one
 * (an s2s agent on OpenAI Realtime, logs at info written nowhere, its Prometheus metrics, the
 * in-memory store), and the build's own OpenAI Realtime adapter over an in-process provider
 * socket (`ProviderSocket`). A caller frame goes carrier socket → bridge → session → runner →
 * adapter → `input_audio_buffer.append` on the provider socket; a service delta goes provider
 * socket → adapter → runner → session → pacer → Twilio `media` (and `mark`) on the carrier socket.
 * The carrier edge alone is carrier-sides.ts's `gatewaySides`; the floor is its `floorSides`.
 */
import type * as LogModule from "../../src/log.js";
import type * as ManifestModule from "../../src/manifest/index.js";
import type * as RealtimeModule from "../../src/s2s/providers/openai-realtime.js";
import type * as MetricsModule from "../../src/server/metrics.js";
import type * as SessionModule from "../../src/session/session.js";
import type * as StoreModule from "../../src/session/store.js";
import { CallerFeed, FRAMES_PER_RUN, load as loadEdge, serviceDeltas, startFrame, type BenchClock, type Side } from "./carrier-sides.js";
import { CountingSocket } from "../shared/counting-socket.js";

export async function load(root: URL) {
  const at = (path: string): string => new URL(path, root).href;
  const [edge, session, realtime, store, metrics, manifest, log] = await Promise.all([
    loadEdge(root),
    import(at("session/session.js")) as Promise<typeof SessionModule>,
    import(at("s2s/providers/openai-realtime.js")) as Promise<typeof RealtimeModule>,
    import(at("session/store.js")) as Promise<typeof StoreModule>,
    import(at("server/metrics.js")) as Promise<typeof MetricsModule>,
    import(at("manifest/index.js")) as Promise<typeof ManifestModule>,
    import(at("log.js")) as Promise<typeof LogModule>,
  ]);
  return { ...edge, ...session, ...realtime, ...store, ...metrics, ...manifest, createLogger: log.createLogger };
}
type Modules = Awaited<ReturnType<typeof load>>;

/**
 * The provider's end of an OpenAI Realtime socket, in process: `session.created` once listened to,
 * `session.updated` for the `session.update`; it counts what the gateway sends and delivers what
 * the bench hands it as `ws` does, a Buffer and `isBinary` false.
 */
class ProviderSocket extends CountingSocket {
  constructor() {
    super();
    queueMicrotask(() => this.deliver({ type: "session.created", event_id: "event_0", session: { id: "sess_1", object: "realtime.session" } }));
  }
  override send(data: string | Uint8Array): void {
    super.send(data);
    if (typeof data === "string" && data.startsWith('{"type":"session.update"')) queueMicrotask(() => this.deliver({ type: "session.updated", event_id: "event_1", session: {} }));
  }
  deliver(event: object): void {
    this.emit("message", Buffer.from(JSON.stringify(event)), false);
  }
}

/** The agent bench:telephony's gateway serves (no greeting: the frames here are the script). */
function benchAgent(m: Modules) {
  const def = m.agent({ name: "bench-telephony", greeting: "", s2s: { kind: "openai-realtime", options: {} }, telephony: ["twilio"] });
  return { def, config: m.toAgentConfig(def) };
}

export async function callSides(m: Modules, clock: BenchClock, count: number): Promise<{ inbound: Side; outbound: Side }> {
  const frames = FRAMES_PER_RUN / count;
  const agent = benchAgent(m);
  const log = m.createLogger({ level: "info", destination: { write: () => {} } });
  const metrics = new m.GatewayMetrics({ processMetrics: false });
  const store = new m.MemorySessionStore(clock);
  const calls: { carrier: CountingSocket; provider: ProviderSocket; deltas: Buffer[] }[] = [];
  for (let s = 0; s < count; s++) {
    const carrier = new CountingSocket();
    const bridge = new m.CarrierBridge(carrier as never, { codec: m.twilioCodec, clock, log, startTimeoutMs: 1e9 });
    carrier.emit("message", startFrame(s), false);
    await bridge.started;
    let provider: ProviderSocket | undefined;
    const session = new m.Session({
      agent,
      link: bridge,
      clock,
      log,
      store,
      metrics,
      transport: "twilio",
      resolveModel: () => {
        throw new Error("an s2s session has no language model");
      },
      s2s: (descriptor) =>
        m.openAiRealtime(descriptor, { OPENAI_API_KEY: "bench-key" }, { clock, log, connect: () => (provider = new ProviderSocket()) as never }),
    });
    await session.start();
    if (provider === undefined) throw new Error("the session opened no provider socket");
    // One reply the deltas belong to, running for the whole count.
    provider.deliver({ type: "response.created", event_id: "event_2", response: { id: "resp_1", object: "realtime.response", status: "in_progress", output: [] } });
    provider.deliver({ type: "response.output_item.added", event_id: "event_3", response_id: "resp_1", output_index: 0, item: { id: "item_1", type: "message", role: "assistant", content: [] } });
    calls.push({ carrier, provider, deltas: serviceDeltas(s, frames) });
  }
  const feed = new CallerFeed(count);
  return {
    inbound: {
      frames: feed.perCall,
      reset: (runs) => feed.refill(runs),
      round: (i) => {
        clock.at += 20;
        for (const [s, call] of calls.entries()) call.carrier.emit("message", feed.frames[s]?.[i], false);
      },
      written: () => calls.reduce((n, call) => n + call.provider.bytes, 0),
    },
    outbound: {
      frames,
      reset: () => {},
      round: (i) => {
        clock.at += 20;
        for (const call of calls) call.provider.emit("message", call.deltas[i % frames], false);
      },
      written: () => calls.reduce((n, call) => n + call.carrier.bytes, 0),
    },
  };
}
