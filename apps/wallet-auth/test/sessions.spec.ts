import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walletAuth as pb } from '@sluice/contracts';
import { decryptSessionBundle, generateKeyPair, keyPairFromPrivateKey, stamp } from '@sluice/wallet-client';
import { newAccountId, rejects, startWalletAuth, type Harness } from './support/harness.js';

// Session refresh (POST /auth/sessions/{id}/refresh) and the email-update conflict
// (409 EMAIL_OTP_EMAIL_ALREADY_EXISTS), against wallet-auth with the real identity service.
// The platforms are sandbox ones: they take real P-256 stamps as well as the magic value.

const T = pb.AuthMethodType;

describe('wallet-auth sessions: refresh without re-verification', () => {
  let h: Harness;
  let platformId: string;
  let otherPlatformId: string;

  beforeAll(async () => {
    h = await startWalletAuth('sess');
    platformId = (await h.platform('SANDBOX')).id;
    otherPlatformId = (await h.platform('SANDBOX')).id;
  }, 60_000);
  afterAll(async () => h?.stop());

  /** An account of `platform` with an EMAIL_OTP credential at `email` and a verified session (its key opened client-side). */
  async function wallet(email = `h${Math.random().toString(36).slice(2)}@mail.test`, platform = platformId) {
    const accountId = newAccountId();
    const { authMethod } = await h.client.createCredential({ platformId: platform, accountId, type: T.EMAIL_OTP, email, signed: { bodyJson: '' } });
    const session = await login(authMethod!.id, platform);
    return { accountId, credential: authMethod!, ...session };
  }

  /** A new session of the EMAIL_OTP credential (sandbox code). */
  async function login(credentialId: string, platform = platformId) {
    const client = generateKeyPair();
    const { session } = await h.client.verifyCredential({ platformId: platform, credentialId, type: T.EMAIL_OTP, otp: '000000', clientPublicKey: client.publicKey });
    return { session: session!, sessionKey: await decryptSessionBundle(session!.encryptedSessionSigningKey!, client.privateKey) };
  }

  const refresh = (sessionId: string, clientPublicKey: string, signed: Partial<pb.SignedRetry> = {}, platform = platformId) =>
    h.client.refreshSession({ platformId: platform, sessionId, clientPublicKey, signed: { bodyJson: JSON.stringify({ clientPublicKey }), ...signed } });

  const sessionIds = async (accountId: string) => (await h.client.listSessions({ platformId, accountId })).sessions.map((s) => s.id);

  it('202 then the stamp of the session itself issues a new session sealed to clientPublicKey, which signs; the old one stays until it expires', async () => {
    const w = await wallet();
    const client = generateKeyPair();
    const first = await refresh(w.session.id, client.publicKey);
    expect(first.session).toBeUndefined();
    const ch = first.signingChallenge!;
    expect(ch.requestId).toMatch(/^Request:/);
    expect(JSON.parse(ch.payloadToSign)).toMatchObject({ action: 'REFRESH_SESSION', accountId: w.accountId, requestId: ch.requestId });
    // The reference's refresh challenge is a plain SignedRequestChallenge: no credential type.
    expect(ch.credentialType).toBe(T.UNSPECIFIED);
    expect(await sessionIds(w.accountId), 'step 1 issues nothing').toEqual([w.session.id]);

    h.clock.advance(60_000);
    const done = await refresh(w.session.id, client.publicKey, { signature: stamp(ch.payloadToSign, w.sessionKey), requestId: ch.requestId });
    const s = done.session!;
    expect(s.id).toMatch(/^Session:/);
    expect(s.id).not.toBe(w.session.id);
    expect(s).toMatchObject({ accountId: w.accountId, credentialId: w.credential.id, authMethod: { id: w.credential.id, type: T.EMAIL_OTP } });
    expect(s.expiresAt!.getTime() - h.clock.now().getTime()).toBe(15 * 60_000);
    const newKey = await decryptSessionBundle(s.encryptedSessionSigningKey!, client.privateKey);
    expect(keyPairFromPrivateKey(newKey).publicKeyCompressed).toBe(s.publicKey);
    await expect(decryptSessionBundle(s.encryptedSessionSigningKey!, generateKeyPair().privateKey)).rejects.toThrow();
    expect(await sessionIds(w.accountId)).toEqual([w.session.id, s.id]);
    const listed = (await h.client.listSessions({ platformId, accountId: w.accountId })).sessions;
    expect(listed.every((x) => x.encryptedSessionSigningKey === undefined), 'the key is delivered once').toBe(true);

    // The new key signs (here: the revocation of the old session).
    const rv = (await h.client.revokeSession({ platformId, sessionId: w.session.id, signed: { bodyJson: '' } })).signingChallenge!;
    await h.client.revokeSession({ platformId, sessionId: w.session.id, signed: { bodyJson: '', signature: stamp(rv.payloadToSign, newKey), requestId: rv.requestId } });
    expect(await sessionIds(w.accountId)).toEqual([s.id]);
    h.clock.set(Date.now());
  });

  it('refuses a replayed request id, another clientPublicKey on the retry and a stamp of another session, issuing nothing', async () => {
    const w = await wallet();
    const second = await login(w.credential.id);
    const client = generateKeyPair();
    const ch = (await refresh(w.session.id, client.publicKey)).signingChallenge!;
    const signature = stamp(ch.payloadToSign, w.sessionKey);
    const swapped = generateKeyPair().publicKey;
    await rejects(refresh(w.session.id, swapped, { signature, requestId: ch.requestId }), 'SIGNED_BODY_MISMATCH');
    await rejects(refresh(w.session.id, client.publicKey, { signature: stamp(ch.payloadToSign, second.sessionKey), requestId: ch.requestId }), 'WALLET_SIGNATURE_WRONG_SESSION');
    await rejects(refresh(w.session.id, client.publicKey, { signature: stamp(ch.payloadToSign, generateKeyPair().privateKey), requestId: ch.requestId }), 'WALLET_SESSION_NOT_ACTIVE');
    await rejects(refresh(w.session.id, client.publicKey, { requestId: ch.requestId }), 'WALLET_SIGNATURE_MISSING');
    // A request id of another signed action does not refresh.
    const other = (await h.client.revokeSession({ platformId, sessionId: w.session.id, signed: { bodyJson: JSON.stringify({ clientPublicKey: client.publicKey }) } })).signingChallenge!;
    await rejects(refresh(w.session.id, client.publicKey, { signature: stamp(other.payloadToSign, w.sessionKey), requestId: other.requestId }), 'SIGNING_REQUEST_MISMATCH');
    expect(await sessionIds(w.accountId)).toEqual([w.session.id, second.session.id]);

    const done = await refresh(w.session.id, client.publicKey, { signature, requestId: ch.requestId });
    const replay = await rejects(refresh(w.session.id, client.publicKey, { signature, requestId: ch.requestId }), 'SIGNING_REQUEST_REUSED');
    expect(replay.details?.reason).toBe('Invalid Service-Wallet-Signature');
    expect(await sessionIds(w.accountId)).toEqual([w.session.id, second.session.id, done.session!.id]);
  });

  it('takes the sandbox magic value as the signature', async () => {
    const w = await wallet();
    const client = generateKeyPair();
    const ch = (await refresh(w.session.id, client.publicKey)).signingChallenge!;
    const done = await refresh(w.session.id, client.publicKey, { signature: 'sandbox-valid-signature', requestId: ch.requestId });
    expect(keyPairFromPrivateKey(await decryptSessionBundle(done.session!.encryptedSessionSigningKey!, client.privateKey)).publicKeyCompressed).toBe(done.session!.publicKey);
  });

  it('bad input is 400 naming the field; unknown and other platforms’ sessions are 404; nothing is issued', async () => {
    const w = await wallet();
    const key = generateKeyPair().publicKey;
    const badId = await rejects(refresh('Session:nope', key), 'INVALID_INPUT');
    expect(badId.details?.errors).toEqual([expect.objectContaining({ field: 'id' })]);
    const badKey = await rejects(refresh(w.session.id, '04' + '00'.repeat(64)), 'INVALID_CLIENT_PUBLIC_KEY');
    expect(JSON.stringify(badKey.details)).toContain('clientPublicKey');
    await rejects(refresh(w.session.id, ''), 'INVALID_CLIENT_PUBLIC_KEY');
    await rejects(h.client.refreshSession({ platformId, sessionId: w.session.id, clientPublicKey: key, signed: { bodyJson: '{' } }), 'INVALID_INPUT');
    await rejects(refresh(w.session.id.replace(/.{4}$/, '0000'), key), 'SESSION_NOT_FOUND');
    // Another platform's session answers exactly like an unknown one, on both steps.
    const theirs = await wallet(undefined, otherPlatformId);
    await rejects(refresh(theirs.session.id, key), 'SESSION_NOT_FOUND');
    const ch = (await refresh(theirs.session.id, key, {}, otherPlatformId)).signingChallenge!;
    await rejects(refresh(theirs.session.id, key, { signature: stamp(ch.payloadToSign, theirs.sessionKey), requestId: ch.requestId }), 'SESSION_NOT_FOUND');
    expect(await sessionIds(w.accountId)).toEqual([w.session.id]);
    expect((await h.client.listSessions({ platformId: otherPlatformId, accountId: theirs.accountId })).sessions.map((s) => s.id)).toEqual([theirs.session.id]);
  });

  it('an expired or revoked session cannot be refreshed (401 SESSION_NOT_ACTIVE), on either step', async () => {
    const w = await wallet();
    const key = generateKeyPair().publicKey;
    const ch = (await refresh(w.session.id, key)).signingChallenge!;
    h.clock.advance(15 * 60_000);
    await rejects(refresh(w.session.id, key), 'SESSION_NOT_ACTIVE');
    await rejects(refresh(w.session.id, key, { signature: stamp(ch.payloadToSign, w.sessionKey), requestId: ch.requestId }), 'SESSION_NOT_ACTIVE');
    h.clock.set(Date.now());

    const v = await wallet();
    const rv = (await h.client.revokeSession({ platformId, sessionId: v.session.id, signed: { bodyJson: '' } })).signingChallenge!;
    const ch2 = (await refresh(v.session.id, key)).signingChallenge!;
    await h.client.revokeSession({ platformId, sessionId: v.session.id, signed: { bodyJson: '', signature: stamp(rv.payloadToSign, v.sessionKey), requestId: rv.requestId } });
    await rejects(refresh(v.session.id, key), 'SESSION_NOT_ACTIVE');
    await rejects(refresh(v.session.id, key, { signature: 'sandbox-valid-signature', requestId: ch2.requestId }), 'SESSION_NOT_ACTIVE');
    expect(await sessionIds(v.accountId)).toEqual([]);
    // The request id was not consumed by the refused retry.
    const { rows } = await h.sql.query('SELECT consumed_at FROM signing_request WHERE request_id = $1', [ch2.requestId]);
    expect(rows[0].consumed_at).toBeNull();
  });
});

