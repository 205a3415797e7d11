// The key index survives what a crash leaves: a torn last line is skipped, later appends still
// parse, and pruning rewrites the file without the dropped runs.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KeyIndex } from "../../../src/workflows/key-index.js";

const dir = mkdtempSync(join(tmpdir(), "wf-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("KeyIndex", () => {
  it("reads back what was added, skipping a torn line and foreign lines", async () => {
    const path = join(dir, "keys.jsonl");
    const index = await KeyIndex.open(path);
    await index.add({ key: "k", runId: "r1", workflow: "w", at: 1 });
    appendFileSync(path, '{"key":"k","runId":"r2","work'); // a crash mid-write
    const reopened = await KeyIndex.open(path);
    await reopened.add({ key: "k", runId: "r3", workflow: "w", at: 3 });
    appendFileSync(path, '\n{"not":"an entry"}\n');
    const again = await KeyIndex.open(path);
    expect((await again.runsOf("k")).map((entry) => entry.runId)).toEqual(["r1", "r3"]);
    expect(await again.entryOf("r3")).toEqual({ key: "k", runId: "r3", workflow: "w", at: 3 });
    expect(await again.runsOf("other")).toEqual([]);
  });

  it("drops pruned runs from memory and from the file", async () => {
    const path = join(dir, "prune.jsonl");
    const index = await KeyIndex.open(path);
    await index.add({ key: "a", runId: "r1", workflow: "w", at: 1 });
    await index.add({ key: "a", runId: "r2", workflow: "w", at: 2 });
    await index.add({ key: "b", runId: "r3", workflow: "w", at: 3 });
    await index.drop(["r1", "r3"]);
    expect((await index.runsOf("a")).map((entry) => entry.runId)).toEqual(["r2"]);
    expect(await index.runsOf("b")).toEqual([]);
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(1);
    expect((await (await KeyIndex.open(path)).runsOf("a")).map((entry) => entry.runId)).toEqual(["r2"]);
  });
});
