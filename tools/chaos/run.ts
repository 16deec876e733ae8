/**
 * `npm run chaos -- [--mode kill|rolling|outage|all] [--kills N] [--replicas R] [--clients C]
 * [--outage-sec S] [--mixed M] [--seed S] [--apps a,b] [--restarts-per-app N]` (not part of `npm test`; short fixed-seed versions are,
 * tests/e2e/resilience.spec.ts): faults under a mixed load (payments; `--mixed` clients each of
 * customers, transfers, signed wallet actions, agents and documents, default 1, 0 for payments only) against every process started
 * as `npm start` does, on a fresh database (loopback only, bounded), then the checks of
 * tools/chaos/scenario.ts. Prints the figures of each mode; exits 1 on any problem.
 * See docs/reliability.md.
 */
import type { AppName } from '../stack.js';
import { CHAOS_DEFAULTS, formatChaos, runChaos, type ChaosMode } from './scenario.js';
import { intOption } from '../lib/cli.js';

const modeArg = process.argv.includes('--mode') ? process.argv[process.argv.indexOf('--mode') + 1] : 'all';
const modes: ChaosMode[] =
  modeArg === 'all' ? ['kill', 'rolling', 'outage'] : modeArg === 'kill' || modeArg === 'rolling' || modeArg === 'outage' ? [modeArg] : [];
if (!modes.length) {
  process.stderr.write(`--mode takes kill, rolling, outage or all, got ${modeArg}\n`);
  process.exit(2);
}
const seed = intOption('seed', Date.now() % 2 ** 31);
const say = (line: string) => process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const baseDatabaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const natsUrl = process.env.NATS_URL || 'nats://127.0.0.1:4222';

let failed = false;
for (const mode of modes) {
  const replicas = intOption('replicas', mode === 'rolling' ? 2 : 1);
  const result = await runChaos({
    ...CHAOS_DEFAULTS,
    mode,
    seed,
    clients: intOption('clients', CHAOS_DEFAULTS.clients),
    mixed: intOption('mixed', CHAOS_DEFAULTS.mixed),
    kills: intOption('kills', CHAOS_DEFAULTS.kills),
    replicas,
    ...(process.argv.includes('--restarts-per-app') ? { restartsPerApp: intOption('restarts-per-app', 1) } : {}),
    outageSec: intOption('outage-sec', CHAOS_DEFAULTS.outageSec),
    baseDatabaseUrl,
    natsUrl,
    log: say,
    verbose: process.argv.includes('--verbose'),
    ...(process.argv.includes('--apps')
      ? { only: process.argv[process.argv.indexOf('--apps') + 1]!.split(',') as AppName[] }
      : {}),
  });
  process.stdout.write(`${formatChaos(result)}\n`);
  if (result.problems.length) {
    failed = true;
    say(`FAILED (replay: npm run chaos -- --mode ${mode} --seed ${seed})`);
  }
}
process.exit(failed ? 1 : 0);
