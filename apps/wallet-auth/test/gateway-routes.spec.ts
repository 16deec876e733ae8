import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptExport, decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
// End-to-end route test: the real gateway core and route module in front of the real service.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { API, startGateway, type Harness as GatewayHarness } from '../../gateway/test/support/harness.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import walletAuthRoutes from '../../gateway/src/routes/wallet-auth.routes.js';
import { startWalletAuth, type Harness } from './support/harness.js';

// The REST routes end to end: real gateway core → real wallet-auth (gRPC, Postgres), with the real
// identity (API tokens, platform config, the customer's email) and accounts (embedded wallets).

const EMAIL = 'customer@example.com';

describe('wallet-auth REST routes (sandbox platform)', () => {
  let h: Harness;
  let gw: GatewayHarness;
  let platformId: string;
  let auth: string;
  let otherAuth: string;
  let customerId: string;

  beforeAll(async () => {
    h = await startWalletAuth('gw', {}, { accounts: true });
    const platform = await h.platform('SANDBOX');
    const other = await h.platform('SANDBOX');
    platformId = platform.id;
    // The platforms' bootstrap credentials, checked by identity's AuthenticateToken.
    const basic = (p: { tokenId: string; clientSecret: string }) =>
      `Basic ${Buffer.from(`${p.tokenId}:${p.clientSecret}`).toString('base64')}`;
    auth = basic(platform);
    otherAuth = basic(other);
    customerId = (await h.world.customer(platformId, { email: EMAIL })).id;
    gw = await startGateway(h.identityAddress, { 'wallet-auth': walletAuthRoutes }, { ACCOUNTS_GRPC_URL: h.accountsAddress!, WALLET_AUTH_GRPC_URL: h.address });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    gw?.clients.walletAuth.close();
    await h?.stop();
  });

  /** The customer's account of `type` in accounts (a USDC EMBEDDED_WALLET unless said otherwise), made for a new customer unless `owner`. */
  async function account(type: 'EMBEDDED_WALLET' | 'INTERNAL_FIAT' = 'EMBEDDED_WALLET', owner = customerId) {
    const platform = { id: platformId, environment: 'SANDBOX' as const };
    if (type === 'INTERNAL_FIAT') return (await h.world.internalAccount(platform, owner, 'USD')).id;
    return (await h.world.internalAccount(platform, owner, 'USDC', { type: 'EMBEDDED_WALLET' })).id;
  }
  /** A new customer of the platform with the email the EMAIL_OTP credential takes. */
  const newCustomer = async () => (await h.world.customer(platformId, { email: EMAIL })).id;

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    gw.app.inject({ method, url: `${API}${url}`, headers: { authorization: auth, ...headers }, ...(payload !== undefined ? { payload: payload as object } : {}) });

  async function walletWithSession() {
    const accountId = await account('EMBEDDED_WALLET', await newCustomer());
    const created = await call('POST', '/auth/credentials', { accountId, type: 'EMAIL_OTP' });
    expect(created.statusCode, created.body).toBe(201);
    const client = generateKeyPair();
    const v = await call('POST', `/auth/credentials/${created.json().id}/verify`, { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: client.publicKey });
    expect(v.statusCode, v.body).toBe(200);
    return { accountId, credential: created.json(), session: v.json(), sessionKey: await decryptSessionBundle(v.json().encryptedSessionSigningKey, client.privateKey) };
  }

  it('registers the first EMAIL_OTP credential with the customer email: 201 strict AuthMethod', async () => {
    const accountId = await account();
    const r = await call('POST', '/auth/credentials', { accountId, type: 'EMAIL_OTP' });
    expect(r.statusCode, r.body).toBe(201);
    expect(Object.keys(r.json()).sort()).toEqual(['accountId', 'createdAt', 'id', 'nickname', 'type', 'updatedAt']);
    expect(r.json()).toMatchObject({ accountId, type: 'EMAIL_OTP', nickname: 'customer@example.com' });
    const again = await call('POST', '/auth/credentials', { accountId, type: 'EMAIL_OTP', email: 'x@example.com' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');
  });

  it('refuses accounts that are not this platform’s embedded wallets and bad bodies, changing nothing', async () => {
    const fiat = await account('INTERNAL_FIAT');
    const r1 = await call('POST', '/auth/credentials', { accountId: fiat, type: 'EMAIL_OTP' });
    expect([r1.statusCode, r1.json().code]).toEqual([400, 'NOT_EMBEDDED_WALLET']);
    const mine = await account('EMBEDDED_WALLET', await newCustomer());
    const foreign = await gw.app.inject({ method: 'POST', url: `${API}/auth/credentials`, headers: { authorization: otherAuth }, payload: { accountId: mine, type: 'EMAIL_OTP' } });
    expect(foreign.statusCode).toBe(404);
    const r2 = await call('POST', '/auth/credentials', { accountId: mine, type: 'EMAIL_OTP', oidcToken: 'x' });
    expect([r2.statusCode, r2.json().code, r2.json().details.errors[0].field]).toEqual([400, 'INVALID_INPUT', 'oidcToken']);
    const r3 = await call('POST', '/auth/credentials', { accountId: 'InternalAccount:nope', type: 'EMAIL_OTP' });
    expect(r3.statusCode).toBe(400);
    const list = await call('GET', `/auth/credentials?accountId=${mine}`);
    expect(list.json()).toEqual({ data: [] });
  });

  it('wrong magic values answer 401 UNAUTHORIZED with the top-level reason', async () => {
    const w = await walletWithSession();
    const bad = await call('POST', `/auth/credentials/${w.credential.id}/verify`, { type: 'EMAIL_OTP', otp: '999999', clientPublicKey: generateKeyPair().publicKey });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toMatchObject({ status: 401, code: 'UNAUTHORIZED', reason: 'Invalid OTP code' });
    const body = { email: 'new@example.com' };
    const step1 = await call('PATCH', `/auth/credentials/${w.credential.id}`, body);
    expect(step1.statusCode).toBe(202);
    const wrong = await call('PATCH', `/auth/credentials/${w.credential.id}`, body, { 'service-wallet-signature': 'bogus', 'request-id': step1.json().requestId });
    expect(wrong.json()).toMatchObject({ status: 401, code: 'UNAUTHORIZED', reason: 'Invalid Service-Wallet-Signature' });
    const ok = await call('PATCH', `/auth/credentials/${w.credential.id}`, body, { 'service-wallet-signature': 'sandbox-valid-signature', 'request-id': step1.json().requestId });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().nickname).toBe('new@example.com');
    const replay = await call('PATCH', `/auth/credentials/${w.credential.id}`, body, { 'service-wallet-signature': 'sandbox-valid-signature', 'request-id': step1.json().requestId });
    expect([replay.statusCode, replay.json().code]).toEqual([401, 'SIGNING_REQUEST_REUSED']);
  });

  it('adds a second credential, lists them and sessions, exports the wallet and revokes with real stamps', async () => {
    const w = await walletWithSession();
    expect(w.session).toMatchObject({ accountId: w.accountId, authMethodId: w.credential.id, type: 'EMAIL_OTP' });
    const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ iss: 'https://issuer.test', sub: 's' })).toString('base64url');
    await h.setWallet(platformId, { oidcIssuers: [{ issuer: 'https://issuer.test', jwksUri: 'http://127.0.0.1:9/', audiences: ['a'] }] });
    const body = { accountId: w.accountId, type: 'OAUTH', oidcToken: `${header}.${payload}.sig` };
    const c1 = await call('POST', '/auth/credentials', body);
    expect(c1.statusCode, c1.body).toBe(202);
    // The credential flows' 202 names the type of the credential being added (reference AuthSignedRequestChallenge).
    expect(Object.keys(c1.json()).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId', 'type']);
    expect(c1.json().type).toBe('OAUTH');
    const c2 = await call('POST', '/auth/credentials', body, { 'service-wallet-signature': stamp(c1.json().payloadToSign, w.sessionKey), 'request-id': c1.json().requestId, 'idempotency-key': 'k-' + w.accountId });
    expect(c2.statusCode, c2.body).toBe(201);
    const oauth = c2.json();
    expect((await call('GET', `/auth/credentials?accountId=${w.accountId}`)).json().data.map((m: { id: string }) => m.id)).toEqual([w.credential.id, oauth.id]);
    const sessions = (await call('GET', `/auth/sessions?accountId=${w.accountId}`)).json().data;
    expect(sessions).toHaveLength(1);
    expect(sessions[0].encryptedSessionSigningKey).toBeUndefined();

    const client = generateKeyPair();
    const e1 = await call('POST', `/internal-accounts/${w.accountId}/export`, { clientPublicKey: client.publicKey });
    expect(e1.statusCode, e1.body).toBe(202);
    expect(e1.json().type, 'an export is not a credential flow').toBeUndefined();
    const e2 = await call('POST', `/internal-accounts/${w.accountId}/export`, { clientPublicKey: client.publicKey }, { 'service-wallet-signature': stamp(e1.json().payloadToSign, w.sessionKey), 'request-id': e1.json().requestId });
    expect(e2.statusCode, e2.body).toBe(200);
    expect(e2.json().id).toBe(w.accountId);
    expect((await decryptExport(e2.json().encryptedWalletCredentials, client.privateKey)).split(' ')).toHaveLength(24);
    const badKey = await call('POST', `/internal-accounts/${w.accountId}/export`, { clientPublicKey: '04' + '00'.repeat(64) });
    expect([badKey.statusCode, badKey.json().code]).toEqual([400, 'INVALID_CLIENT_PUBLIC_KEY']);

    const o = await call('POST', `/auth/credentials/${oauth.id}/verify`, { type: 'OAUTH', oidcToken: 'sandbox-valid-oidc-token', clientPublicKey: client.publicKey });
    expect(o.statusCode, o.body).toBe(200);
    const d1 = await call('DELETE', `/auth/credentials/${w.credential.id}`);
    expect(d1.statusCode).toBe(202);
    expect(d1.json().type, 'the type of the credential being revoked').toBe('EMAIL_OTP');
    const same = await call('DELETE', `/auth/credentials/${w.credential.id}`, undefined, { 'service-wallet-signature': stamp(d1.json().payloadToSign, w.sessionKey), 'request-id': d1.json().requestId });
    expect([same.statusCode, same.json().code]).toEqual([401, 'WALLET_SIGNATURE_SAME_CREDENTIAL']);
    const oauthKey = await decryptSessionBundle(o.json().encryptedSessionSigningKey, client.privateKey);
    const d2 = await call('DELETE', `/auth/credentials/${w.credential.id}`, undefined, { 'service-wallet-signature': stamp(d1.json().payloadToSign, oauthKey), 'request-id': d1.json().requestId });
    expect(d2.statusCode, d2.body).toBe(204);
    const last = await call('DELETE', `/auth/credentials/${oauth.id}`);
    expect([last.statusCode, last.json().code]).toEqual([400, 'LAST_CREDENTIAL']);
    const s1 = await call('DELETE', `/auth/sessions/${o.json().id}`);
    expect(s1.statusCode).toBe(202);
    expect(s1.json().type, 'the type of the credential that issued the session').toBe('OAUTH');
    const s2 = await call('DELETE', `/auth/sessions/${o.json().id}`, undefined, { 'service-wallet-signature': stamp(s1.json().payloadToSign, oauthKey), 'request-id': s1.json().requestId });
    expect(s2.statusCode, s2.body).toBe(204);
    expect((await call('GET', `/auth/sessions?accountId=${w.accountId}`)).json().data).toEqual([]);
  });

  it('PATCH /internal-accounts/{id} (privateEnabled) goes through the signed retry', async () => {
    const w = await walletWithSession();
    const empty = await call('PATCH', `/internal-accounts/${w.accountId}`, {});
    expect([empty.statusCode, empty.json().details.errors[0].field]).toEqual([400, 'privateEnabled']);
    const s1 = await call('PATCH', `/internal-accounts/${w.accountId}`, { privateEnabled: true });
    expect(s1.statusCode, s1.body).toBe(202);
    expect(JSON.parse(s1.json().payloadToSign).action).toBe('UPDATE_INTERNAL_ACCOUNT');
    const tampered = await call('PATCH', `/internal-accounts/${w.accountId}`, { privateEnabled: false }, { 'service-wallet-signature': stamp(s1.json().payloadToSign, w.sessionKey), 'request-id': s1.json().requestId });
    expect([tampered.statusCode, tampered.json().code]).toEqual([401, 'SIGNED_BODY_MISMATCH']);
    const unchanged = await h.accounts!.getInternalAccount({ platformId, accountId: w.accountId });
    expect(unchanged.account!.privateEnabled).toBe(false);
    const s2 = await call('PATCH', `/internal-accounts/${w.accountId}`, { privateEnabled: true }, { 'service-wallet-signature': stamp(s1.json().payloadToSign, w.sessionKey), 'request-id': s1.json().requestId });
    expect(s2.statusCode, s2.body).toBe(200);
    expect(s2.json()).toMatchObject({ id: w.accountId, type: 'EMBEDDED_WALLET', privateEnabled: true });
  });

  it('POST /auth/sessions/{id}/refresh: 202 SignedRequestChallenge, then 201 AuthSession sealed to clientPublicKey; 400, 401, 404', async () => {
    const w = await walletWithSession();
    const client = generateKeyPair();
    const path = `/auth/sessions/${w.session.id}/refresh`;
    const missing = await call('POST', path, {});
    expect([missing.statusCode, missing.json().code, missing.json().details.errors[0].field]).toEqual([400, 'INVALID_INPUT', 'clientPublicKey']);
    const badKey = await call('POST', path, { clientPublicKey: '04' + '00'.repeat(64) });
    expect([badKey.statusCode, badKey.json().code]).toEqual([400, 'INVALID_CLIENT_PUBLIC_KEY']);
    const badId = await call('POST', '/auth/sessions/Session:nope/refresh', { clientPublicKey: client.publicKey });
    expect([badId.statusCode, badId.json().details.errors[0].field]).toEqual([400, 'id']);
    const foreign = await gw.app.inject({ method: 'POST', url: `${API}${path}`, headers: { authorization: otherAuth }, payload: { clientPublicKey: client.publicKey } });
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'SESSION_NOT_FOUND']);

    const r1 = await call('POST', path, { clientPublicKey: client.publicKey });
    expect(r1.statusCode, r1.body).toBe(202);
    expect(Object.keys(r1.json()).sort(), 'the reference SignedRequestChallenge: no type').toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    const headers = { 'service-wallet-signature': stamp(r1.json().payloadToSign, w.sessionKey), 'request-id': r1.json().requestId };
    const swapped = await call('POST', path, { clientPublicKey: generateKeyPair().publicKey }, headers);
    expect([swapped.statusCode, swapped.json().code]).toEqual([401, 'SIGNED_BODY_MISMATCH']);
    const r2 = await call('POST', path, { clientPublicKey: client.publicKey }, headers);
    expect(r2.statusCode, r2.body).toBe(201);
    expect(Object.keys(r2.json()).sort()).toEqual(['accountId', 'authMethodId', 'createdAt', 'encryptedSessionSigningKey', 'expiresAt', 'id', 'nickname', 'type', 'updatedAt']);
    expect(r2.json()).toMatchObject({ accountId: w.accountId, authMethodId: w.credential.id, type: 'EMAIL_OTP' });
    expect(r2.json().id).not.toBe(w.session.id);
    const newKey = await decryptSessionBundle(r2.json().encryptedSessionSigningKey, client.privateKey);
    const replay = await call('POST', path, { clientPublicKey: client.publicKey }, headers);
    expect([replay.statusCode, replay.json().code]).toEqual([401, 'SIGNING_REQUEST_REUSED']);
    // The new session signs.
    const s1 = await call('DELETE', `/auth/sessions/${w.session.id}`);
    const s2 = await call('DELETE', `/auth/sessions/${w.session.id}`, undefined, { 'service-wallet-signature': stamp(s1.json().payloadToSign, newKey), 'request-id': s1.json().requestId });
    expect(s2.statusCode, s2.body).toBe(204);
    const gone = await call('POST', path, { clientPublicKey: client.publicKey });
    expect([gone.statusCode, gone.json().code]).toEqual([401, 'SESSION_NOT_ACTIVE']);
    expect((await call('GET', `/auth/sessions?accountId=${w.accountId}`)).json().data.map((x: { id: string }) => x.id)).toEqual([r2.json().id]);
  });

  it('GET /auth/sessions requires a valid accountId; PATCH /auth/credentials/{id} to a taken address is 409 EMAIL_OTP_EMAIL_ALREADY_EXISTS', async () => {
    for (const q of ['', '?accountId=nope', '?accountId=InternalAccount:x']) {
      const r = await call('GET', `/auth/sessions${q}`);
      expect([r.statusCode, r.json().code, r.json().details.errors[0].field], q).toEqual([400, 'INVALID_INPUT', 'accountId']);
    }
    const a = await walletWithSession();
    const b = await walletWithSession();
    const taken = `taken-${Date.now()}@example.com`;
    const step1 = await call('PATCH', `/auth/credentials/${b.credential.id}`, { email: taken });
    await call('PATCH', `/auth/credentials/${b.credential.id}`, { email: taken }, { 'service-wallet-signature': stamp(step1.json().payloadToSign, b.sessionKey), 'request-id': step1.json().requestId });
    const r = await call('PATCH', `/auth/credentials/${a.credential.id}`, { email: taken.toUpperCase() });
    expect([r.statusCode, r.json().code], r.body).toEqual([409, 'EMAIL_OTP_EMAIL_ALREADY_EXISTS']);
    expect((await call('GET', `/auth/credentials?accountId=${a.accountId}`)).json().data[0].nickname).toBe(EMAIL);
  });

  it('PASSKEY /challenge requires clientPublicKey; OAUTH has no challenge step', async () => {
    const w = await walletWithSession();
    const r = await call('POST', `/auth/credentials/${w.credential.id}/challenge`);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().id).toBe(w.credential.id);
    const v = await call('POST', `/auth/credentials/${w.credential.id}/verify`, { type: 'EMAIL_OTP', otp: '000000' });
    expect([v.statusCode, v.json().code]).toEqual([400, 'INVALID_CLIENT_PUBLIC_KEY']);
  });
});
