/**
 * `npm test`: contracts → typecheck → lint → every Vitest project (unit,
 * integration, deploy, end-to-end), then one closing line
 * `<N> passed, <M> failed[, <K> skipped]`; exits non-zero on any failure.
 *
 *   npm test                          everything
 *   npm test -- --project identity    arguments after `--` go to `vitest run`
 *   npm test -- --skip-checks ...     skip typecheck and lint (tests only)
 *
 * DATABASE_URL / NATS_URL default to the local servers; the testing kit makes a
 * fresh database and subject prefix per test file from them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize, formatSummary, type VitestJsonReport } from './lib/test-summary.js';
import { checkNats, checkPostgres } from './lib/preflight.js';
import { CAPTURE_DIR, captureTotals } from './api-reference/capture-totals.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.NATS_URL ||= 'nats://127.0.0.1:4222';

const args = process.argv.slice(2);
const skipChecks = args.includes('--skip-checks');
const vitestArgs = args.filter((a) => a !== '--skip-checks');
const resultsFile = join(root, 'tmp', 'test-results', 'vitest.json');

function run(label: string, cmd: string, cmdArgs: string[]): Promise<boolean> {
  process.stdout.write(`\n▶ ${label}: ${[cmd.replace(root + '/', ''), ...cmdArgs].join(' ')}\n`);
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: 'inherit', env: process.env });
    child.on('error', (err) => {
      process.stderr.write(`${label}: ${err.message}\n`);
      done(false);
    });
    child.on('exit', (code, signal) => {
      const ok = code === 0;
      process.stdout.write(
        `${ok ? '✓' : '✗'} ${label} ${ok ? 'passed' : `failed (${signal ?? `exit ${code}`})`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
      done(ok);
    });
  });
}

const failedChecks: string[] = [];

// The generated stubs (regenerated only when their inputs changed); tests and typecheck need them.
if (!(await run('contracts', process.execPath, ['tools/generate-contracts.mjs']))) {
  failedChecks.push('contracts');
}
if (!skipChecks && failedChecks.length === 0) {
  if (!(await run('typecheck', bin('tsc'), ['-p', 'tsconfig.json']))) failedChecks.push('typecheck');
  if (
    !(await run('lint', bin('eslint'), [
      '--cache',
      '--cache-location',
      'node_modules/.cache/eslint/',
      '--max-warnings=0',
      '.',
    ]))
  ) {
    failedChecks.push('lint');
  }
}

// Integration and end-to-end tests need both; say so up front rather than through a wall of failures.
for (const r of await Promise.allSettled([
  checkPostgres(process.env.DATABASE_URL),
  checkNats(process.env.NATS_URL),
])) {
  if (r.status === 'rejected')
    process.stdout.write(
      `\n⚠ ${(r.reason as Error).message}\n  ${((r.reason as { hint?: string[] }).hint ?? []).join('\n  ')}\n`,
    );
}

let report: VitestJsonReport | undefined;
if (!failedChecks.includes('contracts')) {
  rmSync(resultsFile, { force: true });
  rmSync(CAPTURE_DIR, { recursive: true, force: true });
  mkdirSync(dirname(resultsFile), { recursive: true });
  const ok = await run('tests', bin('vitest'), [
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${resultsFile}`,
    ...vitestArgs,
  ]);
  try {
    report = JSON.parse(readFileSync(resultsFile, 'utf8')) as VitestJsonReport;
    // Vitest fails a run with passing tests on unhandled errors; those count too.
    if (!ok && report.numFailedTests === 0 && report.numFailedTestSuites === 0)
      failedChecks.push('tests (vitest reported errors outside tests)');
  } catch {
    failedChecks.push('tests (no report: vitest did not finish)');
  }
}

// The reference check of the end-to-end files, over the whole run: what was validated, by webhook type.
if (existsSync(CAPTURE_DIR)) {
  const { WEBHOOK_EVENT_TYPES } = await import('@sluice/api');
  const files = readdirSync(CAPTURE_DIR).filter((f) => f.endsWith('.json'));
  const t = captureTotals(
    files.map((f) => join(CAPTURE_DIR, f)),
    WEBHOOK_EVENT_TYPES,
  );
  process.stdout.write(
    `\nreference check: ${t.responses} answers and ${t.webhooks} webhooks from ${t.files} end-to-end files, ` +
      `${t.mismatches} mismatch(es); webhooks by type: ${Object.entries(t.byType)
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}\n` +
      (t.neverProduced.length
        ? `  webhook types no end-to-end file produced: ${t.neverProduced.join(', ')}\n`
        : ''),
  );
  // A whole run proves every webhook type end to end: produced, and valid against the reference.
  if (!vitestArgs.length && t.neverProduced.length)
    failedChecks.push(`webhook types no end-to-end file produced (${t.neverProduced.join(', ')})`);
}

const summary = summarize(report, failedChecks);
if (failedChecks.length) process.stdout.write(`\nfailed checks: ${failedChecks.join(', ')}\n`);
for (const f of summary.failures.slice(0, 30)) process.stdout.write(`  ✗ ${f}\n`);
process.stdout.write(`\n${formatSummary(summary)}\n`);
process.exit(summary.failed > 0 ? 1 : 0);
