import { describe, expect, it } from "vitest";
import { InputBudget } from "../../../src/transport/input-budget.js";

const limits = { framesPerSecond: 10, audioBytesPerSecond: 1000, textBytesPerSecond: 500, burstSeconds: 2 };

describe("InputBudget", () => {
  it("passes a peer within its budget, bursts included, and refills in real time", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    for (let i = 0; i < 20; i++) expect(budget.take("audio", 100)).toBe("pass");
    expect(budget.take("audio", 100)).toBe("pause");
    now += 2000;
    expect(budget.take("text", 400)).toBe("pass");
    expect(budget.resumeInMs()).toBe(0);
  });

  it("over budget, says when reading may resume; past a bucket of debt, drops and counts", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    // 2 s of audio in one frame, then another: the second goes into debt (1 s of audio refills it).
    expect(budget.take("audio", 2000)).toBe("pass");
    expect(budget.take("audio", 1000)).toBe("pause");
    expect(budget.resumeInMs()).toBe(1000);
    expect(budget.take("audio", 1000)).toBe("pause");
    // Two seconds of debt: a whole bucket. What the socket layer had already read is dropped now.
    expect(budget.take("audio", 10)).toBe("drop");
    expect(budget.take("text", 10)).toBe("pass");
    expect(budget.takeDropped()).toBe(1);
    expect(budget.takeDropped()).toBe(0);
    now += 2000;
    expect(budget.resumeInMs()).toBe(0);
  });

  it("counts frames as well as bytes: a flood of tiny commands is held to the frame rate", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    const verdicts = Array.from({ length: 100 }, () => budget.take("text", 16));
    expect(verdicts.filter((v) => v === "pass")).toHaveLength(20);
    expect(verdicts.filter((v) => v === "pause")).toHaveLength(20);
    expect(verdicts.filter((v) => v === "drop")).toHaveLength(60);
    now += 1000;
    expect(budget.take("text", 16)).toBe("pause");
    now += 4000;
    expect(budget.take("text", 16)).toBe("pass");
  });
});
