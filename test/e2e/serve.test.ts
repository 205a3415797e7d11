// `switchboard serve` as operators run it: what its start-up output says about who can use which
// entry point, and the Origin check switched on from the command line or the environment.
import { afterEach, describe, expect, it } from "vitest";
import { serve, type Served } from "../helpers/serve.js";
import { TestClient } from "../helpers/ws-client.js";

let served: Served | undefined;
afterEach(() => served?.kill());

describe("switchboard serve", () => {
  it("names the unauthenticated entry points at start, and only the agent's public route once every secret is set", async () => {
    served = await serve(["examples/support"]);
    expect(served.output()).toMatch(/unauthenticated: WS \/websocket, WS \/v1\/realtime, GET \/metrics, GET \/support\/hours, telephony \(twilio, telnyx, plivo, exotel, vonage\)/);
    served.kill();
    served = await serve(["examples/support"], {
      SWITCHBOARD_API_KEY: "k",
      SWITCHBOARD_METRICS_TOKEN: "m",
      TWILIO_AUTH_TOKEN: "t",
      PLIVO_AUTH_TOKEN: "p",
      VONAGE_SIGNATURE_SECRET: "v",
      EXOTEL_API_KEY: "e",
      EXOTEL_API_TOKEN: "f",
      SWITCHBOARD_OPEN_CARRIERS: "",
    });
    // Telnyx has no key here: with auth on it is refused (and said so), not open. What stays open
    // is the route the agent made public on purpose.
    expect(served.output()).toMatch(/unauthenticated: GET \/support\/hours — see/);
    expect(served.output()).toMatch(/telephony carriers refused/);
  }, 60_000);

  it("--allowed-origins (or SWITCHBOARD_ALLOWED_ORIGINS) refuses a browser from another origin", async () => {
    for (const [args, env] of [
      [["--allowed-origins", "https://app.example.com,https://admin.example.com"], {}],
      [[], { SWITCHBOARD_ALLOWED_ORIGINS: "https://app.example.com, https://admin.example.com" }],
    ] as const) {
      served = await serve(["examples/support", ...args], env);
      const ws = `${served.url.replace(/^http/, "ws")}/websocket`;
      const foreign = new TestClient(ws, { origin: "https://evil.example.com" });
      expect((await foreign.next("error.reported", 0)).message).toMatch(/origin https:\/\/evil\.example\.com is not allowed/);
      expect((await foreign.closed).code).toBe(1008);
      const allowed = new TestClient(ws, { origin: "https://admin.example.com" });
      await allowed.next("session.configured", 0);
      allowed.close();
      served.kill();
    }
  }, 60_000);
});