describe('wallet-auth: 409 EMAIL_OTP_EMAIL_ALREADY_EXISTS on an email update', () => {
  let h: Harness;
  let platformId: string;
  let otherPlatformId: string;

  beforeAll(async () => {
    h = await startWalletAuth('email');
    platformId = (await h.platform('SANDBOX')).id;
    otherPlatformId = (await h.platform('SANDBOX')).id;
  }, 60_000);
  afterAll(async () => h?.stop());

  async function credential(email: string, platform = platformId) {
    const { authMethod } = await h.client.createCredential({ platformId: platform, accountId: newAccountId(), type: T.EMAIL_OTP, email, signed: { bodyJson: '' } });
    return authMethod!;
  }
  const update = (credentialId: string, email: string, signed: Partial<pb.SignedRetry> = {}) =>
    h.client.updateCredential({ platformId, credentialId, email, signed: { bodyJson: JSON.stringify({ email }), ...signed } });
  const emailOf = async (id: string) => (await h.sql.query('SELECT email FROM auth_method WHERE id = $1', [id])).rows[0].email;

  it('refuses an address a live EMAIL_OTP credential of the platform has (this or another account, any case), before and at the signed retry', async () => {
    const a = await credential('ana@mail.test');
    await credential('bob@mail.test');
    const e = await rejects(update(a.id, 'BOB@mail.test'), 'EMAIL_OTP_EMAIL_ALREADY_EXISTS');
    expect(e.kind).toBe('ALREADY_EXISTS');
    await rejects(update(a.id, 'ana@mail.test'), 'EMAIL_OTP_EMAIL_ALREADY_EXISTS');

    // Free when the challenge is issued, taken before the retry: refused at the retry, nothing changes.
    const ch = (await update(a.id, 'cy@mail.test')).signingChallenge!;
    await credential('cy@mail.test');
    await rejects(update(a.id, 'cy@mail.test', { signature: 'sandbox-valid-signature', requestId: ch.requestId }), 'EMAIL_OTP_EMAIL_ALREADY_EXISTS');
    expect(await emailOf(a.id)).toBe('ana@mail.test');
  });

  it('another platform’s credentials do not hold an address', async () => {
    await credential('dee@mail.test', otherPlatformId);
    const a = await credential('eve@mail.test');
    const ch = (await update(a.id, 'dee@mail.test')).signingChallenge!;
    const ok = await update(a.id, 'dee@mail.test', { signature: 'sandbox-valid-signature', requestId: ch.requestId });
    expect(ok.authMethod).toMatchObject({ id: a.id, nickname: 'dee@mail.test' });
    expect(await emailOf(a.id)).toBe('dee@mail.test');
  });
});
