import { describe, expect, it } from "vitest";
import { PRE_ATTACH_MAX_FRAMES, PreAttachBuffer } from "../../../src/transport/pre-attach.js";

type Item = { readonly audio: number } | { readonly command: string };

function buffer(limits = { audioBytes: 100, commands: 2 }): { buffer: PreAttachBuffer<Item>; overflows: number[] } {
  const overflows: number[] = [];
  const held = new PreAttachBuffer<Item>(limits, (item) => ("audio" in item ? item.audio : undefined), (bytes) => overflows.push(bytes));
  return { buffer: held, overflows };
}

describe("PreAttachBuffer", () => {
  it("holds input in arrival order until drained, then starts empty", () => {
    const { buffer: held } = buffer();
    held.hold({ audio: 10 });
    held.hold({ command: "a" });
    held.hold({ audio: 20 });
    expect(held.drain()).toEqual([{ audio: 10 }, { command: "a" }, { audio: 20 }]);
    expect(held.drain()).toEqual([]);
  });

  it("drops audio past its byte limit and commands past theirs, reporting the first drop once", () => {
    const { buffer: held, overflows } = buffer();
    held.hold({ audio: 60 });
    held.hold({ audio: 60 });
    held.hold({ command: "a" });
    held.hold({ command: "b" });
    held.hold({ command: "c" });
    held.hold({ audio: 40 });
    expect(held.drain()).toEqual([{ audio: 60 }, { command: "a" }, { command: "b" }, { audio: 40 }]);
    expect(overflows).toEqual([60]);
  });

  it("bounds the frame count, whatever the frames weigh", () => {
    const { buffer: held, overflows } = buffer({ audioBytes: Number.POSITIVE_INFINITY, commands: 0 });
    for (let i = 0; i <= PRE_ATTACH_MAX_FRAMES; i++) held.hold({ audio: 1 });
    expect(held.drain()).toHaveLength(PRE_ATTACH_MAX_FRAMES);
    expect(overflows).toHaveLength(1);
  });
});
