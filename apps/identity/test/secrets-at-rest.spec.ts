import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identity } from '@sluice/contracts';
import { ConfigError } from '@sluice/config';
import { loadMasterKeyring } from '@sluice/crypto';
import { createRpcClient } from '@sluice/rpc';
import { runServiceCommand, startService } from '@sluice/runtime';
import { TEST_MASTER_KEYS, eventually, rejection } from '@sluice/testing';
import { identityService } from '../src/index.js';
import { IDENTITY_KEYRING, openImportRow, sealImportRow } from '../src/store/sealing.js';
import { newPlatform, startIdentity, type Harness, type IdentityClient } from './support/harness.js';

/**
 * Customers' personal data and UMA addresses, webhook signing secrets, bulk import rows and
 * invitations' UMA addresses at rest (issue 17): sealed in their rows, bound to them, readable
 * across a master-key rotation, moved to the new key by `rewrap`; a customer's UMA address is
 * still found, filtered on and kept unique (its blind index), across a rotation too.
 */
let h: Harness;
beforeAll(async () => {
  h = await startIdentity('secretsatrest');
});
afterAll(async () => {
  await h?.stop();
});

const PERSONAL = {
  email: 'ada.lovelace@example.com',
  fullName: 'Ada Lovelace',
  birthDate: '1985-12-10',
  nationality: 'GB',
  address: { line1: '12 Marylebone Road', city: 'London', postalCode: 'NW1 5LR', country: 'GB' },
};
const TAX_ID = '98-7654321';

async function individual(
  platformId: string,
  over: Partial<typeof PERSONAL> & { umaAddress?: string } = {},
  client: IdentityClient = h.client,
) {
  const r = await client.createCustomer({
    platformId,
    customerType: identity.CustomerType.INDIVIDUAL,
    platformCustomerId: `pii-${randomBytes(4).toString('hex')}`,
    region: 'GB',
    currencies: [],
    ...PERSONAL,
    ...over,
  });
  return r.customer!;
}

async function business(platformId: string) {
  const r = await h.client.createCustomer({
    platformId,
    customerType: identity.CustomerType.BUSINESS,
    platformCustomerId: `biz-${randomBytes(4).toString('hex')}`,
    region: 'US',
    currencies: [],
    businessInfo: {
      legalName: 'Analytical Engines Ltd',
      country: 'US',
      taxId: TAX_ID,
      registrationNumber: '7731',
      countriesOfOperation: ['US'],
      expectedRecipientJurisdictions: [],
    },
  });
  return r.customer!;
}

/** Every column of the customer's row as text, as a stolen dump would hold it. */
async function rawCustomer(id: string): Promise<string> {
  const r = await h.sql.query(`SELECT c::text AS row, personal_data FROM customers c WHERE id = $1`, [id]);
  return r.rows[0].row as string;
}

const keyIdOf = (sealed: string) => sealed.split('.')[1];

/** The ids of the platform's live customers with this UMA address (the List filter). */
async function withUmaAddress(platformId: string, umaAddress: string, client: IdentityClient = h.client) {
  const page = await client.listCustomers({
    platformId,
    customerType: identity.CustomerType.UNSPECIFIED,
    umaAddress,
    isIncludingDeleted: false,
  });
  return page.customers.map((c) => c.id);
}

/** What creating a customer with a UMA address another live customer has answers (as before sealing). */
async function expectUmaTaken(call: Promise<unknown>, umaAddress: string) {
  expect(await rejection(call)).toMatchObject({
    kind: 'ALREADY_EXISTS',
    code: 'UMA_ADDRESS_EXISTS',
    details: { umaAddress: umaAddress.toLowerCase() },
  });
}

/** Another identity replica on the same database with these master keys. */
async function replicaWith(keys: Record<string, string>) {
  const svc = await startService(identityService, h.replicaEnv(keys));
  const client = createRpcClient(identity.IdentityServiceClient, `127.0.0.1:${svc.port}`);
  return {
    client,
    async stop() {
      client.close();
      await svc.stop();
    },
  };
}

/** The customer a new invitation names as its inviter (identity finds it by the inviter's UMA address). */
async function inviterOf(platformId: string, inviterUma: string, client: IdentityClient = h.client) {
  return (await client.createInvitation({ platformId, inviterUma })).invitation!.inviterCustomerId;
}

/** Every column of the invitation's row as text, as a stolen dump would hold it. */
async function rawInvitation(code: string): Promise<string> {
  return (await h.sql.query(`SELECT i::text AS row FROM invitations i WHERE code = $1`, [code])).rows[0].row as string;
}

