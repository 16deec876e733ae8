#!/usr/bin/env node
// Bundles one app for production: apps/<app>/src/main.ts → dist/<app>/main.mjs.
// The @sluice/* workspace libs are bundled in; third-party packages (the root
// package.json dependencies) stay external and come from the image's
// production node_modules. Also writes dist/<app>/package.json naming the
// external packages the bundle actually imports, with their versions.
//
// usage: node tools/build-app.mjs <app> [--outdir dist/<app>] [--no-minify]
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const app = args.find((a) => !a.startsWith('--'));
const apps = readdirSync(join(root, 'apps')).filter((a) =>
  existsSync(join(root, 'apps', a, 'src', 'main.ts')),
);
if (!app || !apps.includes(app)) {
  process.stderr.write(`usage: node tools/build-app.mjs <app>\napps: ${apps.join(', ')}\n`);
  process.exit(2);
}
const outdirArg = args.indexOf('--outdir');
const outdir = outdirArg !== -1 ? join(root, args[outdirArg + 1]) : join(root, 'dist', app);
const minify = !args.includes('--no-minify');

const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const thirdParty = Object.keys(rootPkg.dependencies ?? {});

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const started = Date.now();
// main.mjs is the app; healthcheck.mjs the container health check; identity also
// carries ensure-credentials.mjs, the platform credential bootstrap Job.
const entryPoints = [
  { in: join(root, 'apps', app, 'src', 'main.ts'), out: 'main' },
  { in: join(root, 'tools', 'healthcheck.ts'), out: 'healthcheck' },
  ...(app === 'identity'
    ? [{ in: join(root, 'tools', 'ensure-credentials.ts'), out: 'ensure-credentials' }]
    : []),
];
const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir,
  outExtension: { '.js': '.mjs' },
  define: { __SLUICE_APP__: JSON.stringify(app) },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  minifyWhitespace: minify,
  minifySyntax: minify,
  // Names stay readable in stack traces and MikroORM entity/migration names.
  keepNames: true,
  legalComments: 'linked',
  // Every third-party package (and its subpaths) is external; @sluice/* is not listed, so it is bundled.
  external: thirdParty.flatMap((p) => [p, `${p}/*`]),
  // Bundled CommonJS (if any) still finds `require` in ESM output.
  banner: {
    js: "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
});

// The external packages the bundle imports (bare specifiers reduced to package names).
const used = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const imp of output.imports) {
    if (!imp.external || imp.path.startsWith('node:')) continue;
    const parts = imp.path.split('/');
    const name = imp.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (thirdParty.includes(name)) used.add(name);
  }
}
const dependencies = Object.fromEntries([...used].sort().map((n) => [n, rootPkg.dependencies[n]]));
writeFileSync(
  join(outdir, 'package.json'),
  JSON.stringify(
    { name: `@sluice/${app}-dist`, private: true, type: 'module', main: 'main.mjs', dependencies },
    null,
    2,
  ) + '\n',
);
const built = Object.entries(result.metafile.outputs)
  .filter(([file]) => file.endsWith('.mjs'))
  .map(([file, o]) => `${relative(relative(root, outdir), file)} ${(o.bytes / 1024).toFixed(0)} KiB`);
process.stdout.write(
  `built ${relative(root, outdir)}: ${built.join(', ')}; ${Object.keys(dependencies).length} external packages; ${Date.now() - started} ms\n`,
);
