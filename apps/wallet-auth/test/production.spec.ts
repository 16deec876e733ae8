import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { SignJWT, exportJWK, generateKeyPair as joseKeyPair, type CryptoKey } from 'jose';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { decryptCredentialBundle } from '@turnkey/crypto';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { walletAuth as pb } from '@sluice/contracts';
import { isDomainError } from '@sluice/core';
import { decryptExport, decryptSessionBundle, generateKeyPair, keyPairFromPrivateKey, stamp } from '@sluice/wallet-client';
import { p256 } from '@noble/curves/p256';
import { bytesToHex } from '@noble/hashes/utils';
import { newAccountId, rejects, startWalletAuth, type Harness } from './support/harness.js';
import { SoftAuthenticator } from './support/soft-authenticator.js';

const T = pb.AuthMethodType;
const ISSUER = 'https://accounts.issuer.test';
const AUD = 'client-123';

describe('wallet-auth production: real OTP email, OIDC, WebAuthn and stamps', () => {
  let h: Harness;
  let platformId: string;
  let smtp: SMTPServer;
  const mails: { to: string; text: string }[] = [];
  let jwks: Server;
  let signingKey: CryptoKey;
  const exportKey = bytesToHex(p256.utils.randomPrivateKey());
  const authn = new SoftAuthenticator('wallet.example.com', 'https://wallet.example.com');

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, cb) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), text: raw });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    const smtpPort = (smtp.server.address() as AddressInfo).port;

    const kp = await joseKeyPair('ES256');
    signingKey = kp.privateKey;
    const jwk = { ...(await exportJWK(kp.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', () => r()));
    const jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;

    h = await startWalletAuth('prod', { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, WALLET_EXPORT_SIGNING_KEY: exportKey });
    platformId = (await h.platform('PRODUCTION', {
      appName: 'Acme Wallet',
      otpLength: 8,
      oidcIssuers: [{ issuer: ISSUER, jwksUri, audiences: [AUD] }],
      passkey: { rpId: authn.rpId, origins: [authn.origin] },
    })).id;
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    await new Promise<void>((r) => smtp?.close(() => r()));
    await new Promise<void>((r) => jwks?.close(() => r()));
  });

  const lastCode = (to: string) => {
    const m = [...mails].reverse().find((x) => x.to === to);
    return /verification code is (\d+)/.exec(m?.text.replace(/=\r?\n/g, '') ?? '')?.[1];
  };

  async function oidcToken(claims: Record<string, unknown> = {}, iatOffsetS = 0, aud = AUD) {
    const iat = Math.floor(h.clock.now().getTime() / 1000) + iatOffsetS;
    return new SignJWT({ email: 'holder@mail.test', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setSubject((claims.sub as string) ?? 'sub-1')
      .setAudience(aud)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 600)
      .sign(signingKey);
  }

  /** An account with a verified EMAIL_OTP credential and a session key (decrypted client-side). */
  async function accountWithSession(email = `h${Math.random().toString(36).slice(2)}@mail.test`) {
    const accountId = newAccountId();
    const { authMethod } = await h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email, signed: { bodyJson: '' } });
    const code = lastCode(email)!;
    expect(code).toMatch(/^\d{8}$/);
    const client = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: code, clientPublicKey: client.publicKey });
    const sessionKey = await decryptSessionBundle(session!.encryptedSessionSigningKey!, client.privateKey);
    return { accountId, email, credential: authMethod!, session: session!, sessionKey };
  }

  async function addOauth(accountId: string, sessionKey: string, sub = 'sub-1') {
    const token = await oidcToken({ sub });
    const bodyJson = JSON.stringify({ accountId, type: 'OAUTH', oidcToken: token });
    const ch = (await h.client.createCredential({ platformId, accountId, type: T.OAUTH, oidcToken: token, signed: { bodyJson } })).signingChallenge!;
    const r = await h.client.createCredential({
      platformId, accountId, type: T.OAUTH, oidcToken: token,
      signed: { bodyJson, signature: stamp(ch.payloadToSign, sessionKey), requestId: ch.requestId },
    });
    return r.authMethod!;
  }

  it('emails a random OTP over SMTP; a wrong code counts an attempt; the emailed code opens a session once', async () => {
    const accountId = newAccountId();
    const { authMethod } = await h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email: 'otp@mail.test', signed: { bodyJson: '' } });
    const code = lastCode('otp@mail.test')!;
    expect(code).toMatch(/^\d{8}$/);
    const [{ rows }] = [await h.sql.query('SELECT code_hash FROM otp_challenge WHERE auth_method_id = $1', [authMethod!.id])];
    expect(rows[0].code_hash).not.toContain(code);
    const key = generateKeyPair();
    const sandboxCode = await rejects(h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: '000000', clientPublicKey: key.publicKey }), 'UNAUTHORIZED');
    expect(sandboxCode.details?.reason).toBe('Invalid OTP code');
    const { session } = await h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: code, clientPublicKey: key.publicKey });
    // Turnkey's client opens our bundle
    expect(decryptCredentialBundle(session!.encryptedSessionSigningKey!, key.privateKey)).toBe(await decryptSessionBundle(session!.encryptedSessionSigningKey!, key.privateKey));
    await rejects(h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: code, clientPublicKey: key.publicKey }), 'UNAUTHORIZED');
  });

  it('locks the OTP after 5 wrong attempts and expires it after 10 minutes', async () => {
    const accountId = newAccountId();
    const { authMethod } = await h.client.createCredential({ platformId, accountId, type: T.EMAIL_OTP, email: 'lock@mail.test', signed: { bodyJson: '' } });
    const code = lastCode('lock@mail.test')!;
    const key = generateKeyPair().publicKey;
    const wrong = code === '00000000' ? '11111111' : '00000000';
    for (let i = 0; i < 5; i++) await rejects(h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: wrong, clientPublicKey: key }), 'UNAUTHORIZED');
    await rejects(h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: code, clientPublicKey: key }), 'UNAUTHORIZED');
    await rejects(h.client.challengeCredential({ platformId, credentialId: authMethod!.id }), 'OTP_RESEND_TOO_SOON');
    h.clock.advance(30_000);
    await h.client.challengeCredential({ platformId, credentialId: authMethod!.id });
    const fresh = lastCode('lock@mail.test')!;
    expect(fresh).toMatch(/^\d{8}$/);
    h.clock.advance(10 * 60_000 + 1);
    await rejects(h.client.verifyCredential({ platformId, credentialId: authMethod!.id, type: T.EMAIL_OTP, otp: fresh, clientPublicKey: key }), 'UNAUTHORIZED');
    h.clock.set(Date.now());
  });

  it('accepts a real stamp on the signed retry and refuses the sandbox value, replays, tampered bodies and expired requests', async () => {
    const a = await accountWithSession();
    const token = await oidcToken({ sub: 'sub-replay' });
    const bodyJson = JSON.stringify({ accountId: a.accountId, type: 'OAUTH', oidcToken: token });
    const req = { platformId, accountId: a.accountId, type: T.OAUTH, oidcToken: token };
    const ch = (await h.client.createCredential({ ...req, signed: { bodyJson } })).signingChallenge!;
    const sandbox = await rejects(h.client.createCredential({ ...req, signed: { bodyJson, signature: 'sandbox-valid-signature', requestId: ch.requestId } }), 'WALLET_SIGNATURE_MALFORMED');
    expect(sandbox.details?.reason).toBe('Invalid Service-Wallet-Signature');
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson, requestId: ch.requestId } }), 'WALLET_SIGNATURE_MISSING');
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson, signature: stamp(ch.payloadToSign, a.sessionKey) } }), 'SIGNING_REQUEST_ID_MISSING');
    const tampered = JSON.stringify({ accountId: a.accountId, type: 'OAUTH', oidcToken: token, extra: 1 });
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson: tampered, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } }), 'SIGNED_BODY_MISMATCH');
    const other = generateKeyPair().privateKey;
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson, signature: stamp(ch.payloadToSign, other), requestId: ch.requestId } }), 'WALLET_SESSION_NOT_ACTIVE');
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson, signature: stamp(ch.payloadToSign + ' ', a.sessionKey), requestId: ch.requestId } }), 'WALLET_SIGNATURE_INVALID');
    // key order and whitespace of the retry body do not matter; Turnkey's stamper is accepted
    const reordered = JSON.stringify({ oidcToken: token, type: 'OAUTH', accountId: a.accountId }, null, 2);
    const pub = keyPairFromPrivateKey(a.sessionKey).publicKeyCompressed;
    const tk = await new ApiKeyStamper({ apiPublicKey: pub, apiPrivateKey: a.sessionKey, runtimeOverride: 'purejs' }).stamp(ch.payloadToSign);
    const created = await h.client.createCredential({ ...req, signed: { bodyJson: reordered, signature: tk.stampHeaderValue, requestId: ch.requestId } });
    expect(created.authMethod).toMatchObject({ type: T.OAUTH, nickname: 'holder@mail.test' });
    await rejects(h.client.createCredential({ ...req, signed: { bodyJson, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } }), 'SIGNING_REQUEST_REUSED');
    const { rows } = await h.sql.query('SELECT count(*)::int AS n FROM auth_method WHERE account_id = $1', [a.accountId]);
    expect(rows[0].n).toBe(2);

    const ch2 = (await h.client.updateCredential({ platformId, credentialId: a.credential.id, email: 'new@mail.test', signed: { bodyJson: '{"email":"new@mail.test"}' } })).signingChallenge!;
    h.clock.advance(5 * 60_000);
    await rejects(
      h.client.updateCredential({ platformId, credentialId: a.credential.id, email: 'new@mail.test', signed: { bodyJson: '{"email":"new@mail.test"}', signature: stamp(ch2.payloadToSign, a.sessionKey), requestId: ch2.requestId } }),
      'SIGNING_REQUEST_EXPIRED',
    );
    h.clock.set(Date.now());
  });

  it('refuses a stamp from another account, and a request id issued for another account', async () => {
    const a = await accountWithSession();
    const b = await accountWithSession();
    const body = '{"email":"x@mail.test"}';
    const ch = (await h.client.updateCredential({ platformId, credentialId: a.credential.id, email: 'x@mail.test', signed: { bodyJson: body } })).signingChallenge!;
    await rejects(
      h.client.updateCredential({ platformId, credentialId: a.credential.id, email: 'x@mail.test', signed: { bodyJson: body, signature: stamp(ch.payloadToSign, b.sessionKey), requestId: ch.requestId } }),
      'WALLET_SIGNATURE_WRONG_ACCOUNT',
    );
    await rejects(
      h.client.updateCredential({ platformId, credentialId: b.credential.id, email: 'x@mail.test', signed: { bodyJson: body, signature: stamp(ch.payloadToSign, b.sessionKey), requestId: ch.requestId } }),
      'SIGNING_REQUEST_MISMATCH',
    );
    const ok = await h.client.updateCredential({ platformId, credentialId: a.credential.id, email: 'x@mail.test', signed: { bodyJson: body, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } });
    expect(ok.authMethod).toMatchObject({ nickname: 'x@mail.test' });
  });

  it('lets exactly one of 10 racing retries with one requestId succeed', async () => {
    const a = await accountWithSession();
    const ch = (await h.client.exportWallet({ platformId, accountId: a.accountId, clientPublicKey: generateKeyPair().publicKey, signed: { bodyJson: '{}' } })).signingChallenge!;
    const body = '{}';
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        h.client.exportWallet({ platformId, accountId: a.accountId, clientPublicKey: generateKeyPair().publicKey, signed: { bodyJson: body, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(isDomainError(r.reason) && r.reason.code).toBe('SIGNING_REQUEST_REUSED');
  });

  it('exports the wallet mnemonic encrypted to the client key, signed by the service export key', async () => {
    const a = await accountWithSession();
    const client = generateKeyPair();
    const body = JSON.stringify({ clientPublicKey: client.publicKey });
    const ch = (await h.client.exportWallet({ platformId, accountId: a.accountId, clientPublicKey: client.publicKey, signed: { bodyJson: body } })).signingChallenge!;
    const r = await h.client.exportWallet({ platformId, accountId: a.accountId, clientPublicKey: client.publicKey, signed: { bodyJson: body, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } });
    const signer = bytesToHex(p256.getPublicKey(Buffer.from(exportKey, 'hex'), false));
    const mnemonic = await decryptExport(r.encryptedWalletCredentials!, client.privateKey, { signerPublicKey: signer });
    expect(validateMnemonic(mnemonic, wordlist)).toBe(true);
    const { rows } = await h.sql.query('SELECT sealed_mnemonic FROM wallet_key WHERE account_id = $1', [a.accountId]);
    expect(rows[0].sealed_mnemonic).not.toContain(mnemonic.split(' ')[0]! + ' ');
    await rejects(h.client.exportWallet({ platformId, accountId: a.accountId, clientPublicKey: 'zz', signed: { bodyJson: '{}' } }), 'INVALID_CLIENT_PUBLIC_KEY');
  });

  it('revokes a credential only with a session of another credential, never the last one; sessions revoke by signed retry', async () => {
    const a = await accountWithSession();
    await rejects(h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '' } }), 'LAST_CREDENTIAL');
    const oauth = await addOauth(a.accountId, a.sessionKey, 'sub-revoke');
    const ch = (await h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '' } })).signingChallenge!;
    await rejects(
      h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '', signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } }),
      'WALLET_SIGNATURE_SAME_CREDENTIAL',
    );
    const client = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId, credentialId: oauth.id, type: T.OAUTH, oidcToken: await oidcToken({ sub: 'sub-revoke' }), clientPublicKey: client.publicKey });
    const oauthKey = await decryptSessionBundle(session!.encryptedSessionSigningKey!, client.privateKey);
    await h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '', signature: stamp(ch.payloadToSign, oauthKey), requestId: ch.requestId } });
    const { authMethods } = await h.client.listCredentials({ platformId, accountId: a.accountId });
    expect(authMethods.map((m) => m.id)).toEqual([oauth.id]);
    // the revoked credential's sessions are gone
    const { sessions } = await h.client.listSessions({ platformId, accountId: a.accountId });
    expect(sessions.map((s) => s.id)).toEqual([session!.id]);
    const ch2 = (await h.client.revokeSession({ platformId, sessionId: session!.id, signed: { bodyJson: '' } })).signingChallenge!;
    await rejects(h.client.revokeSession({ platformId, sessionId: session!.id, signed: { bodyJson: '', signature: stamp(ch2.payloadToSign, a.sessionKey), requestId: ch2.requestId } }), 'WALLET_SESSION_NOT_ACTIVE');
    const ch3 = (await h.client.revokeSession({ platformId, sessionId: session!.id, signed: { bodyJson: '' } })).signingChallenge!;
    await h.client.revokeSession({ platformId, sessionId: session!.id, signed: { bodyJson: '', signature: stamp(ch3.payloadToSign, oauthKey), requestId: ch3.requestId } });
    expect((await h.client.listSessions({ platformId, accountId: a.accountId })).sessions).toEqual([]);
  });

  it('OAUTH: verifies against the issuer JWKS; stale iat, wrong audience, forged signature and replayed tokens fail', async () => {
    const a = await accountWithSession();
    const oauth = await addOauth(a.accountId, a.sessionKey, 'sub-o');
    const pk = generateKeyPair().publicKey;
    const verify = (oidcToken: string) => h.client.verifyCredential({ platformId, credentialId: oauth.id, type: T.OAUTH, oidcToken, clientPublicKey: pk });
    expect((await rejects(verify(await oidcToken({ sub: 'sub-o' }, -61)), 'UNAUTHORIZED')).details).toMatchObject({ reason: 'Invalid OIDC token', problem: 'stale_iat' });
    expect((await rejects(verify(await oidcToken({ sub: 'sub-o' }, 0, 'other-app')), 'UNAUTHORIZED')).details?.problem).toBe('claim:aud');
    expect((await rejects(verify('sandbox-valid-oidc-token'), 'INVALID_INPUT')).details?.errors).toBeDefined();
    const other = await joseKeyPair('ES256');
    const forged = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setSubject('sub-o').setAudience(AUD).setIssuedAt().setExpirationTime('5m').sign(other.privateKey);
    expect((await rejects(verify(forged), 'UNAUTHORIZED')).details?.problem).toBe('signature');
    expect((await rejects(verify(await oidcToken({ sub: 'someone-else' })), 'UNAUTHORIZED')).details?.problem).toBe('subject');
    const fresh = await oidcToken({ sub: 'sub-o', nonce: 'n1' });
    const client = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId, credentialId: oauth.id, type: T.OAUTH, oidcToken: fresh, clientPublicKey: client.publicKey });
    expect((await rejects(verify(fresh), 'UNAUTHORIZED')).details?.problem).toBe('replayed');
    // The OIDC login's session key: HPKE-sealed to this client's key only, the session's own key pair, and it signs.
    const oidcKey = await decryptSessionBundle(session!.encryptedSessionSigningKey!, client.privateKey);
    expect(keyPairFromPrivateKey(oidcKey).publicKeyCompressed).toBe(session!.publicKey);
    await expect(decryptSessionBundle(session!.encryptedSessionSigningKey!, generateKeyPair().privateKey)).rejects.toThrow();
    const ch = (await h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '' } })).signingChallenge!;
    await h.client.revokeCredential({ platformId, credentialId: a.credential.id, signed: { bodyJson: '', signature: stamp(ch.payloadToSign, oidcKey), requestId: ch.requestId } });
    expect((await h.client.listCredentials({ platformId, accountId: a.accountId })).authMethods.map((m) => m.id)).toEqual([oauth.id]);
  });

  it('PASSKEY: WebAuthn registration and assertion verified, counter stored and checked, challenge single use', async () => {
    const a = await accountWithSession();
    const reg = authn.register('backend-challenge-1');
    const base = { platformId, accountId: a.accountId, type: T.PASSKEY, nickname: 'Laptop', challenge: 'backend-challenge-1', attestation: reg };
    const bodyJson = JSON.stringify({ accountId: a.accountId, type: 'PASSKEY', nickname: 'Laptop', challenge: 'backend-challenge-1', attestation: reg });
    const wrongOrigin = new SoftAuthenticator(authn.rpId, 'https://evil.example.com').register('backend-challenge-1');
    await rejects(h.client.createCredential({ ...base, attestation: wrongOrigin, signed: { bodyJson: '' } }), 'INVALID_ATTESTATION');
    const ch = (await h.client.createCredential({ ...base, signed: { bodyJson } })).signingChallenge!;
    const pk = (await h.client.createCredential({ ...base, signed: { bodyJson, signature: stamp(ch.payloadToSign, a.sessionKey), requestId: ch.requestId } })).authMethod!;
    expect(pk.credentialId).toBe(authn.credentialIdB64);

    const client = generateKeyPair();
    const c = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: client.publicKey });
    const magic = await rejects(
      h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: { ...authn.assert(c.challenge!), signature: 'sandbox-valid-passkey-signature' }, requestId: c.requestId }),
      'UNAUTHORIZED',
    );
    expect(magic.details?.reason).toBe('Invalid passkey signature');
    const c2 = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: client.publicKey });
    await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: authn.assert(c2.challenge!) }), 'UNAUTHORIZED');
    const assertion = authn.assert(c2.challenge!);
    const { session } = await h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion, requestId: c2.requestId });
    expect(keyPairFromPrivateKey(await decryptSessionBundle(session!.encryptedSessionSigningKey!, client.privateKey)).publicKeyCompressed).toBe(session!.publicKey);
    const { rows } = await h.sql.query('SELECT webauthn_counter FROM auth_method WHERE id = $1', [pk.id]);
    expect(Number(rows[0].webauthn_counter)).toBe(authn.counter);
    await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion, requestId: c2.requestId }), 'UNAUTHORIZED');
    // a cloned authenticator replaying an old counter, and an assertion over another challenge
    const c3 = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: client.publicKey });
    await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: authn.assert(c3.challenge!, { counter: 1 }), requestId: c3.requestId }), 'UNAUTHORIZED');
    const c4 = await h.client.challengeCredential({ platformId, credentialId: pk.id, clientPublicKey: client.publicKey });
    await rejects(h.client.verifyCredential({ platformId, credentialId: pk.id, type: T.PASSKEY, assertion: authn.assert(c2.challenge!), requestId: c4.requestId }), 'UNAUTHORIZED');
  });
});
