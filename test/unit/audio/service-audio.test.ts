import { describe, expect, it, vi } from "vitest";
import { LOG_THROTTLE_MS } from "../../../src/log.js";
import { ServiceAudio } from "../../../src/audio/service-audio.js";

describe("ServiceAudio", () => {
  it("decodes strict base64 and drops the rest, warning at most once an interval with the count of those not written", () => {
    let now = 0;
    const warn = vi.fn();
    const audio = new ServiceAudio("acme", { warn }, () => now);
    expect(audio.decode(Buffer.from([1, 2, 3, 4]).toString("base64"))).toEqual(Buffer.from([1, 2, 3, 4]));
    expect(audio.decode("")).toEqual(Buffer.alloc(0));
    for (const text of ["AAA-AAAA", "AA=AAAAA", "AAAA AAA", "AAAAAA"]) expect(audio.decode(text, { turn: "t1" })).toBeUndefined();
    expect(warn.mock.calls).toEqual([[{ turn: "t1", chars: 8 }, "acme sent audio that is not base64; dropped"]]);
    now += LOG_THROTTLE_MS;
    expect(audio.decode("A")).toBeUndefined();
    expect(warn.mock.calls[1]).toEqual([{ chars: 1, suppressed: 3 }, "acme sent audio that is not base64; dropped"]);
  });
});
