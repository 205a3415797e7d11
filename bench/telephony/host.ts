/**
 * The part of a telephony server child that is the same for the floor relay and the SDK peer: a
 * `ws` server on 127.0.0.1 at `/telephony/twilio` whose sockets go to `bridge`, and the calls
 * the runner makes (listen, memory, CPU window, open calls, problems seen).
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { ProcessMeter } from "../shared/stats.js";
import { serveCalls } from "./protocol.js";

/** Bridges one Twilio socket to the provider at `providerUrl`; reports problems through `problem`. */
export type Bridge = (twilio: WebSocket, providerUrl: string, problem: (text: string) => void) => void;

/**
 * Serves the runner's calls. With `unavailable` set (the server cannot run here), `listen`
 * fails with that reason and nothing listens.
 */
export function hostServer(bridge: Bridge, unavailable?: string): void {
  const meter = new ProcessMeter();
  const problems = new Map<string, number>();
  const problem = (text: string): void => void problems.set(text, (problems.get(text) ?? 0) + 1);
  let wss: WebSocketServer | undefined;
  serveCalls({
    listen: async ({ providerUrl }: { providerUrl: string }) => {
      if (unavailable !== undefined) throw new Error(unavailable);
      const server = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/telephony/twilio", perMessageDeflate: false });
      server.on("connection", (twilio) => bridge(twilio, providerUrl, problem));
      await new Promise<void>((resolve) => server.once("listening", resolve));
      wss = server;
      return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/telephony/twilio`;
    },
    memory: () => meter.memory(),
    start: () => meter.start(),
    stop: () => meter.stop(),
    open: () => wss?.clients.size ?? 0,
    /** Problems since the last call, "text (×n)". */
    problems: () => {
      const list = [...problems].map(([text, n]) => `${text} (×${n})`);
      problems.clear();
      return list;
    },
  });
}
