/**
 * The bulk customer import benchmark: every app as its own process (tools/stack.ts) on a fresh
 * database. A CSV file of N customers (default 100,000; generated as it is sent, so this process
 * never holds it either) is uploaded to POST /customers/bulk/csv as multipart; the job is then
 * polled until COMPLETED. Printed: the file size, the upload time (until the 202, when every row
 * is stored), the import time and rows per second, and the resident memory of the gateway and
 * identity processes before, at their peak during the run, and after (sampled from /proc every
 * 100 ms) — the proof that neither holds the file.
 *
 *   npx tsx tools/bench/bulk-import.ts [--rows 100000]
 */
import { readFileSync } from 'node:fs';
import { multipartForm, sendStreaming } from '@sluice/testing';
import { startFreshStack } from '../lib/fresh-stack.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const rows = Number(arg('rows', '100000'));
if (!Number.isInteger(rows) || rows < 1 || rows > 100_000) throw new Error('--rows: 1 to 100000');

/** Resident set size of a process, in MiB (0 once it is gone). */
function rssMiB(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The file, 1,000 rows a piece, made as the upload asks for it. */
function* csv(counter: { bytes: number }): Generator<Buffer> {
  const head = Buffer.from(
    'platformCustomerId,customerType,fullName,birthDate,email,addressLine1,city,state,postalCode,country,businessLegalName\n',
  );
  counter.bytes += head.length;
  yield head;
  for (let i = 0; i < rows; i += 1000) {
    const lines: string[] = [];
    for (let j = i; j < Math.min(rows, i + 1000); j++)
      lines.push(
        j % 10 === 9
          ? `bench-${j},BUSINESS,,,,${j} Commerce Way,Austin,TX,78701,US,"Bench ${j}, Inc"\n`
          : `bench-${j},INDIVIDUAL,Person ${j},1980-01-${String((j % 28) + 1).padStart(2, '0')},p${j}@example.com,${j} Main St,San Francisco,CA,94105,US,\n`,
      );
    const piece = Buffer.from(lines.join(''));
    counter.bytes += piece.length;
    yield piece;
  }
}

async function main(): Promise<void> {
  const { stack, close } = await startFreshStack('benchbulk');
  const pids = { gateway: stack.pid('gateway'), identity: stack.pid('identity') };
  const before = { gateway: rssMiB(pids.gateway), identity: rssMiB(pids.identity) };
  const peak = { ...before };
  const sampler = setInterval(() => {
    peak.gateway = Math.max(peak.gateway, rssMiB(pids.gateway));
    peak.identity = Math.max(peak.identity, rssMiB(pids.identity));
  }, 100);
  try {
    const auth = stack.platforms.sandbox!.authorization;
    const counter = { bytes: 0 };
    const form = multipartForm({}, { name: 'bench.csv', type: 'text/csv', pieces: csv(counter) });
    const t0 = Date.now();
    const answer = await sendStreaming(`${stack.baseUrl}/customers/bulk/csv`, 'POST', form.body, {
      authorization: auth,
      ...form.headers,
    });
    const uploadMs = Date.now() - t0;
    if (answer.status !== 202) throw new Error(`upload: ${answer.status} ${answer.body.toString()}`);
    const { jobId } = JSON.parse(answer.body.toString()) as { jobId: string };
    let job: { status: string; progress: { processed: number; successful: number; failed: number } };
    for (;;) {
      const r = await fetch(`${stack.baseUrl}/customers/bulk/jobs/${jobId}`, { headers: { authorization: auth } });
      job = (await r.json()) as typeof job;
      if (job.status === 'COMPLETED' || job.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const importMs = Date.now() - t0 - uploadMs;
    clearInterval(sampler);
    const after = { gateway: rssMiB(pids.gateway), identity: rssMiB(pids.identity) };
    const mib = (n: number) => n.toFixed(0).padStart(6);
    console.log(`bulk import of ${rows} rows (${(counter.bytes / 1048576).toFixed(1)} MiB of CSV)`);
    console.log(`  upload until 202 (rows stored):   ${(uploadMs / 1000).toFixed(1)} s (${Math.round(rows / (uploadMs / 1000))} rows/s)`);
    console.log(`  import until ${job.status}:      ${(importMs / 1000).toFixed(1)} s (${Math.round(rows / (importMs / 1000))} rows/s)`);
    console.log(`  outcome: ${job.progress.successful} successful, ${job.progress.failed} failed`);
    console.log('  resident memory (MiB)   before   peak  after');
    console.log(`    gateway               ${mib(before.gateway)} ${mib(peak.gateway)} ${mib(after.gateway)}`);
    console.log(`    identity              ${mib(before.identity)} ${mib(peak.identity)} ${mib(after.identity)}`);
    if (job.status !== 'COMPLETED' || job.progress.successful !== rows) process.exitCode = 1;
  } finally {
    clearInterval(sampler);
    await close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
