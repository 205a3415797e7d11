import { describe, expect, it, vi } from "vitest";
import { ConfigError, toolSchema, toToolResult, type AnyToolDef, type ToolContext, type Toolset, type TransferConfig } from "../../../src/manifest/index.js";
import { BUILTIN_TOOL_NAMES, builtinToolset, type BuiltinHooks, type TransferAnswer } from "../../../src/session/builtins/index.js";

/** 14:05:00 UTC on Monday 30 November 2026. */
const NOW = new Date("2026-11-30T14:05:00Z");

function hooks(overrides: Partial<BuiltinHooks> = {}): BuiltinHooks {
  return { now: () => NOW, endCall: vi.fn(), ...overrides };
}

function ctx(): ToolContext {
  return { toolCallId: "c1", signal: new AbortController().signal, session: undefined };
}

/** Validate `args` against the tool's own schema, then run it through the toolset. */
async function call(set: Toolset, name: string, args: unknown): Promise<{ text?: string; details?: unknown; isError?: boolean }> {
  const entry = set.list()[name];
  if (entry === undefined) throw new Error(`no ${name}`);
  const validation = entry.def.parameters.validate(args);
  if (!validation.ok) throw new Error(validation.errors.join("; "));
  expect(set.gate(name, ctx())).toBeUndefined();
  return toToolResult(await set.execute(name, validation.value, ctx()));
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("the catalog", () => {
  it("names every builtin", () => {
    expect(BUILTIN_TOOL_NAMES).toEqual(["current_time", "calculate", "end_call", "transfer_call"]);
    expect(Object.isFrozen(BUILTIN_TOOL_NAMES)).toBe(true);
  });

  it("builds a builtin toolset of the named tools, in the order given, run by this process", () => {
    const set = builtinToolset(["end_call", "calculate"], hooks());
    expect(set.source).toBe("builtin");
    expect(Object.keys(set.list())).toEqual(["end_call", "calculate"]);
    expect(Object.values(set.list()).map((e) => e.executor)).toEqual(["host", "host"]);
  });

  it("lists a repeated name once and builds nothing for no names", () => {
    expect(Object.keys(builtinToolset(["calculate", "calculate"], hooks()).list())).toEqual(["calculate"]);
    expect(builtinToolset([], hooks()).list()).toEqual({});
  });

  it("declares effects: reads for time and math, writes for call control", () => {
    const set = builtinToolset(BUILTIN_TOOL_NAMES, hooks({ transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } }));
    const effects = Object.fromEntries(Object.entries(set.list()).map(([name, e]) => [name, e.def.effect]));
    expect(effects).toEqual({ current_time: "read", calculate: "read", end_call: "write", transfer_call: "write" });
  });

  it("describes every parameter for the model", () => {
    const set = builtinToolset(BUILTIN_TOOL_NAMES, hooks({ transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } }));
    for (const [name, entry] of Object.entries(set.list())) {
      const schema = toolSchema(name, entry.def);
      expect(schema.description.length).toBeGreaterThan(20);
      expect(schema.parameters.type).toBe("object");
      const properties = Object.values(schema.parameters.properties ?? {});
      expect(properties.length).toBeGreaterThan(0);
      for (const property of properties) {
        expect(typeof property === "object" && typeof property.description === "string" && property.description.length > 10).toBe(true);
      }
    }
  });

  it("refuses unknown names, each at its index, with a did-you-mean and the known names", () => {
    const error = configError(() => builtinToolset(["calculate", "calculator", "end_cal", "weather"], hooks()));
    expect(error.issues.map((i) => i.path)).toEqual(["builtinTools[1]", "builtinTools[2]", "builtinTools[3]"]);
    const known = "Known builtins: current_time, calculate, end_call, transfer_call.";
    expect(error.issues[0]?.message).toBe(`unknown builtin tool \`calculator\`. Did you mean \`calculate\`? ${known}`);
    expect(error.issues[1]?.message).toBe(`unknown builtin tool \`end_cal\`. Did you mean \`end_call\`? ${known}`);
    expect(error.issues[2]?.message).toBe(`unknown builtin tool \`weather\`. ${known}`);
    expect(error.message).toMatch(/^builtinTools: 3 problems\n {2}- builtinTools\[1\]: /);
  });

  it("refuses names that exist only on Object.prototype", () => {
    const error = configError(() => builtinToolset(["constructor", "__proto__", "toString"], hooks()));
    expect(error.issues.map((i) => i.path)).toEqual(["builtinTools[0]", "builtinTools[1]", "builtinTools[2]"]);
  });

  it("refuses an invalid default time zone when current_time is listed", () => {
    const error = configError(() => builtinToolset(["current_time"], hooks({ defaultTimeZone: "Europe/Atlantis" })));
    expect(error.issues).toEqual([
      { path: "defaultTimeZone", message: '"Europe/Atlantis" is not an IANA time zone; use a name such as "Europe/Paris" or "America/New_York".' },
    ]);
    expect(() => builtinToolset(["calculate"], hooks({ defaultTimeZone: "Europe/Atlantis" }))).not.toThrow();
  });
});

