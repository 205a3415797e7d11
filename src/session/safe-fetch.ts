/**
 * `safeFetch`: fetch a URL a model or a caller chose, without letting it reach the gateway's own
 * network (SSRF). Only http(s); every address a host name resolves to is vetted at connect time
 * (no window between the check and the connection for DNS rebinding to use); IP literals are
 * vetted before; every redirect hop is vetted again, and credentials are dropped when it leaves
 * the origin. Blocked: loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT,
 * unique-local, multicast, reserved and documentation ranges (IANA special-purpose registries,
 * RFC 6890). An IPv6 address that carries an IPv4 address (IPv4-mapped, -translated, -compatible,
 * NAT64 64:ff9b::/96, 6to4, Teredo) is judged by the IPv4 address it carries: a host stack, a
 * NAT64 gateway or a tunnel relay can deliver it there, so ::ffff:127.0.0.1 is loopback and
 * 64:ff9b::8.8.8.8 (DNS64 on an IPv6-only network) is 8.8.8.8.
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
// The ranges that embed an IPv4 address are not here: `embeddedIPv4` decodes them instead.
for (const [net, prefix] of [
  ["::", 128], // unspecified; inside ::/96, refused before it is decoded as IPv4-compatible
  ["::1", 128], // loopback; likewise
  // NAT64 local-use (RFC 8215): the operator picks the prefix length (/48 to /96, RFC 6052 §2.2),
  // so where the IPv4 address sits cannot be known from the address; refused whole.
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  BLOCKED_V6.addSubnet(net, prefix, "ipv6");
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/;
const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The 16-bit groups of one side of an IPv6 literal's `::` (a dotted-quad tail counts as two), or undefined. */
function hexGroups(text: string, last: boolean): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (const [i, part] of parts.entries()) {
    const quad = last && i === parts.length - 1 ? DOTTED_QUAD.exec(part) : null;
    if (quad !== null) {
      const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
      if (Math.max(a, b, c, d) > 255) return undefined;
      groups.push((a << 8) | b, (c << 8) | d);
    } else if (HEX_GROUP.test(part)) groups.push(parseInt(part, 16));
    else return undefined;
  }
  return groups;
}

/**
 * The 16 bytes of an IPv6 literal, in any textual form (RFC 4291 §2.2: zero-padded or not, upper
 * or lower case, `::` compression, a dotted-quad tail) with an optional `%zone`; undefined when
 * `address` is not one.
 */
function ipv6Bytes(address: string): Uint8Array | undefined {
  const halves = address.replace(/%.*$/, "").toLowerCase().split("::");
  if (halves.length > 2) return undefined;
  const head = hexGroups(halves[0] ?? "", halves.length === 1);
  const tail = halves.length === 2 ? hexGroups(halves[1] ?? "", true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const bytes = new Uint8Array(16);
  for (const [i, group] of [...head, ...new Array<number>(missing).fill(0), ...tail].entries()) {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  }
  return bytes;
}

/** The IPv4 address in the four bytes at `offset`, each XORed with `mask`. */
function ipv4At(bytes: Uint8Array, offset: number, mask = 0): string {
  return Array.from(bytes.subarray(offset, offset + 4), (b) => b ^ mask).join(".");
}

/** True when `bytes` begins with `prefix`. */
function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/**
 * The IPv4 addresses an IPv6 address carries, by the formats of the IANA IPv6 special-purpose
 * registry; empty for an address that carries none.
 */
function embeddedIPv4(bytes: Uint8Array): string[] {
  const zeros = (n: number): number[] => new Array<number>(n).fill(0);
  // IPv4-mapped ::ffff:a.b.c.d (::ffff:0:0/96, RFC 4291 §2.5.5.2): the last 32 bits.
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return [ipv4At(bytes, 12)];
  // IPv4-translated ::ffff:0:a.b.c.d (::ffff:0:0:0/96, RFC 2765 §2.1, SIIT; RFC 6145 obsoletes
  // it): the last 32 bits.
  if (startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0])) return [ipv4At(bytes, 12)];
  // IPv4-compatible ::a.b.c.d (::/96, RFC 4291 §2.5.5.1, deprecated): the last 32 bits. :: and
  // ::1 never get here (BLOCKED_V6).
  if (startsWith(bytes, zeros(12))) return [ipv4At(bytes, 12)];
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 §2.1, §2.2): the last 32 bits.
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) return [ipv4At(bytes, 12)];
  // 6to4 2002::/16 (RFC 3056 §2): bits 16-47, the two groups after 2002.
  if (startsWith(bytes, [0x20, 0x02])) return [ipv4At(bytes, 2)];
  // Teredo 2001:0000::/32 (RFC 4380 §4): the server in bits 32-63; the client in the last 32
  // bits, every bit inverted. Both are reached, so both must be public.
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return [ipv4At(bytes, 4), ipv4At(bytes, 12, 0xff)];
  return [];
}

const NOT_PUBLIC = "is not a public address";

/**
 * Why `address` (an IPv4 or IPv6 literal) is not a public unicast address, as the end of a
 * sentence about it ("is not a public address", "embeds 127.0.0.1, which is not a public
 * address"); undefined when it is one.
 */
function refusal(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return BLOCKED_V4.check(address, "ipv4") ? NOT_PUBLIC : undefined;
  const bytes = family === 6 ? ipv6Bytes(address) : undefined;
  if (bytes === undefined) return NOT_PUBLIC;
  const canonical = Array.from({ length: 8 }, (_, i) => (((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16)).join(":");
  if (BLOCKED_V6.check(canonical, "ipv6")) return NOT_PUBLIC;
  const carried = embeddedIPv4(bytes).find((v4) => BLOCKED_V4.check(v4, "ipv4"));
  return carried === undefined ? undefined : `embeds ${carried}, which ${NOT_PUBLIC}`;
}

/**
 * True when `address` (an IPv4 or IPv6 literal) is a public unicast address; false for anything
 * else. An IPv6 address that carries an IPv4 address is public when every IPv4 address it
 * carries is.
 */
export function isPublicAddress(address: string): boolean {
  return refusal(address) === undefined;
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
        if (addresses.length === 0) {
          callback(new BlockedUrlError(url, `${hostname} has no address`), "");
          return;
        }
        for (const { address } of addresses) {
          const reason = refusal(address);
          if (reason === undefined) continue;
          callback(new BlockedUrlError(url, `${hostname} resolves to ${address}, which ${reason}`), "");
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
    const reason = allowed || isIP(host) === 0 ? undefined : refusal(host);
    if (reason !== undefined) throw new BlockedUrlError(url.href, `${host} ${reason}`);
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
