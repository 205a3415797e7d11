import type { Metric, Registry } from "prom-client";

/**
 * Counters, gauges and histograms whose observation makes nothing: a series is found through one
 * `Map` per label, by the label values as they come, and its numbers are plain fields. prom-client's
 * own metrics check the label names and join names and values into a key string at every
 * observation, which a session does several times a turn (docs/benchmarks.md, "Metrics tallied").
 * The exposition is prom-client's: each tally is registered in a `Registry` and gives `get()` as
 * prom-client's own metric of its type does (the text and the JSON the cluster's workers send are
 * the same, test/unit/server/tallies.test.ts), so process metrics, the event-loop gauges and the
 * worker aggregation are unchanged.
 */

/** A tally's labels: one or two names (every metric of the gateway has one or two). */
type LabelNames = readonly [string] | readonly [string, string];

/** A series' label values by name, in the metric's label order; `le` first for a histogram's buckets. */
type Labels = Record<string, string | number>;

interface Value {
  readonly labels: Labels;
  readonly value: number;
  readonly metricName?: string;
}

/** The series of one metric, in the order they were first observed (prom-client's order), each found by its label values. */
class Series<C> {
  readonly #names: LabelNames;
  readonly #make: () => C;
  readonly #byFirst = new Map<string, C | Map<string, C>>();
  readonly all: { readonly labels: Readonly<Labels>; readonly cell: C }[] = [];

  constructor(names: LabelNames, make: () => C) {
    this.#names = names;
    this.#make = make;
  }

  /** The series of these label values (the second only for a metric of two labels), made at its first observation. */
  at(first: string, second = ""): C {
    if (this.#names.length === 1) {
      const found = this.#byFirst.get(first) as C | undefined;
      return found ?? this.#add(this.#byFirst, first, { [this.#names[0]]: first });
    }
    let inner = this.#byFirst.get(first) as Map<string, C> | undefined;
    if (inner === undefined) {
      inner = new Map<string, C>();
      this.#byFirst.set(first, inner);
    }
    return inner.get(second) ?? this.#add(inner, second, { [this.#names[0]]: first, [this.#names[1]]: second });
  }

  #add(map: Map<string, C | Map<string, C>> | Map<string, C>, key: string, labels: Labels): C {
    const cell = this.#make();
    (map as Map<string, C>).set(key, cell);
    this.all.push({ labels, cell });
    return cell;
  }
}

interface Count {
  value: number;
}

/** What prom-client's Registry reads of a metric: its name, help, type, how workers' values combine, and its values. */
abstract class Tally {
  readonly aggregator = "sum";
  abstract readonly type: "counter" | "gauge" | "histogram";

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Registered as a metric: the Registry calls only `get()` and reads the fields above (prom-client 15, lib/registry.js). */
  protected register(registry: Registry): void {
    registry.registerMetric(this as unknown as Metric);
  }

  protected abstract values(): Value[];

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Value[] }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() });
  }
}

/** A value that goes up or down by label values (a counter only up). */
class Level extends Tally {
  readonly type: "counter" | "gauge";
  readonly #series: Series<Count>;

  constructor(registry: Registry, type: "counter" | "gauge", name: string, help: string, labelNames: LabelNames) {
    super(name, help);
    this.type = type;
    this.#series = new Series(labelNames, () => ({ value: 0 }));
    this.register(registry);
  }

  protected add(by: number, first: string, second?: string): void {
    this.#series.at(first, second).value += by;
  }

  protected values(): Value[] {
    return this.#series.all.map(({ labels, cell }) => ({ labels: { ...labels }, value: cell.value }));
  }
}

/** A Prometheus counter: `inc(labels…)` by one, `add(n, labels…)` by n ≥ 0. */
export class TallyCounter extends Level {
  constructor(registry: Registry, name: string, help: string, labelNames: LabelNames) {
    super(registry, "counter", name, help, labelNames);
  }

  inc(first: string, second?: string): void {
    this.add(1, first, second);
  }

  override add(by: number, first: string, second?: string): void {
    if (by > 0) super.add(by, first, second);
  }
}

/** A Prometheus gauge that moves by steps: `inc` and `dec` by one. */
export class TallyGauge extends Level {
  constructor(registry: Registry, name: string, help: string, labelNames: LabelNames) {
    super(registry, "gauge", name, help, labelNames);
  }

  inc(first: string, second?: string): void {
    this.add(1, first, second);
  }

  dec(first: string, second?: string): void {
    this.add(-1, first, second);
  }
}

interface Buckets {
  /** Observations in each bucket alone (at most its bound, over the one before), by bucket; the cumulative counts are made at exposition. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A Prometheus histogram over fixed bucket bounds (ascending, seconds or whatever unit the name says); `+Inf` is its count. */
export class TallyHistogram extends Tally {
  readonly type = "histogram";
  readonly #bounds: readonly number[];
  readonly #series: Series<Buckets>;

  constructor(registry: Registry, name: string, help: string, labelNames: LabelNames, bounds: readonly number[]) {
    super(name, help);
    this.#bounds = [...bounds].sort((a, b) => a - b);
    this.#series = new Series(labelNames, () => ({ counts: new Float64Array(this.#bounds.length), sum: 0, count: 0 }));
    this.register(registry);
  }

  /** One observation; a value that is not a finite number is not one (prom-client throws on it). */
  observe(value: number, first: string, second?: string): void {
    if (!Number.isFinite(value)) return;
    const buckets = this.#series.at(first, second);
    buckets.sum += value;
    buckets.count += 1;
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        buckets.counts[i] = (buckets.counts[i] ?? 0) + 1;
        return;
      }
    }
  }

  protected values(): Value[] {
    const name = this.name;
    const out: Value[] = [];
    for (const { labels, cell } of this.#series.all) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += cell.counts[i] ?? 0;
        out.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push({ labels: { le: "+Inf", ...labels }, value: cell.count, metricName: `${name}_bucket` });
      out.push({ labels: { ...labels }, value: cell.sum, metricName: `${name}_sum` });
      out.push({ labels: { ...labels }, value: cell.count, metricName: `${name}_count` });
    }
    return out;
  }
}