const getInvitation = async (platformId: string, code: string, client: IdentityClient = h.client) =>
  (await client.getInvitation({ platformId, code })).invitation!;

describe('customers at rest', () => {
  it('the row holds none of the personal data, and the API answers all of it', async () => {
    const p = await newPlatform(h.client);
    const c = await individual(p.id);
    const b = await business(p.id);
    const row = await rawCustomer(c.id);
    for (const v of [
      PERSONAL.email,
      PERSONAL.fullName,
      PERSONAL.birthDate,
      PERSONAL.address.line1,
      'NW1 5LR',
    ])
      expect(row).not.toContain(v);
    expect(await rawCustomer(b.id)).not.toContain(TAX_ID);
    expect(await rawCustomer(b.id)).not.toContain('Analytical Engines');
    const { rows } = await h.sql.query(
      `SELECT email, full_name, birth_date, nationality, address, business_info, personal_data FROM customers WHERE id = $1`,
      [c.id],
    );
    expect(rows[0]).toMatchObject({
      email: null,
      full_name: null,
      birth_date: null,
      address: null,
      business_info: null,
    });
    expect(rows[0].personal_data).toMatch(/^sic1\.mk_[0-9a-f]{16}\./);

    const got = (await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer!;
    expect(got).toMatchObject({ ...PERSONAL, address: expect.objectContaining(PERSONAL.address) });
    expect(
      (await h.client.getCustomer({ platformId: p.id, customerId: b.id })).customer!.businessInfo,
    ).toMatchObject({
      taxId: TAX_ID,
      legalName: 'Analytical Engines Ltd',
    });
    // Filters on what is not sealed keep working.
    const listed = await h.client.listCustomers({
      platformId: p.id,
      customerType: identity.CustomerType.UNSPECIFIED,
      umaAddress: c.umaAddress,
      isIncludingDeleted: false,
    });
    expect(listed.customers.map((x) => x.email)).toEqual([PERSONAL.email]);
    // An update reseals.
    const updated = await h.client.updateCustomer({
      platformId: p.id,
      customerId: c.id,
      customerType: identity.CustomerType.INDIVIDUAL,
      email: 'ada@example.org',
    });
    expect(updated.customer!.email).toBe('ada@example.org');
    expect(await rawCustomer(c.id)).not.toContain('ada@example.org');
  });

  it.each([
    ['personal_data', (c: identity.Customer) => c.fullName],
    ['sealed_uma_address', (c: identity.Customer) => c.umaAddress],
  ] as const)("a sealed value (%s) moved to another customer's row does not open there", async (column, field) => {
    const p = await newPlatform(h.client);
    const a = await individual(p.id);
    const b = await individual(p.id, { fullName: 'Charles Babbage' });
    const get = async (c: identity.Customer) =>
      (await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer!;
    const own = (await h.sql.query(`SELECT ${column} AS v FROM customers WHERE id = $1`, [b.id])).rows[0].v;
    await h.sql.query(
      `UPDATE customers SET ${column} = (SELECT ${column} FROM customers WHERE id = $1) WHERE id = $2`,
      [a.id, b.id],
    );
    // The row does not open: an internal error (logged), never another customer's data.
    await expect(get(b)).rejects.toMatchObject({ grpcCode: 13 });
    expect(field(await get(a))).toBe(field(a));
    await h.sql.query(`UPDATE customers SET ${column} = $1 WHERE id = $2`, [own, b.id]);
    expect(field(await get(b))).toBe(field(b));
  });
});

describe('UMA addresses at rest', () => {
  it('the row holds no UMA address, only its sealed value and blind index; get, the filter, invitations and a duplicate (409 as before) work', async () => {
    const p = await newPlatform(h.client);
    const address = '$countess.of.lovelace@pay.example.com';
    const c = await individual(p.id, { umaAddress: '$Countess.Of.Lovelace@PAY.example.com' });
    const other = await individual(p.id, { fullName: 'Charles Babbage' });
    expect(c.umaAddress).toBe(address);
    const row = await rawCustomer(c.id);
    expect(row).not.toContain('countess');
    expect(row.toLowerCase()).not.toContain('lovelace@pay');
    const { rows } = await h.sql.query(
      `SELECT uma_address, sealed_uma_address, uma_address_index FROM customers WHERE id = $1`,
      [c.id],
    );
    expect(rows[0].uma_address).toBeNull();
    expect(rows[0].sealed_uma_address).toMatch(/^siu1\.mk_[0-9a-f]{16}\./);
    expect(rows[0].uma_address_index).toMatch(/^bi1\.mk_[0-9a-f]{16}\.[0-9a-f]{64}$/);

    expect((await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer!.umaAddress).toBe(address);
    expect(await withUmaAddress(p.id, '$COUNTESS.of.lovelace@pay.example.com')).toEqual([c.id]);
    expect(await withUmaAddress(p.id, other.umaAddress)).toEqual([other.id]);
    expect(await withUmaAddress(p.id, '$nobody@pay.example.com')).toEqual([]);
    expect(await inviterOf(p.id, address)).toBe(c.id);
    // Another customer with the address, created or updated to it: refused as before.
    await expectUmaTaken(individual(p.id, { umaAddress: '$countess.OF.lovelace@pay.example.com' }), address);
    await expectUmaTaken(
      h.client.updateCustomer({
        platformId: p.id,
        customerId: other.id,
        customerType: identity.CustomerType.INDIVIDUAL,
        umaAddress: address,
      }),
      address,
    );
    // An update that keeps the address is no conflict with itself; another platform may use it.
    const kept = await h.client.updateCustomer({
      platformId: p.id,
      customerId: c.id,
      customerType: identity.CustomerType.INDIVIDUAL,
      umaAddress: address,
      email: 'countess@example.org',
    });
    expect(kept.customer!.umaAddress).toBe(address);
    const q = await newPlatform(h.client);
    expect((await individual(q.id, { umaAddress: address })).umaAddress).toBe(address);
    // A deleted customer frees its address.
    await h.client.deleteCustomer({ platformId: p.id, customerId: c.id });
    expect(await withUmaAddress(p.id, address)).toEqual([]);
    const again = await individual(p.id, { umaAddress: address });
    expect(await withUmaAddress(p.id, address)).toEqual([again.id]);
  });
});

describe('invitations at rest', () => {
  it("the row holds neither the inviter's nor the invitee's UMA address; create, get, claim and cancel answer them as before", async () => {
    const p = await newPlatform(h.client);
    const inviterUma = '$ada.inviter@pay.example.com';
    await individual(p.id, { umaAddress: inviterUma });
    const created = (await h.client.createInvitation({ platformId: p.id, inviterUma: '$ADA.Inviter@pay.example.com' }))
      .invitation!;
    expect(created.inviterUma).toBe(inviterUma);
    const columns = async (code: string) =>
      (
        await h.sql.query(
          `SELECT inviter_uma, sealed_inviter_uma, invitee_uma, sealed_invitee_uma FROM invitations WHERE code = $1`,
          [code],
        )
      ).rows[0];
    expect(await columns(created.code)).toMatchObject({ inviter_uma: null, invitee_uma: null, sealed_invitee_uma: null });
    expect((await columns(created.code)).sealed_inviter_uma).toMatch(/^sii1\.mk_[0-9a-f]{16}\./);
    expect((await rawInvitation(created.code)).toLowerCase()).not.toContain('ada.inviter');
    expect(await getInvitation(p.id, created.code)).toEqual(created);

    // Claiming with the inviter's own address is still refused (compared with the opened address).
    expect(
      await rejection(h.client.claimInvitation({ platformId: p.id, code: created.code, inviteeUma: inviterUma })),
    ).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [expect.objectContaining({ field: 'inviteeUma' })] } });
    const claimed = (
      await h.client.claimInvitation({ platformId: p.id, code: created.code, inviteeUma: '$Grace.Invitee@other.example' })
    ).invitation!;
    expect(claimed).toMatchObject({ inviterUma, inviteeUma: '$grace.invitee@other.example' });
    const row = (await rawInvitation(created.code)).toLowerCase();
    for (const v of ['ada.inviter', 'grace.invitee']) expect(row).not.toContain(v);
    expect(await columns(created.code)).toMatchObject({ inviter_uma: null, invitee_uma: null });
    expect((await columns(created.code)).sealed_invitee_uma).toMatch(/^sie1\.mk_[0-9a-f]{16}\./);
    expect(await getInvitation(p.id, created.code)).toEqual(claimed);

    const other = (await h.client.createInvitation({ platformId: p.id, inviterUma })).invitation!;
    const cancelled = (await h.client.cancelInvitation({ platformId: p.id, code: other.code })).invitation!;
    expect(cancelled).toMatchObject({ inviterUma, status: identity.InvitationStatus.CANCELLED });
    expect(cancelled.inviteeUma).toBeUndefined();
    expect((await rawInvitation(other.code)).toLowerCase()).not.toContain('ada.inviter');
  });

  /** What each case moves into another invitation's row: a sealed column of `a`, or the customer's sealed address. */
  const sealedOf = (column: string, table = 'invitations', key = 'code') => async (id: string) =>
    (await h.sql.query(`SELECT ${column} AS v FROM ${table} WHERE ${key} = $1`, [id])).rows[0].v as string;
  it.each([
    ["another invitation's inviter", 'sealed_inviter_uma', 'invitation', sealedOf('sealed_inviter_uma')],
    ["another invitation's invitee", 'sealed_invitee_uma', 'invitation', sealedOf('sealed_invitee_uma')],
    ["the inviting customer's row", 'sealed_inviter_uma', 'customer', sealedOf('sealed_uma_address', 'customers', 'id')],
  ] as const)('a sealed address moved from %s into %s does not open there', async (_from, column, of, source) => {
    const p = await newPlatform(h.client);
    const ada = await individual(p.id, { umaAddress: '$ada.moved@pay.example.com' });
    const invite = async () => {
      const code = (await h.client.createInvitation({ platformId: p.id, inviterUma: ada.umaAddress })).invitation!.code;
      return (await h.client.claimInvitation({ platformId: p.id, code, inviteeUma: `$${code}@other.example` }))
        .invitation!;
    };
    const [a, b] = [await invite(), await invite()];
    const moved = await source(of === 'customer' ? ada.id : a.code);
    const own = await sealedOf(column)(b.code);
    await h.sql.query(`UPDATE invitations SET ${column} = $1 WHERE code = $2`, [moved, b.code]);
    // The row does not open: an internal error (logged), never another row's address.
    await expect(getInvitation(p.id, b.code)).rejects.toMatchObject({ grpcCode: 13 });
    expect(await getInvitation(p.id, a.code)).toEqual(a);
    await h.sql.query(`UPDATE invitations SET ${column} = $1 WHERE code = $2`, [own, b.code]);
    expect(await getInvitation(p.id, b.code)).toEqual(b);
  });
});

