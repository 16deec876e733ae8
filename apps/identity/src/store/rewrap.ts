import { isSealedValue, rewrapValue, type MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, sealedColumnJob, type CommandDeps, type RewrapJob } from '@sluice/runtime';
import { fromJson } from '@sluice/store';
import type { CustomerRecord } from './entities.js';
import { legacyPersonalData } from './mappers.js';
import type { ImportRow } from '../domain/bulk-import.js';
import {
  BULK_IMPORT_ROW_SCHEME,
  CUSTOMER_SCHEME,
  IDENTITY_KEYRING,
  UMA_ADDRESS_SCHEME,
  WEBHOOK_SECRET_SCHEME,
  importRowOwner,
  sealImportRow,
  sealPersonalData,
  sealWebhookSecret,
  umaAddressIndexes,
  webhookSecretOwner,
} from './sealing.js';

/** Rows of a rewrap batch are read with raw SQL (snake_case), then mapped to what the mappers take. */
interface CustomerRow {
  id: string;
  personal_data: string | null;
  email: string | null;
  full_name: string | null;
  birth_date: string | null;
  nationality: string | null;
  address: CustomerRecord['address'];
  business_info: CustomerRecord['businessInfo'];
}

interface SecretRow {
  id: string;
  platform_id: string;
  secret: string;
}

/**
 * Customers still to do: sealed under another master key than the current one, or written before
 * sealing (no `personal_data`: sealed now, their plaintext columns cleared).
 */
function customersJob(keyring: MasterKeyring): RewrapJob<CustomerRow> {
  return {
    name: 'customers',
    next: (em, afterId, limit) =>
      em.execute<CustomerRow[]>(
        `SELECT id, personal_data, email, full_name, to_char(birth_date, 'YYYY-MM-DD') AS birth_date, nationality,
           address, business_info
         FROM customers WHERE id > ? AND (personal_data IS NULL OR split_part(personal_data, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.personal_data
        ? rewrapValue(keyring, CUSTOMER_SCHEME, r.id, r.personal_data)
        : sealPersonalData(
            keyring,
            r.id,
            legacyPersonalData({
              email: r.email,
              fullName: r.full_name,
              birthDate: r.birth_date,
              nationality: r.nationality,
              address: r.address,
              businessInfo: r.business_info,
            }),
          );
      await em.execute(
        `UPDATE customers SET personal_data = ?, email = NULL, full_name = NULL, birth_date = NULL, nationality = NULL,
           address = NULL, business_info = NULL WHERE id = ?`,
        [sealed, r.id],
      );
      return r.personal_data ? 'rewrapped' : 'sealed';
    },
  };
}

/**
 * Customers' UMA addresses still to do: sealed under another master key (rewrapped) or written
 * before sealing (sealed, `uma_address` cleared); either way the blind index is recomputed under
 * the current key. Deleted customers too.
 */
const customerUmaAddressesJob = (keyring: MasterKeyring) =>
  sealedColumnJob(keyring, {
    name: 'customerUmaAddresses',
    table: 'customers',
    id: 'id',
    plain: 'uma_address',
    sealed: 'sealed_uma_address',
    scheme: UMA_ADDRESS_SCHEME,
    plainIs: 'text',
    plainPending: 'uma_address IS NOT NULL',
    cleared: 'NULL',
    derived: (umaAddress, ring) => ({ uma_address_index: umaAddressIndexes(ring, umaAddress)[0] }),
  });

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
 * webhook signing secret and waiting bulk import row to the current master key
 * (IDENTITY_DATA_MASTER_KEY) and seals the rows written before sealing. Once it reports no
 * failure, the retired keys (IDENTITY_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapIdentity({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, IDENTITY_KEYRING);
  return rewrapRows(
    orm,
    [customersJob(keyring), customerUmaAddressesJob(keyring), webhookSecretsJob(keyring), importRowsJob(keyring)],
    { batch: REWRAP_BATCH, logger },
  );
}
