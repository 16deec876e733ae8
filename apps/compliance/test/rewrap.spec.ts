import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterKeyring } from '@sluice/crypto';
import { runServiceCommand, startService } from '@sluice/runtime';
import { createRpcClient } from '@sluice/rpc';
import { common, compliance } from '@sluice/contracts';
import { eventually } from '@sluice/testing';
import { complianceService } from '../src/index.js';
import { KEYRING_NAMES } from '../src/domain/document-crypto.js';
import {
  FILES,
  newBusiness,
  newIndividual,
  newPlatform,
  personalInfo,
  startCompliance,
  upload,
  type Harness,
} from './support/harness.js';

/**
 * Compliance at rest (issue 17): beneficial owners' personal info, documents' file names and
 * numbers and verifications' screened subjects are sealed in their rows under DOCUMENT_MASTER_KEY
 * (documents' files were already); rotation of that key: `main.ts rewrap` moves every document's
 * data key and every sealed value to the new key (chunks untouched), seals rows written before
 * sealing; then the old key can be removed.
 */
const oldKey = randomBytes(32).toString('base64');
const SANDBOX = common.Environment.SANDBOX;
let h: Harness;
beforeAll(async () => {
  h = await startCompliance('rewrap', { DOCUMENT_MASTER_KEY: oldKey });
});
afterAll(async () => {
  await h?.stop();
});

/** Every column of the row as text, as a stolen dump would hold it. */
async function raw(table: string, id: string): Promise<string> {
  const r = await h.sql.query(`SELECT t::text AS row FROM compliance.${table} t WHERE id = $1`, [id]);
  return r.rows[0].row as string;
}

const OWNER = personalInfo('Turing', {
  middleName: 'Mathison',
  email: 'alan.turing@example.com',
  phoneNumber: '+441632960123',
  identifier: '987-65-4321',
  birthDate: '1912-06-23',
  address: { line1: '2 Adlington Road', city: 'Wilmslow', postalCode: 'SK9 4LZ', country: 'GB' },
});
const OWNER_SECRETS = [
  'Turing',
  'Mathison',
  'alan.turing@example.com',
  '+441632960123',
  '987-65-4321',
  '1912-06-23',
  'Adlington',
  'SK9 4LZ',
];

