// What the tests of placing calls share (docs/telephony.md "Placing calls"): a gateway and a
// loopback carrier REST fake, each closed after the test, and `POST /v1/calls` with the API key.
import { expect } from "vitest";
import { silentLogger } from "../../src/log.js";
import type { AgentDef } from "../../src/manifest/index.js";
import type { GatewayOptions } from "../../src/server/gateway-types.js";
import { createGateway } from "../../src/server/index.js";
import { carrierRestFake, type CarrierRestFake } from "./carrier-rest-fake.js";
import { closeAfterEach, type Closing } from "./cleanups.js";

export interface Placing {
  /** Registers what the test must close after it (last first). */
  readonly closing: Closing;
  /** A gateway serving `def` on a loopback port: its base URL. */
  readonly serve: (def: AgentDef, options?: Partial<Omit<GatewayOptions, "agent">>) => Promise<string>;
  /** The carrier's REST API, faked on a loopback port. */
  readonly rest: (options: Parameters<typeof carrierRestFake>[0]) => Promise<CarrierRestFake>;
  /** `POST /v1/calls` with `body`, authorized with `key` (default the gateway's API key). */
  readonly place: (base: string, body: unknown, key?: string) => Promise<Response>;
}

/** Call at a test module's top level: registers the module's `afterEach` that closes what its tests opened. */
export function placingHarness(apiKey: string): Placing {
  const closing = closeAfterEach();
  return {
    closing,
    async serve(def, options = {}) {
      const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, ...options });
      const { port } = await gateway.listen(0);
      closing(() => gateway.close());
      return `http://127.0.0.1:${port}`;
    },
    async rest(options) {
      return closing(await carrierRestFake(options));
    },
    place(base, body, key = apiKey) {
      return fetch(`${base}/v1/calls`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    },
  };
}

/** A gateway URL on `base` under `path`, ending in a 24-character placement (or ticket). */
export const placementUrl = (base: string, path: string): unknown => expect.stringMatching(new RegExp(`^${base}${path.replace(/[?]/g, "\\?")}[A-Za-z0-9_-]{24}$`));

/**
 * Twilio's Create a Call form as the gateway sends it for a call it places with the carrier's
 * answering-machine detection (docs/telephony.md "Placing calls"), `windowS` the agent's
 * `voicemail.windowMs` in seconds.
 */
export function twilioPlacingForm(base: string, to: string, from: string, windowS: number): Record<string, unknown> {
  return {
    To: to,
    From: from,
    Url: placementUrl(base, "/telephony/twilio/voice?placed="),
    Method: "POST",
    MachineDetection: "Enable",
    AsyncAmd: "true",
    AsyncAmdStatusCallback: placementUrl(base, "/telephony/twilio/amd/"),
    AsyncAmdStatusCallbackMethod: "POST",
    MachineDetectionTimeout: String(windowS),
  };
}
