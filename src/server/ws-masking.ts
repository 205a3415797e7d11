/**
 * How ws masks and unmasks WebSocket frames in this process. Every frame a client sends is masked
 * (RFC 6455 §5.3): each a caller or browser sends the gateway, each the gateway sends a provider.
 * ws XORs them in native code when the optional dependency `bufferutil` loads (for frames of 32
 * bytes and more), else in a JavaScript loop: about 550 ns against 55 for a 330-byte carrier frame
 * (docs/benchmarks.md, "Frames unmasked natively"). `WS_NO_BUFFER_UTIL` turns it off, as ws reads it.
 */
import { createRequire } from "node:module";

export type WsMasking =
  | { readonly native: true }
  | { readonly native: false; readonly why: "WS_NO_BUFFER_UTIL is set" | "bufferutil is not installed" | "bufferutil's native build did not load" };

/** What ws in this install takes: resolved from ws's own directory, as ws requires it. */
export function wsMasking(env: NodeJS.ProcessEnv = process.env): WsMasking {
  if (env.WS_NO_BUFFER_UTIL) return { native: false, why: "WS_NO_BUFFER_UTIL is set" };
  let util: { readonly unmask?: unknown };
  try {
    util = createRequire(createRequire(import.meta.url).resolve("ws"))("bufferutil") as { readonly unmask?: unknown };
  } catch {
    return { native: false, why: "bufferutil is not installed" };
  }
  // bufferutil falls back to its own JavaScript when its build does not load; a native function reads as `[native code]`.
  return typeof util.unmask === "function" && Function.prototype.toString.call(util.unmask).includes("[native code]") ? { native: true } : { native: false, why: "bufferutil's native build did not load" };
}
