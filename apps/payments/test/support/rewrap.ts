import type pg from 'pg';
import { payments as pb } from '@sluice/contracts';
import type { Clock } from '@sluice/core';
import { loadMasterKeyring, type MasterKeyring } from '@sluice/crypto';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService } from '@sluice/runtime';
import { paymentsService } from '../../src/index.js';
import { SEALED_COLUMNS } from '../../src/store/rewrap.js';
import { PAYMENTS_KEYRING } from '../../src/store/sealing.js';

/**
 * What payments' `rewrap` reports when it finds nothing to do: every job of
 * apps/payments/src/store/rewrap.ts with no failure, nothing sealed or rewrapped.
 */
export const REWRAP_NOTHING_LEFT: Readonly<Record<string, number>> = Object.freeze({
  'receiverLookups.failed': 0,
  'quotes.failed': 0,
  'transactions.failed': 0,
  'quotesSenderCustomerInfo.failed': 0,
  'incomingApprovals.failed': 0,
  'transactionsCounterpartyIdentifier.failed': 0,
  'transactionsSourceUmaAddress.failed': 0,
  'transactionsDestinationUmaAddress.failed': 0,
  'quotesDestinationUmaAddress.failed': 0,
  'receiverLookupsReceiverUmaAddress.failed': 0,
  'receiverLookupsSenderUmaAddress.failed': 0,
});

/** Payments' keyring of one master key (what a process configured with it alone opens). */
export const keyringOf = (key: string): MasterKeyring => loadMasterKeyring(key, undefined, PAYMENTS_KEYRING);

/** How many rows of `payments.<table>` hold `column` sealed under the master key `keyId`. */
export async function sealedUnder(sql: pg.Pool, table: string, column: string, keyId: string): Promise<number> {
  const { rows } = await sql.query(
    `SELECT count(*)::int AS n FROM payments.${table} WHERE split_part(${column}, '.', 2) = $1`,
    [keyId],
  );
  return rows[0].n as number;
}

/**
 * What `rewrap` to a new key reports, counted in the database before it runs: `<job>.rewrapped`,
 * the rows each job finds sealed under the old key `keyId` (every row of the test file's database), plus `more`
 * (the `<job>.sealed` of rows a test wrote as before sealing); every `failed` at 0, and no count of
 * 0 otherwise (rewrap prints only counts above 0).
 */
export async function rewrapCounts(
  sql: pg.Pool,
  keyId: string,
  more: Record<string, number> = {},
): Promise<Record<string, number>> {
  const counts: Record<string, number> = { ...REWRAP_NOTHING_LEFT };
  for (const c of SEALED_COLUMNS) counts[`${c.name}.rewrapped`] = await sealedUnder(sql, c.table, c.sealed, keyId);
  return Object.fromEntries(
    Object.entries({ ...counts, ...more }).filter(([k, n]) => k.endsWith('.failed') || n > 0),
  );
}

/**
 * Runs `check` against a payments replica configured with the master key `key` alone (it only
 * answers: it consumes no event), on the test file's database and subjects, then stops it.
 */
export async function withReplicaOnKey(
  services: { db: { url: string }; natsUrl: string; prefix: string },
  key: string,
  check: (client: PromiseClient<pb.PaymentsServiceClient>) => Promise<void>,
  o: { umaDomain?: string; clock?: Clock } = {},
): Promise<void> {
  const replica = await startService(
    paymentsService,
    {
      DATABASE_URL: services.db.url,
      NATS_URL: services.natsUrl,
      EVENT_SUBJECT_PREFIX: services.prefix,
      GRPC_PORT: '0',
      LOG_LEVEL: 'silent',
      MIGRATE_ON_START: 'false',
      SANDBOX_UMA_DOMAIN: o.umaDomain ?? 'sandbox.sluice.local',
      PAYMENTS_DATA_MASTER_KEY: key,
    },
    { consume: false, ...(o.clock ? { clock: o.clock } : {}) },
  );
  const client = createRpcClient(pb.PaymentsServiceClient, `127.0.0.1:${replica.port}`);
  try {
    await check(client);
  } finally {
    client.close();
    await replica.stop();
  }
}
