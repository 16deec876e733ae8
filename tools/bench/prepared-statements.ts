/**
 * What a statement costs the process and its Postgres backend when MikroORM writes its parameters
 * into the text (every execution a new text to parse and plan) against bound parameters and a
 * statement prepared once per connection (libs/store/src/prepared.ts: bindParameters,
 * PreparedStatements). Two statements of the hot path's shape (a read by id, a guarded update
 * RETURNING *) on a temporary table of 1,000 rows, one connection, alternating runs. A
 * micro-benchmark printed, not an assertion:
 * `node --import tsx tools/bench/prepared-statements.ts [iterations]` (DATABASE_URL).
 */
import { openStore, type MikroORM } from '@sluice/store';
import { processCpuMicros } from './cpu.js';

const iterations = Number(process.argv[2] ?? 3_000);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SELECT = 'SELECT * FROM bench_rows WHERE id = ? AND platform_id = ?';
const UPDATE = 'UPDATE bench_rows SET status = ?, changed_at = ?, total = total + ?::numeric WHERE id = ? AND status = ? RETURNING *';


async function open(bound: boolean): Promise<{ orm: MikroORM; backend: number }> {
  const orm = await openStore({
    databaseUrl: url,
    schema: 'public',
    entities: [],
    migrations: [],
    poolMax: 1,
    preparedStatements: bound,
    bindParameters: bound,
  });
  const em = orm.em.fork();
  await em.execute(
    `CREATE TEMP TABLE bench_rows (id text PRIMARY KEY, platform_id text, status text, data jsonb, changed_at timestamptz, total numeric)`,
  );
  await em.execute(
    `INSERT INTO bench_rows SELECT 'id' || i, 'p', 'PENDING', '{}', now(), 0 FROM generate_series(0, 999) AS i`,
  );
  const [{ pid }] = await em.execute<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
  return { orm, backend: pid };
}

/** µs per statement of the process and of its backend over `n` pairs of statements. */
async function run(o: { orm: MikroORM; backend: number }, n: number) {
  const db0 = processCpuMicros(o.backend);
  const own0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const id = `id${i % 1000}`;
    const em = o.orm.em.fork();
    await em.execute(SELECT, [id, 'p']);
    await em.execute(UPDATE, ['PENDING', new Date(), 1, id, 'PENDING']);
  }
  const own = process.cpuUsage(own0);
  return { node: (own.user + own.system) / (2 * n), postgres: (processCpuMicros(o.backend) - db0) / (2 * n) };
}

const bound = await open(true);
const inline = await open(false);
console.log(`${iterations} × (read by id + guarded update RETURNING *), µs of CPU per statement`);
console.log('run  path                             process  postgres');
for (let round = 1; round <= 2; round++) {
  for (const [label, o] of [
    ['parameters inline (MikroORM)', inline],
    ['bound, prepared once per connection', bound],
  ] as const) {
    const r = await run(o, iterations);
    console.log(`${round}    ${label.padEnd(33)}${r.node.toFixed(0).padStart(7)}${r.postgres.toFixed(0).padStart(10)}`);
  }
}
await bound.orm.close(true);
await inline.orm.close(true);
