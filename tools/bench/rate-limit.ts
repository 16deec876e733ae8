/**
 * What the gateway's rate limiter adds to a request: the real gateway (built by its composition root,
 * listening on loopback, its Postgres schema migrated) in front of the real identity service, GET /config
 * sent N times one after the other with the same API token (its credential cached, so the limiter's
 * counter is the request's only database statement in the gateway), once with every limit off (0) and once
 * with the limits on, alternating rounds; then the limiter's statement alone (RateLimitStore.hit, one
 * key, sequentially), which on a busy machine is the steadier figure, and a take from a lease
 * (RateLimitStore.take, what a limited token's request costs) with the counter writes it made. Prints the latencies of each mode and
 * the difference; asserts nothing (figures depend on the machine).
 *
 *   npx tsx tools/bench/rate-limit.ts [--requests 2000] [--rounds 3]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { identity } from '@sluice/contracts';
import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { migrate } from '@sluice/store';
import { startServices, World } from '@sluice/testing';
import { identityService } from '../../apps/identity/src/service.js';
import { composeGateway, openGatewayDatabase } from '../../apps/gateway/src/compose.js';
import { gatewayConfigSchema } from '../../apps/gateway/src/config.js';
import { GATEWAY_SCHEMA } from '../../apps/gateway/src/store/migrations.js';
import { leaseSize, RateLimitStore } from '../../apps/gateway/src/store/rate-limit.repository.js';
import { summarize, type LatencySummary } from './stats.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);

const LIMITS_OFF = { RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_AGENT: '0', RATE_LIMIT_PER_ADDRESS: '0', RATE_LIMIT_AUTH_FAILURES: '0' };
const LIMITS_ON = { RATE_LIMIT_PER_TOKEN: '100000000' };

async function main(): Promise<void> {
  const services = await startServices('benchratelimit', { identity: identityService });
  const logger = createLogger('gateway', 'warn');
  const world = new World({ identity: services.client(identity.IdentityServiceClient, 'identity') });
  const platform = await world.platform();
  const authorization = `Basic ${Buffer.from(`${platform.tokenId}:${platform.clientSecret}`).toString('base64')}`;
  const base = {
    DATABASE_URL: services.db.url,
    IDENTITY_GRPC_URL: services.address('identity'),
    GATEWAY_PORT: '0',
    LOG_LEVEL: 'warn',
  };
  const orm = await openGatewayDatabase(loadConfig(gatewayConfigSchema, base), logger);
  await migrate(orm, GATEWAY_SCHEMA, logger);

  async function run(limits: Record<string, string>): Promise<number[]> {
    const config = loadConfig(gatewayConfigSchema, { ...base, ...limits });
    const gateway = await composeGateway({ config, logger, orm });
    const url = `${await gateway.app.listen({ host: '127.0.0.1', port: 0 })}${config.API_BASE_PATH}/config`;
    const samples: number[] = [];
    try {
      for (let i = 0; i < 50; i++) await (await fetch(url, { headers: { authorization } })).arrayBuffer(); // warm-up
      for (let i = 0; i < requests; i++) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { authorization } });
        await res.arrayBuffer();
        samples.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`GET /config answered ${res.status}`);
      }
    } finally {
      await gateway.close(0);
    }
    return samples;
  }

  const off: number[] = [];
  const on: number[] = [];
  const statement: number[] = [];
  const lease: number[] = [];
  let leaseStatements = 0;
  /** The leases reserved under `key` in the current window (each adds a lease's size to the counter). */
  const leasesOf = async (key: string, limit: number) =>
    Number(
      (
        await orm.em
          .getConnection()
          .execute<{ n: string }[]>(`SELECT coalesce(sum(count), 0) AS n FROM rate_limit_counters WHERE key = ?`, [key])
      )[0]!.n,
    ) / leaseSize(limit);
  try {
    for (let r = 0; r < rounds; r++) {
      off.push(...(await run(LIMITS_OFF)));
      on.push(...(await run(LIMITS_ON)));
    }
    const store = new RateLimitStore(orm, 60);
    for (let i = 0; i < requests * rounds; i++) {
      const t0 = performance.now();
      await store.hit('bench');
      statement.push(performance.now() - t0);
    }
    const leaseKey = `bench-lease-${Date.now()}`;
    for (let i = 0; i < requests * rounds; i++) {
      const t0 = performance.now();
      await store.take(leaseKey, 100_000_000);
      lease.push(performance.now() - t0);
    }
    leaseStatements = await leasesOf(leaseKey, 100_000_000);
  } finally {
    await orm.close();
    await services.stop();
  }
  const fmt = (s: LatencySummary) =>
    `mean ${s.mean.toFixed(3)} ms, p50 ${s.p50.toFixed(3)}, p90 ${s.p90.toFixed(3)}, p99 ${s.p99.toFixed(3)}`;
  const a = summarize(off);
  const b = summarize(on);
  console.log(`GET /config, ${rounds} rounds × ${requests} sequential requests per mode, credential cached`);
  console.log(`limits off: ${fmt(a)}`);
  console.log(`limits on:  ${fmt(b)}`);
  console.log(`the counter statement alone (INSERT .. ON CONFLICT .. RETURNING): ${fmt(summarize(statement))}`);
  console.log(
    `a take of a limited key (the per-token limit's lease, RateLimitStore.take): ${fmt(summarize(lease))}; ${leaseStatements} reservations (statements) for ${requests * rounds} takes`,
  );
  console.log(`added per request: mean ${(b.mean - a.mean).toFixed(3)} ms, p50 ${(b.p50 - a.p50).toFixed(3)} ms, p99 ${(b.p99 - a.p99).toFixed(3)} ms`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
