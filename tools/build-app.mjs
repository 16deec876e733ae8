#!/usr/bin/env node
// Bundles one app for production: apps/<app>/src/main.ts → dist/<app>/main.mjs.
// The @sluice/* workspace libs are bundled in; third-party packages (the root
// package.json dependencies) stay external and come from the image's
// production node_modules. Also writes dist/<app>/package.json naming the
// external packages the bundle actually imports, with their versions.
//
// usage: node tools/build-app.mjs <app> [--outdir dist/<app>] [--no-minify]
//
// The same bundles run locally: `npm start`, the e2e stack and `npm run migrate` build every app
// with `buildApp` (unminified, into tmp/stack-builds/) and run `node main.mjs`, as the image does,
// instead of transpiling TypeScript at every start (tools/stack.ts).
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The apps of the repository (those with apps/<app>/src/main.ts). */
export function appNames(root = ROOT) {
  return readdirSync(join(root, 'apps')).filter((a) => existsSync(join(root, 'apps', a, 'src', 'main.ts')));
}

/**
 * Bundles one app into `outdir` (emptied first): main.mjs, healthcheck.mjs (and identity's
 * ensure-credentials.mjs), their source maps and a package.json naming the external packages
 * the bundle imports. Resolves to a one-line summary. `outdir` must lie inside the repository,
 * so the external packages resolve from its node_modules.
 */
export async function buildApp(app, { root = ROOT, outdir = join(root, 'dist', app), minify = true } = {}) {
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
  return `built ${relative(root, outdir)}: ${built.join(', ')}; ${Object.keys(dependencies).length} external packages; ${Date.now() - started} ms`;
}

// The command line (the Dockerfile's build stage, the apps' nx `build` targets).
if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const args = process.argv.slice(2);
  const app = args.find((a) => !a.startsWith('--'));
  const apps = appNames();
  if (!app || !apps.includes(app)) {
    process.stderr.write(`usage: node tools/build-app.mjs <app>\napps: ${apps.join(', ')}\n`);
    process.exit(2);
  }
  const outdirArg = args.indexOf('--outdir');
  const summary = await buildApp(app, {
    ...(outdirArg !== -1 ? { outdir: join(ROOT, args[outdirArg + 1]) } : {}),
    minify: !args.includes('--no-minify'),
  });
  process.stdout.write(`${summary}\n`);
}
