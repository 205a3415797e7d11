import { describe, expect, it } from "vitest";
import { resolveConfig, toAgentConfig } from "../../../src/manifest/index.js";
import { configIssues } from "../../helpers/config-issues.js";

const dir = { dir: "/var/lib/switchboard/records" };

describe("recording config", () => {
  it("resolves the defaults: audio and transcript on, no redaction, 120 minutes of audio", () => {
    const config = toAgentConfig({ name: "a", recording: { destination: dir } });
    expect(resolveConfig(config).recording).toEqual({ audio: true, transcript: true, destination: dir, redact: [], maxAudioMs: 120 * 60_000 });
    expect(resolveConfig(toAgentConfig({ name: "a" })).recording).toBeUndefined();
  });

  it("accepts an S3 destination and custom rules", () => {
    const config = toAgentConfig({
      name: "a",
      recording: { destination: { s3: { bucket: "my-records", prefix: "calls/", region: "eu-west-1", endpoint: "http://127.0.0.1:9000", forcePathStyle: true } }, redact: ["card", "email", { name: "account", pattern: "ACC-\\d+" }], maxAudioMinutes: 30 },
    });
    expect(config.recording?.redact).toHaveLength(3);
  });

  it("refuses each bad field by its path, saying what to write", () => {
    const issues = configIssues(() =>
      toAgentConfig({
        name: "a",
        recording: {
          destination: { s3: { bucket: "Bad_Bucket", prefix: "/calls", endpoint: "ftp://x" } },
          redact: ["cards" as "card", { name: "acct", pattern: "([" }],
          maxAudioMinutes: 601,
        },
      }),
    );
    const paths = issues.map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(["recording.destination.s3.bucket", "recording.destination.s3.prefix", "recording.destination.s3.endpoint", "recording.redact[0]", "recording.maxAudioMinutes"]));
    expect(issues.find((issue) => issue.path === "recording.redact[0]")?.message).toMatch(/"card", "ssn", "email" or \{ name, pattern, flags\? \}/);
  });

  it("refuses a destination that is neither a dir nor an s3 bucket, and a record of nothing", () => {
    expect(configIssues(() => toAgentConfig({ name: "a", recording: { destination: { url: "x" } as never } })).map((issue) => issue.path)).toContain("recording.destination");
    const nothing = configIssues(() => toAgentConfig({ name: "a", recording: { audio: false, transcript: false, destination: dir } }));
    expect(nothing).toEqual([{ path: "recording", message: expect.stringMatching(/records nothing/) }]);
  });

  it("refuses a custom pattern that does not compile, and a custom rule named as a built-in", () => {
    const issues = configIssues(() => toAgentConfig({ name: "a", recording: { destination: dir, redact: [{ name: "acct", pattern: "([" }, { name: "card", pattern: "x" }] } }));
    expect(issues.map((issue) => issue.path)).toEqual(["recording.redact[0].pattern", "recording.redact[1].name"]);
  });

  it("a text agent records its transcript; recording.audio is refused (a text session has no audio)", () => {
    expect(toAgentConfig({ name: "a", text: true, recording: { destination: dir } }).recording).toBeDefined();
    const issues = configIssues(() => toAgentConfig({ name: "a", text: true, recording: { audio: true, destination: dir } }));
    expect(issues.map((issue) => issue.path)).toEqual(["recording.audio"]);
  });
});
