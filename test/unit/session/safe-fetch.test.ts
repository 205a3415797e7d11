import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlockedUrlError, isPublicAddress, safeFetch } from "../../../src/session/safe-fetch.js";

describe("isPublicAddress", () => {
  it.each([
    ["127.0.0.1"],
    ["10.1.2.3"],
    ["172.16.5.4"],
    ["192.168.1.1"],
    ["169.254.169.254"],
    ["100.64.0.1"],
    ["0.0.0.0"],
    ["224.0.0.1"],
    ["255.255.255.255"],
    ["::1"],
    ["::"],
    ["fe80::1"],
    ["fd00:ec2::254"],
    ["::ffff:127.0.0.1"],
    ["::ffff:7f00:1"],
    ["64:ff9b::a9fe:a9fe"],
    ["not an address"],
  ])("refuses %s", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([["8.8.8.8"], ["1.1.1.1"], ["172.32.0.1"], ["2606:4700:4700::1111"]])("accepts %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

// Issue 14 item 7: IPv6 addresses that carry an IPv4 address are judged by that IPv4 address.
// Teredo (RFC 4380): 2001:0:<server>:<flags>:<port ^ 0xffff>:<client ^ 0xffffffff>; 4136:e378 is
// the server 65.54.227.120; f5ff:fffe is the client 10.0.0.1, f7f7:f7f7 the client 8.8.8.8.
describe("isPublicAddress, IPv6 that embeds IPv4", () => {
  it.each([
    // IPv4-compatible ::/96 (RFC 4291 §2.5.5.1), every spelling.
    ["::127.0.0.1", "IPv4-compatible loopback"],
    ["::7f00:1", "IPv4-compatible loopback, hex"],
    ["0000:0000:0000:0000:0000:0000:7F00:0001", "IPv4-compatible loopback, padded upper case"],
    ["::a9fe:a9fe", "IPv4-compatible 169.254.169.254"],
    ["::10.0.0.1", "IPv4-compatible private"],
    // IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2).
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::FFFF:7F00:1", "IPv4-mapped loopback, upper case"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    // IPv4-translated ::ffff:0:0:0/96 (RFC 2765).
    ["::ffff:0:127.0.0.1", "IPv4-translated loopback"],
    ["::ffff:0:a00:1", "IPv4-translated private"],
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
    ["64:ff9b::127.0.0.1", "NAT64 loopback"],
    ["64:ff9b::a00:1", "NAT64 private"],
    ["0064:FF9B:0000:0000:0000:0000:A9FE:A9FE", "NAT64 metadata, padded upper case"],
    ["64:ff9b::100.64.0.1", "NAT64 CGNAT"],
    // NAT64 local-use 64:ff9b:1::/48 (RFC 8215): refused whatever it embeds.
    ["64:ff9b:1::1", "NAT64 local-use"],
    ["64:ff9b:1::808:808", "NAT64 local-use, public tail"],
    // 6to4 2002::/16 (RFC 3056).
    ["2002:7f00:1::", "6to4 loopback"],
    ["2002:a00:1::1", "6to4 private"],
    ["2002:A9FE:A9FE::1", "6to4 metadata, upper case"],
    // Teredo 2001:0::/32 (RFC 4380).
    ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo, private client"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo, documentation client (RFC 4380's own example)"],
    ["2001:0000:4136:E378:8000:63BF:80FF:FFFE", "Teredo, loopback client, padded upper case"],
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "Teredo, private server"],
    ["2001:0:7f00:1:8000:63bf:f5ff:fffe", "Teredo, both private"],
  ])("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    ["64:ff9b::8.8.8.8", "NAT64 of a public IPv4 (DNS64 on an IPv6-only network)"],
    ["64:ff9b::808:808", "NAT64 of a public IPv4, hex"],
    ["2002:808:808::1", "6to4 of a public IPv4"],
    ["::ffff:8.8.8.8", "IPv4-mapped public"],
    ["::ffff:0:8.8.8.8", "IPv4-translated public"],
    ["::8.8.8.8", "IPv4-compatible public"],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "Teredo, public server and client"],
    ["2606:4700::1111", "plain public IPv6"],
  ])("accepts %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([["::"], ["::1"], ["0:0:0:0:0:0:0:1"], ["2001:db8::1"], ["2001:db8::127.0.0.1"], ["fc00::1"], ["fe80::1%eth0"], ["ff02::1"], ["100::1"], ["fec0::1"]])(
    "still refuses %s",
    (address) => {
      expect(isPublicAddress(address)).toBe(false);
    },
  );
});