describe("current_time", () => {
  it("speaks the time in the zone asked for, from the injected clock", async () => {
    const set = builtinToolset(["current_time"], hooks());
    expect(await call(set, "current_time", { timeZone: "Europe/Paris" })).toEqual({
      text: "It is 3:05 PM on Monday, November 30, 2026 in Europe/Paris.",
      details: { iso: "2026-11-30T15:05:00+01:00", timeZone: "Europe/Paris" },
    });
    expect(await call(set, "current_time", { timeZone: "America/New_York" })).toEqual({
      text: "It is 9:05 AM on Monday, November 30, 2026 in America/New_York.",
      details: { iso: "2026-11-30T09:05:00-05:00", timeZone: "America/New_York" },
    });
  });

  it("crosses the date line where the zone does", async () => {
    const set = builtinToolset(["current_time"], hooks());
    const result = await call(set, "current_time", { timeZone: "Pacific/Auckland" });
    expect(result.text).toBe("It is 3:05 AM on Tuesday, December 1, 2026 in Pacific/Auckland.");
    expect(result.details).toEqual({ iso: "2026-12-01T03:05:00+13:00", timeZone: "Pacific/Auckland" });
  });

  it("uses plain spaces only, for speech", async () => {
    const result = await call(builtinToolset(["current_time"], hooks()), "current_time", { timeZone: "Asia/Kolkata" });
    expect(result.text).toBe("It is 7:35 PM on Monday, November 30, 2026 in Asia/Kolkata.");
    expect(result.text).not.toMatch(/[^\S ]/);
  });

  it("names the zone as asked, in its canonical case", async () => {
    const set = builtinToolset(["current_time"], hooks());
    expect((await call(set, "current_time", { timeZone: "europe/paris" })).details).toEqual({
      iso: "2026-11-30T15:05:00+01:00",
      timeZone: "Europe/Paris",
    });
    expect((await call(set, "current_time", { timeZone: "Asia/Kolkata" })).details).toMatchObject({ timeZone: "Asia/Kolkata" });
  });

  it("defaults to UTC, or to the host's default zone", async () => {
    expect(await call(builtinToolset(["current_time"], hooks()), "current_time", {})).toEqual({
      text: "It is 2:05 PM on Monday, November 30, 2026 in UTC.",
      details: { iso: "2026-11-30T14:05:00+00:00", timeZone: "UTC" },
    });
    const tokyo = builtinToolset(["current_time"], hooks({ defaultTimeZone: "Asia/Tokyo" }));
    expect((await call(tokyo, "current_time", {})).text).toBe("It is 11:05 PM on Monday, November 30, 2026 in Asia/Tokyo.");
  });

  it("reads the clock at each call", async () => {
    let now = NOW;
    const set = builtinToolset(["current_time"], hooks({ now: () => now }));
    expect((await call(set, "current_time", {})).text).toContain("2:05 PM");
    now = new Date("2026-11-30T00:00:30Z");
    expect((await call(set, "current_time", {})).text).toBe("It is 12:00 AM on Monday, November 30, 2026 in UTC.");
  });

  it("answers an invalid zone with an error result naming it and a valid example", async () => {
    const result = await call(builtinToolset(["current_time"], hooks()), "current_time", { timeZone: "Mars/Olympus_Mons" });
    expect(result).toEqual({
      text: '"Mars/Olympus_Mons" is not a time zone I know. Use an IANA name such as "Europe/Paris" or "America/New_York".',
      isError: true,
    });
  });
});

