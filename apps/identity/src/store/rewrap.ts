import { isSealedValue, rewrapValue, type MasterKeyring } from '@sluice/crypto';
import {
  keyringFromConfig,
  rewrapRows,
  sealedColumnJob,
  type CommandDeps,
  type RewrapJob,
  type SealedColumn,
} from '@sluice/runtime';
import { fromJson } from '@sluice/store';
import type { ImportRow } from '../domain/bulk-import.js';
import {
  BULK_IMPORT_ROW_SCHEME,
  CUSTOMER_SCHEME,
  IDENTITY_KEYRING,
  INVITATION_UMA_SCHEMES,
  UMA_ADDRESS_SCHEME,
  WEBHOOK_SECRET_SCHEME,
  importRowOwner,
  sealImportRow,
  sealWebhookSecret,
  umaAddressIndexes,
  webhookSecretOwner,
} from './sealing.js';

/**
 * Customers' sealed columns (store/sealing.ts), each its own rewrap job and counts: rows sealed
 * under another master key than the current one (rewrapped) or written before sealing (sealed,
 * their plaintext columns cleared); deleted customers too.
 * - `customers`: the personal fields, sealed together as the mapper seals them (absent ones left out).
 * - `customerUmaAddresses`: the UMA address, its blind index recomputed under the current key.
 */
const CUSTOMER_COLUMNS: SealedColumn[] = [
  {
    name: 'customers',
    table: 'customers',
    id: 'id',
    plain: `jsonb_build_object('email', NULLIF(email, ''), 'fullName', NULLIF(full_name, ''),
      'birthDate', to_char(birth_date, 'YYYY-MM-DD'), 'nationality', NULLIF(nationality, ''), 'address', address,
      'businessInfo', business_info)`,
    sealed: 'personal_data',
    scheme: CUSTOMER_SCHEME,
    plainIs: 'fields',
    plainPending: 'personal_data IS NULL',
    cleared: 'NULL',
    clears: ['email', 'full_name', 'birth_date', 'nationality', 'address', 'business_info'],
  },
  {
    name: 'customerUmaAddresses',
    table: 'customers',
    id: 'id',
    plain: 'uma_address',
    sealed: 'sealed_uma_address',
    scheme: UMA_ADDRESS_SCHEME,
    plainIs: 'text',
    plainPending: 'uma_address IS NOT NULL',
    cleared: 'NULL',
    derived: (umaAddress, keyring) => ({ uma_address_index: umaAddressIndexes(keyring, umaAddress)[0] }),
  },
];

/**
 * Invitations' UMA addresses (store/sealing.ts), each its own job and counts, bound to the code:
 * `invitationsInviterUma` (every invitation) and `invitationsInviteeUma` (claimed ones).
 */
const INVITATION_COLUMNS: SealedColumn[] = [
  {
    name: 'invitationsInviterUma',
    table: 'invitations',
    id: 'code',
    plain: 'inviter_uma',
    sealed: 'sealed_inviter_uma',
    scheme: INVITATION_UMA_SCHEMES.inviter,
    plainIs: 'text',
    plainPending: 'inviter_uma IS NOT NULL',
    cleared: 'NULL',
  },
  {
    name: 'invitationsInviteeUma',
    table: 'invitations',
    id: 'code',
    plain: 'invitee_uma',
    sealed: 'sealed_invitee_uma',
    scheme: INVITATION_UMA_SCHEMES.invitee,
    plainIs: 'text',
    plainPending: 'invitee_uma IS NOT NULL',
    cleared: 'NULL',
  },
];

interface SecretRow {
  id: string;
  platform_id: string;
  secret: string;
}

/** Webhook signing secrets still to do: under another master key, or stored as is (`whsec_...`) before sealing. */
function webhookSecretsJob(keyring: MasterKeyring): RewrapJob<SecretRow> {
  return {
    name: 'webhookSigningSecrets',
    next: (em, afterId, limit) =>
      em.execute<SecretRow[]>(
        `SELECT id, platform_id, secret FROM webhook_signing_secrets
         WHERE id > ? AND (secret NOT LIKE ? OR split_part(secret, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, `${WEBHOOK_SECRET_SCHEME.prefix}.%`, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = isSealedValue(WEBHOOK_SECRET_SCHEME, r.secret);
      const secret = sealed
        ? rewrapValue(keyring, WEBHOOK_SECRET_SCHEME, webhookSecretOwner(r.platform_id, r.id), r.secret)
        : sealWebhookSecret(keyring, r.platform_id, r.id, r.secret);
      await em.execute(`UPDATE webhook_signing_secrets SET secret = ? WHERE id = ?`, [secret, r.id]);
      return sealed ? 'rewrapped' : 'sealed';
    },
  };
}

interface ImportRowRow {
  /** `<job id>|<row number, 10 digits>`: the rows' order for the batches. */
  id: string;
  job_id: string;
  row_number: number;
  sealed_record: string | null;
  record: ImportRow['values'] | string | null;
}

/**
 * Bulk import rows still waiting to be processed (a processed row holds no values): sealed under
 * another master key, or stored before sealing (sealed now, `record` cleared).
 */
function importRowsJob(keyring: MasterKeyring): RewrapJob<ImportRowRow> {
  const id = `job_id || '|' || lpad(row_number::text, 10, '0')`;
  return {
    name: 'bulkImportRows',
    next: (em, afterId, limit) =>
      em.execute<ImportRowRow[]>(
        `SELECT ${id} AS id, job_id, row_number, sealed_record, record FROM bulk_import_rows
         WHERE ${id} > ? AND outcome IS NULL AND (sealed_record IS NULL OR split_part(sealed_record, '.', 2) <> ?)
         ORDER BY ${id} LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_record
        ? rewrapValue(keyring, BULK_IMPORT_ROW_SCHEME, importRowOwner(r.job_id, r.row_number), r.sealed_record)
        : sealImportRow(keyring, r.job_id, r.row_number, fromJson<ImportRow['values']>(r.record!));
      await em.execute(`UPDATE bulk_import_rows SET sealed_record = ?, record = NULL WHERE job_id = ? AND row_number = ?`, [
        sealed,
        r.job_id,
        r.row_number,
      ]);
      return r.sealed_record ? 'rewrapped' : 'sealed';
    },
  };
}

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every sealed customer (personal data, UMA address and its blind index),
 * webhook signing secret, waiting bulk import row and invitation's UMA addresses to the current master key
 * (IDENTITY_DATA_MASTER_KEY) and seals the rows written before sealing. Once it reports no
 * failure, the retired keys (IDENTITY_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapIdentity({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, IDENTITY_KEYRING);
  return rewrapRows(
    orm,
    [
      ...CUSTOMER_COLUMNS.map((c) => sealedColumnJob(keyring, c)),
      webhookSecretsJob(keyring),
      importRowsJob(keyring),
      ...INVITATION_COLUMNS.map((c) => sealedColumnJob(keyring, c)),
    ],
    { batch: REWRAP_BATCH, logger },
  );
}
