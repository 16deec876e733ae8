import { rewrapValue, type MasterKeyring } from '@sluice/crypto';
import {
  keyringFromConfig,
  rewrapRows,
  sealedColumnJob,
  type CommandDeps,
  type RewrapJob,
  type SealedColumn,
} from '@sluice/runtime';
import { KEYRING_NAMES, rewrapBlobKey } from '../domain/document-crypto.js';
import {
  BENEFICIAL_OWNER_SCHEME,
  DOCUMENT_DETAILS_SCHEME,
  VERIFICATION_SUBJECT_SCHEME,
  sealDocumentDetails,
} from './sealing.js';

interface DocumentRow {
  id: string;
  blob_id: string;
  key_id: string;
  wrapped_key: Buffer;
  sealed_details: string | null;
  file_name: string | null;
  document_number: string | null;
}

/**
 * Documents still to do: their data key wrapped under another master key (rewrapped; the chunks,
 * wherever they are stored, stay as they are), their file name and number sealed under another
 * key (rewrapped) or written before sealing (sealed now, their plaintext columns cleared). Written
 * by hand: the data key is no sealed column (`sealedColumnJob` does not fit).
 */
function documentsJob(keyring: MasterKeyring): RewrapJob<DocumentRow> {
  return {
    name: 'documents',
    next: (em, afterId, limit) =>
      em.execute<DocumentRow[]>(
        `SELECT id, blob_id, key_id, wrapped_key, sealed_details, file_name, document_number FROM documents
         WHERE id > ? AND (key_id <> ? OR sealed_details IS NULL OR split_part(sealed_details, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const w =
        r.key_id === keyring.current.id
          ? { keyId: r.key_id, wrapped: Buffer.from(r.wrapped_key) }
          : rewrapBlobKey(keyring, r.blob_id, { keyId: r.key_id, wrapped: Buffer.from(r.wrapped_key) });
      const details = r.sealed_details
        ? rewrapValue(keyring, DOCUMENT_DETAILS_SCHEME, r.id, r.sealed_details)
        : sealDocumentDetails(keyring, r.id, {
            fileName: r.file_name ?? '',
            ...(r.document_number !== null ? { documentNumber: r.document_number } : {}),
          });
      await em.execute(
        `UPDATE documents SET key_id = ?, wrapped_key = ?, sealed_details = ?, file_name = NULL, document_number = NULL
         WHERE id = ?`,
        [w.keyId, w.wrapped, details, r.id],
      );
      return r.sealed_details ? 'rewrapped' : 'sealed';
    },
  };
}

/**
 * The sealed columns of beneficial owners and verifications, each its own job and counts: under
 * another key (rewrapped), or written before sealing (sealed, the plaintext column cleared). A
 * verification without a subject has nothing to seal.
 */
const SEALED_COLUMNS: SealedColumn[] = [
  {
    name: 'beneficialOwners',
    table: 'beneficial_owners',
    id: 'id',
    plain: 'personal_info',
    sealed: 'personal_data',
    scheme: BENEFICIAL_OWNER_SCHEME,
    plainIs: 'json',
    plainPending: 'personal_info IS NOT NULL',
    cleared: 'NULL',
  },
  {
    name: 'verifications',
    table: 'verifications',
    id: 'id',
    plain: 'subject',
    sealed: 'sealed_subject',
    scheme: VERIFICATION_SUBJECT_SCHEME,
    plainIs: 'text',
    plainPending: 'subject IS NOT NULL',
    cleared: 'NULL',
  },
];

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every document's data key, every sealed document detail, beneficial
 * owner and verification subject to the current master key (DOCUMENT_MASTER_KEY), and seals the
 * rows written before sealing. Once it reports no failure, the retired keys
 * (DOCUMENT_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapCompliance({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, KEYRING_NAMES);
  return rewrapRows(orm, [documentsJob(keyring), ...SEALED_COLUMNS.map((c) => sealedColumnJob(keyring, c))], {
    batch: REWRAP_BATCH,
    logger,
  });
}
