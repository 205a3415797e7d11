// `voicemail` (docs/config.md "voicemail"): defaults, and each refusal naming the field and the fix.
import { describe, expect, it } from "vitest";
import { resolveConfig, toAgentConfig } from "../../../src/manifest/index.js";
import { configIssues } from "../../helpers/config-issues.js";

const phone = { name: "a", telephony: ["twilio"] as const };

describe("voicemail config", () => {
  it("resolves the defaults: both detections, placed calls, a 6 s window, 20 s for the beep", () => {
    const config = toAgentConfig({ ...phone, voicemail: { action: "message", message: "Hi, this is Ann from the clinic." } });
    expect(resolveConfig(config).voicemail).toEqual({ action: "message", message: "Hi, this is Ann from the clinic.", detection: "both", calls: "placed", windowMs: 6000, beepWaitMs: 20_000 });
    expect(resolveConfig(toAgentConfig({ ...phone })).voicemail).toBeUndefined();
    expect(resolveConfig(toAgentConfig({ ...phone, voicemail: { action: "hangup", detection: "carrier", calls: "all", windowMs: 4000 } })).voicemail).toMatchObject({ detection: "carrier", calls: "all", windowMs: 4000 });
  });

  it("refuses a message action without its message, and a message or a beep wait with hangup", () => {
    expect(configIssues(() => toAgentConfig({ ...phone, voicemail: { action: "message" } }))).toEqual([
      { path: "voicemail.message", message: expect.stringMatching(/action "message" needs the message to leave: add message:/) },
    ]);
    const hangup = configIssues(() => toAgentConfig({ ...phone, voicemail: { action: "hangup", message: "Hi", beepWaitMs: 5000 } }));
    expect(hangup.map((issue) => issue.path)).toEqual(["voicemail.message", "voicemail.beepWaitMs"]);
  });

  it("refuses bad values by their path", () => {
    const issues = configIssues(() => toAgentConfig({ ...phone, voicemail: { action: "leave" as "hangup", detection: "ears" as "local", windowMs: 1000, beepWaitMs: 120_000, extra: 1 } as never }));
    expect(issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(["voicemail.action", "voicemail.detection", "voicemail.windowMs", "voicemail.beepWaitMs"]));
    expect(issues.find((issue) => issue.path === "voicemail.windowMs")?.message).toMatch(/≥ 3000 ms/);
  });

  it("refuses voicemail on an agent with no phone calls, and in text mode", () => {
    expect(configIssues(() => toAgentConfig({ name: "a", voicemail: { action: "hangup" } }))).toEqual([{ path: "voicemail", message: expect.stringMatching(/does nothing without phone calls: set telephony/) }]);
    const text = configIssues(() => toAgentConfig({ name: "a", mode: "text", llm: "openai/gpt-4.1-mini", voicemail: { action: "hangup" } }));
    expect(text.map((issue) => issue.path)).toContain("voicemail");
  });
});
