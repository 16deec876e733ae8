/**
 * `main.mjs migrate --wait`, the Deployments' init container (deploy/k8s/base/<app>/deployment.yaml):
 * run as the real processes against a fresh database, it waits while the app's migrations are
 * pending, creating nothing, and exits 0 once the migration Job's `migrate` has applied them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, eventually, type TestDatabase } from '@sluice/testing';
import pg from 'pg';
import { spawnAppProcess, type AppName, type AppProcess } from '../../tools/stack.js';

let db: TestDatabase;
const started: AppProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('migwait');
});
afterAll(async () => {
  for (const p of started) if (!p.exit) p.proc.kill('SIGKILL');
  await db?.drop();
});

function run(app: AppName, args: string[]): AppProcess {
  const p = spawnAppProcess({
    app,
    args,
    silent: true,
    // DATABASE_URL is all the waiter reads (the init container sets nothing else).
    env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: 'info' },
  });
  void p.exited.then((e) => (p.exit = e));
  started.push(p);
  return p;
}

async function schemaExists(schema: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount === 1;
  } finally {
    await c.end();
  }
}

describe('migrate --wait', () => {
  it('waits while the migrations are pending, then exits 0 once the migration Job applied them', async () => {
    const waiter = run('accounts', ['migrate', '--wait']);
    // It has looked, found the migrations pending, and keeps waiting.
    await eventually(async () => waiter.ring.tail().some((l) => l.includes('waiting for the migration Job')), 60_000);
    const waiting = waiter.ring.tail().find((l) => l.includes('waiting for the migration Job'))!;
    expect(JSON.parse(waiting).pending).toContain('0030_ledger_reconcile_runs');
    expect(waiter.exit).toBeUndefined();
    // Read-only: it created nothing.
    expect(await schemaExists('accounts')).toBe(false);

    const job = run('accounts', ['migrate']);
    expect((await job.exited).code).toBe(0);
    expect((await waiter.exited).code).toBe(0);
    expect(waiter.ring.tail().some((l) => l.includes('every migration is applied'))).toBe(true);
  }, 120_000);

  it("the gateway's waiter exits 0 at once when its schema is migrated", async () => {
    expect((await run('gateway', ['migrate']).exited).code).toBe(0);
    const waiter = run('gateway', ['migrate', '--wait']);
    expect((await waiter.exited).code).toBe(0);
    expect(waiter.ring.tail().some((l) => l.includes('waiting for the migration Job'))).toBe(false);
    expect(waiter.ring.tail().some((l) => l.includes('every migration is applied'))).toBe(true);
  }, 120_000);
});
