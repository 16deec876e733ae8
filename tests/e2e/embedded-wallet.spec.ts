/**
 * Embedded wallets end to end, through every real process: an EMBEDDED_WALLET
 * account appears for a customer of a platform with wallet currencies; email-OTP
 * and OAuth credentials issue HPKE-encrypted session keys that the client library
 * opens; signed retries carry real P-256 stamps; a request id works once; the
 * wallet exports to the client's key; a session refreshes into a new one without
 * verifying the credential again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { eventually } from '@sluice/testing';
import { decryptExport, decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import { ensurePlatformCredential } from '../../tools/lib/bootstrap.js';
import { apiClient, germanIban, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

const ISSUER = 'https://accounts.example.test';

/** A structurally valid JWT (the sandbox bypasses the signature check, not parsing). */
function unsignedJwt(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'RS256', typ: 'JWT', kid: 'k1' })}.${enc(claims)}.${randomBytes(64).toString('base64url')}`;
}

describe('embedded wallets through the real processes (sandbox)', () => {
  let e2e: E2eStack;
  let client: Api;
  const cred = newCredential();

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });

  /** Runs a signed-retry flow: step 1 must answer 202, step 2 carries a stamp of payloadToSign. */
  async function signed(method: string, path: string, body: unknown, sessionKey: string) {
    const first = await api(method, path, body);
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({
      payloadToSign: expect.any(String),
      requestId: expect.any(String),
      expiresAt: expect.any(String),
    });
    const headers = {
      'Service-Wallet-Signature': stamp(first.json.payloadToSign, sessionKey),
      'Request-Id': first.json.requestId,
    };
    return { first, second: await api(method, path, body, headers), headers };
  }

  beforeAll(async () => {
    e2e = await startE2eStack('e2ewallet', { sandbox: cred });
    client = apiClient(e2e.stack, cred);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
  });

  it('credentials, sessions, signed retries, export and wallet settings', async () => {
    const cfg = await api('PATCH', '/config', {
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'USDC' }, { currencyCode: 'EUR' }],
      embeddedWalletConfig: {
        currencies: ['USDC'],
        appName: 'E2E Wallet',
        oidcIssuers: [{ issuer: ISSUER, jwksUri: `${ISSUER}/jwks`, audiences: ['e2e-app'] }],
      },
    });
    expect(cfg.status, cfg.text).toBe(200);

    const customer = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'wallet-user-1',
      email: 'ada@example.test',
      currencies: ['USD'],
    });
    expect(customer.status, customer.text).toBe(201);
    const wallets = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.json.id)}&type=EMBEDDED_WALLET`,
    );
    expect(wallets.status, wallets.text).toBe(200);
    expect(wallets.json.data).toHaveLength(1);
    const wallet = wallets.json.data[0];
    expect(wallet).toMatchObject({
      type: 'EMBEDDED_WALLET',
      privateEnabled: false,
      balance: { currency: { code: 'USDC' } },
    });

    // First credential: no signature needed; the response is a strict AuthMethod.
    const otpCred = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'EMAIL_OTP',
      email: 'ada@example.test',
    });
    expect(otpCred.status, otpCred.text).toBe(201);
    expect(Object.keys(otpCred.json).sort()).toEqual([
      'accountId',
      'createdAt',
      'id',
      'nickname',
      'type',
      'updatedAt',
    ]);
    const dup = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'EMAIL_OTP',
      email: 'b@example.test',
    });
    // One EMAIL_OTP per account: refused outright (before any signature is asked for).
    expect([dup.status, dup.json.code], dup.text).toEqual([400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS']);

    // Wrong magic value: 401 with the exact reason; right one: a session key only this client can open.
    const keys1 = generateKeyPair();
    const wrong = await api('POST', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: '123456',
      clientPublicKey: keys1.publicKey,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ code: 'UNAUTHORIZED', reason: 'Invalid OTP code' });
    const s1 = await api('POST', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: '000000',
      clientPublicKey: keys1.publicKey,
    });
    expect(s1.status, s1.text).toBe(200);
    const session1Key = await decryptSessionBundle(s1.json.encryptedSessionSigningKey, keys1.privateKey);
    expect(session1Key).toMatch(/^[0-9a-f]{64}$/);
    await expect(
      decryptSessionBundle(s1.json.encryptedSessionSigningKey, generateKeyPair().privateKey),
    ).rejects.toThrow();

    // Second credential (OAUTH) through the signed retry with a real stamp of the OTP session.
    const token = unsignedJwt({
      iss: ISSUER,
      aud: 'e2e-app',
      sub: 'user-1',
      email: 'ada@oauth.test',
      iat: Math.floor(Date.now() / 1000),
    });
    const add = await signed(
      'POST',
      '/auth/credentials',
      { accountId: wallet.id, type: 'OAUTH', oidcToken: token },
      session1Key,
    );
    expect(add.second.status, add.second.text).toBe(201);
    expect(add.second.json).toMatchObject({ type: 'OAUTH', nickname: 'ada@oauth.test' });
    // The request id was consumed: the same retry again is 401.
    const replay = await api(
      'POST',
      '/auth/credentials',
      { accountId: wallet.id, type: 'OAUTH', oidcToken: token },
      add.headers,
    );
    expect(replay.status).toBe(401);
    expect(replay.json.reason).toBe('Invalid Service-Wallet-Signature');

    const keys2 = generateKeyPair();
    const badOidc = await api('POST', `/auth/credentials/${encodeURIComponent(add.second.json.id)}/verify`, {
      type: 'OAUTH',
      oidcToken: 'not-the-magic-token',
      clientPublicKey: keys2.publicKey,
    });
    expect(badOidc.status).toBe(401);
    expect(badOidc.json.reason).toBe('Invalid OIDC token');
    const s2 = await api('POST', `/auth/credentials/${encodeURIComponent(add.second.json.id)}/verify`, {
      type: 'OAUTH',
      oidcToken: 'sandbox-valid-oidc-token',
      clientPublicKey: keys2.publicKey,
    });
    expect(s2.status, s2.text).toBe(200);
    const session2Key = await decryptSessionBundle(s2.json.encryptedSessionSigningKey, keys2.privateKey);

    // A tampered body is refused and leaves the wallet as it was.
    const tamper = await api('PATCH', `/internal-accounts/${encodeURIComponent(wallet.id)}`, {
      privateEnabled: true,
    });
    expect(tamper.status).toBe(202);
    const tampered = await api(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: false },
      {
        'Service-Wallet-Signature': stamp(tamper.json.payloadToSign, session2Key),
        'Request-Id': tamper.json.requestId,
      },
    );
    expect(tampered.status).toBe(401);
    expect(tampered.json.code).toBe('SIGNED_BODY_MISMATCH');

    // Wallet settings through the signed retry.
    const settings = await signed(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: true },
      session2Key,
    );
    expect(settings.second.status, settings.second.text).toBe(200);
    expect(settings.second.json).toMatchObject({ id: wallet.id, privateEnabled: true });

    // A credential cannot be revoked by its own session; a different credential's session can.
    const own = await signed(
      'DELETE',
      `/auth/credentials/${encodeURIComponent(otpCred.json.id)}`,
      undefined,
      session1Key,
    );
    expect(own.second.status).toBe(401);
    expect(own.second.json.code).toBe('WALLET_SIGNATURE_SAME_CREDENTIAL');
    const revoke = await signed(
      'DELETE',
      `/auth/credentials/${encodeURIComponent(otpCred.json.id)}`,
      undefined,
      session2Key,
    );
    expect(revoke.second.status, revoke.second.text).toBe(204);
    const left = await api('GET', `/auth/credentials?accountId=${encodeURIComponent(wallet.id)}`);
    expect(left.json.data.map((c: { type: string }) => c.type)).toEqual(['OAUTH']);
    // The revoked credential's session no longer signs anything.
    const dead = await signed(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: false },
      session1Key,
    );
    expect(dead.second.status).toBe(401);

    // Export to a fresh key: the mnemonic opens only with that key.
    const exportKeys = generateKeyPair();
    const exp = await signed(
      'POST',
      `/internal-accounts/${encodeURIComponent(wallet.id)}/export`,
      { clientPublicKey: exportKeys.publicKey },
      session2Key,
    );
    expect(exp.second.status, exp.second.text).toBe(200);
    const mnemonic = await decryptExport(exp.second.json.encryptedWalletCredentials, exportKeys.privateKey, {
      organizationId: wallet.id,
    });
    expect(mnemonic.split(' ')).toHaveLength(24);
    await expect(
      decryptExport(exp.second.json.encryptedWalletCredentials, keys2.privateKey),
    ).rejects.toThrow();

    // A quote from the wallet (USDC → EUR) executes only with the wallet signature, once.
    const walletBalance = async () =>
      (
        await api(
          'GET',
          `/customers/internal-accounts?customerId=${encodeURIComponent(customer.json.id)}&type=EMBEDDED_WALLET`,
        )
      ).json.data[0].balance.amount as number;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(wallet.id)}/fund`, {
      amount: 100_000_000,
    });
    expect(fund.status, fund.text).toBe(200);
    const funded = await walletBalance();
    expect(funded).toBeGreaterThanOrEqual(100_000_000);
    const ext = await api('POST', '/customers/external-accounts', {
      customerId: customer.json.id,
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: germanIban('0532013000'),
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Ada Lovelace',
          address: { line1: '1 Hauptstr.', postalCode: '10115', country: 'DE' },
        },
      },
    });
    expect(ext.status, ext.text).toBe(201);
    const q = await api('POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: wallet.id },
      destination: { destinationType: 'ACCOUNT', accountId: ext.json.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000_000,
    });
    expect(q.status, q.text).toBe(201);
    expect(q.json.payloadToSign).toEqual(expect.any(String));
    const execPath = `/quotes/${encodeURIComponent(q.json.id)}/execute`;
    // Without signature headers: the signed retry's step 1, a fresh single-use challenge; nothing moves.
    const unsigned = await api('POST', execPath);
    expect(unsigned.status, unsigned.text).toBe(202);
    expect(unsigned.json).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
    });
    expect(unsigned.json.requestId).not.toBe(q.json.signingRequestId);
    expect(await walletBalance()).toBe(funded);
    expect((await api('GET', `/quotes/${encodeURIComponent(q.json.id)}`)).json.status).toBe('PENDING');
    const quoteStamp = { 'Service-Wallet-Signature': stamp(q.json.payloadToSign, session2Key) };
    const executed = await api('POST', execPath, undefined, quoteStamp);
    expect(executed.status, executed.text).toBe(200);
    expect(executed.json.status).toBe('PROCESSING');
    expect(executed.json.transactionId).toMatch(/^Transaction:/);
    // The same stamp again moves nothing: an executed quote is returned as it is (execute is idempotent
    // per quote; the signature is only checked while the quote is still PENDING).
    const replayed = await api('POST', execPath, undefined, quoteStamp);
    expect([replayed.status, replayed.json.transactionId], replayed.text).toEqual([
      200,
      executed.json.transactionId,
    ]);
    await eventually(async () => {
      const r = await api('GET', `/quotes/${encodeURIComponent(q.json.id)}`);
      return r.json.status === 'COMPLETED' ? r.json : undefined;
    }, 30_000);
    expect(await walletBalance()).toBe(funded - (q.json.totalSendingAmount as number));

    // A second quote through the 202 path: execute without headers, stamp the challenge's
    // payloadToSign, repeat with Service-Wallet-Signature and Request-Id.
    const q2 = await api('POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: wallet.id },
      destination: { destinationType: 'ACCOUNT', accountId: ext.json.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 20_000_000,
    });
    expect(q2.status, q2.text).toBe(201);
    const exec2 = `/quotes/${encodeURIComponent(q2.json.id)}/execute`;
    const challenge = await api('POST', exec2, undefined, { 'Idempotency-Key': 'exec-q2' });
    expect(challenge.status, challenge.text).toBe(202);
    // A stamp by a key that is no session of this wallet: 401, nothing held.
    const foreign = await api('POST', exec2, undefined, {
      'Idempotency-Key': 'exec-q2',
      'Service-Wallet-Signature': stamp(challenge.json.payloadToSign, exportKeys.privateKey),
      'Request-Id': challenge.json.requestId,
    });
    expect(foreign.status, foreign.text).toBe(401);
    const afterFirst = funded - (q.json.totalSendingAmount as number);
    expect(await walletBalance()).toBe(afterFirst);
    const fresh = await api('POST', exec2, undefined, { 'Idempotency-Key': 'exec-q2' });
    expect(fresh.status, fresh.text).toBe(202);
    const signed2 = await api('POST', exec2, undefined, {
      'Idempotency-Key': 'exec-q2',
      'Service-Wallet-Signature': stamp(fresh.json.payloadToSign, session2Key),
      'Request-Id': fresh.json.requestId,
    });
    expect(signed2.status, signed2.text).toBe(200);
    expect(signed2.json.transactionId).toMatch(/^Transaction:/);
    await eventually(async () => {
      const r = await api('GET', `/quotes/${encodeURIComponent(q2.json.id)}`);
      return r.json.status === 'COMPLETED' ? r.json : undefined;
    }, 30_000);
    const afterSecond = afterFirst - (q2.json.totalSendingAmount as number);
    expect(await walletBalance()).toBe(afterSecond);

    // A signed execute raced through the real stack: one signing request, stamped once, sent by 8
    // clients at once (with keys of their own). wallet-auth consumes the request once: one execution,
    // one debit; every other copy is refused as a reused request or finds the quote executed.
    /**
     * A quote of `amount` from the wallet, its execute challenged once (202), stamped once, and
     * the stamped execute sent by 8 clients at once (each with an Idempotency-Key of its own).
     */
    const raceStampedExecute = async (amount: number, label: string) => {
      const q = await api('POST', '/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: wallet.id },
        destination: { destinationType: 'ACCOUNT', accountId: ext.json.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: amount,
      });
      expect(q.status, q.text).toBe(201);
      const path = `/quotes/${encodeURIComponent(q.json.id)}/execute`;
      const challenge = await api('POST', path);
      expect(challenge.status, challenge.text).toBe(202);
      const stamped = {
        'Service-Wallet-Signature': stamp(challenge.json.payloadToSign, session2Key),
        'Request-Id': challenge.json.requestId,
      };
      const raced = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api('POST', path, undefined, { ...stamped, 'Idempotency-Key': `${label}-${i}` }),
        ),
      );
      return { quote: q.json, raced };
    };
    const { quote: q3, raced } = await raceStampedExecute(5_000_000, 'race-signed');
    const ran = raced.filter((r) => r.status === 200);
    expect(ran.length, JSON.stringify(raced.map((r) => r.text))).toBeGreaterThanOrEqual(1);
    expect(new Set(ran.map((r) => r.json.transactionId)).size).toBe(1);
    for (const r of raced.filter((x) => x.status !== 200))
      expect([r.status, r.json.code], r.text).toEqual([401, 'SIGNING_REQUEST_REUSED']);
    const { rows: txs } = await e2e
      .db()
      .query(`SELECT id FROM payments.transactions WHERE quote_id = $1`, [q3.id]);
    expect(txs.map((t) => t.id)).toEqual([ran[0]!.json.transactionId]);
    await eventually(async () => {
      const r = await api('GET', `/quotes/${encodeURIComponent(q3.id)}`);
      return r.json.status === 'COMPLETED' ? r.json : undefined;
    }, 30_000);
    expect(await walletBalance()).toBe(afterSecond - (q3.totalSendingAmount as number));
    console.info(
      `embedded-wallet: 8 signed executes raced: ${ran.length} answered 200, ${raced.length - ran.length} refused as reused`,
    );

    // The same race where the execution cannot happen (the hold is refused: more than the balance), so
    // every copy reaches wallet-auth with the quote still PENDING: exactly one gets past the single-use
    // signing request (and is refused by the ledger), the other 7 are refused as reused; nothing moves.
    const afterThird = await walletBalance();
    const { quote: q4, raced: raced4 } = await raceStampedExecute(afterThird + 1, 'race-refused');
    const outcomes = raced4.map((r) => `${r.status} ${r.json?.code}`).sort();
    expect(outcomes).toEqual([
      '400 INSUFFICIENT_FUNDS',
      ...Array.from({ length: 7 }, () => '401 SIGNING_REQUEST_REUSED'),
    ]);
    expect((await api('GET', `/quotes/${encodeURIComponent(q4.id)}`)).json.status).toBe('PENDING');
    expect(await walletBalance()).toBe(afterThird);
  });

  it('refreshes a session: 202, then a stamp of that session issues a new one that signs; replay, bad input and another platform refused', async () => {
    const cfg = await api('PATCH', '/config', {
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'USDC' }],
      embeddedWalletConfig: { currencies: ['USDC'], appName: 'E2E Wallet' },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const customer = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'wallet-user-refresh',
      email: 'grace@example.test',
      currencies: ['USD'],
    });
    expect(customer.status, customer.text).toBe(201);
    const wallets = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.json.id)}&type=EMBEDDED_WALLET`,
    );
    const wallet = wallets.json.data[0];
    const otp = await api('POST', '/auth/credentials', { accountId: wallet.id, type: 'EMAIL_OTP' });
    expect(otp.status, otp.text).toBe(201);
    const loginKeys = generateKeyPair();
    const login = await api('POST', `/auth/credentials/${encodeURIComponent(otp.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: '000000',
      clientPublicKey: loginKeys.publicKey,
    });
    expect(login.status, login.text).toBe(200);
    const oldKey = await decryptSessionBundle(login.json.encryptedSessionSigningKey, loginKeys.privateKey);
    const path = `/auth/sessions/${encodeURIComponent(login.json.id)}/refresh`;

    // Bad input: 400 naming the field, nothing issued.
    const noKey = await api('POST', path, {});
    expect([noKey.status, noKey.json.code, noKey.json.details?.errors?.[0]?.field], noKey.text).toEqual([
      400,
      'INVALID_INPUT',
      'clientPublicKey',
    ]);
    const offCurve = await api('POST', path, { clientPublicKey: '04' + '00'.repeat(64) });
    expect([offCurve.status, offCurve.json.code], offCurve.text).toEqual([400, 'INVALID_CLIENT_PUBLIC_KEY']);

    // Another platform's client: A's session is not found, exactly like an unknown one.
    const credB = newCredential();
    await ensurePlatformCredential(
      e2e.stack.grpc.identity!,
      { tokenId: credB.tokenId, clientSecret: credB.secret, environment: 'SANDBOX' },
      { platformName: 'Platform B (wallet refresh)' },
    );
    const b = apiClient(e2e.stack, credB);
    const newKeys = generateKeyPair();
    const foreign = await b('POST', path, { body: { clientPublicKey: newKeys.publicKey } });
    const unknown = await api('POST', `/auth/sessions/${encodeURIComponent(login.json.id.replace(/.{4}$/, '0000'))}/refresh`, {
      clientPublicKey: newKeys.publicKey,
    });
    expect([foreign.status, foreign.json.code], foreign.text).toEqual([404, 'SESSION_NOT_FOUND']);
    expect([unknown.status, unknown.json.code], unknown.text).toEqual([404, 'SESSION_NOT_FOUND']);

    // The signed refresh: step 1 is the plain signing challenge, step 2 the new session (201).
    const refreshed = await signed('POST', path, { clientPublicKey: newKeys.publicKey }, oldKey);
    expect(Object.keys(refreshed.first.json).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    expect(refreshed.second.status, refreshed.second.text).toBe(201);
    expect(refreshed.second.json).toMatchObject({ accountId: wallet.id, type: 'EMAIL_OTP', authMethodId: otp.json.id });
    expect(refreshed.second.json.id).not.toBe(login.json.id);
    const newKey = await decryptSessionBundle(refreshed.second.json.encryptedSessionSigningKey, newKeys.privateKey);
    const replay = await api('POST', path, { clientPublicKey: newKeys.publicKey }, refreshed.headers);
    expect([replay.status, replay.json.code], replay.text).toEqual([401, 'SIGNING_REQUEST_REUSED']);
    const sessions = await api('GET', `/auth/sessions?accountId=${encodeURIComponent(wallet.id)}`);
    expect(sessions.json.data.map((x: { id: string }) => x.id).sort()).toEqual(
      [login.json.id, refreshed.second.json.id].sort(),
    );

    // The new session's key signs a wallet action.
    const settings = await signed(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: true },
      newKey,
    );
    expect(settings.second.status, settings.second.text).toBe(200);
    expect(settings.second.json).toMatchObject({ id: wallet.id, privateEnabled: true });
  });
});
