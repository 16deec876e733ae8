/**
 * End to end: platform isolation on every resource type, through the real
 * processes. Platform A owns one of everything (customer, UMA address, internal
 * and embedded-wallet accounts, external accounts, a quote, transactions, an API
 * token, wallet credentials, a session, an open signing challenge, an
 * Idempotency-Key). Platform B, another sandbox platform, presents each of A's
 * ids (and addresses) to every route that takes one, and the same request with an
 * unknown id of the same type: the two answers must be identical (status and body,
 * the id itself aside), so another platform's id is indistinguishable from one
 * that does not exist. Afterwards A's world is exactly as it was, and what B
 * touched still works for A (its challenge signs, its quote executes, its
 * payment is approved).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { eventually } from '@sluice/testing';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import { ensurePlatformCredential } from '../../tools/lib/bootstrap.js';
import {
  startWebhookReceiver,
  apiClient,
  germanIban,
  newCredential,
  startE2eStack,
  type Api,
  type ApiResponse,
  type E2eStack,
  usdAccountInfo,
} from './support.js';

const THRESHOLD = 100_000;
const eurAccountInfo = (account: string) => ({
  accountType: 'EUR_ACCOUNT',
  iban: germanIban(account),
  beneficiary: {
    beneficiaryType: 'INDIVIDUAL',
    fullName: 'Grace Hopper',
    address: { line1: '1 Hauptstr.', postalCode: '10115', country: 'DE' },
  },
});

/** One platform's resources, made through its own API. */
interface Owned {
  customerId: string;
  umaAddress: string;
  usdAccount: string;
  wallet: string;
  usdExternal: string;
  eurExternal: string;
}

