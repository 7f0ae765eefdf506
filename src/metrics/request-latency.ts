import type { Histogram, Registry } from 'prom-client';

/** Upper bounds of the latency buckets, in seconds. */
const BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One label set's observations: counts per bucket (not cumulative; the last slot is past every bound). */
interface Series {
  readonly labels: { method: string; route: string; status: string };
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** One sample as prom-client's registry formats it (what its `Histogram.getForPromString()` hands it). */
interface Sample {
  labels: Record<string, string | number>;
  /** The series' labels, shared by its samples; `get()` merges them into `labels`. */
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

interface MetricSamples {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: Sample[];
}

/**
 * `gatehouse_http_request_duration_seconds{method,route,status}`: a histogram observed once per
 * request, whose text prom-client's registry writes exactly as it writes its own Histogram's.
 *
 * Not a prom-client Histogram because of what its `observe` costs, once per request: ~0.9 µs and
 * ~6,600 instructions a call, against ~50 ns and ~330 here (BENCHMARKS.md, thirty-fourth
 * session). It builds a string key from the labels, checks them, makes two objects and a closure,
 * and indexes the buckets by their bounds as property names. Here a request adds one to a typed
 * array, found through three Map lookups. The registry asks for the samples only when /metrics is read.
 */
export class RequestLatency {
  readonly name = 'gatehouse_http_request_duration_seconds';
  readonly help = 'HTTP request latency by route template and status';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** route → method → status → series, to find one. */
  #byRoute = new Map<string, Map<string, Map<number, Series>>>();
  /** Every series in the order first seen, the order prom-client's Histogram lists them. */
  #series: Series[] = [];

  constructor(registry: Registry) {
    // The registry reads a metric through get() (and reset() when asked to); it takes any object
    // that answers those as its own metrics do, but is typed for its own classes only.
    registry.registerMetric(this as unknown as Histogram);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.#byRoute.get(route);
    if (byMethod === undefined) this.#byRoute.set(route, byMethod = new Map());
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map());
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, counts: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.#series.push(series);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry writes as text: the samples of every label set, as prom-client's Histogram lists them. */
  async getForPromString(): Promise<MetricSamples> {
    const values: Sample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.#series) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le }, sharedLabels: series.labels, value: cumulative, metricName: bucketName });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The same samples with each one's labels whole, as `Registry.getMetricsAsJSON` lists them. */
  async get(): Promise<MetricSamples> {
    const metric = await this.getForPromString();
    metric.values = metric.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return metric;
  }

  reset(): void {
    this.#byRoute = new Map();
    this.#series = [];
  }
}
