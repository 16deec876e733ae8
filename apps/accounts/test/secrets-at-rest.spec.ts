import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@sluice/config';
import { accounts as pb } from '@sluice/contracts';
import { loadMasterKeyring } from '@sluice/crypto';
import { createRpcClient } from '@sluice/rpc';
import { runServiceCommand, startService } from '@sluice/runtime';
import { TEST_MASTER_KEYS } from '@sluice/testing';
import { accountsService } from '../src/index.js';
import { validateAccountInfo } from '../src/domain/external-account.js';
import { ACCOUNTS_KEYRING } from '../src/store/sealing.js';
import { SANDBOX, rejection, startHarness, type Harness } from './support/harness.js';

/**
 * External accounts at rest (issue 17): what identifies an account is sealed in its row, bound to
 * it; duplicates are still found (blind index), across a master-key rotation too; `rewrap` moves
 * every row to the new key and seals rows written before sealing.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('accsecrets');
});
afterAll(async () => {
  await h?.stop();
});

const ACCOUNT_NUMBER = '48151623420';
const IBAN = 'DE89370400440532013000';
const holder = {
  beneficiaryType: 'INDIVIDUAL',
  fullName: 'Hedy Lamarr',
  address: { line1: '7 Invention Lane', postalCode: '10115', country: 'DE' },
};
const usd = (accountNumber: string): pb.ExternalAccountInfo =>
  ({
    accountType: 'USD_ACCOUNT',
    accountNumber,
    routingNumber: '021000021',
    paymentRails: [],
    beneficiary: holder,
  }) as pb.ExternalAccountInfo;
const eur = (iban: string): pb.ExternalAccountInfo =>
  ({ accountType: 'EUR_ACCOUNT', iban, paymentRails: [], beneficiary: holder }) as pb.ExternalAccountInfo;

type Client = Harness['client'];

async function register(
  client: Client,
  platformId: string,
  customerId: string,
  currency: string,
  info: pb.ExternalAccountInfo,
) {
  return (
    await client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency,
      accountInfo: info,
    })
  ).account!;
}

/** The row as text, as a stolen dump would hold it. */
async function rawRow(id: string): Promise<string> {
  return (await h.sql.query(`SELECT e::text AS row FROM accounts.external_accounts e WHERE id = $1`, [id]))
    .rows[0].row;
}

/** Another accounts process on the same database with other keys (no migrations: the harness ran them). */
async function accountsWith(keys: Record<string, string>) {
  const svc = await startService(
    accountsService,
    {
      DATABASE_URL: h.db.url,
      NATS_URL: (h.running.deps.config as { NATS_URL: string }).NATS_URL,
      EVENT_SUBJECT_PREFIX: h.prefix,
      GRPC_PORT: '0',
      LOG_LEVEL: 'silent',
      MIGRATE_ON_START: 'false',
      IDENTITY_GRPC_URL: h.identityAddress,
      ...keys,
    },
    { consume: false },
  );
  const client = createRpcClient(pb.AccountsServiceClient, `127.0.0.1:${svc.port}`);
  return {
    client,
    async stop() {
      client.close();
      await svc.stop();
    },
  };
}

