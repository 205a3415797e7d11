import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/manifest/index.js";
import { SnapshotList, type ListSnapshot } from "../../src/snapshot-list.js";

describe("SnapshotList", () => {
  it("answers as an array does, and every snapshot keeps what it saw, through random pushes, sets, splices, drops and clears", () => {
    const next = seededRandom(11);
    const list = new SnapshotList<number>();
    let model: number[] = [];
    const snapshots: { snapshot: ListSnapshot<number>; saw: readonly number[]; read: boolean }[] = [];
    for (let step = 0; step < 5_000; step++) {
      const roll = next();
      const index = Math.floor(next() * (model.length + 1));
      if (roll < 0.4) {
        list.push(step, step + 1);
        model.push(step, step + 1);
      } else if (roll < 0.5 && index < model.length) {
        list.set(index, -step);
        model[index] = -step;
      } else if (roll < 0.6) {
        const count = Math.floor(next() * 3);
        list.splice(index, count, step);
        model.splice(index, count, step);
      } else if (roll < 0.8) {
        // Drops nearly keep pace with pushes: the list compacts its front often.
        const count = Math.floor(next() * 8);
        list.dropFront(count);
        model.splice(0, count);
      } else if (roll < 0.81) {
        list.clear();
        model = [];
      } else if (roll < 0.9) {
        // Half the snapshots are read at once (their array built then), half only at the end.
        const snapshot = list.snapshot();
        const read = next() < 0.5;
        if (read) expect(snapshot.toArray()).toEqual(model);
        snapshots.push({ snapshot, saw: [...model], read });
      } else {
        expect(list.toArray()).toEqual(model);
      }
      expect(list.length).toBe(model.length);
      expect(list.at(index)).toBe(model[index]);
      expect(list.indexOf(model[index] ?? NaN)).toBe(model.indexOf(model[index] ?? NaN));
    }
    expect([...list]).toEqual(model);
    expect(snapshots.length).toBeGreaterThan(400);
    for (const { snapshot, saw } of snapshots) {
      expect(snapshot.length).toBe(saw.length);
      expect(snapshot.toArray()).toEqual(saw);
    }
    expect(snapshots.filter((s) => !s.read).length).toBeGreaterThan(100);
  });

  it("shares one array between the reads of an unchanged list and its snapshot", () => {
    const list = new SnapshotList([1, 2, 3]);
    const array = list.toArray();
    expect(list.toArray()).toBe(array);
    expect(list.snapshot().toArray()).toBe(array);
    list.push(4);
    expect(list.toArray()).toEqual([1, 2, 3, 4]);
    expect(array).toEqual([1, 2, 3]);
  });

  it("takes a snapshot without copying: a window on the entries it holds now", () => {
    const list = new SnapshotList<object>();
    const entries = Array.from({ length: 1_000 }, (_, i) => ({ i }));
    list.push(...entries);
    const before = list.snapshot();
    list.push({ i: 1_000 });
    list.dropFront(300);
    // Written after the snapshot: the list moves to an array of its own; the snapshot's stays.
    list.set(0, { i: -1 });
    const middle = list.snapshot();
    // Dropping past half the entries compacts the list into a new array; the snapshots keep theirs.
    list.dropFront(400);
    list.splice(0, 1, { i: -2 });
    expect(before.length).toBe(1_000);
    expect(before.toArray()[300]).toBe(entries[300]);
    expect(middle.toArray()[0]).toEqual({ i: -1 });
    expect(middle.toArray()[400]).toBe(entries[700]);
    expect(list.at(0)).toEqual({ i: -2 });
    expect(list.at(1)).toBe(entries[701]);
    expect(list.length).toBe(301);
  });

  it("refuses to set outside the list", () => {
    const list = new SnapshotList([1]);
    expect(() => list.set(1, 2)).toThrow(RangeError);
    expect(() => list.set(-1, 2)).toThrow(RangeError);
  });
});
