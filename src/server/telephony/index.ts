/**
 * Telephony endpoints (issue 7): per carrier the agent's `telephony` field mounts, a voice webhook
 * that answers with the call instructions, and `WS /telephony/<carrier>[/<ticket>]` where the
 * carrier streams the call.
 *
 * Who may use them (issue 14, docs/security.md "Entry points"): a carrier whose secret is set is
 * *signed* — its webhook's signature is checked (a replay of it refused), the answer carries a
 * single-use ticket bound to the call the webhook named, and the stream upgrade must redeem it
 * (Twilio's upgrade must be signed too); the gateway acts over REST only on that call. Exotel
 * cannot sign its webhook: with its API key and token set its stream needs their Basic auth, and
 * its webhook mints nothing. A carrier with no secret is *open* (anyone who reaches the port can
 * place a call on it) — allowed while auth is off, and refused while it is on
 * (`SWITCHBOARD_API_KEY`) unless `SWITCHBOARD_OPEN_CARRIERS` names it (a network that
 * authenticates the carrier itself, such as Exotel's IP allow-listing).
 *
 * | carrier | webhook                                   | secret (env)                    |
 * |---------|-------------------------------------------|---------------------------------|
 * | twilio  | POST /telephony/twilio/voice → TwiML      | TWILIO_AUTH_TOKEN (HMAC-SHA1, webhook and stream) |
 * | telnyx  | POST /telephony/telnyx/voice → TeXML      | TELNYX_PUBLIC_KEY (Ed25519)     |
 * | plivo   | GET/POST /telephony/plivo/voice → XML     | PLIVO_AUTH_TOKEN (X-Plivo-Signature-V3) |
 * | vonage  | GET/POST /telephony/vonage/voice → NCCO   | VONAGE_SIGNATURE_SECRET (HS256 JWT) |
 * | exotel  | GET /telephony/exotel/voice → {url}       | EXOTEL_API_KEY + EXOTEL_API_TOKEN (Basic, on the stream) |
 *
 * This module settles at start what does not wait for a call (the mounted carriers, who may use
 * them, the secrets read and checked, the entry points logged); what answers the carriers is
 * answering.ts, loaded ahead when the agent mounts a carrier or has workflows, else by the first
 * request to a telephony path (a gateway that takes no calls does not hold it).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import { CARRIERS, E164, type AgentConfig, type OutboundCall, type PhoneLine } from "../../manifest/index.js";
import type { CarrierBridge, CarrierCall } from "../../transport/carrier-bridge.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Limits } from "../../transport/protocol.js";
import type { Coordinator } from "../coordination.js";
import type { AnsweredCall } from "./answered-calls.js";
import type { CallAnswering } from "./answering.js";
import type { CarrierClient } from "./carrier-client.js";
import { describeEntryPoints, logEntryPoints, type CarrierAccess, type EntryPoint } from "./entry-points.js";
import { nonEmpty, publicUrl } from "./http.js";
import { WebhookVerifier } from "./webhook-verifier.js";
import type { CallScreening } from "../../session/voicemail-screen.js";
import { WorkflowCalls } from "./workflow-calls.js";

/** `WS /telephony/<carrier>[/<ticket>]`: a carrier's stream. */
export const STREAM_PATH = /^\/telephony\/([a-z]+)(?:\/([^/]*))?$/;

/** A call a workflow placed, as its session runs it: what it sees, and what it tells when it ends. */
export interface PlacedSession {
  readonly outbound?: OutboundCall | undefined;
  /** Once the session has ended: its id and the voicemail screen's verdict. */
  readonly ended?: ((end: { readonly sessionId: string; readonly answeredBy: "human" | "machine" | "unknown" }) => void) | undefined;
}

export interface TelephonyDeps {
  readonly config: AgentConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly limits: Limits;
  /** The gateway's auth is on (`SWITCHBOARD_API_KEY`): open carriers are refused unless listed in `openCarriers`. */
  readonly authOn: boolean;
  /** Carriers allowed without a secret while auth is on (their network authenticates them). */
  readonly openCarriers: readonly CarrierName[];
  /** Where tickets and replay records live (shared by every process of the deployment). */
  readonly coordinator: Coordinator;
  readonly client: CarrierClient;
  readonly draining: () => boolean;
  /**
   * Run a session on the bridged call; `resume`: a caller back from a warm transfer nobody took, to
   * the session it left; `screening`: whether the gateway placed the call, and its carrier's
   * answering-machine verdicts; `phone`: the call's numbers, from its verified webhook (`SessionInfo.phone`).
   */
  readonly startSession: (link: CarrierBridge, call: CarrierCall, resume: AnsweredCall["resume"], screening: CallScreening, placed: PlacedSession | undefined, phone: PhoneLine | undefined) => void;
  /** `SWITCHBOARD_API_KEY`: `POST /v1/calls` takes it as a bearer key (no key: placing calls is off). */
  readonly apiKey?: string | undefined;
  /** Calls the deployment may place a minute (`SWITCHBOARD_CALLS_PER_MINUTE`). */
  readonly callsPerMinute?: number;
  /** How long a minted ticket waits for its stream (ms); default `CALL_TICKET_TTL_MS`. */
  readonly ticketTtlMs?: number;
  /** The agent has workflows: `workflowCalls` places their calls (the engine lends it where placements are remembered). */
  readonly workflowCalls?: boolean | undefined;
}

