import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/manifest/index.js";
import { TallyCounter, TallyGauge, TallyHistogram } from "../../../src/server/tallies.js";

const BOUNDS = [0.05, 0.1, 0.2, 0.5, 1, 2.5];

/** The same metrics twice: prom-client's own, and the tallies, each in a registry of its own. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  return {
    theirs,
    ours,
    counter: {
      theirs: new Counter({ name: "t_calls_total", help: "Calls, by mode and transport.", labelNames: ["mode", "transport"], registers: [theirs] }),
      ours: new TallyCounter(ours, "t_calls_total", "Calls, by mode and transport.", ["mode", "transport"]),
    },
    bytes: {
      theirs: new Counter({ name: "t_bytes_total", help: "Bytes, by link.", labelNames: ["link"], registers: [theirs] }),
      ours: new TallyCounter(ours, "t_bytes_total", "Bytes, by link.", ["link"]),
    },
    gauge: {
      theirs: new Gauge({ name: "t_active", help: "Live, by mode.", labelNames: ["mode"], registers: [theirs] }),
      ours: new TallyGauge(ours, "t_active", "Live, by mode.", ["mode"]),
    },
    histogram: {
      theirs: new Histogram({ name: "t_stage_seconds", help: "Latency by mode and stage.", labelNames: ["mode", "stage"], buckets: BOUNDS, registers: [theirs] }),
      ours: new TallyHistogram(ours, "t_stage_seconds", "Latency by mode and stage.", ["mode", "stage"], BOUNDS),
    },
  };
}

type Pair = ReturnType<typeof pair>;

/** A seeded stream of observations (the same every run), applied to both sides. */
function observe(metrics: Pair, steps: number, seed: number): void {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const modes = ["s2s", "pipeline", "text"];
  for (let i = 0; i < steps; i++) {
    const mode = pick(modes);
    const step = Math.floor(next() * 5);
    if (step === 0) {
      const transport = pick(["twilio", "websocket", 'odd "quoted"\\name']);
      metrics.counter.theirs.inc({ mode, transport });
      metrics.counter.ours.inc(mode, transport);
    } else if (step === 1) {
      const bytes = Math.floor(next() * 4000);
      const link = pick(["stt", "s2s"]);
      if (bytes > 0) metrics.bytes.theirs.inc({ link }, bytes);
      metrics.bytes.ours.add(bytes, link);
    } else if (step === 2) {
      const up = next() < 0.6;
      if (up) metrics.gauge.theirs.inc({ mode });
      else metrics.gauge.theirs.dec({ mode });
      if (up) metrics.gauge.ours.inc(mode);
      else metrics.gauge.ours.dec(mode);
    } else {
      // Values on the bounds, between them and past the last.
      const seconds = next() < 0.2 ? pick(BOUNDS) : next() * 3;
      const stage = pick(["endpoint", "voice_to_voice"]);
      metrics.histogram.theirs.observe({ mode, stage }, seconds);
      metrics.histogram.ours.observe(seconds, mode, stage);
    }
  }
}

/** A registry's JSON as the cluster's workers send it, without the OpenMetrics exemplars neither side records. */
async function json(registry: Registry): Promise<unknown> {
  const metrics = await registry.getMetricsAsJSON();
  return metrics.map((metric) => ({ ...metric, values: metric.values.map((value) => ({ ...value, exemplar: undefined })) }));
}

describe("tallies", () => {
  it("expose the same text and JSON as prom-client's metrics, over 5,000 random observations", async () => {
    const metrics = pair();
    observe(metrics, 5000, 0x2545f491);
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
    expect(await json(metrics.ours)).toEqual(await json(metrics.theirs));
  });

  it("show no series before their first observation, as prom-client", async () => {
    const metrics = pair();
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
  });

  it("aggregate across workers as prom-client's metrics do", async () => {
    const workers = [pair(), pair()];
    workers.forEach((metrics, i) => observe(metrics, 2000, 0x9e3779b9 + i));
    const [ours, theirs] = await Promise.all(
      (["ours", "theirs"] as const).map(async (side) => AggregatorRegistry.aggregate(await Promise.all(workers.map((metrics) => metrics[side].getMetricsAsJSON()))).metrics()),
    );
    expect(ours).toBe(theirs);
  });

  it("leave out what prom-client refuses: a value that is not finite, a counter step that is not positive", async () => {
    const registry = new Registry();
    const histogram = new TallyHistogram(registry, "h_seconds", "h", ["mode"], BOUNDS);
    const counter = new TallyCounter(registry, "c_total", "c", ["mode"]);
    histogram.observe(Number.NaN, "s2s");
    histogram.observe(Number.POSITIVE_INFINITY, "s2s");
    counter.add(0, "s2s");
    counter.add(-3, "s2s");
    expect(await registry.metrics()).toBe("# HELP h_seconds h\n# TYPE h_seconds histogram\n\n# HELP c_total c\n# TYPE c_total counter\n");
  });
});