describe("calculate", () => {
  const set = builtinToolset(["calculate"], hooks());

  it("answers with the result and keeps the exact value in details", async () => {
    expect(await call(set, "calculate", { expression: "12 * 7" })).toEqual({
      text: "The result is 84.",
      details: { expression: "12 * 7", result: 84 },
    });
  });

  it.each([
    ["10 / 3", "The result is 3.333333333."],
    ["0.1 + 0.2", "The result is 0.3."],
    ["2 / 3", "The result is 0.6666666667."],
    ["1234567 * 1000", "The result is 1234567000."],
    ["2 ^ 70", "The result is 1180591621000000000000."],
    ["-15% of 80", "The result is -12."],
    ["1 / 3 / 10000000", "The result is 0.00000003333333333."],
  ])("rounds %s to ten significant digits for the text", async (expression, text) => {
    expect((await call(set, "calculate", { expression })).text).toBe(text);
  });

  it("keeps full precision in details", async () => {
    expect((await call(set, "calculate", { expression: "10 / 3" })).details).toEqual({ expression: "10 / 3", result: 10 / 3 });
  });

  it("answers bad input with an error result carrying the calculator's message", async () => {
    expect(await call(set, "calculate", { expression: "1 / 0" })).toEqual({ text: "I could not calculate that: division by zero at 3.", isError: true });
    expect(await call(set, "calculate", { expression: "(1 + 2))" })).toEqual({ text: "I could not calculate that: unexpected ')' at 8.", isError: true });
    expect((await call(set, "calculate", { expression: "process.exit()" })).isError).toBe(true);
  });

  it("needs an expression string", async () => {
    await expect(call(set, "calculate", {})).rejects.toThrow(/expression/);
    await expect(call(set, "calculate", { expression: 5 })).rejects.toThrow(/expression/);
  });
});

describe("end_call", () => {
  it("asks the host to end the call after the reply", async () => {
    const endCall = vi.fn();
    const set = builtinToolset(["end_call"], hooks({ endCall }));
    expect(await call(set, "end_call", {})).toEqual({ text: "Ending the call." });
    expect(endCall).toHaveBeenCalledTimes(1);
    expect(await call(set, "end_call", { reason: "caller said goodbye" })).toEqual({
      text: "Ending the call.",
      details: { reason: "caller said goodbye" },
    });
    expect(endCall).toHaveBeenCalledTimes(2);
  });

  it("tells the model to say goodbye first", () => {
    const def = builtinToolset(["end_call"], hooks()).list().end_call?.def;
    expect(def?.description).toMatch(/goodbye/i);
  });
});

const DESTINATIONS: TransferConfig = {
  destinations: [
    { name: "sales", number: "+14155550123", description: "new orders" },
    { name: "desk", sip: "sip:desk@pbx.example.com", mode: "warm" },
  ],
};

