import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { FalseInterruption, MAX_RESUMES_IN_A_ROW, RESUME_QUOTE_CHARS } from "../../../src/pipeline/false-interruption.js";

describe("false interruptions", () => {
  it("quote the tail of what was heard, once, and not while a reply is busy", () => {
    const resume = new FalseInterruption(silentLogger);
    const heard = "x".repeat(RESUME_QUOTE_CHARS) + " and the rest";
    resume.arm(heard);
    expect(resume.armed).toBe(true);
    expect(resume.take(true)).toBeUndefined();
    expect(resume.armed).toBe(false);
    resume.arm(heard);
    expect(resume.take(false)).toBe(heard.slice(-RESUME_QUOTE_CHARS));
    expect(resume.take(false)).toBeUndefined();
    resume.arm("");
    expect(resume.armed).toBe(false);
  });

  it("resume at most MAX_RESUMES_IN_A_ROW times until the caller takes a turn", () => {
    const resume = new FalseInterruption(silentLogger);
    const taken: (string | undefined)[] = [];
    for (let i = 0; i <= MAX_RESUMES_IN_A_ROW; i++) {
      resume.arm("heard so far");
      taken.push(resume.take(false));
    }
    expect(taken.filter((q) => q !== undefined)).toHaveLength(MAX_RESUMES_IN_A_ROW);
    expect(taken.at(-1)).toBeUndefined();
    resume.reset();
    resume.arm("heard so far");
    expect(resume.take(false)).toBe("heard so far");
  });
});