describe('webhook signing secrets at rest', () => {
  it('are sealed in their rows, bound to them, and still sign (GetWebhookTarget answers them)', async () => {
    const p = await newPlatform(h.client);
    await h.client.rotateWebhookSigningSecret({ platformId: p.id });
    const target = await h.client.getWebhookTarget({ platformId: p.id });
    expect(target.signingSecrets.length).toBeGreaterThanOrEqual(1);
    const { rows } = await h.sql.query(
      `SELECT id, secret FROM webhook_signing_secrets WHERE platform_id = $1`,
      [p.id],
    );
    const dump = JSON.stringify(rows);
    for (const s of target.signingSecrets) {
      expect(s).toMatch(/^whsec_/);
      expect(dump).not.toContain(s);
      expect(dump).not.toContain(s.slice('whsec_'.length));
    }
    for (const r of rows) expect(r.secret).toMatch(/^siw1\./);
  });
});

/** Streams a CSV file to ImportCustomersCsv in one piece. */
async function importCsv(platformId: string, csv: string) {
  const call = h.client.importCustomersCsv();
  await call.write({ header: { platformId, fileName: 'people.csv' } });
  await call.write({ chunk: Buffer.from(csv, 'utf8') });
  await call.write({ trailer: { sizeBytes: BigInt(Buffer.byteLength(csv)) } });
  return (await call.end()).job!;
}