export interface Telephony {
  readonly carriers: readonly CarrierName[];
  /** How each mounted carrier's calls are let in. */
  readonly access: Readonly<Partial<Record<CarrierName, CarrierAccess>>>;
  /** Every telephony entry point with what authenticates it. */
  readonly entryPoints: readonly EntryPoint[];
  /** Answer a telephony webhook; false when the path is not one. */
  handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  /** Whether a path is a telephony stream (its upgrade is this module's). */
  isStream(url: URL): boolean;
  /** `POST /v1/calls`: place a call for the agent (docs/telephony.md "Placing calls"). */
  placeCall(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** `ctx.calls` for the workflow engine (`createWorkflowEngine({ calls })`); undefined without `workflowCalls`. */
  readonly workflowCalls: WorkflowCalls | undefined;
  /** Take a telephony stream upgrade (`isStream` said so). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  close(): Promise<void>;
}

/** The carriers an agent's `telephony` field mounts: `true` = all, a list = those, absent = none. */
export function mountedCarriers(config: AgentConfig): CarrierName[] {
  const telephony = config.telephony;
  if (telephony === true) return [...CARRIERS];
  if (telephony === undefined || telephony === false) return [];
  return CARRIERS.filter((c) => telephony.includes(c));
}

/**
 * `SWITCHBOARD_OPEN_CARRIERS` read: a comma-separated list of carrier names. Throws naming the
 * variable and the fix when it names something else.
 */
export function parseOpenCarriers(value: string | undefined): CarrierName[] {
  if (value === undefined || value.trim() === "") return [];
  const names = value.split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "");
  const unknown = names.filter((name) => !(CARRIERS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`SWITCHBOARD_OPEN_CARRIERS: ${unknown.join(", ")} is not a carrier; use a comma-separated list of ${CARRIERS.join(", ")}`);
  return names as CarrierName[];
}

export function createTelephony(deps: TelephonyDeps): Telephony {
  const { config, env, log } = deps;
  const carriers = mountedCarriers(config);
  // Read (and checked: a malformed key throws, naming its variable) at start, whatever is loaded later.
  const webhooks = new WebhookVerifier(env, deps.clock);
  const { secretSet } = webhooks;
  const accessOf = (carrier: CarrierName): CarrierAccess => {
    if (secretSet[carrier]) return carrier === "exotel" ? "basic" : "signed";
    return !deps.authOn || deps.openCarriers.includes(carrier) ? "open" : "refused";
  };
  const access: Partial<Record<CarrierName, CarrierAccess>> = Object.fromEntries(carriers.map((c) => [c, accessOf(c)]));
  const entryPoints = describeEntryPoints(carriers, access);
  logEntryPoints(log, carriers, access, nonEmpty(env.TELNYX_API_KEY) !== undefined);
  const base = publicUrl(env.SWITCHBOARD_PUBLIC_URL);
  const callsFrom = nonEmpty(env.SWITCHBOARD_CALLS_FROM);
  if (callsFrom !== undefined && !E164.test(callsFrom)) throw new Error(`SWITCHBOARD_CALLS_FROM: ${JSON.stringify(callsFrom)} is not an E.164 number; set the number workflows call from, e.g. "+14155550100"`);

  /** What answers the carriers (answering.ts), loaded once: ahead when calls may come, else on first use. */
  let answering: Promise<CallAnswering> | undefined;
  const answer = (): Promise<CallAnswering> => (answering ??= import("./answering.js").then((m) => m.callAnswering(deps, { carriers, access, webhooks, base, workflowCalls })));
  const workflowCalls =
    deps.workflowCalls === true ? new WorkflowCalls({ log, place: async (fields, options) => (await answer()).placing(fields, options), mounted: carriers, publicUrl: base, from: callsFrom }) : undefined;
  if (carriers.length > 0 || workflowCalls !== undefined) answer().catch((err: unknown) => log.error({ err }, "telephony could not be loaded"));

  return {
    carriers,
    access,
    entryPoints,
    workflowCalls,
    // Every webhook and callback is under /telephony/; any other path is not one (and loads nothing).
    handleRequest: async (req, res, url) => url.pathname.startsWith("/telephony/") && (await answer()).handleRequest(req, res, url),
    placeCall: async (req, res) => (await answer()).placeCall(req, res),
    isStream(url) {
      const match = STREAM_PATH.exec(url.pathname);
      return match !== null && (CARRIERS as readonly string[]).includes(match[1] ?? "");
    },
    handleUpgrade: async (req, socket, head, url) => (await answer()).handleUpgrade(req, socket, head, url),
    async close() {
      if (answering !== undefined) await (await answering).close();
    },
  };
}
