/**
 * `npm start`: the whole system on this machine. Checks Postgres and NATS
 * (JetStream), then runs tools/stack.ts (migrations, streams, every app as its
 * own process, credentials) and prints how to call the API. Ctrl-C stops it all.
 */
import { checkNats, checkPostgres, PreflightError } from './lib/preflight.js';
import { DEFAULTS, startStack, type Stack } from './stack.js';

const databaseUrl = process.env.DATABASE_URL || DEFAULTS.databaseUrl;
const natsUrl = process.env.NATS_URL || DEFAULTS.natsUrl;

/** STACK_REPLICAS: processes per app (1 to 16, default 1); with 2 or more the gateway port is a balancer. */
function replicasFromEnv(): number {
  const raw = process.env.STACK_REPLICAS;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 16) fail(`STACK_REPLICAS must be an integer from 1 to 16 (got ${JSON.stringify(raw)})`);
  return n;
}

function fail(message: string, hint: string[] = []): never {
  process.stderr.write(`\n${message}\n${hint.map((h) => `${h}\n`).join('')}\n`);
  process.exit(1);
}

async function preflight(): Promise<void> {
  const results = await Promise.allSettled([checkPostgres(databaseUrl), checkNats(natsUrl)]);
  const problems = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (problems.length === 0) return;
  const lines: string[] = [];
  for (const p of problems) {
    lines.push(`✗ ${p.message}`);
    if (p instanceof PreflightError) lines.push(...p.hint.map((h) => `    ${h}`));
  }
  fail('Sluice cannot start: its infrastructure is not reachable.', lines);
}

function printWelcome(stack: Stack): void {
  const out: string[] = [''];
  out.push(`Sluice is running. API base URL: ${stack.baseUrl}`);
  out.push(`  OpenAPI: ${stack.baseUrl}/openapi.json`);
  const metrics = Object.values(stack.metrics);
  if (metrics.length) out.push(`  Metrics (Prometheus, docs/operations.md): ${metrics[0]} … ${metrics[metrics.length - 1]}`);
  for (const p of [stack.platforms.sandbox, stack.platforms.production]) {
    if (!p) continue;
    const origin =
      p.source === 'local-file'
        ? ' (kept in .sluice/sandbox-credentials.json)'
        : p.source === 'env'
          ? ` (from ${p.environment}_PLATFORM_CREDENTIALS)`
          : '';
    out.push(
      `  ${p.environment.toLowerCase()} platform ${p.platformId}${p.created ? ' (created now)' : ''}${origin}`,
    );
    out.push(`    API token id:      ${p.tokenId}`);
    out.push(`    API client secret: ${p.source === 'env' ? '(as set in the environment)' : p.clientSecret}`);
  }
  const example = stack.platforms.sandbox ?? stack.platforms.production;
  if (example) {
    const user =
      example.source === 'env' ? `${example.tokenId}:$SECRET` : `${example.tokenId}:${example.clientSecret}`;
    out.push('');
    out.push('Try it:');
    out.push(`  curl -u '${user}' ${stack.baseUrl}/customers`);
    out.push(
      `  curl -u '${user}' -H 'Content-Type: application/json' -d '{"customerType":"INDIVIDUAL","platformCustomerId":"from-npm-start"}' ${stack.baseUrl}/customers`,
    );
  }
  out.push('');
  out.push('Press Ctrl-C to stop.');
  process.stdout.write(out.join('\n') + '\n\n');
}

async function run(): Promise<void> {
  await preflight();
  let stack: Stack | undefined;
  let shuttingDown = false;
  const starting = new AbortController();
  let firstSignalAt = 0;
  const shutdown = (signal: string) => {
    if (shuttingDown) {
      // One Ctrl-C can arrive more than once (from the terminal and relayed by npm/tsx);
      // only a deliberate second one, later, skips the graceful stop.
      if (Date.now() - firstSignalAt < 2000) return;
      process.stderr.write(`\nsecond ${signal}: exiting without waiting for the apps to drain\n`);
      process.exit(130);
    }
    shuttingDown = true;
    firstSignalAt = Date.now();
    process.stdout.write(`\n${signal} received, stopping every app...\n`);
    if (stack) void stack.stop().then(() => process.exit(0));
    // Still starting: startStack stops what it started, then rejects (handled below).
    else starting.abort();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));

  try {
    // Each service applies its own migrations as it starts (MIGRATE_ON_START; concurrent replicas take
    // the schema's migration lock in turn): eight one-shot migration processes before the apps cost
    // 4-6 s of the start. `npm run migrate` runs them as the Kubernetes Jobs do.
    stack = await startStack({
      databaseUrl,
      natsUrl,
      signal: starting.signal,
      replicas: replicasFromEnv(),
      migrate: false,
    });
  } catch (err) {
    if (shuttingDown) process.exit(0);
    fail(`Sluice did not start: ${(err as Error).message}`);
  }
  printWelcome(stack);
  const exit = await stack.failed;
  if (!shuttingDown) {
    fail(
      `Stopped: ${exit.app} exited unexpectedly (${exit.signal ?? `code ${exit.code}`}); every other app was stopped.`,
    );
  }
}

run().catch((err: unknown) => fail(`Sluice did not start: ${(err as Error).stack ?? String(err)}`));