const IMPORTED = {
  fullName: 'Dorothy Vaughan',
  birthDate: '1910-09-20',
  line1: '42 Langley Boulevard',
  postalCode: '23665',
};
const IMPORT_CSV = `platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country
imp-dv,INDIVIDUAL,${IMPORTED.fullName},${IMPORTED.birthDate},${IMPORTED.line1},Hampton,VA,${IMPORTED.postalCode},US
`;

describe('bulk import rows at rest', () => {
  it('a row waits to be processed sealed, its customer is created with every field, and processing erases it', async () => {
    const p = await newPlatform(h.client);
    // The import worker takes a share lock on the platform's config: holding it keeps the row waiting.
    const blocker = new pg.Client({ connectionString: h.db.url });
    await blocker.connect();
    let job: Awaited<ReturnType<typeof importCsv>>;
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM identity.platform_configs WHERE platform_id = $1 FOR UPDATE`, [p.id]);
      job = await importCsv(p.id, IMPORT_CSV);
      const { rows } = await h.sql.query(
        `SELECT b::text AS row, record, sealed_record FROM bulk_import_rows b WHERE job_id = $1`,
        [job.id],
      );
      expect(rows).toHaveLength(1);
      for (const v of Object.values(IMPORTED)) expect(rows[0].row).not.toContain(v);
      expect(rows[0].record).toBeNull();
      expect(rows[0].sealed_record).toMatch(/^sib1\.mk_[0-9a-f]{16}\./);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    await eventually(async () => {
      const j = (await h.client.getBulkImportJob({ platformId: p.id, jobId: job.id })).job!;
      return j.status === identity.BulkImportJobStatus.COMPLETED ? j : undefined;
    });
    const listed = await h.client.listCustomers(
      identity.ListCustomersRequest.fromPartial({ platformId: p.id, platformCustomerId: 'imp-dv' }),
    );
    expect(listed.customers).toHaveLength(1);
    expect(listed.customers[0]).toMatchObject({
      fullName: IMPORTED.fullName,
      birthDate: IMPORTED.birthDate,
      address: expect.objectContaining({ line1: IMPORTED.line1, postalCode: IMPORTED.postalCode }),
    });
    const { rows: after } = await h.sql.query(
      `SELECT outcome, record, sealed_record FROM bulk_import_rows WHERE job_id = $1`,
      [job.id],
    );
    expect(after).toEqual([{ outcome: 'CREATED', record: null, sealed_record: null }]);
  });
});

describe('rotation: rewrap, legacy rows, and key configuration', () => {
  it('reads rows written before sealing; after a rotation everything reads and UMA addresses stay unique, rewrap moves every row to the new key and the old key can go', async () => {
    const p = await newPlatform(h.client);
    const sealedOne = await individual(p.id);
    const legacy = await individual(p.id, { fullName: 'Grace Hopper', email: 'grace@example.com' });
    // A customer and a secret as written before sealing: plaintext columns.
    await h.sql.query(
      `UPDATE customers SET personal_data = NULL, email = 'grace@example.com', full_name = 'Grace Hopper',
         birth_date = '1906-12-09', nationality = 'US', address = '{"line1":"1 Navy Way","postalCode":"20001","country":"US"}',
         uma_address = $2, sealed_uma_address = NULL, uma_address_index = NULL
       WHERE id = $1`,
      [legacy.id, legacy.umaAddress],
    );
    const legacySecret = `whsec_${randomBytes(32).toString('base64')}`;
    await h.sql.query(
      `INSERT INTO webhook_signing_secrets (id, platform_id, secret, created_at, expires_at)
       VALUES ($1, $2, $3, now(), now() + interval '1 hour')`,
      [randomBytes(8).toString('hex'), p.id, legacySecret],
    );
    // Two rows of an import waiting to be processed: one stored before sealing, one sealed under the
    // old key. Their job says it is done, so the worker leaves them waiting while rewrap runs.
    const oldRing = loadMasterKeyring(TEST_MASTER_KEYS.IDENTITY_DATA_MASTER_KEY!, undefined, IDENTITY_KEYRING);
    const jobId = `Job:${randomBytes(8).toString('hex')}`;
    const waiting = { 1: { platformCustomerId: 'imp-legacy', fullName: 'Mary Jackson' }, 2: { fullName: 'Annie Easley' } };
    await h.sql.query(
      `INSERT INTO bulk_import_jobs (id, platform_id, status, file_name, total, created_at, updated_at, completed_at)
       VALUES ($1, $2, 'COMPLETED', 'old.csv', 2, now(), now(), now())`,
      [jobId, p.id],
    );
    await h.sql.query(
      `INSERT INTO bulk_import_rows (job_id, row_number, line, record, sealed_record)
       VALUES ($1, 1, 2, $2::jsonb, NULL), ($1, 2, 3, NULL, $3)`,
      [jobId, JSON.stringify(waiting[1]), sealImportRow(oldRing, jobId, 2, waiting[2])],
    );
    // Invitations: one sealed under the old key (claimed), one written before sealing (claimed, both
    // addresses plain) and a legacy pending one (its inviter plain), claimed after the rotation below.
    const invite = async (inviterUma: string, inviteeUma?: string) => {
      const code = (await h.client.createInvitation({ platformId: p.id, inviterUma })).invitation!.code;
      return inviteeUma
        ? (await h.client.claimInvitation({ platformId: p.id, code, inviteeUma })).invitation!
        : (await h.client.getInvitation({ platformId: p.id, code })).invitation!;
    };
    const sealedInvitation = await invite(sealedOne.umaAddress, '$sealed.invitee@other.example');
    const legacyInvitation = await invite(sealedOne.umaAddress, '$legacy.invitee@other.example');
    const legacyPending = await invite(sealedOne.umaAddress);
    await h.sql.query(
      `UPDATE invitations SET inviter_uma = $2, sealed_inviter_uma = NULL,
         invitee_uma = CASE WHEN status = 'CLAIMED' THEN $3 END, sealed_invitee_uma = NULL
       WHERE code = ANY($1::text[])`,
      [[legacyInvitation.code, legacyPending.code], sealedOne.umaAddress, '$legacy.invitee@other.example'],
    );
    expect(await getInvitation(p.id, legacyInvitation.code)).toEqual(legacyInvitation);
    expect(await getInvitation(p.id, legacyPending.code)).toEqual(legacyPending);
    const before = (await h.client.getCustomer({ platformId: p.id, customerId: legacy.id })).customer!;
    expect(before).toMatchObject({
      fullName: 'Grace Hopper',
      email: 'grace@example.com',
      birthDate: '1906-12-09',
    });
    expect((await h.client.getWebhookTarget({ platformId: p.id })).signingSecrets).toContain(legacySecret);
    const targetBefore = await h.client.getWebhookTarget({ platformId: p.id });
    // The legacy UMA address reads, is found by the filter and by invitations, and is still taken.
    expect(before.umaAddress).toBe(legacy.umaAddress);
    expect(await withUmaAddress(p.id, legacy.umaAddress.toUpperCase())).toEqual([legacy.id]);
    expect(await inviterOf(p.id, legacy.umaAddress)).toBe(legacy.id);
    await expectUmaTaken(individual(p.id, { umaAddress: legacy.umaAddress }), legacy.umaAddress);
    await expectUmaTaken(
      h.client.updateCustomer({
        platformId: p.id,
        customerId: sealedOne.id,
        customerType: identity.CustomerType.INDIVIDUAL,
        umaAddress: legacy.umaAddress,
      }),
      legacy.umaAddress,
    );

    // Rotation: a new current key, the old one retired.
    const oldKey = TEST_MASTER_KEYS.IDENTITY_DATA_MASTER_KEY!;
    const newKey = randomBytes(32).toString('base64');
    const newId = loadMasterKeyring(newKey, undefined, IDENTITY_KEYRING).current.id;
    const rotatedKeys = { IDENTITY_DATA_MASTER_KEY: newKey, IDENTITY_DATA_MASTER_KEYS_RETIRED: oldKey };

    // Rotated, not yet rewrapped: old-key and legacy addresses read, filter and are still taken.
    const rotated = await replicaWith(rotatedKeys);
    let madeUnderNew: identity.Customer;
    let legacyPendingClaimed: identity.Invitation;
    try {
      expect(
        (await rotated.client.getCustomer({ platformId: p.id, customerId: sealedOne.id })).customer!.umaAddress,
      ).toBe(sealedOne.umaAddress);
      expect(await withUmaAddress(p.id, sealedOne.umaAddress, rotated.client)).toEqual([sealedOne.id]);
      expect(await withUmaAddress(p.id, legacy.umaAddress, rotated.client)).toEqual([legacy.id]);
      expect(await inviterOf(p.id, sealedOne.umaAddress, rotated.client)).toBe(sealedOne.id);
      // Old-key and legacy invitations read; the legacy pending one is claimed (its plain inviter
      // still refused as the invitee), the invitee sealed under the new key.
      for (const i of [sealedInvitation, legacyInvitation, legacyPending])
        expect(await getInvitation(p.id, i.code, rotated.client)).toEqual(i);
      expect(
        await rejection(
          rotated.client.claimInvitation({ platformId: p.id, code: legacyPending.code, inviteeUma: sealedOne.umaAddress }),
        ),
      ).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [expect.objectContaining({ field: 'inviteeUma' })] } });
      legacyPendingClaimed = (
        await rotated.client.claimInvitation({
          platformId: p.id,
          code: legacyPending.code,
          inviteeUma: '$claimed.after.rotation@other.example',
        })
      ).invitation!;
      expect(legacyPendingClaimed).toMatchObject({ inviterUma: sealedOne.umaAddress, status: identity.InvitationStatus.CLAIMED });
      for (const taken of [sealedOne.umaAddress, legacy.umaAddress])
        await expectUmaTaken(individual(p.id, { umaAddress: taken }, rotated.client), taken);
      madeUnderNew = await individual(p.id, { umaAddress: '$made.under.new@pay.example.com' }, rotated.client);
      // A rolling rotation, the new key staged first (docs/security.md): one replica still indexes
      // under the old key, another under the new one. What one wrote is taken for the other, and the
      // same address sent to both at once is given once.
      const staged = await replicaWith({ IDENTITY_DATA_MASTER_KEY: oldKey, IDENTITY_DATA_MASTER_KEYS_RETIRED: newKey });
      try {
        await expectUmaTaken(individual(p.id, { umaAddress: madeUnderNew.umaAddress }, staged.client), madeUnderNew.umaAddress);
        for (let i = 0; i < 10; i++) {
          const umaAddress = `$race.${i}@pay.example.com`;
          const both = await Promise.allSettled([
            individual(p.id, { umaAddress }, staged.client),
            individual(p.id, { umaAddress }, rotated.client),
          ]);
          expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const refused = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
          await expectUmaTaken(Promise.reject(refused.reason), umaAddress);
          expect(await withUmaAddress(p.id, umaAddress, rotated.client)).toHaveLength(1);
        }
      } finally {
        await staged.stop();
      }
    } finally {
      await rotated.stop();
    }

    // rewrap runs beside the running service.
    const env = { DATABASE_URL: h.db.url, LOG_LEVEL: 'silent', ...rotatedKeys };
    const notUnderNew = async (column: string) =>
      (
        await h.sql.query(
          `SELECT count(*)::int AS n FROM customers WHERE ${column} IS NULL OR split_part(${column}, '.', 2) <> $1`,
          [newId],
        )
      ).rows[0].n as number;
    const personalToDo = await notUnderNew('personal_data');
    const umaToDo = await notUnderNew('sealed_uma_address');
    const invitationsNotUnderNew = async (plain: string, sealed: string) =>
      (
        await h.sql.query(
          `SELECT count(*)::int AS n FROM invitations WHERE (${plain} IS NOT NULL OR ${sealed} IS NOT NULL)
             AND (${sealed} IS NULL OR split_part(${sealed}, '.', 2) <> $1)`,
          [newId],
        )
      ).rows[0].n as number;
    const inviterToDo = await invitationsNotUnderNew('inviter_uma', 'sealed_inviter_uma');
    const inviteeToDo = await invitationsNotUnderNew('invitee_uma', 'sealed_invitee_uma');
    const { rows: invitationsAll } = await h.sql.query(`SELECT count(*)::int AS n FROM invitations`);
    // Invitations made on the new-key replica are not to do; rows of the other tests are rewrapped too.
    expect(inviterToDo).toBeLessThan(invitationsAll[0].n);
    const counts = await runServiceCommand(identityService, 'rewrap', env);
    const { rows: all } = await h.sql.query(`SELECT count(*)::int AS n FROM customers`);
    const { rows: secrets } = await h.sql.query(`SELECT count(*)::int AS n FROM webhook_signing_secrets`);
    expect(counts['customers.failed']).toBe(0);
    expect(counts['webhookSigningSecrets.failed']).toBe(0);
    expect(counts['customers.sealed']).toBe(1);
    // Every customer not made under the new key was rewrapped, but the legacy one (sealed).
    expect((counts['customers.rewrapped'] ?? 0) + 1).toBe(personalToDo);
    expect(counts['customerUmaAddresses.failed']).toBe(0);
    expect(counts['customerUmaAddresses.sealed']).toBe(1);
    expect((counts['customerUmaAddresses.rewrapped'] ?? 0) + 1).toBe(umaToDo);
    expect(umaToDo).toBe(personalToDo);
    expect(umaToDo).toBeLessThan(all[0].n);
    expect(
      (counts['webhookSigningSecrets.rewrapped'] ?? 0) + (counts['webhookSigningSecrets.sealed'] ?? 0),
    ).toBe(secrets[0].n);
    expect(counts['webhookSigningSecrets.sealed']).toBe(1);
    expect(counts['bulkImportRows.failed']).toBe(0);
    expect(counts['bulkImportRows.sealed']).toBe(1);
    expect(counts['bulkImportRows.rewrapped']).toBe(1);
    // Two legacy inviters and one legacy invitee sealed; every other invitation not made under the new key rewrapped.
    expect(counts['invitationsInviterUma.failed']).toBe(0);
    expect(counts['invitationsInviterUma.sealed']).toBe(2);
    expect(counts['invitationsInviterUma.rewrapped']).toBe(inviterToDo - 2);
    expect(counts['invitationsInviteeUma.failed']).toBe(0);
    expect(counts['invitationsInviteeUma.sealed']).toBe(1);
    expect(counts['invitationsInviteeUma.rewrapped']).toBe(inviteeToDo - 1);
    expect(inviteeToDo).toBeGreaterThanOrEqual(2);
    const { rows: importRows } = await h.sql.query(
      `SELECT row_number, record, sealed_record FROM bulk_import_rows WHERE job_id = $1 ORDER BY row_number`,
      [jobId],
    );
    const newRing = loadMasterKeyring(newKey, undefined, IDENTITY_KEYRING);
    for (const r of importRows) {
      expect(r.record).toBeNull();
      expect(keyIdOf(r.sealed_record)).toBe(newId);
      expect(openImportRow(newRing, jobId, r.row_number, r.sealed_record)).toEqual(
        waiting[r.row_number as 1 | 2],
      );
    }
    expect(JSON.stringify(importRows)).not.toContain('Mary Jackson');
    const { rows: keyIds } = await h.sql.query(
      `SELECT personal_data AS s FROM customers UNION ALL SELECT sealed_uma_address FROM customers
       UNION ALL SELECT uma_address_index FROM customers UNION ALL SELECT secret FROM webhook_signing_secrets
       UNION ALL SELECT sealed_inviter_uma FROM invitations
       UNION ALL SELECT sealed_invitee_uma FROM invitations WHERE status = 'CLAIMED'`,
    );
    expect(new Set(keyIds.map((r) => keyIdOf(r.s)))).toEqual(new Set([newId]));
    expect((await h.sql.query(`SELECT count(*)::int AS n FROM customers WHERE uma_address IS NOT NULL`)).rows[0].n).toBe(0);
    expect(
      (await h.sql.query(`SELECT count(*)::int AS n FROM invitations WHERE inviter_uma IS NOT NULL OR invitee_uma IS NOT NULL`))
        .rows[0].n,
    ).toBe(0);
    for (const code of [legacyInvitation.code, legacyPending.code]) {
      const raw = (await rawInvitation(code)).toLowerCase();
      for (const v of [sealedOne.umaAddress.slice(1), 'legacy.invitee', 'claimed.after.rotation']) expect(raw).not.toContain(v);
    }
    const legacyRow = await rawCustomer(legacy.id);
    expect(legacyRow).not.toContain('Grace Hopper');
    expect(legacyRow).not.toContain('grace@example.com');
    expect(legacyRow).not.toContain(legacy.umaAddress.slice(1));
    // Run again: nothing left to do (idempotent).
    expect(await runServiceCommand(identityService, 'rewrap', env)).toEqual({
      'customers.failed': 0,
      'customerUmaAddresses.failed': 0,
      'webhookSigningSecrets.failed': 0,
      'bulkImportRows.failed': 0,
      'invitationsInviterUma.failed': 0,
      'invitationsInviteeUma.failed': 0,
    });

    // The old key removed: a replica with the new key alone reads everything, and finds every address.
    const { client, stop } = await replicaWith({ IDENTITY_DATA_MASTER_KEY: newKey });
    try {
      for (const c of [legacy, sealedOne, madeUnderNew!]) {
        expect(await withUmaAddress(p.id, c.umaAddress, client)).toEqual([c.id]);
        await expectUmaTaken(individual(p.id, { umaAddress: c.umaAddress }, client), c.umaAddress);
      }
      expect(await inviterOf(p.id, legacy.umaAddress, client)).toBe(legacy.id);
      for (const i of [sealedInvitation, legacyInvitation, legacyPendingClaimed!])
        expect(await getInvitation(p.id, i.code, client)).toEqual(i);
      expect((await client.getCustomer({ platformId: p.id, customerId: legacy.id })).customer).toEqual(
        before,
      );
      expect(
        (await client.getCustomer({ platformId: p.id, customerId: sealedOne.id })).customer!.fullName,
      ).toBe('Ada Lovelace');
      expect(await client.getWebhookTarget({ platformId: p.id })).toEqual(targetBefore);
      const page = await client.listCustomers({
        platformId: p.id,
        customerType: identity.CustomerType.UNSPECIFIED,
        isIncludingDeleted: false,
        page: { limit: 100 },
      });
      expect(page.customers.length).toBeGreaterThanOrEqual(2);
    } finally {
      await stop();
    }
  });

  it('a missing or malformed master key stops the start with a ConfigError naming the variable', async () => {
    const { IDENTITY_DATA_MASTER_KEY: _key, ...base } = h.replicaEnv();
    const cases: [Record<string, string>, string][] = [
      [{}, 'IDENTITY_DATA_MASTER_KEY'],
      [{ IDENTITY_DATA_MASTER_KEY: randomBytes(16).toString('base64') }, 'IDENTITY_DATA_MASTER_KEY'],
      [{ IDENTITY_DATA_MASTER_KEY: 'not base64!' }, 'IDENTITY_DATA_MASTER_KEY'],
      [
        {
          IDENTITY_DATA_MASTER_KEY: randomBytes(32).toString('base64'),
          IDENTITY_DATA_MASTER_KEYS_RETIRED: 'short',
        },
        'IDENTITY_DATA_MASTER_KEYS_RETIRED',
      ],
    ];
    for (const [env, variable] of cases) {
      const err = await startService(identityService, { ...base, ...env }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.map((x) => x.variable)).toEqual([variable]);
      const cmd = await runServiceCommand(identityService, 'rewrap', { ...base, ...env }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(cmd).toBeInstanceOf(ConfigError);
    }
  });
});
