import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, compliance, identity } from '@sluice/contracts';
import { customerJson, verificationJson } from '@sluice/api';
import { newId } from '@sluice/core';
import { RpcError } from '@sluice/rpc';
import { status } from '@grpc/grpc-js';
import { eventually } from '@sluice/testing';
import { documentStoreContract } from './support/document-store.contract.js';
import {
  FILES,
  download,
  fieldsOf,
  newBusiness,
  newIndividual,
  newPlatform,
  personalInfo,
  rejection,
  startCompliance,
  upload,
  type Harness,
} from './support/harness.js';

const { BeneficialOwnerRole: Role, KycStatus, DocumentType, VerificationStatus: VS } = compliance;
const SANDBOX = common.Environment.SANDBOX;
let h: Harness;

beforeAll(async () => {
  h = await startCompliance('svc');
});
afterAll(async () => {
  await h?.stop();
});

/** Rows of compliance.unreferenced_blobs: blobs whose chunks no document references (none once uploads are done). */
async function unreferenced(): Promise<number> {
  return (await h.sql.query(`SELECT count(*)::int AS n FROM compliance.unreferenced_blobs`)).rows[0].n;
}

async function owner(platformId: string, customerId: string, lastName: string, pct = 10, roles = [Role.UBO]) {
  return (
    await h.compliance.createBeneficialOwner({
      platformId,
      environment: SANDBOX,
      customerId,
      roles,
      ownershipPercentage: pct,
      personalInfo: personalInfo(lastName),
    })
  ).beneficialOwner!;
}

/** The owner once its KYC check was decided (no longer due). */
async function decided(platformId: string, id: string): Promise<compliance.BeneficialOwner> {
  return eventually(async () => {
    const r = await h.sql.query(`SELECT kyc_due_at FROM compliance.beneficial_owners WHERE id = $1`, [id]);
    if (r.rows[0].kyc_due_at !== null) return undefined;
    return (await h.compliance.getBeneficialOwner({ platformId, beneficialOwnerId: id })).beneficialOwner!;
  });
}

async function outbox(schema: 'compliance' | 'identity', platformId: string) {
  const r = await h.sql.query(
    `SELECT type, envelope FROM ${schema}.outbox WHERE platform_id = $1 ORDER BY seq`,
    [platformId],
  );
  return r.rows.map((x: { type: string; envelope: string | { data: unknown } }) => ({
    type: x.type,
    data: (typeof x.envelope === 'string' ? JSON.parse(x.envelope) : x.envelope).data,
  }));
}

