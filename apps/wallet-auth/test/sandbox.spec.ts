import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { walletAuth as pb } from '@sluice/contracts';
import { decryptSessionBundle, generateKeyPair, keyPairFromPrivateKey } from '@sluice/wallet-client';
import { newAccountId, rejects, startWalletAuth, type Harness } from './support/harness.js';
import { SoftAuthenticator } from './support/soft-authenticator.js';

const T = pb.AuthMethodType;
const ISSUER = 'https://issuer.sandbox.test';

/** An unsigned-looking JWT (sandbox create parses it but bypasses the signature). */
async function jwt(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode('k'.repeat(32)));
}

describe('wallet-auth sandbox magic values', () => {
  let h: Harness;
  let platformId: string;
  const authn = new SoftAuthenticator('wallet.sandbox.test', 'https://wallet.sandbox.test');

  beforeAll(async () => {
    h = await startWalletAuth('sbx');
    platformId = (await h.platform('SANDBOX', {
      oidcIssuers: [{ issuer: ISSUER, jwksUri: 'http://127.0.0.1:9/jwks', audiences: ['app'] }],
      passkey: { rpId: authn.rpId, origins: [authn.origin] },
    })).id;
  }, 60_000);
  afterAll(async () => h?.stop());

  async function emailOtpAccount() {
    const accountId = newAccountId();
    const r = await h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email: 'holder@example.com', signed: { bodyJson: '{}' } });
    return { accountId, method: r.authMethod! };
  }

  it('registers the first credential without a signature and verifies OTP 000000 into a usable session', async () => {
    const { accountId, method } = await emailOtpAccount();
    expect(method).toMatchObject({ accountId, type: T.EMAIL_OTP, nickname: 'holder@example.com' });
    expect(method.id).toMatch(/^AuthMethod:/);
    expect(method.credentialId).toBeUndefined();
    const key = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId, credentialId: method.id, type: T.EMAIL_OTP, otp: '000000', clientPublicKey: key.publicKey });
    expect(session!.id).toMatch(/^Session:/);
    const sessionKey = await decryptSessionBundle(session!.encryptedSessionSigningKey!, key.privateKey);
    expect(keyPairFromPrivateKey(sessionKey).publicKeyCompressed).toBe(session!.publicKey);
    expect(session!.expiresAt!.getTime() - h.clock.now().getTime()).toBe(15 * 60_000);
    const { sessions } = await h.client.listSessions({ platformId, accountId });
    expect(sessions.map((s) => s.id)).toEqual([session!.id]);
    expect(sessions[0]!.encryptedSessionSigningKey).toBeUndefined();
  });

  it('refuses a wrong OTP with reason "Invalid OTP code" and issues no session', async () => {
    const { accountId, method } = await emailOtpAccount();
    const e = await rejects(
      h.client.verifyCredential({ platformId, credentialId: method.id, type: T.EMAIL_OTP, otp: '123456', clientPublicKey: generateKeyPair().publicKey }),
      'UNAUTHORIZED',
    );
    expect(e.details?.reason).toBe('Invalid OTP code');
    expect((await h.client.listSessions({ platformId, accountId })).sessions).toEqual([]);
  });

  it('asks for a signature before a second credential; the sandbox header value creates it, a wrong one is refused', async () => {
    const { accountId } = await emailOtpAccount();
    const token = await jwt({ iss: ISSUER, sub: 'user-1', aud: 'app', email: 'holder@gmail.test' });
    const body = JSON.stringify({ type: 'OAUTH', accountId, oidcToken: token });
    const first = await h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: token, signed: { bodyJson: body } });
    expect(first.authMethod).toBeUndefined();
    const ch = first.signingChallenge!;
    expect(ch.requestId).toMatch(/^Request:/);
    expect(ch.expiresAt!.getTime() - h.clock.now().getTime()).toBe(5 * 60_000);
    expect(JSON.parse(ch.payloadToSign)).toMatchObject({ accountId, action: 'ADD_CREDENTIAL', requestId: ch.requestId });

    const bad = await rejects(
      h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: token, signed: { bodyJson: body, signature: 'nope', requestId: ch.requestId } }),
      'UNAUTHORIZED',
    );
    expect(bad.details?.reason).toBe('Invalid Service-Wallet-Signature');
    expect((await h.client.listCredentials({ platformId, accountId })).authMethods).toHaveLength(1);

    const ok = await h.client.createCredential({
      platformId, accountId, type: T.OAUTH, oidcToken: token,
      signed: { bodyJson: body, signature: 'sandbox-valid-signature', requestId: ch.requestId },
    });
    expect(ok.authMethod).toMatchObject({ type: T.OAUTH, nickname: 'holder@gmail.test', accountId });
    // single use, even with the magic value
    await rejects(
      h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: token, signed: { bodyJson: body, signature: 'sandbox-valid-signature', requestId: ch.requestId } }),
      'SIGNING_REQUEST_REUSED',
    );
    // OAUTH verify: the literal token only
    const key = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId, credentialId: ok.authMethod!.id, type: T.OAUTH, oidcToken: 'sandbox-valid-oidc-token', clientPublicKey: key.publicKey });
    expect(session!.accountId).toBe(accountId);
    const e = await rejects(
      h.client.verifyCredential({ platformId, credentialId: ok.authMethod!.id, type: T.OAUTH, oidcToken: token, clientPublicKey: key.publicKey }),
      'UNAUTHORIZED',
    );
    expect(e.details?.reason).toBe('Invalid OIDC token');
  });

  it('parses OIDC tokens on create even in sandbox: not a JWT → 400, unknown issuer → 401', async () => {
    const accountId = newAccountId();
    const e = await rejects(h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: 'not-a-jwt', signed: { bodyJson: '' } }), 'INVALID_INPUT');
    expect(e.details?.errors).toEqual([{ field: 'oidcToken', message: expect.stringContaining('JWT') }]);
    const u = await rejects(
      h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: await jwt({ iss: 'https://evil.test', sub: 'x' }), signed: { bodyJson: '' } }),
      'UNAUTHORIZED',
    );
    expect(u.details?.reason).toBe('Invalid OIDC token');
    expect((await h.client.listCredentials({ platformId, accountId })).authMethods).toEqual([]);
  });

  it('lets only one of two racing first registrations skip the signature', async () => {
    const accountId = newAccountId();
    const token = await jwt({ iss: ISSUER, sub: 'race', aud: 'app' });
    const results = await Promise.allSettled([
      h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email: 'race@example.com', signed: { bodyJson: '' } }),
      h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: token, signed: { bodyJson: '' } }),
    ]);
    const created = results.filter((r) => r.status === 'fulfilled' && r.value.authMethod);
    expect(created.length).toBe(1);
    expect((await h.client.listCredentials({ platformId, accountId })).authMethods).toHaveLength(1);
  });

  it('allows one EMAIL_OTP per account (database-enforced) and refuses bad input', async () => {
    const { accountId } = await emailOtpAccount();
    await rejects(
      h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email: 'other@example.com', signed: { bodyJson: '{}' } }),
      'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS',
    );
    await expect(
      h.sql.query(`INSERT INTO auth_method (id, platform_id, account_id, type, nickname, email, created_at, updated_at) VALUES ('x', $1, $2, 'EMAIL_OTP', 'n', 'a@b.c', now(), now())`, [platformId, accountId]),
    ).rejects.toThrow(/auth_method_one_email_otp/);
    await rejects(h.client.createCredential({ platformId, accountId: 'acct-1', type: T.EMAIL_OTP, email: 'a@b.test', signed: { bodyJson: '' } }), 'INVALID_INPUT');
    await rejects(h.client.createCredential({ platformId, accountId: newAccountId(), type: T.EMAIL_OTP, email: 'not-an-email', signed: { bodyJson: '' } }), 'INVALID_INPUT');
    const k = await rejects(
      h.client.verifyCredential({ platformId, credentialId: (await h.client.listCredentials({ platformId, accountId })).authMethods[0]!.id, type: T.EMAIL_OTP, otp: '000000', clientPublicKey: '04' + 'ab'.repeat(64) }),
      'INVALID_CLIENT_PUBLIC_KEY',
    );
    expect(k.details?.errors).toEqual([{ field: 'clientPublicKey', message: expect.any(String) }]);
  });

  it('PASSKEY: registration, /challenge bound to clientPublicKey, magic assertion signature once', async () => {
    const { accountId } = await emailOtpAccount();
    const reg = authn.register('integrator-challenge');
    const body = { type: 'PASSKEY', accountId, nickname: 'My phone', challenge: 'integrator-challenge', attestation: reg };
    const ch = (await h.client.createCredential({ platformId, accountId, type: T.PASSKEY, nickname: 'My phone', challenge: 'integrator-challenge', attestation: reg, signed: { bodyJson: JSON.stringify(body) } })).signingChallenge!;
    const created = await h.client.createCredential({
      platformId, accountId, type: T.PASSKEY, nickname: 'My phone', challenge: 'integrator-challenge', attestation: reg,
      signed: { bodyJson: JSON.stringify(body), signature: 'sandbox-valid-signature', requestId: ch.requestId },
    });
    const pk = created.authMethod!;
    expect(pk).toMatchObject({ type: T.PASSKEY, nickname: 'My phone', credentialId: authn.credentialIdB64 });

    await rejects(h.client.challengeCredential({ platformId, credentialId: pk.id }), 'INVALID_CLIENT_PUBLIC_KEY');
    const key = generateKeyPair();
    const c = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: key.publicKey });
    expect(c.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const assertion = { ...authn.assert(c.challenge!), signature: 'wrong' };
    const e = await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion, requestId: c.requestId }), 'UNAUTHORIZED');
    expect(e.details?.reason).toBe('Invalid passkey signature');
    // the challenge was consumed by that attempt
    const c2 = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: key.publicKey });
    const good = { ...authn.assert(c2.challenge!), signature: 'sandbox-valid-passkey-signature' };
    const { session } = await h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: good, requestId: c2.requestId });
    expect(await decryptSessionBundle(session!.encryptedSessionSigningKey!, key.privateKey)).toMatch(/^[0-9a-f]{64}$/);
    const again = await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: good, requestId: c2.requestId }), 'UNAUTHORIZED');
    expect(again.details?.reason).toBe('Invalid passkey signature');
    await rejects(
      h.client.createCredential({ platformId, accountId, type: T.PASSKEY, nickname: 'n', challenge: 'x', attestation: { ...reg, attestationObject: 'AAAA' }, signed: { bodyJson: '' } }),
      'INVALID_ATTESTATION',
    );
  });
});
