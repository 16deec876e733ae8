/**
 * `npm run fuzz -- --count N --seed S [--keep-going]` (not part of `npm test`; a fixed-seed
 * short run is, tests/e2e/generated-input.spec.ts): N generated bad requests over every
 * operation of the gateway's OpenAPI document, against every process started as `npm start`
 * does on a fresh database (loopback only). Prints requests per operation, per status, per
 * class of bad input, the 5xx count, the tables that changed, and the failing case minimized
 * by fast-check (or, with --keep-going, every failing case). Exits 1 on any failure.
 * See docs/reliability.md.
 */
import pg from 'pg';
import { gatewayConfigSchema } from '../../apps/gateway/src/index.js';
import { startFreshStack } from '../lib/fresh-stack.js';
import { formatReport, runFuzz } from './fuzz.js';
import { intOption } from '../lib/cli.js';

const count = intOption('count', 10_000);
const seed = intOption('seed', Date.now() % 2 ** 31);
const keepGoing = process.argv.includes('--keep-going');
const say = (line: string) => process.stdout.write(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.NATS_URL ||= 'nats://127.0.0.1:4222';
say('starting every process on a fresh database');
const { stack, close } = await startFreshStack('fuzz');
const platform = stack.platforms.sandbox!;
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
let code = 1;
try {
  say(`sending ${count} bad requests (seed ${seed})`);
  const report = await runFuzz({
    baseUrl: stack.baseUrl,
    authorization: platform.authorization,
    tokenId: platform.tokenId,
    bodyLimit: gatewayConfigSchema.properties.BODY_LIMIT_BYTES.default,
    db: pool,
    count,
    seed,
    keepGoing,
    progress: (n) => {
      if (n % 1000 === 0) say(`${n} sent`);
    },
  });
  for (const line of formatReport(report)) process.stdout.write(`${line}\n`);
  code = report.failures.length || report.serverErrors || report.changedTables.length ? 1 : 0;
  say(code ? `FAILED (replay: npm run fuzz -- --count ${count} --seed ${seed})` : 'passed');
} finally {
  await pool.end();
  await close();
}
process.exit(code);
