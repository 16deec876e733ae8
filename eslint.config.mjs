// ESLint 9 flat config. Fast on purpose: typescript-eslint's recommended rules
// without type information, Nx module boundaries from the project tags, and the
// rule that domain code stays pure. Formatting is Prettier's job (.prettierrc.json).
import { readdirSync, existsSync } from 'node:fs';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import { layers } from './tools/lint/layers.mjs';

// One scope per service: an app may use the shared libs and its own scope, never another app.
const appScopes = readdirSync('apps', { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(`apps/${d.name}/project.json`))
  .map((d) => d.name);

const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'fetch',
    'AbortSignal',
    'AbortController',
    'structuredClone',
  ].map((g) => [g, 'readonly']),
);

// Who may import whom: the project tags (apps, kits, contracts, tooling).
const moduleBoundaries = {
  enforceBuildableLibDependency: false,
  allow: [],
  depConstraints: [
    // Kits and contracts are shared by everything and depend on nothing but each other.
    { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
    { sourceTag: 'type:kit', onlyDependOnLibsWithTags: ['type:kit', 'type:contracts'] },
    { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'] },
    // Apps use shared libs only; another app is reached over gRPC or events, never imported.
    { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:kit', 'type:contracts'] },
    ...appScopes.map((s) => ({
      sourceTag: `scope:${s}`,
      onlyDependOnLibsWithTags: ['scope:shared', `scope:${s}`],
    })),
    // Repository tooling and the deploy/e2e suites may look at everything.
    { sourceTag: 'type:tooling', onlyDependOnLibsWithTags: ['*'] },
    { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['*'] },
    { sourceTag: 'type:deploy', onlyDependOnLibsWithTags: ['*'] },
  ],
};

export default defineConfig(
  {
    name: 'sluice/ignores',
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'libs/contracts/src/gen/**',
      '.nx/**',
      'coverage/**',
      'tmp/**',
      'bench-results/**',
      '.sluice/**',
    ],
  },
  ...tseslint.configs.recommended,
  ...nx.configs['flat/base'],
  {
    name: 'sluice/all',
    files: ['**/*.ts', '**/*.mts', '**/*.mjs', '**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: nodeGlobals },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'smart'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@nx/enforce-module-boundaries': ['error', moduleBoundaries],
    },
  },
  {
    // tools/ and tests/ drive the real apps (stack, config docs, deploy checks, e2e): importing apps is their job.
    name: 'sluice/tooling-may-import-apps',
    files: ['tools/**', 'tests/**'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
  {
    // An app's integration tests start the real neighbour services in-process (startServices of
    // @sluice/testing): they may import another app's package entry (its service definition),
    // never its insides. The app's own src/ stays bound by the rules above.
    name: 'sluice/tests-start-neighbours',
    files: ['apps/*/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': ['error', { ...moduleBoundaries, allow: appScopes.map((s) => `@sluice/${s}`) }],
    },
  },
  // Layer directions inside a service (tools/lint/layers.mjs).
  ...layers,
  {
    name: 'sluice/tests',
    files: ['**/*.spec.ts', '**/test/**/*.ts', 'tests/**/*.ts'],
    // Tests handle untyped JSON bodies and assert presence themselves.
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