describe('external accounts at rest', () => {
  it('the row holds no account number, IBAN, routing number or holder, and the API answers them all', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'Hedy Lamarr');
    const a = await register(h.client, platformId, customerId, 'USD', usd(ACCOUNT_NUMBER));
    const b = await register(h.client, platformId, customerId, 'EUR', eur(IBAN));
    for (const [id, secrets] of [
      [a.id, [ACCOUNT_NUMBER, '021000021', 'Hedy Lamarr', '7 Invention Lane']],
      [b.id, [IBAN, '370400440532013000', 'Hedy Lamarr']],
    ] as const) {
      const row = await rawRow(id);
      for (const s of secrets) expect(row).not.toContain(s);
    }
    const { rows } = await h.sql.query(
      `SELECT account_type, account_info, primary_identifier, verified_full_name, dedupe_key, sealed_data
       FROM accounts.external_accounts WHERE id = $1`,
      [a.id],
    );
    expect(rows[0]).toMatchObject({
      account_type: 'USD_ACCOUNT',
      account_info: null,
      primary_identifier: null,
    });
    expect(rows[0].dedupe_key).toMatch(/^bi1\.mk_[0-9a-f]{16}\.[0-9a-f]{64}$/);
    expect(rows[0].sealed_data).toMatch(/^sae1\.mk_[0-9a-f]{16}\./);

    const got = (await h.client.getExternalAccount({ platformId, accountId: a.id })).account!;
    expect(got).toEqual(a);
    expect(got.accountInfo).toMatchObject({ accountNumber: ACCOUNT_NUMBER, routingNumber: '021000021' });
    expect(got.primaryIdentifier).toBe(ACCOUNT_NUMBER);
    expect(got.beneficiaryVerifiedData).toEqual({ fullName: 'Hedy Lamarr' });
    const listed = await h.client.listExternalAccounts({ platformId, customerId, owner: pb.Owner.CUSTOMERS });
    expect(listed.accounts.map((x) => x.primaryIdentifier).sort()).toEqual([ACCOUNT_NUMBER, IBAN].sort());
    // The same account again is still a duplicate (its blind index).
    const dup = await rejection(
      register(h.client, platformId, customerId, 'EUR', eur('de89 3704 0044 0532 0130 00')),
    );
    expect(dup.code).toBe('EXTERNAL_ACCOUNT_ALREADY_EXISTS');
  });

  it("a sealed value moved to another account's row does not open there", async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'Hedy Lamarr');
    const a = await register(h.client, platformId, customerId, 'USD', usd('90000000001'));
    const b = await register(h.client, platformId, customerId, 'USD', usd('90000000002'));
    const own = (
      await h.sql.query(`SELECT sealed_data FROM accounts.external_accounts WHERE id = $1`, [b.id])
    ).rows[0].sealed_data;
    await h.sql.query(
      `UPDATE accounts.external_accounts SET sealed_data = (SELECT sealed_data FROM accounts.external_accounts WHERE id = $1)
       WHERE id = $2`,
      [a.id, b.id],
    );
    await expect(h.client.getExternalAccount({ platformId, accountId: b.id })).rejects.toMatchObject({
      grpcCode: 13,
    });
    await h.sql.query(`UPDATE accounts.external_accounts SET sealed_data = $1 WHERE id = $2`, [own, b.id]);
    expect(
      (await h.client.getExternalAccount({ platformId, accountId: b.id })).account!.primaryIdentifier,
    ).toBe('90000000002');
  });
});