describe('beneficial owners', () => {
  it('runs KYC asynchronously after creation: lastName suffix 001 PENDING, 002 REJECTED, other APPROVED', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    // One after the other: the list is in creation order (created concurrently, any order would do).
    const pending = await owner(p, biz.id, 'Smith001');
    const rejected = await owner(p, biz.id, 'Smith002');
    const approved = await owner(p, biz.id, 'Smith');
    for (const o of [pending, rejected, approved]) expect(o.kycStatus).toBe(KycStatus.PENDING);
    expect((await decided(p, rejected.id)).kycStatus).toBe(KycStatus.REJECTED);
    expect((await decided(p, approved.id)).kycStatus).toBe(KycStatus.APPROVED);
    expect((await decided(p, pending.id)).kycStatus).toBe(KycStatus.PENDING);
    const list = await h.compliance.listBeneficialOwners({
      platformId: p,
      customerId: biz.id,
      page: { limit: 2 },
    });
    expect(list.beneficialOwners.map((o) => o.id)).toEqual([pending.id, rejected.id]);
    expect(list.page).toMatchObject({ hasMore: true, totalCount: 3 });
    const next = await h.compliance.listBeneficialOwners({
      platformId: p,
      customerId: biz.id,
      page: { limit: 2, cursor: list.page!.nextCursor! },
    });
    expect(next.beneficialOwners.map((o) => o.id)).toEqual([approved.id]);
  });

  it('reruns KYC when personal data changes, not when only the percentage does', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const o = await decided(p, (await owner(p, biz.id, 'Jones')).id);
    expect(o.kycStatus).toBe(KycStatus.APPROVED);
    const pct = await h.compliance.updateBeneficialOwner({
      platformId: p,
      environment: SANDBOX,
      beneficialOwnerId: o.id,
      ownershipPercentage: 30,
    });
    expect(pct.beneficialOwner).toMatchObject({ ownershipPercentage: 30, kycStatus: KycStatus.APPROVED });
    const renamed = await h.compliance.updateBeneficialOwner({
      platformId: p,
      environment: SANDBOX,
      beneficialOwnerId: o.id,
      personalInfo: { lastName: 'Jones002', idType: compliance.IdentificationType.UNSPECIFIED },
    });
    expect(renamed.beneficialOwner).toMatchObject({ kycStatus: KycStatus.PENDING });
    expect(renamed.beneficialOwner!.personalInfo).toMatchObject({ firstName: 'Jane', lastName: 'Jones002' });
    expect((await decided(p, o.id)).kycStatus).toBe(KycStatus.REJECTED);
  });

  it('refuses what breaks a rule, naming the field, and stores nothing', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const person = await newIndividual(h, p);
    await owner(p, biz.id, 'Big', 80);
    const base = {
      platformId: p,
      environment: SANDBOX,
      customerId: biz.id,
      roles: [Role.UBO],
      ownershipPercentage: 10,
      personalInfo: personalInfo(),
    };
    const cases: [Partial<compliance.CreateBeneficialOwnerRequest>, string[]][] = [
      [{ ownershipPercentage: 21 }, ['ownershipPercentage']], // 80 + 21 > 100
      [{ ownershipPercentage: 101, roles: [Role.DIRECTOR] }, ['ownershipPercentage']],
      [{ roles: [] }, ['roles']],
      [{ roles: [Role.UBO, Role.UBO] }, ['roles[1]']],
      [{ personalInfo: personalInfo('X', { birthDate: '2999-01-01' }) }, ['personalInfo.birthDate']],
      [{ personalInfo: { ...personalInfo(), firstName: undefined } }, ['personalInfo.firstName']],
      [{ personalInfo: personalInfo('X', { phoneNumber: '12345' }) }, ['personalInfo.phoneNumber']],
      [{ customerId: person.id }, ['customerId']],
      [{ customerId: 'Customer:nope' }, ['customerId']],
    ];
    for (const [over, fields] of cases) {
      expect(
        fieldsOf(await rejection(h.compliance.createBeneficialOwner({ ...base, ...over }))),
        JSON.stringify(over),
      ).toEqual(fields);
    }
    const n = await h.sql.query(
      `SELECT count(*)::int AS n FROM compliance.beneficial_owners WHERE customer_id = $1`,
      [biz.id],
    );
    expect(n.rows[0].n).toBe(1);
    // a director's percentage does not count toward the UBO total
    expect((await owner(p, biz.id, 'Dir', 50, [Role.DIRECTOR])).ownershipPercentage).toBe(50);
  });

  it('keeps platforms apart: another platform’s customer or owner is not found', async () => {
    const p = await newPlatform(h);
    const q = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const o = await owner(p, biz.id, 'Smith');
    expect((await rejection(owner(q, biz.id, 'Smith'))).code).toBe('CUSTOMER_NOT_FOUND');
    expect(
      (await rejection(h.compliance.getBeneficialOwner({ platformId: q, beneficialOwnerId: o.id }))).code,
    ).toBe('BENEFICIAL_OWNER_NOT_FOUND');
    const e = await rejection(
      h.compliance.updateBeneficialOwner({
        platformId: q,
        environment: SANDBOX,
        beneficialOwnerId: o.id,
        ownershipPercentage: 1,
      }),
    );
    expect(e.code).toBe('BENEFICIAL_OWNER_NOT_FOUND');
  });
});