describe('personal data at rest', () => {
  it('beneficial owners, document details and verification subjects: no plaintext in the row, the API answers every field', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const o = (
      await h.compliance.createBeneficialOwner({
        platformId: p,
        environment: SANDBOX,
        customerId: biz.id,
        roles: [compliance.BeneficialOwnerRole.UBO],
        ownershipPercentage: 30,
        personalInfo: OWNER,
      })
    ).beneficialOwner!;
    const row = await raw('beneficial_owners', o.id);
    for (const v of OWNER_SECRETS) expect(row).not.toContain(v);
    const { rows } = await h.sql.query(
      `SELECT personal_info, personal_data FROM compliance.beneficial_owners WHERE id = $1`,
      [o.id],
    );
    expect(rows[0].personal_info).toBeNull();
    expect(rows[0].personal_data).toMatch(/^cbo1\.mk_[0-9a-f]{16}\./);
    const got = (await h.compliance.getBeneficialOwner({ platformId: p, beneficialOwnerId: o.id })).beneficialOwner!;
    expect(got.personalInfo).toEqual(o.personalInfo);
    expect(got.personalInfo).toMatchObject({ ...OWNER, address: expect.objectContaining(OWNER.address) });
    const listed = await h.compliance.listBeneficialOwners({ platformId: p, customerId: biz.id });
    expect(listed.beneficialOwners.map((x) => x.personalInfo)).toEqual([o.personalInfo]);
    // An update reseals.
    const updated = (
      await h.compliance.updateBeneficialOwner({
        platformId: p,
        environment: SANDBOX,
        beneficialOwnerId: o.id,
        personalInfo: { ...OWNER, email: 'alan@example.org' },
      })
    ).beneficialOwner!;
    expect(updated.personalInfo!.email).toBe('alan@example.org');
    expect(await raw('beneficial_owners', o.id)).not.toContain('alan@example.org');

    const d = await upload(
      h,
      { platformId: p, documentHolder: biz.id, fileName: 'turing-passport.pdf', documentNumber: 'P7312345' },
      FILES.pdf,
    );
    const docRow = await raw('documents', d.id);
    for (const v of ['turing-passport', 'P7312345']) expect(docRow).not.toContain(v);
    expect((await h.sql.query(`SELECT sealed_details FROM compliance.documents WHERE id = $1`, [d.id])).rows[0]
      .sealed_details).toMatch(/^cdd1\./);
    expect((await h.compliance.getDocument({ platformId: p, documentId: d.id })).document).toMatchObject({
      fileName: 'turing-passport.pdf',
      documentNumber: 'P7312345',
    });

    // The screening reads the sealed subject: the name's suffix 002 rejects (an unreadable one would approve).
    const person = await newIndividual(h, p, 'Joan Clarke002');
    await upload(h, { platformId: p, documentHolder: person.id }, FILES.pdf);
    const v = (
      await h.compliance.createVerification({ platformId: p, environment: SANDBOX, customerId: person.id })
    ).verification!;
    expect(v.verificationStatus).toBe(compliance.VerificationStatus.IN_PROGRESS);
    const vRow = await raw('verifications', v.id);
    expect(vRow).not.toContain('Joan Clarke');
    expect(vRow).toMatch(/cvs1\./);
    const final = await eventually(async () => {
      const x = (await h.compliance.getVerification({ platformId: p, verificationId: v.id })).verification!;
      return x.verificationStatus === compliance.VerificationStatus.IN_PROGRESS ? undefined : x;
    });
    expect(final.verificationStatus).toBe(compliance.VerificationStatus.REJECTED);
  });

  it("a sealed value moved to another owner's row does not open there", async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const [a, b] = await Promise.all(
      ['Franklin', 'Hodgkin'].map(async (lastName, i) =>
        (
          await h.compliance.createBeneficialOwner({
            platformId: p,
            environment: SANDBOX,
            customerId: biz.id,
            roles: [compliance.BeneficialOwnerRole.UBO],
            ownershipPercentage: 10 + i,
            personalInfo: personalInfo(lastName),
          })
        ).beneficialOwner!,
      ),
    );
    const own = (await h.sql.query(`SELECT personal_data FROM compliance.beneficial_owners WHERE id = $1`, [b!.id]))
      .rows[0].personal_data;
    await h.sql.query(
      `UPDATE compliance.beneficial_owners SET personal_data = (SELECT personal_data FROM compliance.beneficial_owners WHERE id = $1) WHERE id = $2`,
      [a!.id, b!.id],
    );
    await expect(h.compliance.getBeneficialOwner({ platformId: p, beneficialOwnerId: b!.id })).rejects.toMatchObject({
      grpcCode: 13,
    });
    await h.sql.query(`UPDATE compliance.beneficial_owners SET personal_data = $1 WHERE id = $2`, [own, b!.id]);
    expect(
      (await h.compliance.getBeneficialOwner({ platformId: p, beneficialOwnerId: b!.id })).beneficialOwner!
        .personalInfo!.lastName,
    ).toBe('Hodgkin');
  });
});

