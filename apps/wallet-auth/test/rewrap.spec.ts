import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { runServiceCommand } from '@sluice/runtime';
import { walletAuthService } from '../src/index.js';
import {
  generateMnemonic,
  loadMasterKeyring,
  openMnemonic,
  sealMnemonic,
} from '../src/domain/crypto/key-custody.js';
import { startWalletAuth, type Harness } from './support/harness.js';

/**
 * Rotation of the wallet master key (issue 17): `main.ts rewrap` moves every sealed mnemonic to
 * the new WALLET_MASTER_KEY (its ciphertext kept); a row that does not open is counted and left
 * as it is; then the old key can be removed.
 */
const oldKey = randomBytes(32).toString('base64');
let h: Harness;
beforeAll(async () => {
  h = await startWalletAuth('rewrap', { WALLET_MASTER_KEY: oldKey });
});
afterAll(async () => {
  await h?.stop();
});

describe('wallet keys: rewrap after a rotation', () => {
  it('rewraps every mnemonic under the new key, counts a damaged row as failed, and the old key can go', async () => {
    const old = loadMasterKeyring(oldKey);
    const wallets = Array.from({ length: 5 }, () => ({
      accountId: newId('InternalAccount'),
      mnemonic: generateMnemonic(),
    }));
    const insert = (accountId: string, sealed: string) =>
      h.sql.query(
        `INSERT INTO wallet_key (account_id, platform_id, sealed_mnemonic, created_at) VALUES ($1, $2, $3, now())`,
        [accountId, newId('Platform'), sealed],
      );
    for (const w of wallets) await insert(w.accountId, sealMnemonic(w.mnemonic, w.accountId, old));
    // A mnemonic sealed for another account, copied here: it does not open for this one.
    const moved = newId('InternalAccount');
    await insert(moved, sealMnemonic(generateMnemonic(), newId('InternalAccount'), old));

    const newKey = randomBytes(32).toString('base64');
    const env = {
      DATABASE_URL: h.db.url,
      LOG_LEVEL: 'silent',
      MIGRATE_ON_START: 'false',
      IDENTITY_GRPC_URL: h.identityAddress,
      WALLET_MASTER_KEY: newKey,
      WALLET_MASTER_KEYS_RETIRED: oldKey,
    };
    expect(await runServiceCommand(walletAuthService, 'rewrap', env)).toEqual({
      'walletKeys.failed': 1,
      'walletKeys.rewrapped': wallets.length,
    });
    // Run again: only the damaged row is left (and still reported).
    expect(await runServiceCommand(walletAuthService, 'rewrap', env)).toEqual({ 'walletKeys.failed': 1 });

    const fresh = loadMasterKeyring(newKey);
    const rows = new Map(
      (await h.sql.query(`SELECT account_id, sealed_mnemonic FROM wallet_key`)).rows.map((r) => [
        r.account_id,
        r.sealed_mnemonic,
      ]),
    );
    for (const w of wallets) {
      const sealed = rows.get(w.accountId) as string;
      expect(sealed.split('.')[1]).toBe(fresh.current.id);
      expect(openMnemonic(sealed, w.accountId, fresh)).toBe(w.mnemonic);
    }
    expect((rows.get(moved) as string).split('.')[1]).toBe(old.current.id);
  });
});
