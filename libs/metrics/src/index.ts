import { createServer, type Server } from 'node:http';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
  type Metric,
} from 'prom-client';

export type { Counter, Gauge, Histogram };

/**
 * Buckets (seconds) of every latency histogram: 5 ms to 10 s, enough to tell a
 * cache hit from a query from a call that ran into its deadline (5 s by default).
 */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Buckets (seconds) of waits that may last minutes (outbound webhooks, scheduled jobs running late). */
export const DELAY_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900];

type Config<C extends { name: string; help: string }> = Omit<C, 'registers'>;

/**
 * The metrics of one app: a prom-client registry whose every series carries
 * `service="<app>"` (a default label), plus get-or-create constructors so each
 * kit (rpc, events, store) defines its metrics where it measures them and two
 * parts of one app asking for the same metric share it. The app serves it with
 * `serveMetrics`; tests read it in process with `samples()`.
 */
export class Metrics {
  readonly registry = new Registry();

  constructor(
    readonly service: string,
    opts: {
      /** prom-client's process metrics (CPU, memory, event loop lag, GC, handles). Default true. */
      processMetrics?: boolean;
    } = {},
  ) {
    this.registry.setDefaultLabels({ service });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string>(config: Config<CounterConfiguration<L>>): Counter<L> {
    return this.getOrCreate(config.name, () => new Counter({ ...config, registers: [this.registry] }));
  }

  gauge<L extends string>(config: Config<GaugeConfiguration<L>>): Gauge<L> {
    return this.getOrCreate(config.name, () => new Gauge({ ...config, registers: [this.registry] }));
  }

  histogram<L extends string>(config: Config<HistogramConfiguration<L>>): Histogram<L> {
    return this.getOrCreate(
      config.name,
      () => new Histogram({ buckets: LATENCY_BUCKETS, ...config, registers: [this.registry] }),
    );
  }

  /**
   * The rate/errors/duration pair of an operation (an HTTP route, a gRPC method):
   * a counter of completed operations by `labelNames` and `resultLabels` (the
   * status or code), and a latency histogram by `labelNames` (and the result
   * labels too when `durationByResult`, as HTTP server conventions have it).
   */
  red<L extends string, R extends string>(o: {
    total: { name: string; help: string };
    duration: { name: string; help: string };
    labelNames: readonly L[];
    resultLabels: readonly R[];
    durationByResult?: boolean;
  }): { total: Counter<L | R>; duration: Histogram<L | R> } {
    return {
      total: this.counter<L | R>({ ...o.total, labelNames: [...o.labelNames, ...o.resultLabels] }),
      duration: this.histogram<L | R>({
        ...o.duration,
        labelNames: o.durationByResult ? [...o.labelNames, ...o.resultLabels] : o.labelNames,
      }),
    };
  }

  /**
   * A gauge measured when scraped: `read` sets its values (one cheap query, a
   * pool's counters), so nothing is added to the work it watches. A failing
   * read leaves the gauge without samples for that scrape and is reported to
   * `onError`; it never fails the whole scrape.
   */
  scrapedGauge<L extends string>(
    config: Config<Omit<GaugeConfiguration<L>, 'collect'>>,
    read: (gauge: Gauge<L>) => Promise<void> | void,
    onError: (err: unknown) => void,
  ): Gauge<L> {
    return this.gauge<L>({
      ...config,
      async collect() {
        this.reset();
        try {
          await read(this);
        } catch (err) {
          this.reset();
          if (!config.labelNames?.length) this.set(NaN);
          onError(err);
        }
      },
    });
  }

  /** The exposition (Prometheus text format 0.0.4), running every scrape-time `collect`. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Every sample of the current exposition, parsed (tests and tools). */
  async samples(): Promise<Sample[]> {
    return parseExposition(await this.text());
  }

  private getOrCreate<M extends Metric<string>>(name: string, create: () => M): M {
    return (this.registry.getSingleMetric(name) as M | undefined) ?? create();
  }
}

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and nothing else: 404) on its own port, never the
 * public API's: scrapes stay inside the cluster and the public port answers
 * 404 for /metrics.
 */
export async function serveMetrics(
  metrics: Metrics,
  opts: { host: string; port: number; onError?: (err: unknown) => void },
): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : body),
      (err: unknown) => {
        opts.onError?.(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
      },
    );
  });
  // A scrape is short: an idle keep-alive connection must not hold shutdown up.
  server.keepAliveTimeout = 5_000;
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : opts.port);
    });
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One sample of an exposition: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL_RE = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;

/**
 * Parses the Prometheus text exposition format (0.0.4): one sample per
 * non-comment line, label values unescaped (`\\`, `\"`, `\n`), values as
 * numbers (`+Inf`, `-Inf`, `NaN` included). Throws on a line it cannot read,
 * naming it, so a malformed exposition fails a test instead of passing it.
 */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE_RE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      const body = m[2].slice(1, -1);
      LABEL_RE.lastIndex = 0;
      let end = 0;
      for (let l = LABEL_RE.exec(body); l; l = LABEL_RE.exec(body)) {
        labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
        end = LABEL_RE.lastIndex;
      }
      if (body.slice(end).trim() !== '') throw new Error(`bad labels in: ${line}`);
    }
    const value = parseValue(m[3]!);
    if (value === undefined) throw new Error(`bad value in: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

/** A sample value as Prometheus reads it (Go's ParseFloat: `NaN`, `+Inf`, `-Inf` in any case). */
function parseValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(text);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  const n = Number(text);
  return Number.isNaN(n) || text.trim() === '' ? undefined : n;
}

/** The samples named `name` whose labels include every pair of `labels`. */
export function select(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the values of `select(samples, name, labels)` (0 when none). */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return select(samples, name, labels).reduce((t, s) => t + s.value, 0);
}
