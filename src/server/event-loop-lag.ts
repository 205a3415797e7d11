/**
 * The event-loop lag gauges of the process metrics (`<prefix>nodejs_eventloop_lag_*_seconds`,
 * the names, help texts and cluster aggregators of prom-client's default metrics, which they
 * replace), with the delay histogram sampling only while the gateway holds a session.
 *
 * Why: prom-client's own monitor (`monitorEventLoopDelay`, a libuv timer every 10 ms) runs for the
 * life of the process. An idle gateway woke about 200 times a second for it alone (`strace -c`:
 * 985 `epoll_pwait` in 5 s; 10 with it gone) and spent about 8 ms of CPU a second on it
 * (docs/benchmarks.md, "Idle CPU"). With no session there is no audio to delay. The histogram
 * (about 0.35 MiB of native memory) is made for the first session, not at start.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { Gauge, type Registry } from "prom-client";

/** What the gauges read: event-loop delays in nanoseconds, as `monitorEventLoopDelay` records them. */
export type DelayHistogram = Pick<IntervalHistogram, "enable" | "disable" | "reset" | "count" | "min" | "max" | "mean" | "stddev" | "percentile">;

/** How often the loop is sampled while sessions are live (ms): prom-client's default precision. */
export const LAG_RESOLUTION_MS = 10;

/** prom-client's name, in `collectDefaultMetrics.metricsList`, for the default metric these gauges replace. */
export const PROM_CLIENT_EVENT_LOOP_LAG = "eventLoopLag";

/** The gauges prom-client's default metrics name for the event loop (without the prefix). */
export const EVENT_LOOP_LAG_METRICS = [
  "nodejs_eventloop_lag_seconds",
  "nodejs_eventloop_lag_min_seconds",
  "nodejs_eventloop_lag_max_seconds",
  "nodejs_eventloop_lag_mean_seconds",
  "nodejs_eventloop_lag_stddev_seconds",
  "nodejs_eventloop_lag_p50_seconds",
  "nodejs_eventloop_lag_p90_seconds",
  "nodejs_eventloop_lag_p99_seconds",
] as const;

type Read = (h: DelayHistogram) => number;

/** Each histogram gauge: name suffix, help, how workers' values combine, and its reading (ns). */
const HISTOGRAM_GAUGES: readonly (readonly [string, string, "min" | "max" | "average", Read])[] = [
  ["min", "The minimum recorded event loop delay.", "min", (h) => h.min],
  ["max", "The maximum recorded event loop delay.", "max", (h) => h.max],
  ["mean", "The mean of the recorded event loop delays.", "average", (h) => h.mean],
  ["stddev", "The standard deviation of the recorded event loop delays.", "average", (h) => h.stddev],
  ["p50", "The 50th percentile of the recorded event loop delays.", "average", (h) => h.percentile(50)],
  ["p90", "The 90th percentile of the recorded event loop delays.", "average", (h) => h.percentile(90)],
  ["p99", "The 99th percentile of the recorded event loop delays.", "average", (h) => h.percentile(99)],
];

export class EventLoopLag {
  /** Makes the histogram, at the first session. */
  readonly #make: () => DelayHistogram;
  #histogram: DelayHistogram | undefined;
  /** Sessions live now: the histogram samples while there is at least one. */
  #live = 0;

  constructor(registry: Registry, prefix: string, makeHistogram: () => DelayHistogram = () => monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS })) {
    this.#make = makeHistogram;
    const registers = [registry];
    // Registered first, so that its collect sets the histogram gauges before the registry reads them: at each scrape,
    // what was sampled since the last one (zeros when nothing was: no session), then a fresh start.
    const lag: Gauge = new Gauge({
      name: `${prefix}nodejs_eventloop_lag_seconds`,
      help: "Lag of event loop in seconds.",
      registers,
      aggregator: "average",
      collect: () => {
        // As prom-client measures it: one trip through the loop, read by the next scrape.
        const start = process.hrtime.bigint();
        setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
        const histogram = this.#histogram;
        const sampled = histogram !== undefined && histogram.count > 0;
        for (const [gauge, read] of gauges) gauge.set(sampled ? read(histogram) / 1e9 : 0);
        histogram?.reset();
      },
    });
    const gauges = HISTOGRAM_GAUGES.map(([suffix, help, aggregator, read]) => [new Gauge({ name: `${prefix}nodejs_eventloop_lag_${suffix}_seconds`, help, registers, aggregator }), read] as const);
  }

  sessionStarted(): void {
    this.#live += 1;
    if (this.#live > 1) return;
    this.#histogram ??= this.#make();
    this.#histogram.enable();
  }

  sessionEnded(): void {
    if (this.#live === 0) return;
    this.#live -= 1;
    // What was sampled stays for the next scrape.
    if (this.#live === 0) this.#histogram?.disable();
  }
}
