import { keyringFromConfig, rewrapRows, type CommandDeps } from '@sluice/runtime';
import { KEYRING_NAMES, rewrapBlobKey } from '../domain/document-crypto.js';

interface Row {
  id: string;
  blob_id: string;
  key_id: string;
  wrapped_key: Buffer;
}

/**
 * `main.ts rewrap`: rewraps the data key of every document still wrapped under another master key
 * than DOCUMENT_MASTER_KEY (its chunks, wherever they are stored, stay as they are). Once it
 * reports no failure, the retired keys (DOCUMENT_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapCompliance({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, KEYRING_NAMES);
  return rewrapRows(
    orm,
    [
      {
        name: 'documents',
        next: (em, afterId, limit) =>
          em.execute<Row[]>(
            `SELECT id, blob_id, key_id, wrapped_key FROM documents WHERE id > ? AND key_id <> ?
             ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
            [afterId, keyring.current.id, limit],
          ),
        idOf: (r: Row) => r.id,
        async apply(em, r: Row) {
          const w = rewrapBlobKey(keyring, r.blob_id, { keyId: r.key_id, wrapped: Buffer.from(r.wrapped_key) });
          await em.execute(`UPDATE documents SET key_id = ?, wrapped_key = ? WHERE id = ?`, [w.keyId, w.wrapped, r.id]);
          return 'rewrapped';
        },
      },
    ],
    { batch: 500, logger },
  );
}
