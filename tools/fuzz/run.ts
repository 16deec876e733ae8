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
import { createTestDatabase, dropStreams, natsUrl, testPrefix } from '@sluice/testing';
import { gatewayConfigSchema } from '../../apps/gateway/src/index.js';
import { formatCredential, generateCredential } from '../lib/credentials.js';
import { startStack } from '../stack.js';
import { formatReport, runFuzz } from './fuzz.js';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(v) || v < 0) {
    process.stderr.write(`--${name} takes a non-negative integer, got ${process.argv[i + 1]}\n`);
    process.exit(2);
  }
  return v;
}

const count = option('count', 10_000);
const seed = option('seed', Date.now() % 2 ** 31);
const keepGoing = process.argv.includes('--keep-going');
const say = (line: string) => process.stdout.write(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.NATS_URL ||= 'nats://127.0.0.1:4222';
const db = await createTestDatabase('fuzz');
const nats = await natsUrl();
const prefix = testPrefix('fuzz');
const credential = generateCredential();
let code = 1;
say(`starting every process on ${db.name}`);
const stack = await startStack({
  databaseUrl: db.url,
  natsUrl: nats,
  prefix,
  freePorts: true,
  gatewayPort: 0,
  silent: !process.env.FUZZ_LOGS,
  localCredentialFile: false,
  credentials: { sandbox: formatCredential(credential) },
  logLevel: 'warn',
  migrate: false,
}).catch(async (err: unknown) => {
  await db.drop();
  throw err;
});
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
try {
  say(`sending ${count} bad requests (seed ${seed})`);
  const report = await runFuzz({
    baseUrl: stack.baseUrl,
    authorization: stack.platforms.sandbox!.authorization,
    tokenId: credential.tokenId,
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
  await stack.stop();
  await dropStreams(nats, prefix).catch(() => undefined);
  await db.drop();
}
process.exit(code);
