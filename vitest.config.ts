import { defineConfig } from 'vitest/config';
import { readdirSync, existsSync } from 'node:fs';

// One Vitest project per app and lib (so `nx run <project>:test` runs only its
// tests), the repository tooling, the deploy/ checks, and the end-to-end suite
// that drives the real processes.
const projects = ['libs', 'apps'].flatMap((kind) =>
  readdirSync(kind)
    .filter((name) => existsSync(`${kind}/${name}/package.json`))
    .map((name) => ({
      test: {
        name,
        root: `${kind}/${name}`,
        include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
        testTimeout: 30_000,
        hookTimeout: 60_000,
      },
    })),
);

export default defineConfig({
  test: {
    projects: [
      ...projects,
      {
        test: {
          name: 'tools',
          root: 'tools',
          include: ['**/*.spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      { test: { name: 'deploy', root: 'tests/deploy', include: ['**/*.spec.ts'], testTimeout: 60_000 } },
      {
        test: {
          name: 'e2e',
          root: 'tests/e2e',
          include: ['**/*.spec.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
    maxWorkers: 2,
  },
});