describe("transfer_call", () => {
  it("offers only the allow-listed destinations, by name, each described", () => {
    const def = builtinToolset(["transfer_call"], hooks({ transfer: DESTINATIONS })).list().transfer_call?.def;
    const schema = toolSchema("transfer_call", def as AnyToolDef) as { description: string; parameters: { properties: Record<string, { anyOf?: { const: string }[] }> } };
    expect(schema.parameters.properties.destination?.anyOf?.map((c) => c.const)).toEqual(["sales", "desk"]);
    expect(schema.parameters.properties).toHaveProperty("summary");
    expect(schema.description).toContain('"sales": new orders');
    expect(schema.description).toContain('"desk" (warm: give a summary)');
    expect(JSON.stringify(schema)).not.toContain("+14155550123");
  });

  it("leaves the summary out when no destination is warm", () => {
    const cold = builtinToolset(["transfer_call"], hooks({ transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } })).list().transfer_call?.def;
    expect(JSON.stringify(toolSchema("transfer_call", cold as AnyToolDef))).not.toContain("summary");
  });

  it("refuses a destination that is not on the list, even past the schema", async () => {
    const transferCall = vi.fn((): TransferAnswer => ({ text: "ok" }));
    const set = builtinToolset(["transfer_call"], hooks({ transfer: DESTINATIONS, transferCall }));
    await expect(call(set, "transfer_call", { destination: "+19005550000" })).rejects.toThrow();
    const result = toToolResult(await set.execute("transfer_call", { destination: "+19005550000" }, ctx()));
    expect(result).toMatchObject({ isError: true, text: '"+19005550000" is not a destination I may transfer to. I may transfer to: sales, desk.' });
    expect(transferCall).not.toHaveBeenCalled();
  });

  it("answers plainly when the connection cannot transfer", async () => {
    const set = builtinToolset(["transfer_call"], hooks({ transfer: DESTINATIONS }));
    expect(await call(set, "transfer_call", { destination: "sales" })).toEqual({ text: "Transferring calls is not supported on this connection.", isError: true });
  });

  it("resolves the named destination and hands it to the host", async () => {
    const transferCall = vi.fn((): TransferAnswer => ({ text: "The transfer starts once this reply has been heard." }));
    const set = builtinToolset(["transfer_call"], hooks({ transfer: { ...DESTINATIONS, ringTimeoutS: 30 }, transferCall }));
    expect(await call(set, "transfer_call", { destination: "sales" })).toEqual({ text: "The transfer starts once this reply has been heard.", details: { destination: "sales", mode: "cold" } });
    expect(transferCall).toHaveBeenCalledWith({ name: "sales", address: { kind: "number", number: "+14155550123" }, mode: "cold", summary: undefined, ringTimeoutS: 30 });
  });

  it("needs a summary for a warm destination, and passes it on", async () => {
    const transferCall = vi.fn((): TransferAnswer => ({ text: "ok" }));
    const set = builtinToolset(["transfer_call"], hooks({ transfer: DESTINATIONS, transferCall }));
    expect(await call(set, "transfer_call", { destination: "desk" })).toMatchObject({ isError: true, text: expect.stringContaining("needs a summary") as string });
    await call(set, "transfer_call", { destination: "desk", summary: "  Ann Lee, order 1234 arrived broken.  " });
    expect(transferCall).toHaveBeenCalledWith({ name: "desk", address: { kind: "sip", uri: "sip:desk@pbx.example.com" }, mode: "warm", summary: "Ann Lee, order 1234 arrived broken.", ringTimeoutS: 20 });
  });

  it("passes the host's refusal to the model as an error", async () => {
    const set = builtinToolset(["transfer_call"], hooks({ transfer: DESTINATIONS, transferCall: () => ({ text: "not on this call", isError: true }) }));
    expect(await call(set, "transfer_call", { destination: "sales" })).toEqual({ text: "not on this call", isError: true });
    expect(set.list().transfer_call?.def.onError).toBe("The transfer did not go through. Tell the caller and offer another way to help.");
  });

  it("is refused without an allow-list, naming the field and the fix", () => {
    const error = configError(() => builtinToolset(["transfer_call"], hooks()));
    expect(error.issues).toEqual([{ path: "transfer", message: expect.stringContaining('add transfer: { destinations: [{ name: "sales", number: "+14155550123" }] }') as string }]);
  });
});
