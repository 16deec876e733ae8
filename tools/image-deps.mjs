#!/usr/bin/env node
// Copies the runtime node_modules of one app's image: the third-party packages
// its bundle imports (dist/<app>/package.json, written by build-app.mjs) and
// everything they need, resolved the way Node resolves them, from a complete
// production install (`npm ci --omit=dev`). Versions are the lockfile's, no
// registry access, and an image carries only what its app loads.
//
// usage: node tools/image-deps.mjs <app> <from-node_modules> <to-dir>
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [app, fromArg, toArg] = process.argv.slice(2);
if (!app || !fromArg || !toArg) {
  process.stderr.write('usage: node tools/image-deps.mjs <app> <from-node_modules> <to-dir>\n');
  process.exit(2);
}
const from = resolve(fromArg);
const to = resolve(toArg);
const bundlePkg = JSON.parse(readFileSync(join(root, 'dist', app, 'package.json'), 'utf8'));

/** Node's lookup: `<dir>/node_modules/<name>`, walking up from the requiring package to the top. */
function resolvePackage(fromDir, name) {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === dirname(from) || !dir.startsWith(dirname(from))) return undefined;
    dir = dirname(dir);
    // skip from `.../node_modules/@scope` or `.../node_modules` to the package that owns them
    while (dir.endsWith(`${sep}node_modules`) || /[\\/]node_modules[\\/]@[^\\/]+$/.test(dir))
      dir = dirname(dir);
  }
}

const seen = new Set();
const queue = Object.keys(bundlePkg.dependencies ?? {}).map((name) => ({
  name,
  fromDir: dirname(from),
  optional: false,
}));
while (queue.length) {
  const { name, fromDir, optional } = queue.shift();
  const dir = resolvePackage(fromDir, name);
  if (!dir) {
    if (optional) continue;
    process.stderr.write(
      `image-deps: ${name} (needed from ${relative(dirname(from), fromDir) || 'the app'}) is not installed in ${fromArg}\n`,
    );
    process.exit(1);
  }
  if (seen.has(dir)) continue;
  seen.add(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const d of Object.keys(pkg.dependencies ?? {})) queue.push({ name: d, fromDir: dir, optional: false });
  for (const d of Object.keys(pkg.optionalDependencies ?? {}))
    queue.push({ name: d, fromDir: dir, optional: true });
  for (const d of Object.keys(pkg.peerDependencies ?? {}))
    queue.push({ name: d, fromDir: dir, optional: true });
}

mkdirSync(to, { recursive: true });
for (const dir of [...seen].sort()) {
  const rel = relative(dirname(from), dir);
  cpSync(dir, join(to, rel), {
    recursive: true,
    dereference: true,
    // nested node_modules are copied only as far as they are part of the closure
    filter: (src) => !relative(dir, src).split(sep).includes('node_modules'),
  });
}
writeFileSync(
  join(to, 'node_modules', '.sluice-image-deps.json'),
  JSON.stringify([...seen].map((d) => relative(dirname(from), d)).sort(), null, 2) + '\n',
);
process.stdout.write(
  `${app}: ${seen.size} packages (${Object.keys(bundlePkg.dependencies ?? {}).length} direct)\n`,
);
