import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterKeyring } from '@sluice/crypto';
import { runServiceCommand, startService } from '@sluice/runtime';
import { createRpcClient } from '@sluice/rpc';
import { compliance } from '@sluice/contracts';
import { complianceService } from '../src/index.js';
import { KEYRING_NAMES } from '../src/domain/document-crypto.js';
import { FILES, newBusiness, newPlatform, startCompliance, upload, type Harness } from './support/harness.js';

/**
 * Rotation of the document master key (issue 17): `main.ts rewrap` moves every document's data key
 * to the new DOCUMENT_MASTER_KEY (chunks untouched); then the old key can be removed.
 */
const oldKey = randomBytes(32).toString('base64');
let h: Harness;
beforeAll(async () => {
  h = await startCompliance('rewrap', { DOCUMENT_MASTER_KEY: oldKey });
});
afterAll(async () => {
  await h?.stop();
});

describe('documents: rewrap after a rotation', () => {
  it('rewraps every data key under the new key, keeps the chunks, and the old key can go', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const docs = [
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.pdf),
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.png, 100),
    ];
    const chunksBefore = (
      await h.sql.query(`SELECT blob_id, idx, data FROM compliance.document_chunks ORDER BY 1, 2`)
    ).rows;
    const newKey = randomBytes(32).toString('base64');
    const newId = loadMasterKeyring(newKey, undefined, KEYRING_NAMES).current.id;
    const env = {
      ...h.env,
      MIGRATE_ON_START: 'false',
      DOCUMENT_MASTER_KEY: newKey,
      DOCUMENT_MASTER_KEYS_RETIRED: oldKey,
    };
    expect(await runServiceCommand(complianceService, 'rewrap', env)).toEqual({
      'documents.failed': 0,
      'documents.rewrapped': docs.length,
    });
    expect(await runServiceCommand(complianceService, 'rewrap', env)).toEqual({ 'documents.failed': 0 });
    const keyIds = (await h.sql.query(`SELECT DISTINCT key_id FROM compliance.documents`)).rows.map(
      (r) => r.key_id,
    );
    expect(keyIds).toEqual([newId]);
    expect(
      (await h.sql.query(`SELECT blob_id, idx, data FROM compliance.document_chunks ORDER BY 1, 2`)).rows,
    ).toEqual(chunksBefore);

    // The old key removed: every document still reads, byte for byte.
    const svc = await startService(complianceService, {
      ...h.env,
      MIGRATE_ON_START: 'false',
      DOCUMENT_MASTER_KEY: newKey,
    });
    const client = createRpcClient(compliance.ComplianceServiceClient, `127.0.0.1:${svc.port}`);
    try {
      for (const [d, file] of [
        [docs[0]!, FILES.pdf],
        [docs[1]!, FILES.png],
      ] as const) {
        const parts: Buffer[] = [];
        for (let i = 0; i < d.chunkCount; i++)
          parts.push(
            Buffer.from(
              (await client.readDocumentContent({ platformId: p, documentId: d.id, chunkIndex: i })).data,
            ),
          );
        expect(Buffer.concat(parts).equals(file)).toBe(true);
      }
    } finally {
      client.close();
      await svc.stop();
    }
  });
});