describe('documents', () => {
  it('stores a PDF, a JPEG and a PNG encrypted, typed by content, and reads them back whole', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    for (const [file, type] of [
      [FILES.pdf, 'application/pdf'],
      [FILES.jpeg, 'image/jpeg'],
      [FILES.png, 'image/png'],
    ] as const) {
      const d = await upload(h, { platformId: p, documentHolder: biz.id, fileName: 'scan.bin' }, file, 7);
      expect(d).toMatchObject({
        documentHolder: biz.id,
        contentType: type,
        sizeBytes: BigInt(file.length),
        fileName: 'scan.bin',
      });
      expect(d.sha256).toBe(createHash('sha256').update(file).digest('hex'));
      expect((await download(h, p, d.id)).equals(file)).toBe(true);
      const row = await h.sql.query(
        `SELECT c.data FROM compliance.document_chunks c JOIN compliance.documents d ON d.blob_id = c.blob_id WHERE d.id = $1`,
        [d.id],
      );
      expect(row.rows).toHaveLength(1);
      expect((row.rows[0].data as Buffer).includes(file.subarray(0, 8))).toBe(false);
    }
  });

  it('streams a 10 MiB file through in chunks; 10 MiB + 1 byte is refused with nothing stored', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const exact = Buffer.alloc(10 * 1024 * 1024, 0x20);
    FILES.pdf.copy(exact);
    const d = await upload(h, { platformId: p, documentHolder: biz.id }, exact);
    expect(d.sizeBytes).toBe(10_485_760n);
    expect(d.chunkCount).toBe(40);
    expect((await download(h, p, d.id)).equals(exact)).toBe(true);
    const before = await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`);
    const e = await rejection(
      upload(h, { platformId: p, documentHolder: biz.id }, Buffer.concat([exact, Buffer.from('x')])),
    );
    expect(e.code).toBe('PAYLOAD_TOO_LARGE');
    await eventually(async () => {
      const after = await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`);
      return after.rows[0].n === before.rows[0].n;
    });
    const docs = await h.compliance.listDocuments({ platformId: p, documentHolder: biz.id });
    expect(docs.documents.map((x) => x.id)).toEqual([d.id]);
  });

  it('refuses a renamed text file, bad fields and a holder of another platform, storing nothing', async () => {
    const p = await newPlatform(h);
    const q = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const other = await newBusiness(h, q);
    const before = await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`);
    expect(
      fieldsOf(
        await rejection(
          upload(h, { platformId: p, documentHolder: biz.id, fileName: 'passport.pdf' }, FILES.text),
        ),
      ),
    ).toEqual(['file']);
    expect(
      fieldsOf(
        await rejection(
          upload(
            h,
            { platformId: p, documentHolder: biz.id, documentType: DocumentType.UNSPECIFIED, country: 'XX' },
            FILES.pdf,
          ),
        ),
      ).sort(),
    ).toEqual(['country', 'documentType']);
    expect(
      fieldsOf(await rejection(upload(h, { platformId: p, documentHolder: 'Platform:x' }, FILES.pdf))),
    ).toEqual(['documentHolder']);
    expect((await rejection(upload(h, { platformId: p, documentHolder: other.id }, FILES.pdf))).code).toBe(
      'DOCUMENT_HOLDER_NOT_FOUND',
    );
    expect(
      (await rejection(upload(h, { platformId: p, documentHolder: newId('BeneficialOwner') }, FILES.pdf)))
        .code,
    ).toBe('DOCUMENT_HOLDER_NOT_FOUND');
    const after = await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`);
    expect(after.rows[0].n).toBe(before.rows[0].n);
    expect((await h.compliance.listDocuments({ platformId: p })).page!.totalCount).toBe(0);
  });

  it('encrypts and stores each chunk as it arrives, before the upload has ended', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const chunks = async () =>
      (await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`)).rows[0].n;
    const before = await chunks();
    const call = h.compliance.uploadDocument();
    await call.write({
      header: {
        platformId: p,
        documentHolder: biz.id,
        documentType: DocumentType.PASSPORT,
        country: 'US',
        side: compliance.DocumentSide.UNSPECIFIED,
        fileName: 'big.pdf',
      },
    });
    const part = Buffer.concat([FILES.pdf, Buffer.alloc(3 * 256 * 1024)]);
    await call.write({ chunk: part });
    // three 256 KiB chunks are in the store while the call is still open
    await eventually(async () => (await chunks()) >= before + 3);
    await call.write({ chunk: Buffer.alloc(1000) });
    await call.write({ trailer: { sizeBytes: BigInt(part.length + 1000) } });
    const d = (await call.end()).document!;
    expect(d.chunkCount).toBe(4);
    expect(await chunks()).toBe(before + 4);
  });

  it('stores nothing of an upload without its trailer, with a wrong size, or cancelled', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const chunks = async () =>
      (await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`)).rows[0].n;
    const before = await chunks();
    const header = {
      platformId: p,
      documentHolder: biz.id,
      documentType: DocumentType.PASSPORT,
      country: 'US',
      side: compliance.DocumentSide.UNSPECIFIED,
      fileName: 'x.pdf',
    };
    const cut = h.compliance.uploadDocument();
    await cut.write({ header });
    await cut.write({ chunk: FILES.pdf });
    expect(fieldsOf(await rejection(cut.end()))).toEqual(['trailer']);
    const wrong = h.compliance.uploadDocument();
    await wrong.write({ header });
    await wrong.write({ chunk: FILES.pdf });
    await wrong.write({ trailer: { sizeBytes: BigInt(FILES.pdf.length + 1) } });
    expect(fieldsOf(await rejection(wrong.end()))).toEqual(['trailer']);
    const cancelled = h.compliance.uploadDocument();
    await cancelled.write({ header });
    await cancelled.write({ chunk: Buffer.concat([FILES.pdf, Buffer.alloc(600 * 1024)]) });
    cancelled.cancel();
    await expect(cancelled.response).rejects.toThrow();
    await eventually(async () => (await chunks()) === before);
    // Their blobs' unreferenced_blobs rows left with their chunks: nothing for the orphan sweeper.
    await eventually(async () => (await unreferenced()) === 0);
    expect((await h.compliance.listDocuments({ platformId: p })).page!.totalCount).toBe(0);
  });

  it('stores one document per request key: a retry answers the first, its own file deleted; concurrent ones too', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const chunks = async () =>
      (await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`)).rows[0].n;
    const before = await chunks();
    const first = await upload(h, { platformId: p, documentHolder: biz.id, requestKey: 'k-1' }, FILES.pdf);
    const retry = await upload(h, { platformId: p, documentHolder: biz.id, requestKey: 'k-1' }, FILES.pdf);
    expect(retry.id).toBe(first.id);
    expect(await chunks()).toBe(before + 1);
    const [a, b] = await Promise.all([
      upload(h, { platformId: p, documentHolder: biz.id, requestKey: 'k-2' }, FILES.jpeg),
      upload(h, { platformId: p, documentHolder: biz.id, requestKey: 'k-2' }, FILES.jpeg),
    ]);
    expect(a.id).toBe(b.id);
    // Keys are the platform's own; no key: a document each time.
    const other = await newPlatform(h);
    const elsewhere = await upload(h, { platformId: other, documentHolder: (await newBusiness(h, other)).id, requestKey: 'k-1' }, FILES.pdf);
    expect(elsewhere.id).not.toBe(first.id);
    const plain = [
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.png),
      await upload(h, { platformId: p, documentHolder: biz.id }, FILES.png),
    ];
    expect(plain[0]!.id).not.toBe(plain[1]!.id);
    const stored = await h.sql.query(`SELECT request_key FROM compliance.documents WHERE platform_id = $1 ORDER BY created_at`, [p]);
    expect(stored.rows.map((r: { request_key: string | null }) => r.request_key)).toEqual(['k-1', 'k-2', null, null]);
    expect(await chunks()).toBe(before + 5);
    expect(await unreferenced(), "the retries' files are deleted, rows and all").toBe(0);
  });

  it('replaces a file (the old chunks go), deletes, and refuses a tampered chunk', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const o = await owner(p, biz.id, 'Holder');
    const d = await upload(
      h,
      { platformId: p, documentHolder: o.id, side: compliance.DocumentSide.FRONT },
      FILES.pdf,
    );
    const oldBlob = (await h.sql.query(`SELECT blob_id FROM compliance.documents WHERE id = $1`, [d.id]))
      .rows[0].blob_id;
    const r = await upload(
      h,
      { platformId: p, documentId: d.id, documentType: DocumentType.NATIONAL_ID },
      FILES.png,
    );
    expect(r).toMatchObject({
      id: d.id,
      documentHolder: o.id,
      contentType: 'image/png',
      side: compliance.DocumentSide.UNSPECIFIED,
    });
    expect(
      (await h.sql.query(`SELECT 1 FROM compliance.document_chunks WHERE blob_id = $1`, [oldBlob])).rowCount,
    ).toBe(0);
    expect((await download(h, p, d.id)).equals(FILES.png)).toBe(true);

    await h.sql.query(
      `UPDATE compliance.document_chunks SET data = set_byte(data, 20, get_byte(data, 20) # 1)
       WHERE blob_id = (SELECT blob_id FROM compliance.documents WHERE id = $1)`,
      [d.id],
    );
    const err = await h.compliance
      .readDocumentContent({ platformId: p, documentId: d.id, chunkIndex: 0 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(status.INTERNAL); // the tampered chunk is not served

    const q = await newPlatform(h);
    expect((await rejection(h.compliance.getDocument({ platformId: q, documentId: d.id }))).code).toBe(
      'DOCUMENT_NOT_FOUND',
    );
    expect((await rejection(h.compliance.deleteDocument({ platformId: q, documentId: d.id }))).code).toBe(
      'DOCUMENT_NOT_FOUND',
    );
    await h.compliance.deleteDocument({ platformId: p, documentId: d.id });
    expect((await rejection(h.compliance.getDocument({ platformId: p, documentId: d.id }))).code).toBe(
      'DOCUMENT_NOT_FOUND',
    );
    const blob = (
      await h.sql.query(`SELECT count(*)::int AS n FROM compliance.documents WHERE id = $1`, [d.id])
    ).rows[0].n;
    expect(blob).toBe(0);
  });
});

describe('the Postgres document store', () => {
  it('keeps chunks as rows of compliance.document_chunks (the DocumentStore contract)', async () => {
    const store = h.graph.documentStore;
    expect(store.kind).toBe('postgres');
    const tag = newId('Document');
    await documentStoreContract(store, (n) => `${tag}-${n}`);
    const left = await h.sql.query(
      `SELECT count(*)::int AS n FROM compliance.document_chunks WHERE blob_id LIKE $1`,
      [`${tag}%`],
    );
    expect(left.rows[0].n).toBe(0);
  });
});

describe('verifications', () => {
  /** Everything a business needs but the verification itself. */
  async function completeBusiness(p: string, registrationNumber: string) {
    const biz = await newBusiness(h, p, registrationNumber);
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.ARTICLES_OF_INCORPORATION },
      FILES.pdf,
    );
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.UTILITY_BILL },
      FILES.pdf,
    );
    const o = await owner(p, biz.id, 'Owner', 60);
    await upload(h, { platformId: p, documentHolder: o.id, documentType: DocumentType.PASSPORT }, FILES.jpeg);
    return biz;
  }

  async function finalStatus(p: string, id: string) {
    return eventually(async () => {
      const v = (await h.compliance.getVerification({ platformId: p, verificationId: id })).verification!;
      return v.verificationStatus === VS.IN_PROGRESS ? undefined : v;
    });
  }

  it('lists what is missing, then proceeds once resolved, and identity shows the outcome', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p, 'REG-555', {
      businessInfo: { legalName: 'Acme', countriesOfOperation: [], expectedRecipientJurisdictions: [] },
    });
    const first = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: biz.id,
      })
    ).verification!;
    expect(first.verificationStatus).toBe(VS.RESOLVE_ERRORS);
    expect(first.errors.map((e) => [e.type, e.field ?? e.resourceId])).toEqual([
      ['MISSING_FIELD', 'customer.businessInfo.registrationNumber'],
      ['MISSING_FIELD', 'customer.businessInfo.country'],
      ['MISSING_FIELD', 'customer.businessInfo.entityType'],
      ['MISSING_LEGAL_PRESENCE_DOCUMENT', biz.id],
      ['MISSING_PROOF_OF_ADDRESS_DOCUMENT', biz.id],
      ['MISSING_BENEFICIAL_OWNER', biz.id],
    ]);
    // resolve: fields in identity, documents and an owner here
    await h.identity.updateCustomer({
      platformId: p,
      customerId: biz.id,
      customerType: identity.CustomerType.BUSINESS,
      businessInfo: {
        registrationNumber: 'REG-555',
        country: 'US',
        entityType: 'LLC',
        countriesOfOperation: [],
        expectedRecipientJurisdictions: [],
      },
    });
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.CERTIFICATE_OF_INCORPORATION },
      FILES.pdf,
    );
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.BANK_STATEMENT },
      FILES.png,
    );
    const o = await owner(p, biz.id, 'Ubo', 100);
    const second = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: biz.id,
      })
    ).verification!;
    expect(second.id).toBe(first.id);
    expect(second.errors.map((e) => [e.type, e.resourceId])).toEqual([['MISSING_IDENTITY_DOCUMENT', o.id]]);
    await upload(
      h,
      { platformId: p, documentHolder: o.id, documentType: DocumentType.DRIVERS_LICENSE },
      FILES.jpeg,
    );
    const third = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: biz.id,
      })
    ).verification!;
    expect(third).toMatchObject({ id: first.id, verificationStatus: VS.IN_PROGRESS, errors: [] });
    const done = await finalStatus(p, first.id);
    expect(done.verificationStatus).toBe(VS.APPROVED);
    // read your writes: the verification shows APPROVED only once identity applied it
    const customer = (await h.identity.getCustomer({ platformId: p, customerId: biz.id })).customer!;
    expect(customer.kybStatus).toBe(identity.VerificationStatus.APPROVED);
    // the webhooks: VERIFICATION.* with the public Verification, CUSTOMER.KYB_* with the public Customer
    const ours = await outbox('compliance', p);
    expect(ours.filter((e) => e.type.startsWith('VERIFICATION.')).map((e) => e.type)).toEqual([
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.IN_PROGRESS',
      'VERIFICATION.APPROVED',
    ]);
    expect(ours.filter((e) => e.type === 'VERIFICATION.APPROVED')[0]!.data).toEqual(verificationJson(done));
    expect(
      ours
        .filter((e) => e.type === 'CUSTOMER_VERIFICATION.STATUS_CHANGED')
        .map((e) => (e.data as { status: string }).status),
    ).toEqual(['PENDING', 'APPROVED']);
    const theirs = await eventually(async () => {
      const e = (await outbox('identity', p)).filter((x) => x.type.startsWith('CUSTOMER.KYB_'));
      return e.length === 2 ? e : undefined;
    });
    expect(theirs.map((e) => e.type)).toEqual(['CUSTOMER.KYB_PENDING', 'CUSTOMER.KYB_APPROVED']);
    expect(theirs[1]!.data).toEqual(customerJson(customer));
  });

  it('decides KYB by the registration number suffix: 001 manual review (PENDING), 002 REJECTED', async () => {
    const p = await newPlatform(h);
    const pending = await completeBusiness(p, 'REG-001');
    const rejected = await completeBusiness(p, 'REG-002');
    const vp = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: pending.id,
      })
    ).verification!;
    const vr = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: rejected.id,
      })
    ).verification!;
    expect((await finalStatus(p, vp.id)).verificationStatus).toBe(VS.PENDING_MANUAL_REVIEW);
    expect((await finalStatus(p, vr.id)).verificationStatus).toBe(VS.REJECTED);
    const a = (await h.identity.getCustomer({ platformId: p, customerId: pending.id })).customer!;
    const b = (await h.identity.getCustomer({ platformId: p, customerId: rejected.id })).customer!;
    expect([a.kybStatus, b.kybStatus]).toEqual([
      identity.VerificationStatus.PENDING,
      identity.VerificationStatus.REJECTED,
    ]);
    // under review: submitting again answers the same verification; its documents cannot be deleted
    const again = await h.compliance.createVerification({
      platformId: p,
      environment: SANDBOX,
      customerId: pending.id,
    });
    expect(again.verification!.id).toBe(vp.id);
    const docs = await h.compliance.listDocuments({ platformId: p, documentHolder: pending.id });
    expect(
      (await rejection(h.compliance.deleteDocument({ platformId: p, documentId: docs.documents[0]!.id })))
        .code,
    ).toBe('DOCUMENT_IN_VERIFICATION');
    const listed = await h.compliance.listVerifications({ platformId: p, verificationStatus: VS.REJECTED });
    expect(listed.verifications.map((v) => v.id)).toEqual([vr.id]);
  });

  it('verifies an individual by KYC: fullName suffix, identity document required', async () => {
    const p = await newPlatform(h);
    const person = await newIndividual(h, p, 'Ana Lopez002');
    const v1 = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: person.id,
      })
    ).verification!;
    expect(v1.errors.map((e) => e.type)).toEqual(['MISSING_IDENTITY_DOCUMENT']);
    await upload(
      h,
      { platformId: p, documentHolder: person.id, documentType: DocumentType.PASSPORT },
      FILES.pdf,
    );
    const v2 = (
      await h.compliance.createVerification({
        platformId: p,
        environment: SANDBOX,
        customerId: person.id,
      })
    ).verification!;
    expect((await finalStatus(p, v2.id)).verificationStatus).toBe(VS.REJECTED);
    const c = (await h.identity.getCustomer({ platformId: p, customerId: person.id })).customer!;
    expect(c.kycStatus).toBe(identity.VerificationStatus.REJECTED);
    const q = await newPlatform(h);
    expect(
      (await rejection(h.compliance.getVerification({ platformId: q, verificationId: v2.id }))).code,
    ).toBe('VERIFICATION_NOT_FOUND');
    expect(
      (
        await rejection(
          h.compliance.createVerification({
            platformId: q,
            environment: SANDBOX,
            customerId: person.id,
          }),
        )
      ).code,
    ).toBe('CUSTOMER_NOT_FOUND');
  });
});

describe('production (no KYC partner integrated)', () => {
  it('keeps checks PENDING for a manual review and asks again; refuses hosted links without a URL pattern', async () => {
    const PRODUCTION = common.Environment.PRODUCTION;
    const p = await newPlatform(h, PRODUCTION);
    const biz = await newBusiness(h, p, 'REG-100', { umaAddress: '$acme@uma.example.com' });
    const o = (
      await h.compliance.createBeneficialOwner({
        platformId: p,
        environment: PRODUCTION,
        customerId: biz.id,
        roles: [Role.UBO],
        ownershipPercentage: 100,
        personalInfo: personalInfo('Smith'), // no sandbox suffix applies in production
      })
    ).beneficialOwner!;
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.CERTIFICATE_OF_INCORPORATION },
      FILES.pdf,
    );
    await upload(
      h,
      { platformId: p, documentHolder: biz.id, documentType: DocumentType.UTILITY_BILL },
      FILES.pdf,
    );
    await upload(h, { platformId: p, documentHolder: o.id, documentType: DocumentType.PASSPORT }, FILES.pdf);
    const v = (
      await h.compliance.createVerification({ platformId: p, environment: PRODUCTION, customerId: biz.id })
    ).verification!;
    expect(v.verificationStatus).toBe(VS.IN_PROGRESS);
    const reviewed = await eventually(async () => {
      const r = (await h.compliance.getVerification({ platformId: p, verificationId: v.id })).verification!;
      return r.verificationStatus === VS.PENDING_MANUAL_REVIEW ? r : undefined;
    });
    expect(reviewed.id).toBe(v.id);
    const customer = (await h.identity.getCustomer({ platformId: p, customerId: biz.id })).customer!;
    expect(customer.kybStatus).toBe(identity.VerificationStatus.PENDING);
    // the check is asked again later (a production review), the owner's too
    const due = await h.sql.query(
      `SELECT (SELECT decision_due_at FROM compliance.verifications WHERE id = $1) AS v,
              (SELECT kyc_due_at FROM compliance.beneficial_owners WHERE id = $2) AS o`,
      [v.id, o.id],
    );
    expect(due.rows[0].v).not.toBeNull();
    expect(due.rows[0].o).not.toBeNull();
    expect(
      (await h.compliance.getBeneficialOwner({ platformId: p, beneficialOwnerId: o.id })).beneficialOwner!
        .kycStatus,
    ).toBe(KycStatus.PENDING);
    const link = await rejection(
      h.compliance.createKycLink({ platformId: p, environment: PRODUCTION, customerId: biz.id }),
    );
    expect(link.code).toBe('KYC_LINK_NOT_CONFIGURED');
  });
});

describe('kyc links', () => {
  it('answers a sandbox stub URL with a fresh single-use token, keeping only its hash', async () => {
    const p = await newPlatform(h);
    const person = await newIndividual(h, p);
    const a = await h.compliance.createKycLink({
      platformId: p,
      environment: SANDBOX,
      customerId: person.id,
      redirectUri: 'https://app.example.com/done',
    });
    const b = await h.compliance.createKycLink({
      platformId: p,
      environment: SANDBOX,
      customerId: person.id,
    });
    expect(a.kycUrl).toBe(`https://kyc.sandbox.sluice.local/onboard/${a.token}`);
    expect(a.token).not.toBe(b.token);
    expect(a.provider).toBe('SUMSUB');
    expect(a.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    const stored = await h.sql.query(`SELECT token_sha256 FROM compliance.kyc_links WHERE customer_id = $1`, [
      person.id,
    ]);
    expect(stored.rows.map((r: { token_sha256: string }) => r.token_sha256).sort()).toEqual(
      [a.token!, b.token!].map((t) => createHash('sha256').update(t).digest('hex')).sort(),
    );
    expect(
      fieldsOf(
        await rejection(
          h.compliance.createKycLink({
            platformId: p,
            environment: SANDBOX,
            customerId: person.id,
            redirectUri: 'ftp://x',
          }),
        ),
      ),
    ).toEqual(['redirectUri']);
  });

  it("points at the platform's kycLinkUrlTemplate (identity's config), read per call", async () => {
    const p = await newPlatform(h);
    const person = await newIndividual(h, p);
    const setTemplate = (kycLinkUrlTemplate: string) =>
      h.identity.updatePlatformConfig({
        platformId: p,
        kycLinkUrlTemplate,
        clearEmbeddedWalletConfig: false,
      });
    await setTemplate('https://verify.example.com/kyc/{token}?customer={customerId}&next={redirectUri}');
    const link = await h.compliance.createKycLink({
      platformId: p,
      environment: SANDBOX,
      customerId: person.id,
      redirectUri: 'https://app.example.com/done?step=2',
    });
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(link.kycUrl).toBe(
      `https://verify.example.com/kyc/${link.token}?customer=${encodeURIComponent(person.id)}` +
        `&next=${encodeURIComponent('https://app.example.com/done?step=2')}`,
    );
    const stored = await h.sql.query(`SELECT 1 FROM compliance.kyc_links WHERE token_sha256 = $1`, [
      createHash('sha256').update(link.token!).digest('hex'),
    ]);
    expect(stored.rowCount).toBe(1);

    // A change applies to the next link; removed, a sandbox platform is back on the stub page.
    await setTemplate('https://verify2.example.com/{token}');
    const next = await h.compliance.createKycLink({
      platformId: p,
      environment: SANDBOX,
      customerId: person.id,
    });
    expect(next.kycUrl).toBe(`https://verify2.example.com/${next.token}`);
    await setTemplate('');
    const stub = await h.compliance.createKycLink({
      platformId: p,
      environment: SANDBOX,
      customerId: person.id,
    });
    expect(stub.kycUrl).toBe(`https://kyc.sandbox.sluice.local/onboard/${stub.token}`);
  });

  it('refuses a production platform without kycLinkUrlTemplate, naming the setting, and serves it once set', async () => {
    const PRODUCTION = common.Environment.PRODUCTION;
    const p = await newPlatform(h, PRODUCTION);
    // a production platform names its own UMA domain before it has customers
    await h.identity.updatePlatformConfig({
      platformId: p,
      umaDomain: 'pay.example.com',
      clearEmbeddedWalletConfig: false,
    });
    const person = await newIndividual(h, p);
    const refused = await rejection(
      h.compliance.createKycLink({ platformId: p, environment: PRODUCTION, customerId: person.id }),
    );
    expect(refused).toMatchObject({ code: 'KYC_LINK_NOT_CONFIGURED', kind: 'FAILED_PRECONDITION' });
    expect(refused.message).toContain('kycLinkUrlTemplate');
    const count = async () =>
      (await h.sql.query(`SELECT 1 FROM compliance.kyc_links WHERE customer_id = $1`, [person.id])).rowCount;
    expect(await count()).toBe(0);

    await h.identity.updatePlatformConfig({
      platformId: p,
      kycLinkUrlTemplate: 'https://kyc.platform.example/{customerId}/{token}',
      clearEmbeddedWalletConfig: false,
    });
    const link = await h.compliance.createKycLink({
      platformId: p,
      environment: PRODUCTION,
      customerId: person.id,
    });
    expect(link.kycUrl).toBe(`https://kyc.platform.example/${encodeURIComponent(person.id)}/${link.token}`);
    expect(await count()).toBe(1);
  });
});
