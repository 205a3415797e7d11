/**
 * Telephony endpoints (issue 7): per carrier the agent's `telephony` field mounts, a voice webhook
 * that answers with the call instructions, and `WS /telephony/<carrier>` where the carrier streams
 * the call. Signatures are checked when the carrier's secret is configured; a bad one is refused
 * (403) and logged without the secret.
 *
 * | carrier | webhook                                   | secret (env)                    |
 * |---------|-------------------------------------------|---------------------------------|
 * | twilio  | POST /telephony/twilio/voice → TwiML      | TWILIO_AUTH_TOKEN (HMAC-SHA1)   |
 * | telnyx  | POST /telephony/telnyx/voice → TeXML      | TELNYX_PUBLIC_KEY (Ed25519)     |
 * | plivo   | GET/POST /telephony/plivo/voice → XML     | PLIVO_AUTH_TOKEN (X-Plivo-Signature-V3) |
 * | vonage  | GET/POST /telephony/vonage/voice → NCCO   | VONAGE_SIGNATURE_SECRET (HS256 JWT) |
 * | exotel  | GET /telephony/exotel/voice → {url}       | EXOTEL_API_KEY + EXOTEL_API_TOKEN (Basic, on the stream) |
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { KeyObject } from "node:crypto";
import type { WebSocket } from "ws";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import { CARRIERS, DEFAULTS, type AgentConfig } from "../../manifest/index.js";
import { CarrierBridge, type CarrierCall } from "../../transport/carrier-bridge.js";
import { MAX_TEXT_FRAME_CHARS } from "../../transport/carriers/carrier.js";
import { CARRIER_CODECS, type CarrierName } from "../../transport/carriers/index.js";
import type { Limits } from "../../transport/protocol.js";
import { keyMatches, mintToken, verifyToken } from "../auth.js";
import { gatewaySocketServer, refuseUpgrade } from "../upgrade.js";
import type { CarrierClient } from "./carrier-client.js";
import { exotelUrl, plivoXml, texml, twiml, vonageNcco, type StreamTarget } from "./instructions.js";
import { telnyxPublicKey, validPlivoSignature, validTelnyxSignature, validTwilioSignature, validVonageSignature } from "./signatures.js";

/** Webhook bodies are small forms; anything past this is refused (bytes). */
const MAX_WEBHOOK_BYTES = 64 * 1024;
/** A call with no duration limit still gets a bound in the carriers' instructions (s). */
const UNLIMITED_CALL_S = 4 * 3600;

export interface TelephonyDeps {
  readonly config: AgentConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly limits: Limits;
  readonly apiKey: string | undefined;
  readonly tokenTtlMs: number;
  readonly client: CarrierClient;
  readonly draining: () => boolean;
  /** Run a session on the bridged call. */
  readonly startSession: (link: CarrierBridge, call: CarrierCall) => void;
}

