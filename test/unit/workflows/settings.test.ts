// The operator's workflow settings: defaults under the working directory, and a bad value refused
// naming its variable.
import { describe, expect, it } from "vitest";
import { workflowSettings } from "../../../src/workflows/settings.js";

describe("workflowSettings", () => {
  it("defaults to .switchboard/workflows under the working directory and 7 days", () => {
    expect(workflowSettings({}, "/srv/agent")).toEqual({ runsIn: { dir: "/srv/agent/.switchboard/workflows" }, retentionDays: 7 });
  });

  it("reads SWITCHBOARD_WORKFLOWS_DIR (relative to the working directory) and SWITCHBOARD_WORKFLOWS_RETENTION_DAYS", () => {
    expect(workflowSettings({ SWITCHBOARD_WORKFLOWS_DIR: "data/runs", SWITCHBOARD_WORKFLOWS_RETENTION_DAYS: "30" }, "/srv/agent")).toEqual({ runsIn: { dir: "/srv/agent/data/runs" }, retentionDays: 30 });
    expect(workflowSettings({ SWITCHBOARD_WORKFLOWS_DIR: "/var/lib/sb" }, "/srv/agent").runsIn).toEqual({ dir: "/var/lib/sb" });
  });

  it("refuses a retention that is not a whole number of days ≥ 1", () => {
    for (const bad of ["0", "-3", "1.5", "week"]) {
      expect(() => workflowSettings({ SWITCHBOARD_WORKFLOWS_RETENTION_DAYS: bad })).toThrow(/^SWITCHBOARD_WORKFLOWS_RETENTION_DAYS: .* is not a whole number ≥ 1/);
    }
  });

  it("reads SWITCHBOARD_WORKFLOWS_DATABASE_URL; refuses one that is not PostgreSQL's, or set beside SWITCHBOARD_WORKFLOWS_DIR", () => {
    const database = "postgres://sb:secret@db.internal:5432/switchboard";
    expect(workflowSettings({ SWITCHBOARD_WORKFLOWS_DATABASE_URL: database }, "/srv/agent")).toEqual({ runsIn: { database }, retentionDays: 7 });
    for (const bad of ["mysql://db/x", "db.internal:5432", "postgres://"]) {
      expect(() => workflowSettings({ SWITCHBOARD_WORKFLOWS_DATABASE_URL: bad })).toThrow(/^SWITCHBOARD_WORKFLOWS_DATABASE_URL: not a PostgreSQL URL; set postgres:\/\//);
    }
    expect(() => workflowSettings({ SWITCHBOARD_WORKFLOWS_DATABASE_URL: database, SWITCHBOARD_WORKFLOWS_DIR: "runs" })).toThrow(/both set: runs live in one place; unset one/);
  });
});
