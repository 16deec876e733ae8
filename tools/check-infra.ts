/**
 * Checks that Postgres (DATABASE_URL) and NATS with JetStream (NATS_URL) are
 * reachable; prints how to start what is missing and exits 1. Used by .ci/run.
 */
import { checkNats, checkPostgres, PreflightError } from './lib/preflight.js';
import { DEFAULTS } from './stack.js';

const databaseUrl = process.env.DATABASE_URL || DEFAULTS.databaseUrl;
const natsUrl = process.env.NATS_URL || DEFAULTS.natsUrl;
const results = await Promise.allSettled([checkPostgres(databaseUrl), checkNats(natsUrl)]);
let failed = false;
for (const r of results) {
  if (r.status === 'fulfilled') continue;
  failed = true;
  const e = r.reason as Error;
  process.stderr.write(`✗ ${e.message}\n`);
  if (e instanceof PreflightError) for (const h of e.hint) process.stderr.write(`    ${h}\n`);
}
if (!failed) process.stdout.write('Postgres and NATS (JetStream) are reachable\n');
process.exit(failed ? 1 : 0);
