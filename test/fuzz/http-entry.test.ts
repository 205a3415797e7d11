// Hostile HTTP at a real `switchboard serve` process with every secret set (issue 14 item 1): request
// lines, targets and header sets thrown at the plain HTTP and the upgrade paths. The property: the
// process lives through every one and `/health` still answers. A throw out of an event handler
// would be an uncaught exception — the process, and every call in it, gone.
import { generateKeyPairSync } from "node:crypto";
import { connect, type Socket } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type Served } from "../helpers/serve.js";
import { report, runs, SEED } from "./figures.js";

let served: Served | undefined;
let port = 0;

/** Every secret the gateway reads, set: auth, metrics, every carrier's signing secret and API key. */
function secrets(): Record<string, string> {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
  return {
    SWITCHBOARD_API_KEY: "gateway-key-0123456789",
    SWITCHBOARD_METRICS_TOKEN: "metrics-token-0123456789",
    SWITCHBOARD_CONNECTIONS_PER_MINUTE: "100000",
    TWILIO_ACCOUNT_SID: "AC0123456789",
    TWILIO_AUTH_TOKEN: "twilio-token-0123456789",
    TELNYX_PUBLIC_KEY: raw,
    TELNYX_API_KEY: "telnyx-key-0123456789",
    PLIVO_AUTH_TOKEN: "plivo-token-0123456789",
    VONAGE_SIGNATURE_SECRET: "vonage-secret-0123456789",
    EXOTEL_API_KEY: "exotel-key",
    EXOTEL_API_TOKEN: "exotel-token",
  };
}

beforeAll(async () => {
  // The demo agent: a voice agent that mounts every carrier (on the offline stack, no provider keys).
  served = await serve(["examples/support"], { ...secrets(), LOG_LEVEL: "fatal" });
  port = served.port;
}, 40_000);

afterAll(() => served?.kill());

const alive = (): boolean => served?.child.exitCode === null && served.child.signalCode === null;

/** Write `bytes` on a fresh connection; resolve with what came back once the server answers or closes, or after `waitMs`. */
function exchange(bytes: Buffer, waitMs = 250): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let answer = "";
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, waitMs);
    socket.on("error", done);
    socket.on("close", done);
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      // A status line is enough: the server read the request and decided.
      if (/^HTTP\/1\.1 \d{3}/.test(answer)) done();
    });
    socket.on("connect", () => socket.write(bytes));
  });
}

async function healthy(): Promise<boolean> {
  const answer = await exchange(Buffer.from("GET /health HTTP/1.1\r\nHost: gateway\r\n\r\n"), 5000);
  return /^HTTP\/1\.1 200/.test(answer);
}

const ROUTES = ["/websocket", "/health", "/ready", "/metrics", "/client-config", "/v1/sessions", "/telephony/twilio", "/telephony/twilio/voice", "/telephony/telnyx", "/telephony/plivo/voice", "/telephony/vonage", "/telephony/exotel/voice", "/", "/app.js", "/support/hours"];

/** Targets the WHATWG parser chokes on, or that look like hosts, ports, schemes or traversal. */
const hostileTarget = fc.oneof(
  fc.constantFrom("//x:99999", "//[", "//[::1", "//x:-1", "http://[", "http://x:99999/websocket", "*", "a:1", "", "/%", "/%zz", "//", "///websocket", "/websocket?sessionId=%", "/../../etc/passwd", "/\u0000", "http:websocket", "ws://x/websocket", "//x@y:1/websocket"),
  fc.tuple(fc.constantFrom(...ROUTES), fc.string({ maxLength: 40 })).map(([route, junk]) => `${route}${junk}`),
  fc.tuple(fc.constantFrom("//", "/", "http://", "https://", ""), fc.string({ maxLength: 30 }), fc.constantFrom("", ":", ":0", ":65536", ":99999", "]", "["), fc.constantFrom("", ...ROUTES)).map((parts) => parts.join("")),
  fc.string({ maxLength: 60 }),
  fc.constant(`/${"a".repeat(9000)}`),
);
const method = fc.constantFrom("GET", "POST", "HEAD", "PUT", "OPTIONS", "CONNECT", "TRACE", "DELETE", "G ET", "get", "");
const version = fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "");
const headerValue = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("websocket", "Upgrade", "dGhlIHNhbXBsZSBub25jZQ==", "13", "8", "Basic Og==", "Bearer x", "[::1]", "a b", "x:99999", "http://evil.example", "https,http", "-1", "99999999999999999999"));
const headerName = fc.oneof(
  fc.constantFrom("Host", "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions", "Origin", "Authorization", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For", "X-Twilio-Signature", "Telnyx-Signature-Ed25519", "Telnyx-Timestamp", "X-Plivo-Signature-V3", "X-Plivo-Signature-V3-Nonce", "Content-Length", "Transfer-Encoding", "Content-Type"),
  fc.string({ minLength: 1, maxLength: 12 }),
);
/** Most requests ask for an upgrade: that path had no guard at all. */
const upgradeHeaders = fc.constantFrom(
  ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"],
  ["Upgrade: websocket", "Connection: Upgrade"],
  ["Upgrade: h2c", "Connection: Upgrade"],
  [],
);
const request = fc.record({
  method,
  target: hostileTarget,
  version,
  upgrade: upgradeHeaders,
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
  body: fc.oneof(fc.constant(""), fc.string({ maxLength: 80 })),
  lineEnd: fc.constantFrom("\r\n", "\r\n", "\n"),
});

describe("hostile HTTP at the gateway's port (every secret set)", () => {
  it("two targets the URL parser rejects, sent as upgrades, leave the process serving", async () => {
    for (const target of ["//x:99999", "//[", "//x:99999"]) {
      const answer = await exchange(Buffer.from(`GET ${target} HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`));
      expect(answer).toMatch(/^HTTP\/1\.1 40[04]/);
    }
    expect(alive()).toBe(true);
    expect(await healthy()).toBe(true);
  }, 20_000);

  it("no request line, target or header set takes the process down, and /health answers after each batch", async () => {
    const batch = runs(120);
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), async (requests) => {
        await Promise.all(
          requests.map((r) => {
            const lines = [`${r.method} ${r.target} ${r.version}`.trim(), ...r.upgrade, ...r.headers.map(([name, value]) => `${name}: ${value}`)];
            sent += 1;
            return exchange(Buffer.from(`${lines.join(r.lineEnd)}${r.lineEnd}${r.lineEnd}${r.body}`, "utf8"));
          }),
        );
        return alive() && (await healthy());
      }),
      { seed: SEED, numRuns: batch },
    );
    expect(alive()).toBe(true);
    expect(served?.output()).not.toMatch(/Invalid URL|TypeError|uncaught/i);
    report({ property: "hostile HTTP requests and upgrades: the process lives, /health answers", runs: batch, inputs: sent, unit: "requests" });
  }, 180_000);
});
