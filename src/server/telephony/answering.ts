/**
 * What answers the carriers (issue 7; the entry points and who may use them: index.ts): their
 * webhooks and callbacks, the call tickets, the streams bridged to sessions, transfers and the
 * calls the gateway places. Loaded by `createTelephony` when the agent mounts a carrier or has
 * workflows (at start, so no call waits for it), otherwise on the first request to a telephony
 * path: a gateway that takes no calls does not hold it (docs/benchmarks.md, "Idle memory").
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { LogThrottle } from "../../log.js";
import { resolveConfig, type CallOutcome, type PhoneLine } from "../../manifest/index.js";
import { CarrierBridge, type CarrierCall } from "../../transport/carrier-bridge.js";
import { MAX_TEXT_FRAME_CHARS } from "../../transport/carriers/carrier.js";
import { CARRIER_CODECS, type CarrierName } from "../../transport/carriers/index.js";
import { keyMatches } from "../auth.js";
import { acceptUpgrade, gatewaySocketServer, refuseUpgrade } from "../upgrade.js";
import { CallTickets, firstUse, webhookAccountId, webhookCallId, webhookLine, type AnsweredCall, type CallNumbers } from "./answered-calls.js";
import { webhookNumbers } from "./caller-numbers.js";
import { streamInstructions, type StreamTarget } from "./instructions.js";
import { CallTransfers, TRANSFER_PATH } from "./transfers.js";
import { SECRET_VARIABLE, type CarrierAccess } from "./entry-points.js";
import { firstHeader, readBody, send } from "./http.js";
import { validTwilioSignature } from "./signatures.js";
import type { Verification, WebhookVerifier } from "./webhook-verifier.js";
import { PlacedCalls, type Placement } from "./placed-calls.js";
import { CarrierCallbacks } from "./callbacks.js";
import { CarrierVerdicts } from "./amd-verdicts.js";
import { callPlacing, DEFAULT_CALLS_PER_MINUTE, outboundCalls, type CallPlacing } from "./outbound-calls.js";
import type { CallScreening } from "../../session/voicemail-screen.js";
import { CallReports } from "./call-reports.js";
import type { WorkflowCalls } from "./workflow-calls.js";
import { PLACEMENT_TTL_MS } from "./placed-calls.js";
import { STREAM_PATH, type PlacedSession, type Telephony, type TelephonyDeps } from "./index.js";
import { spread } from "../../spread.js";

/** A call with no duration limit still gets a bound in the carriers' instructions (s). */
const UNLIMITED_CALL_S = 4 * 3600;

/** A carrier's answering-machine verdict on a call the gateway placed: `/telephony/<carrier>/amd/<placement ticket>`. */
const AMD_PATH = /^\/telephony\/(twilio|telnyx|plivo|vonage)\/amd\/([^/]+)$/;
/** A carrier's status report on a call a workflow placed: `/telephony/<carrier>/status/<placement ticket>`. */
const STATUS_PATH = /^\/telephony\/(twilio|telnyx)\/status\/([^/]+)$/;

/** What `createTelephony` settled at start, which answering the calls goes by. */
export interface AnsweringStart {
  readonly carriers: readonly CarrierName[];
  readonly access: Readonly<Partial<Record<CarrierName, CarrierAccess>>>;
  /** The carriers' secrets, read (and checked) at start. */
  readonly webhooks: WebhookVerifier;
  /** `SWITCHBOARD_PUBLIC_URL`, parsed. */
  readonly base: URL | undefined;
  readonly workflowCalls: WorkflowCalls | undefined;
}

/** The part of `Telephony` that answers, and the placing of calls (`ctx.calls` places through it). */
export type CallAnswering = Pick<Telephony, "handleRequest" | "placeCall" | "handleUpgrade" | "close"> & { readonly placing: CallPlacing };

