import { collectDefaultMetrics, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EVENT_LOOP_LAG_METRICS, EventLoopLag, type DelayHistogram } from "../../../src/server/event-loop-lag.js";
import { GatewayMetrics } from "../../../src/server/metrics.js";

/** A histogram that says whether it samples, and holds what the test puts in it (ns). */
class FakeHistogram implements DelayHistogram {
  enabled = false;
  resets = 0;
  samples: number[] = [];
  enable(): boolean {
    const was = this.enabled;
    this.enabled = true;
    return !was;
  }
  disable(): boolean {
    const was = this.enabled;
    this.enabled = false;
    return was;
  }
  reset(): void {
    this.resets += 1;
    this.samples = [];
  }
  get count(): number {
    return this.samples.length;
  }
  get min(): number {
    return Math.min(...this.samples);
  }
  get max(): number {
    return Math.max(...this.samples);
  }
  get mean(): number {
    return this.samples.reduce((a, b) => a + b, 0) / this.samples.length;
  }
  get stddev(): number {
    return 0;
  }
  percentile(p: number): number {
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  }
}

async function values(registry: Registry): Promise<Map<string, number>> {
  const text = await registry.metrics();
  return new Map(text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) => [l.split(" ")[0]!, Number(l.split(" ")[1])]));
}

describe("EventLoopLag", () => {
  it("samples the loop only while a session is live, with a histogram made for the first one", () => {
    const histogram = new FakeHistogram();
    let made = 0;
    const lag = new EventLoopLag(new Registry(), "t_", () => (made++, histogram));
    expect(made).toBe(0);
    lag.sessionStarted();
    lag.sessionStarted();
    expect(histogram.enabled).toBe(true);
    lag.sessionEnded();
    expect(histogram.enabled).toBe(true);
    lag.sessionEnded();
    expect(histogram.enabled).toBe(false);
    // An end with nothing live changes nothing: the next start still starts the sampling.
    lag.sessionEnded();
    lag.sessionStarted();
    expect(histogram.enabled).toBe(true);
    expect(made).toBe(1);
  });

  it("reports what was sampled since the last scrape in seconds, then starts afresh; zeros when nothing was", async () => {
    const histogram = new FakeHistogram();
    const registry = new Registry();
    const lag = new EventLoopLag(registry, "t_", () => histogram);
    // No histogram before the first session: zeros.
    expect((await values(registry)).get("t_nodejs_eventloop_lag_p99_seconds")).toBe(0);
    lag.sessionStarted();
    histogram.samples = [10e6, 11e6, 30e6];
    const first = await values(registry);
    expect(first.get("t_nodejs_eventloop_lag_min_seconds")).toBeCloseTo(0.01);
    expect(first.get("t_nodejs_eventloop_lag_max_seconds")).toBeCloseTo(0.03);
    expect(first.get("t_nodejs_eventloop_lag_p50_seconds")).toBeCloseTo(0.011);
    expect(first.get("t_nodejs_eventloop_lag_p99_seconds")).toBeCloseTo(0.03);
    expect(histogram.resets).toBe(1);
    lag.sessionEnded();
    const second = await values(registry);
    for (const name of EVENT_LOOP_LAG_METRICS.filter((n) => n !== "nodejs_eventloop_lag_seconds")) expect(second.get(`t_${name}`)).toBe(0);
  });
});

describe("GatewayMetrics with process metrics", () => {
  it("exposes each event-loop gauge once, under prom-client's default names", async () => {
    const metrics = new GatewayMetrics({ processMetrics: true });
    const text = await metrics.text();
    for (const name of EVENT_LOOP_LAG_METRICS) expect(text.split("\n").filter((l) => l.startsWith(`# TYPE switchboard_${name} `))).toHaveLength(1);
    // The rest of prom-client's default process metrics, the same as collectDefaultMetrics registers.
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs, prefix: "switchboard_" });
    const names = (registry: Registry): string[] => registry.getMetricsAsArray().map((m) => m.name).sort();
    expect(names(metrics.registry).filter((n) => n.includes("process_") || n.includes("nodejs_"))).toEqual(names(theirs));
  });
});
