import { describe, expect, it } from "vitest";
import { requestTarget } from "../../../src/server/entry.js";

describe("requestTarget", () => {
  it("reads origin-form targets as paths, even the ones the WHATWG parser takes for a host and port", () => {
    expect(requestTarget("/websocket?token=a.b&codec=opus")?.pathname).toBe("/websocket");
    expect(requestTarget("/websocket?token=a.b&codec=opus")?.searchParams.get("codec")).toBe("opus");
    // `new URL("//x:99999", base)` throws "Invalid URL": this one killed the process from the upgrade handler.
    expect(requestTarget("//x:99999")?.pathname).toBe("//x:99999");
    expect(requestTarget("//[")?.pathname).toBe("//[");
    expect(requestTarget("//evil.example/websocket")?.pathname).toBe("//evil.example/websocket");
  });

  it("reads absolute-form for its path, and refuses what is no target here", () => {
    expect(requestTarget("http://gw.example.com/health?x=1")?.pathname).toBe("/health");
    expect(requestTarget("http://[")).toBeUndefined();
    expect(requestTarget("http://x:99999/websocket")).toBeUndefined();
    for (const raw of [undefined, "", "*", "a:1", "ws://x/websocket", "websocket"]) expect(requestTarget(raw)).toBeUndefined();
  });
});
