/**
 * One service restarted, until ready (issue 15's "≤ 2 s" row): every app as its own process from its
 * bundle on a fresh database (tools/lib/fresh-stack.ts), then each app in turn stopped with SIGTERM and
 * started again (`stack.restart`), `--rounds` times; prints, per app, the seconds from the signal until
 * the new process answered its health check (min, median, max) and the load average. Asserts nothing.
 *
 *   npx tsx tools/bench/restart.ts [--rounds 3] [--apps gateway,payments]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { APPS, type AppName } from '../stack.js';
import { startFreshStack } from '../lib/fresh-stack.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, apps: { type: 'string' } },
});
const rounds = Number(values.rounds);
const apps = (values.apps ? values.apps.split(',') : [...APPS]) as AppName[];
const unknown = apps.filter((a) => !(APPS as readonly string[]).includes(a));
if (unknown.length || !(rounds >= 1)) {
  process.stderr.write(`usage: restart.ts [--rounds N ≥ 1] [--apps ${APPS.join(',')}]\n`);
  process.exit(2);
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const startLoad = load();
const fresh = await startFreshStack('benchrestart');
const seconds = new Map<AppName, number[]>(apps.map((a) => [a, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const app of apps) {
      const t0 = performance.now();
      await fresh.stack.restart(app, 'SIGTERM');
      seconds.get(app)!.push((performance.now() - t0) / 1000);
    }
  }
} finally {
  await fresh.close();
}
const fmt = (n: number) => n.toFixed(2);
console.log(`one service restarted (SIGTERM) until it answers its health check, ${rounds} round(s); load average ${startLoad} at the start, ${load()} at the end`);
console.log(`${'app'.padEnd(20)} ${'min s'.padStart(6)} ${'median s'.padStart(9)} ${'max s'.padStart(6)}`);
for (const [app, s] of seconds) {
  const sorted = [...s].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  console.log(`${app.padEnd(20)} ${fmt(sorted[0]!).padStart(6)} ${fmt(median).padStart(9)} ${fmt(sorted.at(-1)!).padStart(6)}`);
}
