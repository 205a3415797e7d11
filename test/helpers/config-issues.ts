import { expect } from "vitest";
import { ConfigError, type ConfigIssue } from "../../src/manifest/index.js";

/** The issues of the ConfigError `run` throws; fails the test if it throws anything else or nothing. */
export function configIssues(run: () => unknown): ConfigIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues.map((issue) => ({ ...issue }));
  }
  throw new Error("expected a ConfigError");
}