export function callAnswering(deps: TelephonyDeps, at: AnsweringStart): CallAnswering {
  const { config, clock, log } = deps;
  const { carriers, access, webhooks, base, workflowCalls } = at;
  const mounted = new Set<string>(carriers);
  const tickets = new CallTickets(deps.coordinator, deps.ticketTtlMs);
  const placements = new PlacedCalls(deps.coordinator);
  const verdicts = new CarrierVerdicts(deps.coordinator, clock, log);
  /** Refusals strangers cause, at most one line per kind every 10 s. */
  const throttle = new LogThrottle(() => clock.now());
  // Oversized frames reach the codec (which ignores them) rather than closing the call: ws closes past maxPayload.
  const wss = gatewaySocketServer(2 * MAX_TEXT_FRAME_CHARS);
  const { exotelAuth, twilioToken } = webhooks;
  const maxCallMs = resolveConfig(config).maxCallDurationMs;
  const maxCallS = maxCallMs === 0 ? UNLIMITED_CALL_S : maxCallMs / 1000;
  /** The public base URL the carrier reached us at: SWITCHBOARD_PUBLIC_URL, else the proxy's headers. */
  function publicBase(req: IncomingMessage, scheme: "http" | "ws"): string {
    const secure = base !== undefined ? base.protocol === "https:" : firstHeader(req.headers["x-forwarded-proto"])?.split(",")[0]?.trim() === "https";
    const host = base !== undefined ? base.host : (firstHeader(req.headers["x-forwarded-host"]) ?? req.headers.host ?? "localhost");
    return `${scheme}${secure ? "s" : ""}://${host}`;
  }

  const transfers = new CallTransfers({
    client: deps.client,
    coordinator: deps.coordinator,
    tickets,
    log,
    telnyxStream: (httpBase, ticket) => streamInstructions("telnyx", { url: `${httpBase.replace(/^http/, "ws")}/telephony/telnyx/${ticket}`, parameters: { agent: config.name } }, maxCallS).body,
  });

  const bindMs = (maxCallS + 60) * 1000;
  const reports = new CallReports(deps.coordinator, PLACEMENT_TTL_MS + bindMs);
  const placing = callPlacing({
    log,
    config,
    voicemail: resolveConfig(config).voicemail,
    mounted,
    access,
    client: deps.client,
    placements,
    coordinator: deps.coordinator,
    perMinute: deps.callsPerMinute ?? DEFAULT_CALLS_PER_MINUTE,
    draining: deps.draining,
    reports,
  });
  const placeCall = outboundCalls({ apiKey: deps.apiKey, config, log, place: placing, httpBase: (req) => publicBase(req, "http") });
  const reportOutcome = (token: string, outcome: CallOutcome): Promise<boolean> => workflowCalls?.report(token, outcome) ?? Promise.resolve(false);

  function target(req: IncomingMessage, carrier: CarrierName, ticket: string | undefined): StreamTarget {
    return { url: `${publicBase(req, "ws")}/telephony/${carrier}${ticket === undefined ? "" : `/${ticket}`}`, parameters: { agent: config.name } };
  }

  function refused(res: ServerResponse, carrier: string, status: number, why: string): void {
    throttle.warn(log, { carrier, why }, "telephony webhook refused");
    send(res, status, "text/plain; charset=utf-8", `${why}\n`);
  }

  /**
   * A callback of a signed carrier (after a call was answered or placed): its body and signature
   * once verified, or undefined once answered with the refusal (413 too large, 404 for a carrier not
   * mounted or not signed, 403 for a signature that does not verify).
   */
  async function signedCallback(req: IncomingMessage, res: ServerResponse, url: URL, carrier: CarrierName, method: string): Promise<{ body: string; signature: string } | undefined> {
    const body = await readBody(req);
    if (body === undefined) return void send(res, 413, "text/plain; charset=utf-8", "request body too large\n");
    if (!mounted.has(carrier) || access[carrier] !== "signed") return void send(res, 404, "text/plain; charset=utf-8", "not found\n");
    const verified = verify(carrier, req, url, method, body);
    if ("refusal" in verified) return void refused(res, carrier, 403, verified.refusal);
    return { body, signature: verified.signature };
  }

  /** The signed webhook's signature (its replay key), or why it does not verify: over the URL the carrier requested. */
  function verify(carrier: CarrierName, req: IncomingMessage, url: URL, method: string, body: string): Verification {
    return webhooks.verify(carrier, req, `${publicBase(req, "http")}${req.url ?? url.pathname}`, method, body);
  }

  /** The numbers a signed webhook of a call the carrier brought names; a value that is no number is dropped and logged (the field, never the value). */
  function inboundNumbers(carrier: CarrierName, url: URL, body: string): CallNumbers {
    const { dropped, ...numbers } = webhookNumbers(carrier, url, body);
    if (dropped.length > 0) throttle.warn(log, { carrier, fields: dropped }, "telephony webhook: a number that is not E.164, a SIP URI or a client id was dropped");
    return { direction: "inbound", ...numbers };
  }

  /** Answer with the call instructions that stream the call to `stream`, in `carrier`'s terms. */
  function answerStream(res: ServerResponse, carrier: CarrierName, stream: StreamTarget): void {
    const { type, body } = streamInstructions(carrier, stream, maxCallS);
    send(res, 200, type, body);
  }

  const callbacks = new CarrierCallbacks({
    log,
    coordinator: deps.coordinator,
    tickets,
    transfers,
    placements,
    verdicts,
    reports,
    report: reportOutcome,
    bindMs,
    signed: signedCallback,
    refused,
    httpBase: (req) => publicBase(req, "http"),
    streamTo: (req, res, carrier, ticket) => answerStream(res, carrier, target(req, carrier, ticket)),
  });

  async function handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const status = STATUS_PATH.exec(url.pathname);
    if (status !== null) {
      await callbacks.status(req, res, url, status[1] as CarrierName, status[2] ?? "");
      return true;
    }
    const amd = AMD_PATH.exec(url.pathname);
    if (amd !== null) {
      await callbacks.amd(req, res, url, amd[1] as CarrierName, amd[2] ?? "");
      return true;
    }
    const transferred = TRANSFER_PATH.exec(url.pathname);
    if (transferred !== null) {
      await callbacks.transfer(req, res, url, transferred[1] as CarrierName, transferred[2] ?? "", transferred[3] ?? "");
      return true;
    }
    const match = /^\/telephony\/([a-z]+)\/voice$/.exec(url.pathname);
    if (match === null) return false;
    const carrier = match[1] as CarrierName;
    if (!Object.hasOwn(CARRIER_CODECS, carrier)) return false;
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
    const how = access[carrier] ?? "refused";
    if (how !== "signed" && url.searchParams.has("placed")) {
      refused(res, carrier, 403, `a placed call's webhook must be signed: set ${SECRET_VARIABLE[carrier]}`);
      return true;
    }
    if (how === "refused") {
      refused(res, carrier, 403, `calls from ${carrier} are refused: auth is on and nothing authenticates ${carrier}; set ${SECRET_VARIABLE[carrier]} (or list ${carrier} in SWITCHBOARD_OPEN_CARRIERS if your network authenticates it)`);
      return true;
    }
    let ticket: string | undefined;
    if (how === "signed") {
      const verified = verify(carrier, req, url, method, body);
      if ("refusal" in verified) {
        refused(res, carrier, 403, verified.refusal);
        return true;
      }
      // A signed request seen before is a replay: answering it again would mint a second ticket.
      if (!(await firstUse(deps.coordinator, carrier, verified.signature))) {
        refused(res, carrier, 403, "this signed webhook was already answered: a replayed request mints nothing");
        return true;
      }
      const callId = webhookCallId(carrier, url, body);
      // A call the gateway placed names its placement: redeemed once, for this call.
      const placedTicket = url.searchParams.get("placed");
      let placed: AnsweredCall["placed"];
      let placing: Placement | undefined;
      if (placedTicket !== null) {
        placing = await placements.answered(placedTicket, carrier, callId, bindMs);
        placed = placing === undefined ? undefined : { carrierDetection: placing.carrierDetection, ...(placing.outbound === undefined ? {} : { outbound: placing.outbound }) };
        if (placed === undefined) {
          refused(res, carrier, 403, "this call was not placed by this gateway, or its placement expired or was already answered");
          return true;
        }
        // A workflow's call: its session reports the outcome from now on.
        if (await reports.answered(placedTicket, callId)) placed = spread(placed, { report: placedTicket });
      }
      const phone = placed === undefined ? inboundNumbers(carrier, url, body) : { direction: "outbound" as const, from: placing?.from, to: placing?.to };
      ticket = await tickets.issue({ carrier, callId, accountId: webhookAccountId(carrier, url, body), line: webhookLine(carrier, url, body, placed !== undefined), phone, placed });
      if (ticket === undefined) {
        log.error({ carrier }, "call ticket not stored");
        send(res, 503, "text/plain; charset=utf-8", "the gateway could not take this call now; try again\n");
        return true;
      }
    }
    log.info({ carrier, access: how }, "telephony webhook answered");
    answerStream(res, carrier, target(req, carrier, ticket));
    return true;
  }

  function refuseStream(socket: Duplex, carrier: CarrierName, req: IncomingMessage, status: number, message: string, why: string): void {
    throttle.warn(log, { carrier, remote: req.socket.remoteAddress, why }, "telephony stream refused");
    refuseUpgrade(socket, status, message, why);
  }

  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const match = STREAM_PATH.exec(url.pathname);
    const carrier = match?.[1] as CarrierName;
    const ticket = match?.[2];
    if (!mounted.has(carrier)) return refuseUpgrade(socket, 404, "Not Found");
    if (deps.draining()) return refuseUpgrade(socket, 503, "Service Unavailable", "gateway draining");
    const how = access[carrier] ?? "refused";
    if (how === "refused") return refuseStream(socket, carrier, req, 403, "Forbidden", `auth is on and nothing authenticates ${carrier}: set ${SECRET_VARIABLE[carrier]}`);
    let answered: AnsweredCall | undefined;
    if (how === "basic") {
      const presented = /^Basic\s+(.+)$/i.exec(firstHeader(req.headers.authorization) ?? "")?.[1];
      const decoded = presented === undefined ? undefined : Buffer.from(presented, "base64").toString("utf8");
      if (exotelAuth === undefined || !keyMatches(exotelAuth, decoded)) return refuseStream(socket, carrier, req, 401, "Unauthorized", "Exotel Basic auth does not match EXOTEL_API_KEY:EXOTEL_API_TOKEN");
    } else if (how === "signed") {
      if (ticket === undefined || ticket === "") return refuseStream(socket, carrier, req, 401, "Unauthorized", `a ${carrier} stream needs the ticket its signed webhook minted (/telephony/${carrier}/<ticket>)`);
      // Twilio signs the upgrade too: over the exact wss:// URL from the TwiML (ticket included), no parameters.
      if (carrier === "twilio" && !validTwilioSignature(twilioToken ?? "", firstHeader(req.headers["x-twilio-signature"]), `${publicBase(req, "ws")}${req.url ?? url.pathname}`, [])) {
        return refuseStream(socket, carrier, req, 403, "Forbidden", "X-Twilio-Signature does not match");
      }
      // Single use: the first upgrade that presents it takes it, so a replayed upgrade finds nothing.
      answered = await tickets.redeem(carrier, ticket);
      if (answered === undefined) return refuseStream(socket, carrier, req, 403, "Forbidden", "the call ticket is unknown, expired or already used");
    } else if (ticket !== undefined) {
      return refuseUpgrade(socket, 404, "Not Found");
    }
    const httpBase = publicBase(req, "http");
    acceptUpgrade(wss, req, socket, head, (ws) => void accept(ws, socket, carrier, answered, httpBase));
  }

  async function accept(ws: WebSocket, socket: Duplex, carrier: CarrierName, answered: AnsweredCall | undefined, httpBase: string): Promise<void> {
    const callId = answered?.callId;
    const transfer = callId === undefined ? undefined : transfers.port({ carrier, callId, accountId: answered?.accountId, line: answered?.line }, httpBase);
    const bridge = new CarrierBridge(ws, {
      codec: CARRIER_CODECS[carrier],
      clock,
      log,
      socket,
      limits: deps.limits,
      // The REST API acts only on the call the verified webhook named.
      ...(callId === undefined ? {} : { hangUp: () => deps.client.hangUp({ carrier, callId }) }),
      ...(transfer === undefined ? {} : { transfer }),
    });
    let call: CarrierCall;
    try {
      call = await bridge.started;
    } catch {
      return; // refused or hung up before start: the bridge closed and logged it
    }
    if (callId !== undefined && call.callId !== undefined && call.callId !== callId) {
      throttle.warn(log, { carrier, answered: callId, streamed: call.callId }, "telephony stream refused: not the call its ticket was minted for");
      bridge.refuse("this stream is not the call its ticket was minted for");
      return;
    }
    const placed = answered?.placed;
    const screening: CallScreening = {
      placed: placed !== undefined,
      ...(placed?.carrierDetection === true && callId !== undefined ? { carrierVerdicts: (listener) => verdicts.watch(callId, listener) } : {}),
    };
    const report = placed?.report;
    const session: PlacedSession | undefined =
      placed?.outbound === undefined && report === undefined
        ? undefined
        : {
            outbound: placed?.outbound,
            ...(report === undefined
              ? {}
              : {
                  ended: ({ sessionId, answeredBy }) => {
                    void (async () => {
                      const taken = await reports.sessionEnded(report);
                      if (taken === undefined) return;
                      await reportOutcome(taken.token, { status: "answered", answeredBy, sessionId, ...(taken.callId === undefined ? {} : { callId: taken.callId }) });
                    })().catch((err: unknown) => log.error({ err }, "workflow call outcome not reported"));
                  },
                }),
          };
    // The line as the verified webhook (or the placement) named it: never the stream's own `start`.
    const numbers = answered?.phone;
    const phone: PhoneLine | undefined =
      numbers === undefined
        ? undefined
        : { carrier, direction: numbers.direction, ...(numbers.from === undefined ? {} : { from: numbers.from }), ...(numbers.to === undefined ? {} : { to: numbers.to }), ...(callId === undefined ? {} : { callId }) };
    deps.startSession(bridge, call, answered?.resume, screening, session, phone);
  }

  return {
    handleRequest,
    placeCall,
    placing,
    handleUpgrade,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

