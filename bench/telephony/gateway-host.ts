/**
 * The gateway under test, run as its own process by bench/telephony/run.ts, as the floor and the
 * SDK peer are: `createGateway` on 127.0.0.1:0 with an `openai-realtime` s2s agent and
 * `telephony: ["twilio"]`, logging at info into a sink that only counts warnings, Prometheus
 * process metrics on, as deployed. No carrier REST calls.
 *
 * A process of its own, not the runner's: hosted beside the harness, the gateway's sockets shared
 * Node's stream code with the runner's IPC channels to four children, whose other object shapes
 * made that code's property loads megamorphic, and its heap held the harness's (docs/benchmarks.md,
 * "Telephony": "The gateway in a process of its own").
 *
 * Calls (protocol.ts): `listen` with the provider's URL and the gateway's module root (this tree's
 * `src/` through tsx, a built `dist/`), then `memory`, `start`, `stop`, `open`, `problems`.
 */
import { pathToFileURL } from "node:url";
import { gatewayModules } from "../shared/gateway-modules.js";
import { ProcessMeter } from "../shared/stats.js";
import { serveCalls } from "./protocol.js";

/** What `listen` takes: the fake service's URL and the gateway build's module root (a file path ending in `/`). */
export interface GatewayListen {
  readonly providerUrl: string;
  readonly root: string;
}

/** Counts the gateway's warnings and errors by message (its log lines go nowhere else). */
class LogTally {
  readonly #counts = new Map<string, number>();

  write(line: string): boolean {
    const level = /^\{"level":(\d+)/.exec(line)?.[1];
    if (level !== undefined && Number(level) >= 40) {
      const msg = (JSON.parse(line) as { msg?: string }).msg ?? "(no message)";
      this.#counts.set(msg, (this.#counts.get(msg) ?? 0) + 1);
    }
    return true;
  }

  take(): string[] {
    const list = [...this.#counts].map(([msg, n]) => `gateway log warning/error: "${msg}" (×${n})`);
    this.#counts.clear();
    return list;
  }
}

const meter = new ProcessMeter();
const logs = new LogTally();
let sessions = (): number => 0;

serveCalls({
  listen: async ({ providerUrl, root }: GatewayListen) => {
    const { createLogger, agent, createGateway } = await gatewayModules(pathToFileURL(root));
    const def = agent({ name: "bench-telephony", greeting: "Welcome to the bench line.", s2s: { kind: "openai-realtime", options: { url: providerUrl } }, telephony: ["twilio"] });
    const logger = createLogger({ level: "info", destination: { write: (line: string) => logs.write(line) } });
    const gateway = createGateway({ agent: def, logger, env: { OPENAI_API_KEY: "test-key" }, carrierClient: { hangUp: () => Promise.resolve() } });
    const { port } = await gateway.listen(0, "127.0.0.1");
    sessions = () => gateway.sessions;
    return `ws://127.0.0.1:${port}/telephony/twilio`;
  },
  memory: () => meter.memory(),
  start: () => meter.start(),
  stop: () => meter.stop(),
  open: () => sessions(),
  problems: () => logs.take(),
});