describe("safeFetch against loopback servers", () => {
  let server: Server;
  let port = 0;
  const seen: { url: string | undefined; authorization: string | undefined; method: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization, method: req.method });
      if (req.url === "/to-loopback") res.writeHead(302, { Location: `http://127.0.0.1:${port}/secret` }).end();
      else if (req.url === "/to-self") res.writeHead(303, { Location: "/landed" }).end();
      else if (req.url === "/to-mapped") res.writeHead(302, { Location: `http://[::ffff:127.0.0.1]:${port}/secret` }).end();
      else if (req.url === "/to-file") res.writeHead(302, { Location: "file:///etc/passwd" }).end();
      else res.writeHead(200, { "Content-Type": "text/plain" }).end(`hello from ${req.url ?? "?"}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("refuses a loopback or metadata address given as a literal, before connecting", async () => {
    const before = seen.length;
    await expect(safeFetch(`http://127.0.0.1:${port}/secret`)).rejects.toThrow(BlockedUrlError);
    await expect(safeFetch("http://[::1]:1/")).rejects.toThrow(/not a public address/);
    await expect(safeFetch("http://169.254.169.254/latest/meta-data/")).rejects.toThrow(/169\.254\.169\.254 is not a public address/);
    expect(seen.length).toBe(before);
  });

  it("refuses a name that resolves to a private address, at connect time", async () => {
    const before = seen.length;
    const resolve = (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    await expect(safeFetch(`http://rebound.example:${port}/secret`, {}, { resolve })).rejects.toThrow(/rebound\.example resolves to 127\.0\.0\.1/);
    await expect(safeFetch(`http://localhost:${port}/secret`)).rejects.toThrow(BlockedUrlError);
    expect(seen.length).toBe(before);
  });

  it("refuses a bracketed IPv6 literal that embeds a non-public IPv4, naming it, before connecting", async () => {
    const before = seen.length;
    await expect(safeFetch(`http://[::127.0.0.1]:${port}/secret`)).rejects.toThrow(/::7f00:1 embeds 127\.0\.0\.1, which is not a public address/);
    await expect(safeFetch(`http://[::ffff:127.0.0.1]:${port}/secret`)).rejects.toThrow(/::ffff:7f00:1 embeds 127\.0\.0\.1, which is not a public address/);
    await expect(safeFetch(`http://[64:ff9b::127.0.0.1]:${port}/secret`)).rejects.toThrow(/64:ff9b::7f00:1 embeds 127\.0\.0\.1, which is not a public address/);
    await expect(safeFetch("http://[2002:a9fe:a9fe::1]/latest/meta-data/")).rejects.toThrow(/embeds 169\.254\.169\.254/);
    await expect(safeFetch("http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/")).rejects.toThrow(/embeds 10\.0\.0\.1/);
    await expect(safeFetch(`http://localhost:${port}/to-mapped`, {}, { allowHosts: ["localhost"] })).rejects.toThrow(/::ffff:7f00:1 embeds 127\.0\.0\.1/);
    expect(seen.filter((s) => s.url === "/secret")).toEqual([]);
    expect(seen.length).toBe(before + 1);
  });

  it("refuses a name that resolves to an IPv6 address embedding a non-public IPv4, at connect time", async () => {
    const before = seen.length;
    const resolveTo = (address: string) => (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address, family: 6 }]);
    await expect(safeFetch(`http://rebound.example:${port}/secret`, {}, { resolve: resolveTo("::127.0.0.1") })).rejects.toThrow(
      /rebound\.example resolves to ::127\.0\.0\.1, which embeds 127\.0\.0\.1, which is not a public address/,
    );
    await expect(safeFetch("http://metadata.example/latest/meta-data/", {}, { resolve: resolveTo("64:ff9b::a9fe:a9fe") })).rejects.toThrow(
      /metadata\.example resolves to 64:ff9b::a9fe:a9fe, which embeds 169\.254\.169\.254, which is not a public address/,
    );
    expect(seen.length).toBe(before);
  });

  it("refuses schemes other than http and https", async () => {
    await expect(safeFetch("file:///etc/passwd")).rejects.toThrow(/file: is not http or https/);
  });

  it("fetches an allowed host, and vets every redirect hop again", async () => {
    const ok = await safeFetch(`http://localhost:${port}/hello`, {}, { allowHosts: ["localhost"] });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("hello from /hello");
    await expect(safeFetch(`http://localhost:${port}/to-loopback`, {}, { allowHosts: ["localhost"] })).rejects.toThrow(/127\.0\.0\.1 is not a public address/);
    expect(seen.some((s) => s.url === "/secret")).toBe(false);
    await expect(safeFetch(`http://localhost:${port}/to-file`, {}, { allowHosts: ["localhost"] })).rejects.toThrow(/file: is not http or https/);
  });

  it("follows a same-origin 303 as GET, keeping credentials; redirect: manual hands the 3xx back", async () => {
    const res = await safeFetch(`http://localhost:${port}/to-self`, { method: "POST", body: "x", headers: { Authorization: "Bearer t" } }, { allowHosts: ["localhost"] });
    expect(await res.text()).toBe("hello from /landed");
    expect(seen.at(-1)).toEqual({ url: "/landed", authorization: "Bearer t", method: "GET" });
    const manual = await safeFetch(`http://localhost:${port}/to-loopback`, { redirect: "manual" }, { allowHosts: ["localhost"] });
    expect(manual.status).toBe(302);
  });

  it("drops credentials when a redirect leaves the origin", async () => {
    const res = await safeFetch(`http://localhost:${port}/to-loopback`, { headers: { Authorization: "Bearer t" } }, { allowHosts: ["localhost", "127.0.0.1"] });
    expect(await res.text()).toBe("hello from /secret");
    expect(seen.at(-1)).toEqual({ url: "/secret", authorization: undefined, method: "GET" });
  });
});
