/**
 * Embedded-wallet credentials of a production platform through the real
 * processes: a random OTP delivered over real SMTP (captured by an smtp-server
 * started here), and OIDC tokens verified against a JWKS served on loopback —
 * stale, replayed and wrongly signed tokens refused; magic values refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { SignJWT, exportJWK, generateKeyPair as joseKeyPair } from 'jose';
import { eventually, freePort } from '@sluice/testing';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import { apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

describe('embedded-wallet credentials of a production platform', () => {
  let e2e: E2eStack;
  let client: Api;
  let smtp: SMTPServer;
  let jwksServer: Server;
  let issuer: string;
  const mails: string[] = [];
  const cred = newCredential();
  let signingKey: CryptoKey;
  let otherKey: CryptoKey;

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });

  const token = (key: CryptoKey, iatOffsetSeconds = 0, audience = 'wallet-app') =>
    new SignJWT({ email: 'grace@idp.test' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject('grace')
      .setIssuedAt(Math.floor(Date.now() / 1000) - iatOffsetSeconds)
      .setExpirationTime('10m')
      .setJti(randomBytes(8).toString('hex'))
      .sign(key);

  beforeAll(async () => {
    const smtpPort = await freePort();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, cb) {
        let data = '';
        stream.on('data', (c) => (data += c));
        stream.on('end', () => {
          mails.push(data);
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(smtpPort, '127.0.0.1', r));

    const keys = await joseKeyPair('ES256');
    signingKey = keys.privateKey as CryptoKey;
    otherKey = (await joseKeyPair('ES256')).privateKey as CryptoKey;
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const jwksPort = await freePort();
    issuer = `http://127.0.0.1:${jwksPort}`;
    jwksServer = createServer((req, res) =>
      req.url === '/jwks'
        ? res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))
        : res.writeHead(404).end(),
    );
    await new Promise<void>((r) => jwksServer.listen(jwksPort, '127.0.0.1', r));

    e2e = await startE2eStack(
      'e2eprod',
      { production: cred },
      {
        appEnv: {
          'wallet-auth': {
            SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
            SMTP_FROM: 'Wallet <wallet@sluice.test>',
          },
        },
      },
    );
    client = apiClient(e2e.stack, cred);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => smtp?.close(() => r(undefined)));
    await new Promise((r) => jwksServer?.close(r));
  });

  it('emails a random OTP, verifies OIDC tokens against the issuer JWKS, and accepts no magic value', async () => {
    const cfg = await api('PATCH', '/config', {
      umaDomain: 'wallet.example.test',
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'USDC' }],
      embeddedWalletConfig: {
        currencies: ['USDC'],
        appName: 'Prod Wallet',
        otpLength: 8,
        oidcIssuers: [{ issuer, jwksUri: `${issuer}/jwks`, audiences: ['wallet-app'] }],
      },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const customer = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'prod-1',
      email: 'grace@example.test',
      currencies: ['USD'],
    });
    expect(customer.status, customer.text).toBe(201);
    const wallet = (
      await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customer.json.id)}&type=EMBEDDED_WALLET`,
      )
    ).json.data[0];

    // EMAIL_OTP: the code arrives by SMTP; it has the configured length; the sandbox code does nothing.
    const otpCred = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'EMAIL_OTP',
      email: 'grace@example.test',
    });
    expect(otpCred.status, otpCred.text).toBe(201);
    const mail = await eventually(async () => mails.find((m) => m.includes('grace@example.test')), 20_000);
    const code = /verification code is (\d+)/.exec(mail.replace(/=\r?\n/g, ''))?.[1];
    expect(code).toMatch(/^\d{8}$/);
    const keys1 = generateKeyPair();
    const magic = await api('POST', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: '00000000',
      clientPublicKey: keys1.publicKey,
    });
    expect(magic.status).toBe(401);
    expect(magic.json.reason).toBe('Invalid OTP code');
    const s1 = await api('POST', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: code,
      clientPublicKey: keys1.publicKey,
    });
    expect(s1.status, s1.text).toBe(200);
    const session1 = await decryptSessionBundle(s1.json.encryptedSessionSigningKey, keys1.privateKey);
    // A code works once.
    const again = await api('POST', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}/verify`, {
      type: 'EMAIL_OTP',
      otp: code,
      clientPublicKey: generateKeyPair().publicKey,
    });
    expect(again.status).toBe(401);

    // OAUTH as a second credential: a token signed by the issuer's key, added through a real stamp.
    const createToken = await token(signingKey);
    const step1 = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'OAUTH',
      oidcToken: createToken,
    });
    expect(step1.status, step1.text).toBe(202);
    const sandboxSig = await api(
      'POST',
      '/auth/credentials',
      { accountId: wallet.id, type: 'OAUTH', oidcToken: createToken },
      { 'Service-Wallet-Signature': 'sandbox-valid-signature', 'Request-Id': step1.json.requestId },
    );
    expect(sandboxSig.status).toBe(401);
    const step1b = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'OAUTH',
      oidcToken: createToken,
    });
    const created = await api(
      'POST',
      '/auth/credentials',
      { accountId: wallet.id, type: 'OAUTH', oidcToken: createToken },
      {
        'Service-Wallet-Signature': stamp(step1b.json.payloadToSign, session1),
        'Request-Id': step1b.json.requestId,
      },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.json.nickname).toBe('grace@idp.test');

    const verify = (oidcToken: string) =>
      api('POST', `/auth/credentials/${encodeURIComponent(created.json.id)}/verify`, {
        type: 'OAUTH',
        oidcToken,
        clientPublicKey: generateKeyPair().publicKey,
      });
    // In production the sandbox literal is not even a JWT: malformed input, and no session.
    const magicToken = await verify('sandbox-valid-oidc-token');
    expect(magicToken.status, magicToken.text).toBe(400);
    expect(magicToken.json.code).toBe('INVALID_INPUT');
    expect(magicToken.json.details.errors[0].field).toBe('oidcToken');
    for (const [name, t] of [
      ['stale iat', await token(signingKey, 120)],
      ['foreign signature', await token(otherKey)],
      ['wrong audience', await token(signingKey, 0, 'someone-else')],
      ['replayed token', createToken],
    ] as const) {
      const r = await verify(t);
      expect(r.status, name).toBe(401);
      expect(r.json.reason, name).toBe('Invalid OIDC token');
    }
    // The OIDC login: a fresh token signed by the issuer opens a session whose key is HPKE-sealed to
    // this client's key only; opened, it signs wallet actions (here: revoking the OTP credential).
    const client2 = generateKeyPair();
    const fresh = await api('POST', `/auth/credentials/${encodeURIComponent(created.json.id)}/verify`, {
      type: 'OAUTH',
      oidcToken: await token(signingKey),
      clientPublicKey: client2.publicKey,
    });
    expect(fresh.status, fresh.text).toBe(200);
    const oidcSession = await decryptSessionBundle(fresh.json.encryptedSessionSigningKey, client2.privateKey);
    expect(oidcSession).toMatch(/^[0-9a-f]{64}$/);
    await expect(
      decryptSessionBundle(fresh.json.encryptedSessionSigningKey, generateKeyPair().privateKey),
    ).rejects.toThrow();
    const revoke1 = await api('DELETE', `/auth/credentials/${encodeURIComponent(otpCred.json.id)}`);
    expect(revoke1.status, revoke1.text).toBe(202);
    const revoked = await api(
      'DELETE',
      `/auth/credentials/${encodeURIComponent(otpCred.json.id)}`,
      undefined,
      {
        'Service-Wallet-Signature': stamp(revoke1.json.payloadToSign, oidcSession),
        'Request-Id': revoke1.json.requestId,
      },
    );
    expect(revoked.status, revoked.text).toBe(204);
    const left = await api('GET', `/auth/credentials?accountId=${encodeURIComponent(wallet.id)}`);
    expect(left.json.data.map((c: { id: string }) => c.id)).toEqual([created.json.id]);
  });
});
