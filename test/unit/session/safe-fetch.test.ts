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

describe("safeFetch against loopback servers", () => {
  let server: Server;
  let port = 0;
  const seen: { url: string | undefined; authorization: string | undefined; method: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization, method: req.method });
      if (req.url === "/to-loopback") res.writeHead(302, { Location: `http://127.0.0.1:${port}/secret` }).end();
      else if (req.url === "/to-self") res.writeHead(303, { Location: "/landed" }).end();
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
