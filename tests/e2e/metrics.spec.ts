/**
 * End to end: every process's Prometheus endpoint, scraped after real requests.
 * Each app serves `GET /metrics` on its own METRICS_PORT (never the public
 * gateway port); the expositions are parsed (libs/metrics parseExposition,
 * which throws on a malformed line) and checked for the RED metrics of the
 * requests made, the database pool and outbox gauges, and bounded labels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import { parseExposition, select, sumOf, type Sample } from '@sluice/metrics';
import { API_VERSION, type AppName } from '../../tools/stack.js';
import { apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

/** Our ids (`Customer:<uuid>`) and bare UUIDs: neither may ever be a label value. */
const ID_LIKE = /[A-Za-z]+:[0-9a-f]{8}-[0-9a-f]{4}-|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('metrics of the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  const sandbox = newCredential();
  const customerIds: string[] = [];

  async function scrape(app: AppName): Promise<Sample[]> {
    const url = e2e.stack.metrics[app];
    expect(url, `${app} serves no metrics`).toBeDefined();
    const res = await fetch(url!);
    expect(res.status, `${app} /metrics`).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  }

  beforeAll(async () => {
    e2e = await startE2eStack('metrics', { sandbox }, { migrate: false });
    api = apiClient(e2e.stack, sandbox);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
  });

  it('the public gateway port does not serve /metrics', async () => {
    for (const path of ['/metrics', `/${API_VERSION}/metrics`]) {
      const res = await fetch(e2e.stack.gatewayUrl + path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toMatch(/^# (HELP|TYPE) /m);
    }
    // And each metrics endpoint serves only /metrics.
    const other = await fetch(e2e.stack.metrics.gateway!.replace(/\/metrics$/, '/'));
    expect(other.status).toBe(404);
  });

  it('RED metrics per route pattern and per gRPC method, pool and outbox gauges, no ids in labels', async () => {
    const before = await scrape('identity');
    const createdBefore = sumOf(before, 'grpc_server_handled_total', { grpc_method: 'CreateCustomer', grpc_code: 'OK' });

    for (const n of [1, 2, 3]) {
      const r = await api('POST', '/customers', {
        body: { customerType: 'INDIVIDUAL', fullName: `Metrics Person ${n}`, currencies: ['USD'] },
      });
      expect(r.status, r.text).toBe(201);
      customerIds.push(r.json.id);
    }
    const missing = await api('GET', `/customers/${encodeURIComponent(customerIds[0]!.replace(/.$/, '0'))}X`);
    expect(missing.status, missing.text).toBeGreaterThanOrEqual(400);
    expect(missing.status).toBeLessThan(500);
    const invalid = await api('POST', '/customers', { body: { customerType: 'NOT_A_TYPE' } });
    expect(invalid.status, invalid.text).toBe(400);
    const noRoute = await api('GET', '/no-such-resource');
    expect(noRoute.status).toBe(404);

    // Gateway: the route histogram by pattern, method and status, counting at least the requests made.
    const gateway = await scrape('gateway');
    const customers = `/${API_VERSION}/customers`;
    expect(
      sumOf(gateway, 'http_server_request_duration_seconds_count', { route: customers, method: 'POST', status_code: '201' }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      sumOf(gateway, 'http_server_requests_total', { route: customers, method: 'POST', status_code: '400' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sumOf(gateway, 'http_server_request_duration_seconds_count', {
        route: `${customers}/:customerId`,
        method: 'GET',
        status_code: String(missing.status),
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sumOf(gateway, 'http_server_requests_total', { route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    // Histogram buckets are cumulative, ending with +Inf = _count.
    const inf = select(gateway, 'http_server_request_duration_seconds_bucket', {
      route: customers,
      method: 'POST',
      status_code: '201',
      le: '+Inf',
    });
    expect(inf).toHaveLength(1);
    // The gateway's client side of the call to identity.
    expect(
      sumOf(gateway, 'grpc_client_handled_total', { grpc_method: 'CreateCustomer', grpc_code: 'OK' }),
    ).toBeGreaterThanOrEqual(3);

    // Identity: the server side of CreateCustomer, by status code.
    const identity = await scrape('identity');
    expect(
      sumOf(identity, 'grpc_server_handled_total', {
        grpc_service: 'sluice.identity.v1.IdentityService',
        grpc_method: 'CreateCustomer',
        grpc_code: 'OK',
      }) - createdBefore,
    ).toBe(3);
    expect(
      sumOf(identity, 'grpc_server_handling_seconds_count', { grpc_method: 'CreateCustomer' }),
    ).toBeGreaterThanOrEqual(3);
    // The lookup of a customer that does not exist is a NOT_FOUND (or INVALID_ARGUMENT), never OK or INTERNAL.
    expect(sumOf(identity, 'grpc_server_handled_total', { grpc_method: 'GetCustomer', grpc_code: 'INTERNAL' })).toBe(0);

    // Every app: its service label, process metrics and database pool; every backend its outbox lag.
    const all = new Map<AppName, Sample[]>();
    for (const app of e2e.stack.apps) all.set(app, app === 'gateway' ? gateway : app === 'identity' ? identity : await scrape(app));
    for (const [app, samples] of all) {
      expect(samples.length, app).toBeGreaterThan(0);
      expect(
        samples.every((s) => s.labels.service === app),
        `${app}: every series carries service="${app}"`,
      ).toBe(true);
      expect(select(samples, 'process_cpu_user_seconds_total'), app).toHaveLength(1);
      expect(select(samples, 'nodejs_eventloop_lag_p99_seconds'), app).toHaveLength(1);
      for (const gauge of [
        'db_pool_connections_in_use',
        'db_pool_connections_idle',
        'db_pool_acquires_waiting',
        'db_pool_connections_max',
      ])
        expect(select(samples, gauge), `${app} ${gauge}`).toHaveLength(1);
      expect(sumOf(samples, 'db_pool_acquire_seconds_count'), app).toBeGreaterThan(0);
      // No task asked for a second connection while it held one for an open transaction.
      expect(select(samples, 'db_pool_nested_acquires_total'), app).toHaveLength(1);
      expect(sumOf(samples, 'db_pool_nested_acquires_total'), `${app}: nested acquires`).toBe(0);
      if (app !== 'gateway') {
        const lag = select(samples, 'outbox_oldest_unpublished_age_seconds');
        expect(lag, `${app} outbox lag`).toHaveLength(1);
        expect(lag[0]!.value).toBeGreaterThanOrEqual(0);
      }
      // Bounded labels: no id, no UUID, no customer's id anywhere.
      for (const s of samples)
        for (const [k, v] of Object.entries(s.labels)) {
          expect(ID_LIKE.test(v), `${app} ${s.name}{${k}="${v}"}`).toBe(false);
          for (const id of customerIds) expect(v.includes(id)).toBe(false);
        }
    }

    // Scrape-time backlogs of the payments scheduler and the webhook deliveries.
    expect(select(all.get('payments')!, 'scheduler_oldest_due_job_age_seconds')).toHaveLength(1);
    // What the scheduler's last claim saw (the admission of new payments follows it): caught up after these requests.
    expect(select(all.get('payments')!, 'scheduler_claim_lag_seconds').map((s) => s.value)).toEqual([0]);
    expect(select(all.get('webhook-dispatcher')!, 'webhook_deliveries_due')).toHaveLength(1);
    expect(select(all.get('webhook-dispatcher')!, 'webhook_oldest_due_delivery_age_seconds')).toHaveLength(1);

    // A ledger reconcile check is counted by result (over what accounts' scheduled sweep, run at its
    // start, counted already).
    const ledger = createRpcClient(accountsPb.AccountsServiceClient, e2e.stack.grpc.accounts!, { defaultDeadlineMs: 10_000 });
    const checked = sumOf(await scrape('accounts'), 'ledger_reconcile_checks_total', { result: 'consistent' });
    try {
      const rec = await ledger.reconcileLedger({ platformId: e2e.stack.platforms.sandbox!.platformId });
      expect(rec.consistent).toBe(true);
    } finally {
      ledger.close();
    }
    expect(sumOf(await scrape('accounts'), 'ledger_reconcile_checks_total', { result: 'consistent' })).toBe(checked + 1);

    // The dispatcher consumes the customers' events: deliveries by outcome and the consumer's backlog.
    await eventually(async () => {
      const dispatcher = await scrape('webhook-dispatcher');
      expect(sumOf(dispatcher, 'events_consumer_deliveries_total')).toBeGreaterThan(0);
      expect(select(dispatcher, 'events_consumer_pending_messages').length).toBeGreaterThan(0);
      return true;
    });
  });
});
