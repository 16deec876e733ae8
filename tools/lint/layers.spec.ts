import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const eslint = new ESLint({ cwd: root });

/** The messages ESLint gives `code` as if it stood at `file` (a path that need not exist). */
async function lint(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

// Each rule of tools/lint/layers.mjs fails on a deliberate violation, and the allowed direction passes.
describe('layer rules', () => {
  it('domain/ imports no other layer and no transport or persistence', async () => {
    expect(await lint('apps/payments/src/domain/x.ts', "import { a } from '../store/y.js';\nexport const b = a;\n")).toEqual([
      expect.stringContaining('domain/ holds pure rules'),
    ]);
    expect(await lint('apps/payments/src/domain/x.ts', "import { Server } from '@grpc/grpc-js';\nexport const b = Server;\n")).toEqual([
      expect.stringContaining('domain/ holds pure rules'),
    ]);
    expect(await lint('apps/payments/src/domain/x.ts', "import { a } from './y.js';\nexport const b = a;\n")).toEqual([]);
  });

  it('app/ reaches adapters only through its ports and runs no SQL', async () => {
    expect(await lint('apps/payments/src/app/x.ts', "import { a } from '../clients/y.js';\nexport const b = a;\n")).toEqual([
      expect.stringContaining('app/ orchestrates through its ports'),
    ]);
    expect(
      await lint('apps/payments/src/app/x.ts', "export async function f(em: { execute(q: string): Promise<unknown> }) {\n  return em.execute('select 1');\n}\n"),
    ).toEqual([expect.stringContaining('SQL lives in store/')]);
    expect(await lint('apps/payments/src/app/x.ts', "import { a } from '../store/y.js';\nimport { c } from '../domain/z.js';\nexport const b = [a, c];\n")).toEqual([]);
  });

  it('store/ knows no use case, rpc/ no storage and opens no client, clients/ no storage', async () => {
    expect(await lint('apps/identity/src/store/x.ts', "import { a } from '../app/y.js';\nexport const b = a;\n")).toEqual([
      expect.stringContaining('store/ owns SQL'),
    ]);
    expect(await lint('apps/identity/src/rpc/x.ts', "import { a } from '../store/y.js';\nexport const b = a;\n")).toEqual([
      expect.stringContaining('rpc/ translates gRPC'),
    ]);
    expect(await lint('apps/identity/src/rpc/x.ts', "import { createRpcClient } from '@sluice/rpc';\nexport const b = createRpcClient;\n")).toEqual([
      expect.stringContaining('rpc/ translates gRPC'),
    ]);
    expect(await lint('apps/identity/src/clients/x.ts', "import { a } from '../store/y.js';\nexport const b = a;\n")).toEqual([
      expect.stringContaining('clients/ implement the app ports'),
    ]);
  });

  it('events/ may name the transaction type but not use storage', async () => {
    expect(await lint('apps/accounts/src/events/x.ts', "import type { EntityManager } from '@sluice/store';\nexport type T = EntityManager;\n")).toEqual([]);
    expect(await lint('apps/accounts/src/events/x.ts', "import { transactional } from '@sluice/store';\nexport const t = transactional;\n")).toEqual([
      expect.stringContaining('events/ publish through the outbox'),
    ]);
  });
});

// eslint.config.mjs, sluice/tests-start-neighbours: an app's integration tests start its real
// neighbours, so they may import another app's package entry (its service definition); its code may not.
describe('module boundaries between apps', () => {
  const neighbour = "import { accountsService } from '@sluice/accounts';\nexport const s = accountsService;\n";
  it('an app’s code imports no other app', async () => {
    expect(await lint('apps/payments/src/app/x.ts', neighbour)).toEqual([
      expect.stringContaining('@nx/enforce-module-boundaries'),
    ]);
  });

  it('its integration tests may import a neighbour’s package entry, not its insides', async () => {
    expect(await lint('apps/payments/test/x.spec.ts', neighbour)).toEqual([]);
    expect(
      await lint(
        'apps/payments/test/x.spec.ts',
        "import { AccountsClient } from '../../accounts/src/clients/identity.client.js';\nexport const c = AccountsClient;\n",
      ),
    ).toEqual([expect.stringContaining('@nx/enforce-module-boundaries')]);
  });
});
