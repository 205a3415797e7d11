import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { wsMasking } from "../../../src/server/ws-masking.js";

// ws masks every frame a client sends and unmasks every frame it receives from one (RFC 6455
// §5.3) in a JavaScript loop unless the optional dependency `bufferutil` loads: about ten times
// the time (docs/deploy.md "Sizing"). It ships prebuilt for these platforms, so an install here
// that lost it (a lockfile change, an `--omit=optional`) is a regression this test names.
const PREBUILT = new Set(["linux-x64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-ia32"]);

interface BufferUtil {
  readonly mask: (source: Buffer, mask: Buffer, output: Buffer, offset: number, length: number) => void;
  readonly unmask: (buffer: Buffer, mask: Buffer) => void;
}

const fromWs = createRequire(createRequire(import.meta.url).resolve("ws"));

describe("ws frame masking", () => {
  it.runIf(PREBUILT.has(`${process.platform}-${process.arch}`) && !process.env.WS_NO_BUFFER_UTIL)("ws has bufferutil's native mask and unmask to take, and the gateway says so", () => {
    const native = fromWs("bufferutil") as BufferUtil;
    expect(Function.prototype.toString.call(native.unmask)).toContain("[native code]");
    expect(Function.prototype.toString.call(native.mask)).toContain("[native code]");
    expect(wsMasking({})).toEqual({ native: true });
  });

  it("WS_NO_BUFFER_UTIL, which ws reads, is JavaScript masking and says why", () => {
    expect(wsMasking({ WS_NO_BUFFER_UTIL: "1" })).toEqual({ native: false, why: "WS_NO_BUFFER_UTIL is set" });
  });

  it("what ws unmasks is the frame the client masked, whichever way it masks", () => {
    // ws's own helpers: the native path for 32 bytes and more, its loop below that.
    const util = fromWs("./lib/buffer-util.js") as BufferUtil;
    const key = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
    for (const size of [0, 1, 5, 31, 32, 33, 330, 4099]) {
      const payload = Buffer.from(Array.from({ length: size }, (_, i) => (i * 151 + 7) & 0xff));
      const masked = Buffer.alloc(size);
      util.mask(payload, key, masked, 0, size);
      if (size > 0) expect(masked.equals(payload)).toBe(false);
      util.unmask(masked, key);
      expect(masked.equals(payload)).toBe(true);
    }
  });
});
