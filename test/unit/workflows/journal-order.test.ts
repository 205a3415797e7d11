import { describe, expect, it } from "vitest";
import { createdFirst } from "../../../src/workflows/sdk-contract.js";

describe("a run's journal", () => {
  it("lists run_created first even when the SDK's resilient start wrote run_started before it", () => {
    const raced = [{ id: "e1", type: "run_started" }, { id: "e2", type: "run_created" }, { id: "e3", type: "step_created" }];
    expect(createdFirst(raced).map((event) => event.id)).toEqual(["e2", "e1", "e3"]);
  });

  it("leaves a journal already in order, or without run_created, as it is", () => {
    const ordered = [{ type: "run_created" }, { type: "run_started" }];
    expect(createdFirst(ordered)).toEqual(ordered);
    expect(createdFirst([{ type: "run_started" }])).toEqual([{ type: "run_started" }]);
  });
});