describe('rotation', () => {
  it('before rewrap: old rows read and still count as duplicates; rewrap moves every row (legacy ones sealed) to the new key; then the old key can go', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'Hedy Lamarr');
    const sealedBefore = await register(h.client, platformId, customerId, 'USD', usd('70000000001'));
    // An account as written before sealing: plaintext columns and dedupe key.
    const legacy = await register(h.client, platformId, customerId, 'USD', usd('70000000002'));
    const { dedupeKey } = validateAccountInfo('USD', usd('70000000002'), new Date());
    const { beneficiary: _b, paymentRails: _r, ...legacyInfo } = legacy.accountInfo!;
    await h.sql.query(
      `UPDATE accounts.external_accounts SET sealed_data = NULL, account_info = $2::jsonb, primary_identifier = $3,
         verified_full_name = 'Hedy Lamarr', dedupe_key = $4 WHERE id = $1`,
      [
        legacy.id,
        JSON.stringify({ ...legacyInfo, beneficiary: holder, paymentRails: ['ACH'] }),
        '70000000002',
        dedupeKey,
      ],
    );
    const legacyRead = (await h.client.getExternalAccount({ platformId, accountId: legacy.id })).account!;
    expect(legacyRead.accountInfo).toMatchObject({ accountNumber: '70000000002', paymentRails: ['ACH'] });

    const oldKey = TEST_MASTER_KEYS.ACCOUNT_DATA_MASTER_KEY!;
    const newKey = randomBytes(32).toString('base64');
    const newId = loadMasterKeyring(newKey, undefined, ACCOUNTS_KEYRING).current.id;
    const rotatedKeys = { ACCOUNT_DATA_MASTER_KEY: newKey, ACCOUNT_DATA_MASTER_KEYS_RETIRED: oldKey };

    // Rotated, not yet rewrapped: everything reads, and an old-key or legacy row is still a duplicate.
    const rotated = await accountsWith(rotatedKeys);
    try {
      expect(
        (await rotated.client.getExternalAccount({ platformId, accountId: sealedBefore.id })).account,
      ).toEqual(sealedBefore);
      for (const n of ['70000000001', '70000000002']) {
        const dup = await rejection(register(rotated.client, platformId, customerId, 'USD', usd(n)));
        expect(dup.code).toBe('EXTERNAL_ACCOUNT_ALREADY_EXISTS');
      }
      await register(rotated.client, platformId, customerId, 'USD', usd('70000000003'));
      // A rolling rotation, the new key staged first (docs/security.md): one replica still indexes
      // under the old key, another under the new one; the same account sent to both at once is
      // registered once.
      const staged = await accountsWith({
        ACCOUNT_DATA_MASTER_KEY: oldKey,
        ACCOUNT_DATA_MASTER_KEYS_RETIRED: newKey,
      });
      try {
        for (let i = 0; i < 10; i++) {
          const info = usd(`7100000000${i}`);
          const both = await Promise.allSettled([
            register(staged.client, platformId, customerId, 'USD', info),
            register(rotated.client, platformId, customerId, 'USD', info),
          ]);
          expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        }
      } finally {
        await staged.stop();
      }
    } finally {
      await rotated.stop();
    }

    const env = { DATABASE_URL: h.db.url, LOG_LEVEL: 'silent', MIGRATE_ON_START: 'false', ...rotatedKeys };
    const notUnderNew = (
      await h.sql.query(
        `SELECT count(*)::int AS n FROM accounts.external_accounts
         WHERE sealed_data IS NULL OR split_part(sealed_data, '.', 2) <> $1`,
        [newId],
      )
    ).rows[0].n;
    const counts = await runServiceCommand(accountsService, 'rewrap', env);
    const total = (await h.sql.query(`SELECT count(*)::int AS n FROM accounts.external_accounts`)).rows[0].n;
    const underNew = (
      await h.sql.query(
        `SELECT count(*)::int AS n FROM accounts.external_accounts WHERE split_part(sealed_data, '.', 2) = $1`,
        [newId],
      )
    ).rows[0].n;
    expect(counts['externalAccounts.failed']).toBe(0);
    expect(counts['externalAccounts.sealed']).toBe(1);
    // Every row not made under the new key was rewrapped (or sealed).
    expect(counts['externalAccounts.rewrapped']! + counts['externalAccounts.sealed']!).toBe(notUnderNew);
    expect(notUnderNew).toBeLessThan(total);
    expect(underNew).toBe(total);
    const dedupes = (await h.sql.query(`SELECT dedupe_key FROM accounts.external_accounts`)).rows;
    for (const r of dedupes) expect(r.dedupe_key).toMatch(new RegExp(`^bi1\\.${newId}\\.`));
    const legacyRow = await rawRow(legacy.id);
    expect(legacyRow).not.toContain('70000000002');
    expect(legacyRow).not.toContain('Hedy Lamarr');
    expect(await runServiceCommand(accountsService, 'rewrap', env)).toEqual({ 'externalAccounts.failed': 0 });

    // The old key removed: every account reads, duplicates are still found.
    const fresh = await accountsWith({ ACCOUNT_DATA_MASTER_KEY: newKey });
    try {
      expect((await fresh.client.getExternalAccount({ platformId, accountId: legacy.id })).account).toEqual(
        legacyRead,
      );
      expect(
        (await fresh.client.getExternalAccount({ platformId, accountId: sealedBefore.id })).account,
      ).toEqual(sealedBefore);
      const dup = await rejection(register(fresh.client, platformId, customerId, 'USD', usd('70000000002')));
      expect(dup.code).toBe('EXTERNAL_ACCOUNT_ALREADY_EXISTS');
    } finally {
      await fresh.stop();
    }
  });

  it('a missing or malformed master key stops the start with a ConfigError naming the variable', async () => {
    for (const [keys, variable] of [
      [{}, 'ACCOUNT_DATA_MASTER_KEY'],
      [{ ACCOUNT_DATA_MASTER_KEY: 'c2hvcnQ=' }, 'ACCOUNT_DATA_MASTER_KEY'],
      [
        {
          ACCOUNT_DATA_MASTER_KEY: randomBytes(32).toString('base64'),
          ACCOUNT_DATA_MASTER_KEYS_RETIRED: '%%',
        },
        'ACCOUNT_DATA_MASTER_KEYS_RETIRED',
      ],
    ] as [Record<string, string>, string][]) {
      const err = await accountsWith(keys).then(
        async (s) => s.stop(),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.map((p) => p.variable)).toEqual([variable]);
    }
  });
});
