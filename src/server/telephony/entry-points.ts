/** What each telephony entry point is and what authenticates it: logged at start, listed in docs/security.md. */
import type { Logger } from "../../log.js";
import type { CarrierName } from "../../transport/carriers/index.js";

/** The environment variable that signs each carrier. */
export const SECRET_VARIABLE: Readonly<Record<CarrierName, string>> = {
  twilio: "TWILIO_AUTH_TOKEN",
  telnyx: "TELNYX_PUBLIC_KEY",
  plivo: "PLIVO_AUTH_TOKEN",
  vonage: "VONAGE_SIGNATURE_SECRET",
  exotel: "EXOTEL_API_KEY and EXOTEL_API_TOKEN",
};

/**
 * How a carrier's calls are let in: `signed` (webhook signature, then a ticket on the stream),
 * `basic` (Exotel: Basic auth on the stream), `open` (nothing authenticates them), `refused`
 * (open, while the gateway's auth is on).
 */
export type CarrierAccess = "signed" | "basic" | "open" | "refused";

/** One entry point as start-up output and docs/security.md list it. */
export interface EntryPoint {
  readonly entry: string;
  /** What authenticates a request there, or why it is refused. */
  readonly auth: string;
  /** Anyone who reaches the port gets something from it (a session, a call, data). */
  readonly open: boolean;
}

/** Each mounted carrier's webhook and stream, with what authenticates them. */
export function describeEntryPoints(carriers: readonly CarrierName[], access: Partial<Record<CarrierName, CarrierAccess>>): EntryPoint[] {
  const points: EntryPoint[] = [];
  for (const carrier of carriers) {
    const how = access[carrier] ?? "refused";
    const webhook = `/telephony/${carrier}/voice`;
    const stream = `WS /telephony/${carrier}`;
    switch (how) {
      case "signed":
        points.push({ entry: webhook, auth: `${carrier} signature (${SECRET_VARIABLE[carrier]}), replays refused`, open: false });
        points.push({ entry: `${stream}/<ticket>`, auth: `single-use ticket from the signed webhook${carrier === "twilio" ? " + X-Twilio-Signature" : ""}`, open: false });
        // Every signed carrier places calls (Exotel signs nothing): its answering-machine callback.
        points.push({ entry: `/telephony/${carrier}/amd/<placement>`, auth: `${carrier} signature, replays refused; a call this gateway placed (POST /v1/calls)`, open: false });
        // Twilio and Telnyx report how a workflow's call ended (ctx.calls.place).
        if (carrier === "twilio" || carrier === "telnyx") points.push({ entry: `/telephony/${carrier}/status/<placement>`, auth: `${carrier} signature, replays refused; a call a workflow placed`, open: false });
        break;
      case "basic":
        points.push({ entry: webhook, auth: "none (Exotel cannot sign it): it answers the stream URL and grants nothing", open: false });
        points.push({ entry: stream, auth: "Basic auth (EXOTEL_API_KEY:EXOTEL_API_TOKEN)", open: false });
        break;
      case "open":
        points.push({ entry: webhook, auth: `none: set ${SECRET_VARIABLE[carrier]}`, open: true });
        points.push({ entry: stream, auth: `none: set ${SECRET_VARIABLE[carrier]}`, open: true });
        break;
      case "refused":
        points.push({ entry: `${webhook}, ${stream}`, auth: `refused (auth is on): set ${SECRET_VARIABLE[carrier]}`, open: false });
        break;
    }
  }
  return points;
}

/** Start-up lines: what is mounted and how it is authenticated; a warning for each carrier anyone may call, or nobody can. */
export function logEntryPoints(log: Logger, carriers: readonly CarrierName[], access: Partial<Record<CarrierName, CarrierAccess>>, telnyxApiKey: boolean): void {
  if (carriers.length === 0) return;
  const by = (kind: CarrierAccess): CarrierName[] => carriers.filter((c) => access[c] === kind);
  log.info({ carriers, signed: by("signed"), basicAuth: by("basic") }, "telephony mounted");
  const open = by("open");
  if (open.length > 0) log.warn({ carriers: open, secrets: open.map((c) => SECRET_VARIABLE[c]) }, "unauthenticated telephony entry points: anyone who reaches this port can place calls on these carriers; set their secrets");
  const refused = by("refused");
  if (refused.length > 0) log.warn({ carriers: refused, secrets: refused.map((c) => SECRET_VARIABLE[c]) }, "telephony carriers refused: auth is on and nothing authenticates them; set their secrets, or list them in SWITCHBOARD_OPEN_CARRIERS if your network does");
  if (carriers.includes("telnyx") && access.telnyx !== "signed" && telnyxApiKey) {
    log.warn({ carrier: "telnyx" }, "TELNYX_API_KEY is set but TELNYX_PUBLIC_KEY is not: unverified calls are never hung up over the API (a call held in <Pause> ends at its time limit); set TELNYX_PUBLIC_KEY");
  }
}
