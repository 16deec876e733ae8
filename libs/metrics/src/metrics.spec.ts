import { afterEach, describe, expect, it } from 'vitest';
import { Metrics, parseExposition, select, serveMetrics, sumOf, type MetricsEndpoint } from './index.js';

describe('Metrics', () => {
  it('labels every series with the service, and shares a metric asked for twice', async () => {
    const m = new Metrics('identity', { processMetrics: false });
    const a = m.counter({ name: 'things_total', help: 'things', labelNames: ['kind'] });
    const b = m.counter({ name: 'things_total', help: 'things', labelNames: ['kind'] });
    expect(b).toBe(a);
    a.inc({ kind: 'x' });
    b.inc({ kind: 'x' }, 2);
    const samples = await m.samples();
    expect(select(samples, 'things_total')).toEqual([{ name: 'things_total', labels: { kind: 'x', service: 'identity' }, value: 3 }]);
  });

  it('adds process metrics unless told not to', async () => {
    const withProcess = await new Metrics('a').samples();
    expect(select(withProcess, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(select(withProcess, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    const without = await new Metrics('b', { processMetrics: false }).samples();
    expect(without).toEqual([]);
  });

  it('histograms default to the latency buckets, cumulative up to +Inf', async () => {
    const m = new Metrics('gateway', { processMetrics: false });
    const h = m.histogram({ name: 'op_seconds', help: 'op', labelNames: ['op'] });
    h.observe({ op: 'a' }, 0.003);
    h.observe({ op: 'a' }, 0.2);
    h.observe({ op: 'a' }, 42);
    const s = await m.samples();
    const le = (b: string) => select(s, 'op_seconds_bucket', { op: 'a', le: b })[0]?.value;
    expect(le('0.005')).toBe(1);
    expect(le('0.25')).toBe(2);
    expect(le('10')).toBe(2);
    expect(le('+Inf')).toBe(3);
    expect(sumOf(s, 'op_seconds_count')).toBe(3);
    expect(sumOf(s, 'op_seconds_sum')).toBeCloseTo(42.203);
  });

  it('a scraped gauge is read at scrape time; a failing read makes it unknown and is reported, the scrape goes on', async () => {
    const m = new Metrics('payments', { processMetrics: false });
    let backlog = 4;
    let fail = false;
    const errors: unknown[] = [];
    m.scrapedGauge(
      { name: 'backlog_jobs', help: 'due jobs' },
      async (g) => {
        if (fail) throw new Error('database down');
        g.set(backlog);
      },
      (err) => errors.push(err),
    );
    m.scrapedGauge(
      { name: 'backlog_by_kind', help: 'due jobs by kind', labelNames: ['kind'] },
      async (g) => {
        if (fail) throw new Error('database down');
        g.set({ kind: 'a' }, backlog);
      },
      (err) => errors.push(err),
    );
    m.counter({ name: 'other_total', help: 'other' }).inc();
    expect(sumOf(await m.samples(), 'backlog_jobs')).toBe(4);
    backlog = 7;
    const s1 = await m.samples();
    expect(sumOf(s1, 'backlog_jobs')).toBe(7);
    expect(sumOf(s1, 'backlog_by_kind', { kind: 'a' })).toBe(7);
    fail = true;
    const s = await m.samples();
    expect(select(s, 'backlog_jobs').map((x) => x.value)).toEqual([NaN]);
    expect(select(s, 'backlog_by_kind')).toEqual([]);
    expect(sumOf(s, 'other_total')).toBe(1);
    expect(errors).toHaveLength(2);
  });
});

describe('parseExposition', () => {
  it('reads names, escaped label values and special values', () => {
    const text = [
      '# HELP x_total an x',
      '# TYPE x_total counter',
      'x_total{path="/a\\"b\\\\c\\nd",code="200"} 3',
      'y_bucket{le="+Inf"} +Inf',
      'z -Inf 1700000000000',
      'w NaN',
      'u Nan',
      'v 1.5e3',
      '',
    ].join('\n');
    expect(parseExposition(text)).toEqual([
      { name: 'x_total', labels: { path: '/a"b\\c\nd', code: '200' }, value: 3 },
      { name: 'y_bucket', labels: { le: '+Inf' }, value: Infinity },
      { name: 'z', labels: {}, value: -Infinity },
      { name: 'w', labels: {}, value: NaN },
      { name: 'u', labels: {}, value: NaN },
      { name: 'v', labels: {}, value: 1500 },
    ]);
  });

  it('refuses what is not the text format', () => {
    expect(() => parseExposition('<html>not metrics</html>')).toThrow(/not a sample line/);
    expect(() => parseExposition('x{a="1" b} 2')).toThrow(/bad labels/);
    expect(() => parseExposition('x 12abc')).toThrow(/bad value/);
  });
});

describe('serveMetrics', () => {
  let endpoint: MetricsEndpoint | undefined;
  afterEach(async () => {
    await endpoint?.close();
    endpoint = undefined;
  });

  it('serves GET /metrics in the text format and nothing else', async () => {
    const m = new Metrics('accounts', { processMetrics: false });
    m.gauge({ name: 'answer', help: 'the answer' }).set(42);
    endpoint = await serveMetrics(m, { host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${endpoint.port}`;
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parseExposition(await res.text())).toEqual([{ name: 'answer', labels: { service: 'accounts' }, value: 42 }]);
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics/x`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('answers 500 when collection fails, and reports it', async () => {
    const m = new Metrics('accounts', { processMetrics: false });
    m.gauge({
      name: 'broken',
      help: 'a collect that throws',
      collect() {
        throw new Error('boom');
      },
    });
    const errors: unknown[] = [];
    endpoint = await serveMetrics(m, { host: '127.0.0.1', port: 0, onError: (e) => errors.push(e) });
    const res = await fetch(`http://127.0.0.1:${endpoint.port}/metrics`);
    expect(res.status).toBe(500);
    expect(errors).toHaveLength(1);
  });

  it('fails to start on a port in use', async () => {
    const m = new Metrics('accounts', { processMetrics: false });
    endpoint = await serveMetrics(m, { host: '127.0.0.1', port: 0 });
    await expect(serveMetrics(m, { host: '127.0.0.1', port: endpoint.port })).rejects.toThrow(/EADDRINUSE/);
  });
});