describe('platform isolation on every resource type', () => {
  let e2e: E2eStack;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let a: Api;
  let b: Api;
  const credA = newCredential();
  const credB = newCredential();
  let A: Owned & {
    quoteId: string;
    incomingId: string;
    outgoingId: string;
    tokenId: string;
    credentialId: string;
    sessionId: string;
    challenge: { requestId: string; payloadToSign: string };
    sessionKey: string;
  };
  let B: Owned & { credentialId: string };

  const call = (
    api: Api,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => api(method, path, { body, headers });

  /** Makes a customer with USD and a wallet, funded, with a USD and an EUR external account. */
  async function setUp(api: Api, tag: string): Promise<Owned> {
    const cfg = await call(api, 'PATCH', '/config', {
      // The approval webhook of incoming payments from THRESHOLD is answered 202: the platform decides later.
      webhookEndpoint: receiver.url,
      supportedCurrencies: [
        { currencyCode: 'USD', incomingPaymentApprovalThreshold: THRESHOLD },
        { currencyCode: 'EUR' },
        { currencyCode: 'USDC' },
      ],
      embeddedWalletConfig: { currencies: ['USDC'], appName: `Isolation ${tag}` },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await call(
      api,
      'POST',
      '/customers',
      {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'same-everywhere',
        fullName: `Customer ${tag}`,
        email: `${tag}@example.test`,
        currencies: ['USD'],
      },
      { 'idempotency-key': 'iso-create-customer' },
    );
    expect(c.status, c.text).toBe(201);
    const accounts = await call(
      api,
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(c.json.id)}`,
    );
    const usd = accounts.json.data.find((x: any) => x.type === 'INTERNAL_FIAT');
    const wallet = accounts.json.data.find((x: any) => x.type === 'EMBEDDED_WALLET');
    expect([usd?.id, wallet?.id].every(Boolean), accounts.text).toBe(true);
    const fund = await call(api, 'POST', `/sandbox/internal-accounts/${encodeURIComponent(usd.id)}/fund`, {
      amount: 100_000,
    });
    expect(fund.status, fund.text).toBe(200);
    const usdExt = await call(api, 'POST', '/customers/external-accounts', {
      customerId: c.json.id,
      currency: 'USD',
      accountInfo: usdAccountInfo('12345678789'),
    });
    expect(usdExt.status, usdExt.text).toBe(201);
    const eurExt = await call(api, 'POST', '/customers/external-accounts', {
      customerId: c.json.id,
      currency: 'EUR',
      accountInfo: eurAccountInfo('0532013000'),
    });
    expect(eurExt.status, eurExt.text).toBe(201);
    return {
      customerId: c.json.id,
      umaAddress: c.json.umaAddress,
      usdAccount: usd.id,
      wallet: wallet.id,
      usdExternal: usdExt.json.id,
      eurExternal: eurExt.json.id,
    };
  }

  async function emailOtpSession(api: Api, wallet: string, email: string) {
    const cred = await call(api, 'POST', '/auth/credentials', {
      accountId: wallet,
      type: 'EMAIL_OTP',
      email,
    });
    expect(cred.status, cred.text).toBe(201);
    const keys = generateKeyPair();
    const s = await call(api, 'POST', `/auth/credentials/${encodeURIComponent(cred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: '000000',
      clientPublicKey: keys.publicKey,
    });
    expect(s.status, s.text).toBe(200);
    return { credentialId: cred.json.id as string, session: s.json, keys };
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver((w) => ({
      status: w.type === 'INCOMING_PAYMENT.PENDING' ? 202 : 200,
    }));
    e2e = await startE2eStack(
      'e2eiso',
      { sandbox: credA },
      {
        env: { SANDBOX_TIME_SCALE: '0.01' },
        appEnv: {
          payments: {
            QUOTE_TTL_SECONDS: '300',
            // Real seconds: the pending payment stays PENDING for the whole file.
            INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: String(100 * 3600),
            INCOMING_APPROVAL_WINDOW_SECONDS: String(100 * 3600),
          },
        },
      },
    );
    // Platform B: a second sandbox platform, made the way the stack makes the first.
    await ensurePlatformCredential(
      e2e.stack.grpc.identity!,
      { tokenId: credB.tokenId, clientSecret: credB.secret, environment: 'SANDBOX' },
      { platformName: 'Platform B' },
    );
    a = apiClient(e2e.stack, credA);
    b = apiClient(e2e.stack, credB);

    const ownA = await setUp(a, 'a');
    B = { ...(await setUp(b, 'b')), credentialId: '' };
    B.credentialId = (await emailOtpSession(b, B.wallet, 'b@example.test')).credentialId;

    const q = await call(a, 'POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: ownA.usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: ownA.eurExternal },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expect(q.status, q.text).toBe(201);
    const incoming = await call(a, 'POST', '/sandbox/uma/receive', {
      senderUmaAddress: '$success.usd@sandbox.sluice.local',
      receiverUmaAddress: ownA.umaAddress,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: THRESHOLD,
    });
    expect([incoming.status, incoming.json.status], incoming.text).toEqual([200, 'PENDING']);
    // The platform's 202 answer to the approval webhook has opened its window (A's world is settled).
    await eventually(async () => {
      const { rows } = await e2e
        .db()
        .query(`SELECT 1 FROM payments.scheduled_jobs WHERE id = $1`, [
          `incoming.approval-timeout:${incoming.json.id}:window`,
        ]);
      return rows.length ? true : undefined;
    }, 30_000);
    const out = await call(a, 'POST', '/transfer-out', {
      source: { accountId: ownA.usdAccount },
      destination: { accountId: ownA.usdExternal },
      amount: 500,
    });
    expect(out.status, out.text).toBe(201);
    await eventually(async () => {
      const r = await call(a, 'GET', `/transactions/${encodeURIComponent(out.json.id)}`);
      return r.json.status === 'COMPLETED';
    }, 30_000);
    const token = await call(
      a,
      'POST',
      '/tokens',
      { name: 'a-token', permissions: ['VIEW'] },
      { 'idempotency-key': 'iso-token' },
    );
    expect(token.status, token.text).toBe(201);
    const otp = await emailOtpSession(a, ownA.wallet, 'a@example.test');
    const sessionKey = await decryptSessionBundle(
      otp.session.encryptedSessionSigningKey,
      otp.keys.privateKey,
    );
    // An open signing challenge of A's wallet (step 1 of a signed retry), left unanswered for now.
    const ch = await call(a, 'PATCH', `/internal-accounts/${encodeURIComponent(ownA.wallet)}`, {
      privateEnabled: true,
    });
    expect(ch.status, ch.text).toBe(202);
    A = {
      ...ownA,
      quoteId: q.json.id,
      incomingId: incoming.json.id,
      outgoingId: out.json.id,
      tokenId: token.json.id,
      credentialId: otp.credentialId,
      sessionId: otp.session.id,
      challenge: { requestId: ch.json.requestId, payloadToSign: ch.json.payloadToSign },
      sessionKey,
    };
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  /** Everything A can read about its own resources. */
  async function worldOfA(): Promise<Record<string, unknown>> {
    const get = async (path: string) => {
      const r = await call(a, 'GET', path);
      return { status: r.status, body: r.json };
    };
    const q = (v: string) => encodeURIComponent(v);
    return {
      customer: await get(`/customers/${q(A.customerId)}`),
      customers: await get('/customers?limit=100&isIncludingDeleted=true'),
      internal: await get(`/customers/internal-accounts?customerId=${q(A.customerId)}&limit=100`),
      external: await get(`/customers/external-accounts?customerId=${q(A.customerId)}&limit=100`),
      quote: await get(`/quotes/${q(A.quoteId)}`),
      transactions: await get('/transactions?limit=100'),
      tokens: await get('/tokens?limit=100'),
      credentials: await get(`/auth/credentials?accountId=${q(A.wallet)}`),
      sessions: await get(`/auth/sessions?accountId=${q(A.wallet)}`),
    };
  }

  /** What each probe answered (printed: the statuses show what was compared). */
  const answered: string[] = [];

  /** B's answer with A's resource, beside its answer with an unknown id of the same type. */
  async function probe(
    name: string,
    theirs: string,
    unknown: string,
    send: (id: string) => Promise<ApiResponse>,
  ): Promise<void> {
    const shape = (r: ApiResponse, id: string) => ({
      status: r.status,
      body: r.text.split(id).join('<id>').split(encodeURIComponent(id)).join('<id>'),
    });
    const withTheirs = shape(await send(theirs), theirs);
    const withUnknown = shape(await send(unknown), unknown);
    answered.push(`${name}: ${withTheirs.status}`);
    expect(withTheirs, `${name}: another platform's id answers like an unknown one`).toEqual(withUnknown);
    // A well-formed request (a 400 would be refused before the id is even looked up, proving nothing).
    expect(withTheirs.status, `${name}: ${withTheirs.body}`).not.toBe(400);
  }

  it("another platform's id answers exactly like an unknown one, on every route that takes one, and changes nothing", async () => {
    const before = await worldOfA();
    const e = encodeURIComponent;
    const unknown = {
      customer: newId('Customer'),
      internal: newId('InternalAccount'),
      external: newId('ExternalAccount'),
      quote: newId('Quote'),
      transaction: newId('Transaction'),
      token: newId('Token'),
      credential: newId('AuthMethod'),
      session: newId('Session'),
      request: newId('Request'),
    };
    const pk = generateKeyPair().publicKey;
    /** B asks for a quote (a small one, locked on the sending side). */
    const quoteFromB = (source: Record<string, unknown>, destinationAccountId: string) =>
      call(b, 'POST', '/quotes', {
        source,
        destination: { destinationType: 'ACCOUNT', accountId: destinationAccountId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000,
      });
    const probes: [string, string, string, (id: string) => Promise<ApiResponse>][] = [
      // Customers and what hangs off them.
      ['GET customer', A.customerId, unknown.customer, (id) => call(b, 'GET', `/customers/${e(id)}`)],
      [
        'PATCH customer',
        A.customerId,
        unknown.customer,
        (id) => call(b, 'PATCH', `/customers/${e(id)}`, { customerType: 'INDIVIDUAL', fullName: 'Mallory' }),
      ],
      ['DELETE customer', A.customerId, unknown.customer, (id) => call(b, 'DELETE', `/customers/${e(id)}`)],
      [
        'internal accounts of a customer',
        A.customerId,
        unknown.customer,
        (id) => call(b, 'GET', `/customers/internal-accounts?customerId=${e(id)}`),
      ],
      [
        'external accounts of a customer',
        A.customerId,
        unknown.customer,
        (id) => call(b, 'GET', `/customers/external-accounts?customerId=${e(id)}`),
      ],
      [
        'transactions of a customer',
        A.customerId,
        unknown.customer,
        (id) => call(b, 'GET', `/transactions?customerId=${e(id)}`),
      ],
      [
        'external account for a customer',
        A.customerId,
        unknown.customer,
        (id) =>
          call(b, 'POST', '/customers/external-accounts', {
            customerId: id,
            currency: 'USD',
            accountInfo: usdAccountInfo('22345678789'),
          }),
      ],
      [
        'REALTIME_FUNDING quote for a customer',
        A.customerId,
        unknown.customer,
        (id) =>
          quoteFromB({ sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: id }, B.eurExternal),
      ],
      [
        'UMA receive to a customer address',
        A.umaAddress,
        `$nobody.${Date.now()}@sandbox.sluice.local`,
        (address) =>
          call(b, 'POST', '/sandbox/uma/receive', {
            senderUmaAddress: '$success.usd@sandbox.sluice.local',
            receiverUmaAddress: address,
            receivingCurrencyCode: 'USD',
            receivingCurrencyAmount: 1_000,
          }),
      ],
      // Internal accounts.
      [
        'fund an internal account',
        A.usdAccount,
        unknown.internal,
        (id) => call(b, 'POST', `/sandbox/internal-accounts/${e(id)}/fund`, { amount: 1 }),
      ],
      [
        'quote from an internal account',
        A.usdAccount,
        unknown.internal,
        (id) => quoteFromB({ sourceType: 'ACCOUNT', accountId: id }, B.eurExternal),
      ],
      [
        'quote to an internal account',
        A.usdAccount,
        unknown.internal,
        (id) => quoteFromB({ sourceType: 'ACCOUNT', accountId: B.usdAccount }, id),
      ],
      [
        'transfer-out from an internal account',
        A.usdAccount,
        unknown.internal,
        (id) =>
          call(b, 'POST', '/transfer-out', {
            source: { accountId: id },
            destination: { accountId: B.usdExternal },
            amount: 1,
          }),
      ],
      [
        'transfer-in to an internal account',
        A.usdAccount,
        unknown.internal,
        (id) =>
          call(b, 'POST', '/transfer-in', {
            source: { accountId: B.usdExternal },
            destination: { accountId: id },
            amount: 1,
          }),
      ],
      // Embedded wallets.
      [
        'wallet settings',
        A.wallet,
        unknown.internal,
        (id) => call(b, 'PATCH', `/internal-accounts/${e(id)}`, { privateEnabled: true }),
      ],
      [
        'wallet export',
        A.wallet,
        unknown.internal,
        (id) => call(b, 'POST', `/internal-accounts/${e(id)}/export`, { clientPublicKey: pk }),
      ],
      [
        'credentials of a wallet',
        A.wallet,
        unknown.internal,
        (id) => call(b, 'GET', `/auth/credentials?accountId=${e(id)}`),
      ],
      [
        'sessions of a wallet',
        A.wallet,
        unknown.internal,
        (id) => call(b, 'GET', `/auth/sessions?accountId=${e(id)}`),
      ],
      [
        'credential on a wallet',
        A.wallet,
        unknown.internal,
        (id) =>
          call(b, 'POST', '/auth/credentials', {
            accountId: id,
            type: 'EMAIL_OTP',
            email: 'mallory@example.test',
          }),
      ],
      // External accounts.
      [
        'GET external account',
        A.usdExternal,
        unknown.external,
        (id) => call(b, 'GET', `/customers/external-accounts/${e(id)}`),
      ],
      [
        'DELETE external account',
        A.usdExternal,
        unknown.external,
        (id) => call(b, 'DELETE', `/customers/external-accounts/${e(id)}`),
      ],
      [
        'receiver lookup of an external account',
        A.eurExternal,
        unknown.external,
        (id) => call(b, 'GET', `/receiver/external-account/${e(id)}`),
      ],
      [
        'transfer-out to an external account',
        A.usdExternal,
        unknown.external,
        (id) =>
          call(b, 'POST', '/transfer-out', {
            source: { accountId: B.usdAccount },
            destination: { accountId: id },
            amount: 1,
          }),
      ],
      [
        'transfer-in from an external account',
        A.usdExternal,
        unknown.external,
        (id) =>
          call(b, 'POST', '/transfer-in', {
            source: { accountId: id },
            destination: { accountId: B.usdAccount },
            amount: 1,
          }),
      ],
      [
        'quote to an external account',
        A.eurExternal,
        unknown.external,
        (id) => quoteFromB({ sourceType: 'ACCOUNT', accountId: B.usdAccount }, id),
      ],
      // Quotes.
      ['GET quote', A.quoteId, unknown.quote, (id) => call(b, 'GET', `/quotes/${e(id)}`)],
      ['execute quote', A.quoteId, unknown.quote, (id) => call(b, 'POST', `/quotes/${e(id)}/execute`)],
      [
        'pay a quote (sandbox send)',
        A.quoteId,
        unknown.quote,
        (id) => call(b, 'POST', '/sandbox/send', { quoteId: id, currencyCode: 'USD' }),
      ],
      // Transactions.
      [
        'GET incoming transaction',
        A.incomingId,
        unknown.transaction,
        (id) => call(b, 'GET', `/transactions/${e(id)}`),
      ],
      [
        'GET outgoing transaction',
        A.outgoingId,
        unknown.transaction,
        (id) => call(b, 'GET', `/transactions/${e(id)}`),
      ],
      [
        'approve',
        A.incomingId,
        unknown.transaction,
        (id) => call(b, 'POST', `/transactions/${e(id)}/approve`),
      ],
      [
        'reject',
        A.incomingId,
        unknown.transaction,
        (id) => call(b, 'POST', `/transactions/${e(id)}/reject`, { reason: 'RESTRICTED_JURISDICTION' }),
      ],
      // API tokens.
      ['GET token', A.tokenId, unknown.token, (id) => call(b, 'GET', `/tokens/${e(id)}`)],
      ['DELETE token', A.tokenId, unknown.token, (id) => call(b, 'DELETE', `/tokens/${e(id)}`)],
      // Wallet credentials, sessions and signing challenges.
      [
        'verify a credential',
        A.credentialId,
        unknown.credential,
        (id) =>
          call(b, 'POST', `/auth/credentials/${e(id)}/verify`, {
            type: 'EMAIL_OTP',
            otp: '000000',
            clientPublicKey: pk,
          }),
      ],
      [
        'challenge a credential',
        A.credentialId,
        unknown.credential,
        (id) => call(b, 'POST', `/auth/credentials/${e(id)}/challenge`, { clientPublicKey: pk }),
      ],
      [
        'update a credential',
        A.credentialId,
        unknown.credential,
        (id) => call(b, 'PATCH', `/auth/credentials/${e(id)}`, { email: 'mallory@example.test' }),
      ],
      [
        'revoke a credential',
        A.credentialId,
        unknown.credential,
        (id) => call(b, 'DELETE', `/auth/credentials/${e(id)}`),
      ],
      [
        'revoke a session',
        A.sessionId,
        unknown.session,
        (id) => call(b, 'DELETE', `/auth/sessions/${e(id)}`),
      ],
      [
        'refresh a session',
        A.sessionId,
        unknown.session,
        (id) => call(b, 'POST', `/auth/sessions/${e(id)}/refresh`, { clientPublicKey: pk }),
      ],
      [
        'a signing challenge used on the own wallet',
        A.challenge.requestId,
        unknown.request,
        (id) =>
          call(
            b,
            'PATCH',
            `/internal-accounts/${e(B.wallet)}`,
            { privateEnabled: true },
            {
              'Service-Wallet-Signature': 'sandbox-valid-signature',
              'Request-Id': id,
            },
          ),
      ],
    ];
    for (const [name, theirs, other, send] of probes) await probe(name, theirs, other, send);
    console.info(`isolation: ${probes.length} probes, each answered alike: ${answered.join('; ')}`);

    // An Idempotency-Key is the platform's own: B sending A's key with A's very request makes a token of
    // its own; a replay would hand B the client secret of A's token.
    const bToken = await call(
      b,
      'POST',
      '/tokens',
      { name: 'a-token', permissions: ['VIEW'] },
      { 'idempotency-key': 'iso-token' },
    );
    expect([bToken.status, bToken.headers.get('idempotent-replayed')], bToken.text).toEqual([201, null]);
    expect(bToken.json.id).not.toBe(A.tokenId);
    // (Both platforms also created their customer with the same key and different bodies: B's was a 201.)
    expect(B.customerId).not.toBe(A.customerId);

    // Nothing of A's changed.
    expect(await worldOfA()).toEqual(before);

    // And what B held in its hands still works for A: the challenge signs (it was not consumed), the
    // payment is approved, the quote executes.
    const signed = await call(
      a,
      'PATCH',
      `/internal-accounts/${e(A.wallet)}`,
      { privateEnabled: true },
      {
        'Service-Wallet-Signature': stamp(A.challenge.payloadToSign, A.sessionKey),
        'Request-Id': A.challenge.requestId,
      },
    );
    expect(signed.status, signed.text).toBe(200);
    const approved = await call(a, 'POST', `/transactions/${e(A.incomingId)}/approve`);
    expect([approved.status, approved.json.status], approved.text).toEqual([200, 'COMPLETED']);
    const executed = await call(a, 'POST', `/quotes/${e(A.quoteId)}/execute`);
    expect(executed.status, executed.text).toBe(200);
    expect(executed.json.transactionId).toMatch(/^Transaction:/);
  });
});
