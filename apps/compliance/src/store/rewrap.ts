import { rewrapValue, type MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, type CommandDeps, type RewrapJob } from '@sluice/runtime';
import type { PersonalInfo } from '../domain/beneficial-owner.js';
import { KEYRING_NAMES, rewrapBlobKey } from '../domain/document-crypto.js';
import {
  BENEFICIAL_OWNER_SCHEME,
  DOCUMENT_DETAILS_SCHEME,
  VERIFICATION_SUBJECT_SCHEME,
  sealDocumentDetails,
  sealPersonalInfo,
  sealSubject,
} from './sealing.js';
import { fromJson } from './sql.js';

/** Rows still to do: sealed under another key than the current one, or written before sealing (null). */
const stale = (column: string) => `(${column} IS NULL OR split_part(${column}, '.', 2) <> ?)`;

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
 * key (rewrapped) or written before sealing (sealed now, their plaintext columns cleared).
 */
function documentsJob(keyring: MasterKeyring): RewrapJob<DocumentRow> {
  return {
    name: 'documents',
    next: (em, afterId, limit) =>
      em.execute<DocumentRow[]>(
        `SELECT id, blob_id, key_id, wrapped_key, sealed_details, file_name, document_number FROM documents
         WHERE id > ? AND (key_id <> ? OR ${stale('sealed_details')}) ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
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

interface OwnerRow {
  id: string;
  personal_data: string | null;
  personal_info: PersonalInfo | string | null;
}

/** Beneficial owners still to do: under another key (rewrapped), or written before sealing (sealed, plaintext cleared). */
function beneficialOwnersJob(keyring: MasterKeyring): RewrapJob<OwnerRow> {
  return {
    name: 'beneficialOwners',
    next: (em, afterId, limit) =>
      em.execute<OwnerRow[]>(
        `SELECT id, personal_data, personal_info FROM beneficial_owners
         WHERE id > ? AND ${stale('personal_data')} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.personal_data
        ? rewrapValue(keyring, BENEFICIAL_OWNER_SCHEME, r.id, r.personal_data)
        : sealPersonalInfo(keyring, r.id, fromJson<PersonalInfo>(r.personal_info!));
      await em.execute(`UPDATE beneficial_owners SET personal_data = ?, personal_info = NULL WHERE id = ?`, [
        sealed,
        r.id,
      ]);
      return r.personal_data ? 'rewrapped' : 'sealed';
    },
  };
}

interface VerificationRow {
  id: string;
  sealed_subject: string | null;
  subject: string | null;
}

/** Verifications with a subject still to do: under another key (rewrapped), or written before sealing (sealed, plaintext cleared). */
function verificationsJob(keyring: MasterKeyring): RewrapJob<VerificationRow> {
  return {
    name: 'verifications',
    next: (em, afterId, limit) =>
      em.execute<VerificationRow[]>(
        `SELECT id, sealed_subject, subject FROM verifications
         WHERE id > ? AND (sealed_subject IS NOT NULL OR subject IS NOT NULL) AND ${stale('sealed_subject')}
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_subject
        ? rewrapValue(keyring, VERIFICATION_SUBJECT_SCHEME, r.id, r.sealed_subject)
        : sealSubject(keyring, r.id, r.subject!);
      await em.execute(`UPDATE verifications SET sealed_subject = ?, subject = NULL WHERE id = ?`, [sealed, r.id]);
      return r.sealed_subject ? 'rewrapped' : 'sealed';
    },
  };
}

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
  return rewrapRows(orm, [documentsJob(keyring), beneficialOwnersJob(keyring), verificationsJob(keyring)], {
    batch: REWRAP_BATCH,
    logger,
  });
}