describe('rewrap after a rotation', () => {
  it('rewraps every data key and sealed value under the new key, seals legacy rows, keeps the chunks, and the old key can go', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const docs = [
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.pdf),
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.png, 100),
    ];
    const legacyOwner = (
      await h.compliance.createBeneficialOwner({
        platformId: p,
        environment: SANDBOX,
        customerId: biz.id,
        roles: [compliance.BeneficialOwnerRole.DIRECTOR],
        ownershipPercentage: 0,
        personalInfo: personalInfo('Lamarr'),
      })
    ).beneficialOwner!;
    // Its KYC check decided first (deciding writes the row, which seals it).
    await eventually(async () =>
      (await h.sql.query(`SELECT kyc_due_at FROM compliance.beneficial_owners WHERE id = $1`, [legacyOwner.id])).rows[0]
        .kyc_due_at === null
        ? true
        : undefined,
    );
    // Rows as written before sealing: plaintext columns, nothing sealed.
    await h.sql.query(
      `UPDATE compliance.beneficial_owners SET personal_data = NULL, personal_info = $1::jsonb WHERE id = $2`,
      [
        JSON.stringify({
          firstName: 'Hedy',
          lastName: 'Lamarr',
          birthDate: '1914-11-09',
          nationality: 'AT',
          address: { line1: '1 Legacy Lane', postalCode: '10115', country: 'DE' },
          idType: 'NON_US_TAX_ID',
          identifier: 'AT-0091',
        }),
        legacyOwner.id,
      ],
    );
    await h.sql.query(
      `UPDATE compliance.documents SET sealed_details = NULL, file_name = 'hedy-id.png', document_number = 'L-42' WHERE id = $1`,
      [docs[1]!.id],
    );
    const legacyVerification = `Verification:${randomBytes(8).toString('hex')}`;
    await h.sql.query(
      `INSERT INTO compliance.verifications (id, platform_id, customer_id, customer_type, environment, status, subject,
         created_at, updated_at) VALUES ($1, $2, $3, 'BUSINESS', 'SANDBOX', 'APPROVED', 'REG-LEGACY-7', now(), now())`,
      [legacyVerification, p, biz.id],
    );
    const ownerBefore = (await h.compliance.getBeneficialOwner({ platformId: p, beneficialOwnerId: legacyOwner.id }))
      .beneficialOwner!;
    expect(ownerBefore.personalInfo!.address!.line1).toBe('1 Legacy Lane');
    const docBefore = (await h.compliance.getDocument({ platformId: p, documentId: docs[1]!.id })).document!;
    expect(docBefore).toMatchObject({ fileName: 'hedy-id.png', documentNumber: 'L-42' });

    const chunksBefore = (
      await h.sql.query(`SELECT blob_id, idx, data FROM compliance.document_chunks ORDER BY 1, 2`)
    ).rows;
    const count = async (sql: string) => (await h.sql.query(sql)).rows[0].n as number;
    const nDocs = await count(`SELECT count(*)::int AS n FROM compliance.documents`);
    const nOwners = await count(`SELECT count(*)::int AS n FROM compliance.beneficial_owners`);
    const nSubjects = await count(
      `SELECT count(*)::int AS n FROM compliance.verifications WHERE sealed_subject IS NOT NULL OR subject IS NOT NULL`,
    );
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
      'documents.rewrapped': nDocs - 1,
      'documents.sealed': 1,
      'beneficialOwners.failed': 0,
      'beneficialOwners.rewrapped': nOwners - 1,
      'beneficialOwners.sealed': 1,
      'verifications.failed': 0,
      'verifications.rewrapped': nSubjects - 1,
      'verifications.sealed': 1,
    });
    expect(await runServiceCommand(complianceService, 'rewrap', env)).toEqual({
      'documents.failed': 0,
      'beneficialOwners.failed': 0,
      'verifications.failed': 0,
    });
    const keyIds = (
      await h.sql.query(
        `SELECT key_id AS k FROM compliance.documents
         UNION SELECT split_part(sealed_details, '.', 2) FROM compliance.documents
         UNION SELECT split_part(personal_data, '.', 2) FROM compliance.beneficial_owners
         UNION SELECT split_part(sealed_subject, '.', 2) FROM compliance.verifications WHERE sealed_subject IS NOT NULL`,
      )
    ).rows.map((r) => r.k);
    expect(keyIds).toEqual([newId]);
    const plain = await h.sql.query(
      `SELECT (SELECT count(*)::int FROM compliance.beneficial_owners WHERE personal_info IS NOT NULL) AS owners,
         (SELECT count(*)::int FROM compliance.documents WHERE file_name IS NOT NULL OR document_number IS NOT NULL) AS docs,
         (SELECT count(*)::int FROM compliance.verifications WHERE subject IS NOT NULL) AS subjects`,
    );
    expect(plain.rows[0]).toEqual({ owners: 0, docs: 0, subjects: 0 });
    expect(await raw('beneficial_owners', legacyOwner.id)).not.toContain('Lamarr');
    expect(await raw('verifications', legacyVerification)).not.toContain('REG-LEGACY-7');
    expect(
      (await h.sql.query(`SELECT blob_id, idx, data FROM compliance.document_chunks ORDER BY 1, 2`)).rows,
    ).toEqual(chunksBefore);

    // The old key removed: every document and owner still reads, byte for byte.
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
      expect((await client.getDocument({ platformId: p, documentId: docs[1]!.id })).document).toEqual(docBefore);
      expect(
        (await client.getBeneficialOwner({ platformId: p, beneficialOwnerId: legacyOwner.id })).beneficialOwner,
      ).toEqual(ownerBefore);
    } finally {
      client.close();
      await svc.stop();
    }
  });
});