export interface Telephony {
  readonly carriers: readonly CarrierName[];
  /** Answer a telephony webhook; false when the path is not one. */
  handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  /** Take a telephony stream upgrade; false when the path is not one. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean;
  close(): Promise<void>;
}

/** The carriers an agent's `telephony` field mounts: `true` = all, a list = those, absent = none. */
export function mountedCarriers(config: AgentConfig): CarrierName[] {
  const telephony = config.telephony;
  if (telephony === true) return [...CARRIERS];
  if (telephony === undefined || telephony === false) return [];
  return CARRIERS.filter((c) => telephony.includes(c));
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_WEBHOOK_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

export function createTelephony(deps: TelephonyDeps): Telephony {
  const { config, env, clock, log, apiKey } = deps;
  const carriers = mountedCarriers(config);
  const mounted = new Set<string>(carriers);
  // Oversized frames reach the codec (which ignores them) rather than closing the call: ws closes past maxPayload.
  const wss = gatewaySocketServer(2 * MAX_TEXT_FRAME_CHARS);
  const twilioToken = nonEmpty(env.TWILIO_AUTH_TOKEN);
  const plivoToken = nonEmpty(env.PLIVO_AUTH_TOKEN);
  const vonageSecret = nonEmpty(env.VONAGE_SIGNATURE_SECRET);
  const exotelAuth = nonEmpty(env.EXOTEL_API_KEY) !== undefined && nonEmpty(env.EXOTEL_API_TOKEN) !== undefined ? `${env.EXOTEL_API_KEY}:${env.EXOTEL_API_TOKEN}` : undefined;
  let telnyxKey: KeyObject | undefined;
  const telnyxKeyText = nonEmpty(env.TELNYX_PUBLIC_KEY);
  if (telnyxKeyText !== undefined) telnyxKey = telnyxPublicKey(telnyxKeyText);
  const maxCallMs = config.maxCallDurationMs ?? DEFAULTS.maxCallDurationMs;
  const maxCallS = maxCallMs === 0 ? UNLIMITED_CALL_S : maxCallMs / 1000;
  const signed: Record<CarrierName, boolean> = {
    twilio: twilioToken !== undefined,
    telnyx: telnyxKey !== undefined,
    plivo: plivoToken !== undefined,
    vonage: vonageSecret !== undefined,
    exotel: exotelAuth !== undefined,
  };
  if (carriers.length > 0) log.info({ carriers, signed: carriers.filter((c) => signed[c]) }, "telephony mounted");
  if (apiKey !== undefined) {
    // With auth on, a webhook mints stream tokens: one nobody signs hands them to anyone who asks.
    const unsigned = carriers.filter((c) => c !== "exotel" && !signed[c]);
    if (unsigned.length > 0) log.warn({ carriers: unsigned }, "telephony webhooks without signature checks mint session tokens for any caller; set TWILIO_AUTH_TOKEN / TELNYX_PUBLIC_KEY / PLIVO_AUTH_TOKEN / VONAGE_SIGNATURE_SECRET or mount only signed carriers");
  }

  /** The public base URL the carrier reached us at: SWITCHBOARD_PUBLIC_URL, else the proxy's headers. */
  function publicBase(req: IncomingMessage, scheme: "http" | "ws"): string {
    const configured = nonEmpty(env.SWITCHBOARD_PUBLIC_URL);
    const secure = configured !== undefined ? configured.startsWith("https:") : firstHeader(req.headers["x-forwarded-proto"])?.split(",")[0]?.trim() === "https";
    const host = configured !== undefined ? new URL(configured).host : (firstHeader(req.headers["x-forwarded-host"]) ?? req.headers.host ?? "localhost");
    return `${scheme}${secure ? "s" : ""}://${host}`;
  }

  function target(req: IncomingMessage, carrier: CarrierName): StreamTarget {
    const parameters: Record<string, string> = { agent: config.name };
    if (apiKey !== undefined) parameters.token = mintToken(apiKey, config.name, clock.now(), deps.tokenTtlMs).token;
    return { url: `${publicBase(req, "ws")}/telephony/${carrier}`, parameters };
  }

  function refused(res: ServerResponse, carrier: string, why: string): void {
    log.warn({ carrier, why }, "telephony webhook refused");
    send(res, 403, "text/plain; charset=utf-8", `${why}\n`);
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const match = /^\/telephony\/([a-z]+)\/voice$/.exec(url.pathname);
    if (match === null) return false;
    const carrier = match[1] as CarrierName;
    if (!(carrier in CARRIER_CODECS)) return false;
    if (!mounted.has(carrier)) {
      send(res, 404, "text/plain; charset=utf-8", `carrier ${carrier} is not enabled for agent ${config.name}: add it to the agent's telephony field\n`);
      return true;
    }
    const method = req.method ?? "GET";
    const allowed = carrier === "twilio" || carrier === "telnyx" ? ["POST"] : carrier === "exotel" ? ["GET"] : ["GET", "POST"];
    if (!allowed.includes(method)) {
      res.writeHead(405, { allow: allowed.join(", ") });
      res.end();
      return true;
    }
    const body = await readBody(req);
    if (body === undefined) {
      send(res, 413, "text/plain; charset=utf-8", "webhook body too large\n");
      return true;
    }
    if (deps.draining()) {
      send(res, 503, "text/plain; charset=utf-8", "gateway draining\n");
      return true;
    }
    if (carrier === "twilio" && twilioToken !== undefined) {
      const params = [...new URLSearchParams(body).entries()];
      const signed = `${publicBase(req, "http")}${req.url ?? url.pathname}`;
      if (!validTwilioSignature(twilioToken, firstHeader(req.headers["x-twilio-signature"]), signed, params, body)) {
        refused(res, carrier, "X-Twilio-Signature does not match: check TWILIO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL");
        return true;
      }
    }
    if (carrier === "telnyx" && telnyxKey !== undefined) {
      const signature = firstHeader(req.headers["telnyx-signature-ed25519"]);
      const timestamp = firstHeader(req.headers["telnyx-timestamp"]);
      if (!validTelnyxSignature(telnyxKey, signature, timestamp, body, clock.now())) {
        refused(res, carrier, "telnyx-signature-ed25519 does not verify (or the timestamp is over 300 s off): check TELNYX_PUBLIC_KEY");
        return true;
      }
    }
    if (carrier === "plivo" && plivoToken !== undefined) {
      const signed = `${publicBase(req, "http")}${req.url ?? url.pathname}`;
      const params = method === "POST" ? [...new URLSearchParams(body).entries()] : [];
      if (!validPlivoSignature(plivoToken, firstHeader(req.headers["x-plivo-signature-v3"]), firstHeader(req.headers["x-plivo-signature-v3-nonce"]), method, signed, params)) {
        refused(res, carrier, "X-Plivo-Signature-V3 does not match: check PLIVO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL");
        return true;
      }
    }
    if (carrier === "vonage" && vonageSecret !== undefined && !validVonageSignature(vonageSecret, firstHeader(req.headers.authorization), body, clock.now())) {
      refused(res, carrier, "the signed-webhook JWT does not verify (or its iat is over 300 s off, or payload_hash does not match the body): check VONAGE_SIGNATURE_SECRET and enable signed webhooks");
      return true;
    }
    const stream = target(req, carrier);
    log.info({ carrier }, "telephony webhook answered");
    switch (carrier) {
      case "twilio":
        send(res, 200, "text/xml; charset=utf-8", twiml(stream));
        break;
      case "telnyx":
        send(res, 200, "text/xml; charset=utf-8", texml(stream, maxCallS));
        break;
      case "plivo":
        send(res, 200, "text/xml; charset=utf-8", plivoXml(stream, maxCallS));
        break;
      case "vonage":
        send(res, 200, "application/json; charset=utf-8", JSON.stringify(vonageNcco(stream)));
        break;
      case "exotel":
        send(res, 200, "application/json; charset=utf-8", JSON.stringify(exotelUrl(stream)));
        break;
    }
    return true;
  }

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean {
    const match = /^\/telephony\/([a-z]+)$/.exec(url.pathname);
    if (match === null) return false;
    const carrier = match[1] as CarrierName;
    if (!mounted.has(carrier)) {
      refuseUpgrade(socket, 404, "Not Found");
      return true;
    }
    if (deps.draining()) {
      refuseUpgrade(socket, 503, "Service Unavailable", "gateway draining");
      return true;
    }
    if (carrier === "twilio" && twilioToken !== undefined) {
      // The handshake is a GET: the signature is over the exact wss:// URL from the TwiML, no parameters.
      const signed = `${publicBase(req, "ws")}${req.url ?? url.pathname}`;
      if (!validTwilioSignature(twilioToken, firstHeader(req.headers["x-twilio-signature"]), signed, [])) {
        log.warn({ carrier, remote: req.socket.remoteAddress }, "telephony stream refused: bad signature");
        refuseUpgrade(socket, 403, "Forbidden");
        return true;
      }
    }
    if (carrier === "exotel" && exotelAuth !== undefined) {
      const presented = /^Basic\s+(.+)$/i.exec(firstHeader(req.headers.authorization) ?? "")?.[1];
      const decoded = presented === undefined ? undefined : Buffer.from(presented, "base64").toString("utf8");
      if (!keyMatches(exotelAuth, decoded)) {
        log.warn({ carrier, remote: req.socket.remoteAddress }, "telephony stream refused: bad credentials");
        refuseUpgrade(socket, 401, "Unauthorized");
        return true;
      }
    }
    wss.handleUpgrade(req, socket, head, (ws) => void accept(ws, carrier, url));
    return true;
  }

  async function accept(ws: WebSocket, carrier: CarrierName, url: URL): Promise<void> {
    const bridge = new CarrierBridge(ws, {
      codec: CARRIER_CODECS[carrier],
      clock,
      log,
      limits: deps.limits,
      hangUp: (call) => deps.client.hangUp(call),
    });
    let call: CarrierCall;
    try {
      call = await bridge.started;
    } catch {
      return; // refused or hung up before start: the bridge closed and logged it
    }
    if (apiKey !== undefined) {
      const check = verifyToken(apiKey, call.customParameters.token ?? url.searchParams.get("token") ?? undefined, config.name, clock.now());
      if (!check.ok) {
        log.warn({ carrier, reason: check.reason }, "telephony stream refused");
        bridge.close(1008, check.reason);
        return;
      }
    }
    deps.startSession(bridge, call);
  }

  return {
    carriers,
    handleRequest,
    handleUpgrade,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
