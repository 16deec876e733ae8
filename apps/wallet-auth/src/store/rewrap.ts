import { keyringFromConfig, rewrapRows, type CommandDeps } from '@sluice/runtime';
import { rewrapValue } from '@sluice/crypto';
import { MNEMONIC_SCHEME, WALLET_KEYRING } from '../domain/crypto/key-custody.js';

interface Row {
  account_id: string;
  sealed_mnemonic: string;
}

/**
 * `main.ts rewrap`: rewraps the data key of every wallet mnemonic still wrapped under another
 * master key than WALLET_MASTER_KEY (the mnemonic's ciphertext is kept). Once it reports no
 * failure, the retired keys (WALLET_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapWalletKeys({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, WALLET_KEYRING);
  return rewrapRows(
    orm,
    [
      {
        name: 'walletKeys',
        next: (em, afterId, limit) =>
          em.execute<Row[]>(
            `SELECT account_id, sealed_mnemonic FROM wallet_key
             WHERE account_id > ? AND split_part(sealed_mnemonic, '.', 2) <> ?
             ORDER BY account_id LIMIT ? FOR UPDATE SKIP LOCKED`,
            [afterId, keyring.current.id, limit],
          ),
        idOf: (r: Row) => r.account_id,
        async apply(em, r: Row) {
          const sealed = rewrapValue(keyring, MNEMONIC_SCHEME, r.account_id, r.sealed_mnemonic);
          await em.execute(`UPDATE wallet_key SET sealed_mnemonic = ? WHERE account_id = ?`, [sealed, r.account_id]);
          return 'rewrapped';
        },
      },
    ],
    { batch: 500, logger },
  );
}
