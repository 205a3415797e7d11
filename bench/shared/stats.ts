/**
 * Small measurement helpers shared by the bench processes: a cross-process clock, percentiles,
 * and a meter for one process's CPU, memory, event-loop delay and garbage collection over a window.
 */
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { GCProfiler, setFlagsFromString, type GCProfilerResult } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Milliseconds on the system's monotonic clock (`process.hrtime` is CLOCK_MONOTONIC on Linux),
 * with microsecond resolution. It is one clock for every process on the machine, so a time
 * taken in the gateway process and one taken in the client process can be subtracted.
 */
export function monoMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentile of an ascending array (p in 0–100). NaN for no values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, v) => total + v, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/**
 * CPU time the whole machine has spent busy so far (ms, all cores: user, nice, system, irq,
 * softirq and steal from /proc/stat, in USER_HZ = 100 ticks), or undefined off Linux. The
 * difference over a window, less the processes the bench measures, is other load on the machine.
 */
export function machineBusyMs(): number | undefined {
  let line: string | undefined;
  try {
    line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
  } catch {
    return undefined;
  }
  const ticks = (line ?? "").trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) * 10;
}

/** What one process looks like at a moment, after a full GC. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
}

/** CPU, event-loop delay and garbage collection of one process over a measured window. */
export interface WindowSample {
  readonly wallMs: number;
  /** User + system CPU of the whole process (all threads) during the window. */
  readonly cpuMs: number;
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /** Absent when the window was measured from outside the process (`bench:scale`'s gateway workers). */
  readonly gc?: GcSample;
}

/** V8's collections during a window, by `v8.GCProfiler`. */
export interface GcSample {
  /** Young-generation collections (scavenges), and their pauses (ms, summed). */
  readonly scavenges: number;
  readonly scavengeMs: number;
  /**
   * Bytes the scavenges moved to the old generation: old space's used size after each one less
   * before (a scavenge only adds there). What a young collection could not free because it was
   * still live: a turn's state that lives for seconds is copied, then promoted, then left for a
   * full collection.
   */
  readonly promotedBytes: number;
  /** Full (mark-compact) collections, and their final pauses (ms, summed). */
  readonly fullGcs: number;
  readonly fullGcMs: number;
}

/** What one window's collections did, from the profiler's per-collection statistics (`cost` in µs). */
export function gcSample(result: GCProfilerResult): GcSample {
  let scavenges = 0;
  let scavengeMs = 0;
  let promotedBytes = 0;
  let fullGcs = 0;
  let fullGcMs = 0;
  const oldSpaceUsed = (spaces: readonly { spaceName: string; spaceUsedSize: number }[]): number => spaces.find((space) => space.spaceName === "old_space")?.spaceUsedSize ?? 0;
  for (const gc of result.statistics) {
    if (gc.gcType === "Scavenge") {
      scavenges += 1;
      scavengeMs += gc.cost / 1000;
      promotedBytes += Math.max(0, oldSpaceUsed(gc.afterGC.heapSpaceStatistics) - oldSpaceUsed(gc.beforeGC.heapSpaceStatistics));
    } else if (gc.gcType === "MarkSweepCompact") {
      fullGcs += 1;
      fullGcMs += gc.cost / 1000;
    }
  }
  return { scavenges, scavengeMs, promotedBytes, fullGcs, fullGcMs };
}

/** `global.gc`, switched on at run time (so the bench needs no `--expose-gc` flag). */
export function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * Event-loop delay sampling interval (ms): Node's default, fine enough for a p99, cheap enough
 * not to show in the CPU figure. The histogram records the whole interval between samples, so
 * the resolution is subtracted to get the delay.
 */
const LOOP_RESOLUTION_MS = 10;

/** Measures the process it runs in. One window at a time. */
export class ProcessMeter {
  readonly #gc = exposeGc();
  #histogram: IntervalHistogram | undefined;
  #gcProfiler: GCProfiler | undefined;
  #cpu: NodeJS.CpuUsage | undefined;
  #startedAt = 0;

  /** RSS and heap after two full collections (garbage from earlier work does not count). */
  memory(): MemorySample {
    this.#gc();
    this.#gc();
    const usage = process.memoryUsage();
    return { rss: usage.rss, heapUsed: usage.heapUsed };
  }

  start(): void {
    this.#histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.#histogram.enable();
    this.#gcProfiler = new GCProfiler();
    this.#gcProfiler.start();
    this.#cpu = process.cpuUsage();
    this.#startedAt = monoMs();
  }

  stop(): WindowSample {
    const histogram = this.#histogram;
    const cpu = process.cpuUsage(this.#cpu);
    const wallMs = monoMs() - this.#startedAt;
    const collections = this.#gcProfiler?.stop();
    if (histogram === undefined || collections === undefined) throw new Error("ProcessMeter.stop() without start()");
    histogram.disable();
    this.#histogram = undefined;
    this.#gcProfiler = undefined;
    return {
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      loopDelayP99Ms: Math.max(0, histogram.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
      loopDelayMaxMs: Math.max(0, histogram.max / 1e6 - LOOP_RESOLUTION_MS),
      gc: gcSample(collections),
    };
  }
}
