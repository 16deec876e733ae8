/**
 * `npm run migrate`: applies every app's pending migrations, each as its own
 * `main.mjs migrate` process from its bundle (what the Kubernetes migration Jobs run; tools/stack.ts
 * `buildApps`, or the source under tsx with SLUICE_FROM_SOURCE=1), against
 * DATABASE_URL (created when missing). `npm start` does this itself.
 *   npm run migrate                 every app
 *   npm run migrate -- identity     only the named apps
 */
import { ensureDatabase } from '@sluice/store/database';
import { rmSync } from 'node:fs';
import {
  APPS,
  DEFAULTS,
  buildApps,
  discoverApps,
  runBundlesByDefault,
  runLimited,
  spawnAppProcess,
  type AppName,
} from './stack.js';
import { safeUrl } from './lib/preflight.js';

const databaseUrl = process.env.DATABASE_URL || DEFAULTS.databaseUrl;
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((a) => !(APPS as readonly string[]).includes(a));
if (unknown.length) {
  process.stderr.write(`unknown app(s): ${unknown.join(', ')}; apps: ${APPS.join(', ')}\n`);
  process.exit(2);
}
const apps = wanted.length ? (wanted as AppName[]) : discoverApps();
const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const width = Math.max(...apps.map((a) => a.length)) + ':migrate'.length;

try {
  await ensureDatabase(databaseUrl);
} catch (err) {
  process.stderr.write(`Postgres is not reachable at ${safeUrl(databaseUrl)}: ${(err as Error).message}\n`);
  process.exit(1);
}
const bundles = runBundlesByDefault() ? await buildApps(apps) : undefined;
const failed: string[] = [];
await runLimited(apps, 4, async (app) => {
  const p = spawnAppProcess({
    ...(bundles ? { bundles } : {}),
    app,
    args: ['migrate'],
    env: { ...process.env, DATABASE_URL: databaseUrl },
    label: `${app}:migrate`,
    width,
    color,
  });
  const e = await p.exited;
  if (e.code !== 0) failed.push(`${app} (${e.signal ?? `exit ${e.code}`})`);
});
if (bundles) rmSync(bundles, { recursive: true, force: true });
if (failed.length) {
  process.stderr.write(`migrations failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write(`migrations applied for ${apps.join(', ')} on ${safeUrl(databaseUrl)}\n`);
