/**
 * Measures what each app of an idle stack uses, the figures behind the Kubernetes resource requests
 * and limits (docs/operations.md, "Resources"): starts every process (as `npm start` does) on a fresh
 * database, lets it settle, then reads every app's own /metrics twice, `windowSeconds` apart:
 * resident memory (`process_resident_memory_bytes`, and the V8 heap in use) and CPU
 * (`process_cpu_seconds_total`, as millicores over the window).
 * `npx tsx tools/resources.ts [windowSeconds] [settleSeconds]`.
 */
import { parseExposition, sumOf, type Sample } from '@sluice/metrics';
import { startFreshStack } from './lib/fresh-stack.js';
import type { AppName } from './stack.js';

const windowS = Number(process.argv[2] ?? 60);
const settleS = Number(process.argv[3] ?? 20);
const MIB = 1024 * 1024;

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return parseExposition(await res.text());
}

async function main(): Promise<void> {
  const { stack, close } = await startFreshStack('resources');
  try {
    const apps = Object.keys(stack.metrics) as AppName[];
    const read = async () =>
      new Map(await Promise.all(apps.map(async (a) => [a, await scrape(stack.metrics[a]!)] as const)));
    await new Promise((r) => setTimeout(r, settleS * 1000));
    const before = await read();
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const after = await read();
    const rows = apps.map((app) => {
      const a = after.get(app)!;
      const cpu = sumOf(a, 'process_cpu_seconds_total') - sumOf(before.get(app)!, 'process_cpu_seconds_total');
      return [
        app.padEnd(20),
        (sumOf(a, 'process_resident_memory_bytes') / MIB).toFixed(0).padStart(8),
        (sumOf(a, 'nodejs_heap_size_used_bytes') / MIB).toFixed(0).padStart(13),
        ((cpu / windowS) * 1000).toFixed(1).padStart(15),
      ].join('');
    });
    process.stdout.write(
      `idle for ${windowS} s after ${settleS} s of settling:\n` +
        `${'app'.padEnd(20)}${'RSS MiB'.padStart(8)}${'heap used MiB'.padStart(13)}${'CPU millicores'.padStart(15)}\n` +
        rows.join('\n') +
        '\n',
    );
  } finally {
    await close();
  }
}

void main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
