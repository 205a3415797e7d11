/**
 * `safeFetch`: fetch a URL a model or a caller chose, without letting it reach the gateway's own
 * network (SSRF). Only http(s); every address a host name resolves to is vetted at connect time
 * (no window between the check and the connection for DNS rebinding to use); IP literals are
 * vetted before; every redirect hop is vetted again, and credentials are dropped when it leaves
 * the origin. Blocked: loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT,
 * unique-local, multicast, reserved and documentation ranges, IPv4-mapped and NAT64 IPv6
 * (IANA special-purpose registries, RFC 6890).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockList, isIP } from "node:net";
import { Readable } from "node:stream";

// Two lists: Node's BlockList also matches IPv4 addresses against IPv4-mapped IPv6 rules.
const BLOCKED_V4 = new BlockList();
const BLOCKED_V6 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  BLOCKED_V4.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["::ffff:0:0", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  BLOCKED_V6.addSubnet(net, prefix, "ipv6");
}

/** True when `address` (an IPv4 or IPv6 literal) is a public unicast address; false for anything else. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return family === 4 ? !BLOCKED_V4.check(address, "ipv4") : !BLOCKED_V6.check(address, "ipv6");
}

/** The URL, or where it led, is not one a tool may fetch. */
export class BlockedUrlError extends Error {
  readonly url: string;
  constructor(url: string, reason: string) {
    super(`safeFetch refused ${url}: ${reason}`);
    this.name = "BlockedUrlError";
    this.url = url;
  }
}

export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export interface SafeFetchOptions {
  /** Host names (exact, lower case) fetched even when they resolve to non-public addresses: your own internal APIs. */
  readonly allowHosts?: readonly string[];
  /** Redirects followed, each vetted again (default 5). */
  readonly maxRedirects?: number;
  /** The whole exchange, body included (ms; default 10 000). */
  readonly timeoutMs?: number;
  /** Name resolution (default: the system resolver, every address). */
  readonly resolve?: Resolver;
}

const systemResolve: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err === null ? resolve(addresses) : reject(err))));

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that fails unless every address the name resolves to is public. */
function vettedLookup(resolve: Resolver, url: string): (hostname: string, options: { all?: boolean }, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const bad = addresses.find((a) => !isPublicAddress(a.address));
        if (addresses.length === 0 || bad !== undefined) {
          callback(new BlockedUrlError(url, bad === undefined ? `${hostname} has no address` : `${hostname} resolves to ${bad.address}, which is not a public address`), "");
          return;
        }
        const first = addresses[0] as LookupAddress;
        if (options.all === true) callback(null, [...addresses]);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ""),
    );
  };
}

const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function send(url: URL, method: string, headers: Record<string, string>, body: Uint8Array | undefined, signal: AbortSignal, lookup: RequestOptions["lookup"]): Promise<IncomingMessage> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, signal, lookup }, resolve);
    req.once("error", reject);
    req.end(body);
  });
}

/**
 * Fetch `input` the way `fetch` would (string or byte bodies), refusing any hop that would reach
 * a non-public address with a `BlockedUrlError`. For tools that fetch URLs chosen by a model or
 * a caller; the gateway's own provider and MCP connections do not go through it.
 */
export async function safeFetch(input: string | URL, init: RequestInit = {}, options: SafeFetchOptions = {}): Promise<Response> {
  const allow = new Set((options.allowHosts ?? []).map((h) => h.toLowerCase()));
  const resolve = options.resolve ?? systemResolve;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let url = new URL(input);
  let method = (init.method ?? "GET").toUpperCase();
  const headers: Record<string, string> = Object.fromEntries(new Headers(init.headers).entries());
  let body = typeof init.body === "string" ? new TextEncoder().encode(init.body) : init.body instanceof Uint8Array ? init.body : undefined;
  if (init.body !== undefined && init.body !== null && body === undefined) throw new TypeError("safeFetch: the body must be a string or bytes");
  for (let hop = 0; ; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new BlockedUrlError(url.href, `${url.protocol} is not http or https`);
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const allowed = allow.has(host);
    if (!allowed && isIP(host) !== 0 && !isPublicAddress(host)) throw new BlockedUrlError(url.href, `${host} is not a public address`);
    const res = await send(url, method, headers, body, signal, allowed ? undefined : (vettedLookup(resolve, url.href) as unknown as RequestOptions["lookup"]));
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined || init.redirect === "manual") return toResponse(res);
    res.resume();
    if (init.redirect === "error") throw new BlockedUrlError(url.href, `redirected to ${location} with redirect: "error"`);
    if (hop >= (options.maxRedirects ?? 5)) throw new BlockedUrlError(url.href, "too many redirects");
    const next = new URL(location, url);
    if (next.origin !== url.origin) for (const name of Object.keys(headers)) if (CREDENTIAL_HEADERS.includes(name)) delete headers[name];
    if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === "POST")) {
      method = method === "HEAD" ? "HEAD" : "GET";
      body = undefined;
      delete headers["content-type"];
      delete headers["content-length"];
    }
    url = next;
  }
}

function toResponse(res: IncomingMessage): Response {
  const status = res.statusCode ?? 502;
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const empty = status === 204 || status === 304 || (status >= 100 && status < 200);
  if (empty) res.resume();
  return new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage ?? "", headers });
}
