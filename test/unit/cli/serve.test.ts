// What `serve` and `dev` say about their flags and a gateway that cannot listen.
import { describe, expect, it } from "vitest";
import { cannotListen, portOf } from "../../../src/cli/serve.js";

describe("cannotListen", () => {
  it("suggests --port when the port is in use, and passes other errors through", () => {
    const inUse = Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:3000"), { code: "EADDRINUSE" });
    expect(cannotListen("127.0.0.1", 3000, inUse)).toBe("cannot listen on 127.0.0.1:3000: the port is in use; pass --port <n> (0 picks a free one)");
    const denied = Object.assign(new Error("listen EACCES: permission denied 0.0.0.0:80"), { code: "EACCES" });
    expect(cannotListen("0.0.0.0", 80, denied)).toBe("cannot listen on 0.0.0.0:80: listen EACCES: permission denied 0.0.0.0:80");
  });
});

describe("portOf", () => {
  it("reads --port (default 3000; 0 picks a free one) and refuses what is not a port", () => {
    expect(portOf(undefined)).toBe(3000);
    expect(portOf("0")).toBe(0);
    expect(portOf("65535")).toBe(65535);
    for (const bad of ["65536", "-1", "http", "3000.5"]) expect(portOf(bad)).toEqual({ error: `--port must be a port number (got ${bad}).` });
  });
});
