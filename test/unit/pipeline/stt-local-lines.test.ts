// pocketsphinx_continuous `-time yes` output read into utterances (local-lines.ts). The samples are
// what Debian's pocketsphinx 0.8+5prealpha printed for two flite clips in lm, kws and grammar mode.
import { describe, expect, it } from "vitest";
import { UtteranceLines } from "../../../src/pipeline/providers/stt/local-lines.js";

const LM = "hello there\n<s> 0.000 0.640 0.999600\nhello(2) 0.650 1.020 0.999400\nthere 1.030 1.400 0.980687\n</s> 1.650 1.730 1.000000\n";
const LM2 = "mccain is four five six seven\n<s> 3.130 3.220 0.999900\nfour 3.820 3.980 0.071920\nseven 4.610 5.150 0.998401\n</s> 5.160 5.510 1.000000\n";

describe("UtteranceLines", () => {
  it("a read that ends a block gives its hypothesis and its last segment's end, in stream ms", () => {
    const lines = new UtteranceLines();
    expect(lines.push(LM)).toEqual([{ text: "hello there", endMs: 1730 }]);
    expect(lines.push(LM2)).toEqual([{ text: "mccain is four five six seven", endMs: 5510 }]);
  });

  it("two blocks in one read, and a block split mid-line across reads", () => {
    const lines = new UtteranceLines();
    expect(lines.push(LM + LM2.slice(0, 40))).toEqual([{ text: "hello there", endMs: 1730 }]);
    expect(lines.push(LM2.slice(40))).toEqual([{ text: "mccain is four five six seven", endMs: 5510 }]);
  });

  it("a hypothesis read alone waits for its segments; keyword mode's spacing and grammar mode's <sil> end", () => {
    const lines = new UtteranceLines();
    expect(lines.push("hello \n")).toEqual([]);
    expect(lines.push("hello  0.700 0.830 0.833334\n")).toEqual([{ text: "hello", endMs: 830 }]);
    expect(lines.push("stop\nstop 2.100 2.400 1.000000\n<sil> 2.410 2.730 1.000000\n")).toEqual([{ text: "stop", endMs: 2730 }]);
  });

  it("the end of output gives what is left, a last line without its newline included", () => {
    const lines = new UtteranceLines();
    expect(lines.push("hello there\n")).toEqual([]);
    expect(lines.push("goodbye")).toEqual([]); // a part of a line: a segment of hello's, or the next hypothesis?
    expect(lines.end()).toEqual([
      { text: "hello there", endMs: undefined },
      { text: "goodbye", endMs: undefined },
    ]);
    expect(lines.end()).toEqual([]);
  });
});
