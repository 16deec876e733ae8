/**
 * Passkeys for real: a production platform, headless Chromium with the DevTools
 * WebAuthn virtual authenticator creating and using the credential, and the
 * service verifying the attestation and assertion with @simplewebauthn/server
 * (no magic values in production). The session key then signs a signed retry
 * with a real P-256 stamp, while the sandbox header value is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '@sluice/testing';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import { apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs Chromium (.ci/run); elsewhere the suite runs when it is there.
const run = existsSync(CHROMIUM) || process.env.CI === 'true' ? describe : describe.skip;

const b64url = (b: Buffer) => b.toString('base64url');

run('passkeys in a real browser against a production platform', () => {
  let e2e: E2eStack;
  let client: Api;
  let browser: Browser;
  let page: Page;
  let site: Server;
  let origin: string;
  const cred = newCredential();

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    site = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>wallet</title>'),
    );
    await new Promise<void>((r) => site.listen(port, '127.0.0.1', r));
    e2e = await startE2eStack('e2epasskey', { production: cred });
    client = apiClient(e2e.stack, cred);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage();
    await page.goto(origin + '/');
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await e2e?.stop();
    await new Promise((r) => site?.close(r));
  });

  it('registers and logs in with a WebAuthn passkey, then signs with the session key', async () => {
    const cfg = await api('PATCH', '/config', {
      umaDomain: 'wallet.example.test',
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'USDC' }],
      embeddedWalletConfig: {
        currencies: ['USDC'],
        appName: 'Passkey E2E',
        passkey: { rpId: 'localhost', origins: [origin] },
      },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const customer = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'pk-user',
      currencies: ['USD'],
    });
    expect(customer.status, customer.text).toBe(201);
    const wallets = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.json.id)}&type=EMBEDDED_WALLET`,
    );
    const wallet = wallets.json.data[0];
    expect(wallet?.type).toBe('EMBEDDED_WALLET');

    // Registration: the integrator's backend issues the challenge; the browser creates the credential.
    const regChallenge = b64url(randomBytes(32));
    const attestation = await page.evaluate(async (challenge) => {
      const dec = (s: string) =>
        Uint8Array.from(
          atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)),
          (c) => c.charCodeAt(0),
        );
      const enc = (b: ArrayBuffer) =>
        btoa(String.fromCharCode(...new Uint8Array(b)))
          .replace(/\+/g, '-')
          .replace(/\//g, '_')
          .replace(/=+$/, '');
      const c = (await navigator.credentials.create({
        publicKey: {
          challenge: dec(challenge),
          rp: { id: 'localhost', name: 'Passkey E2E' },
          user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'pk-user', displayName: 'PK User' },
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
          authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
          attestation: 'none',
        },
      })) as PublicKeyCredential;
      const r = c.response as AuthenticatorAttestationResponse;
      return {
        credentialId: enc(c.rawId),
        clientDataJson: enc(r.clientDataJSON),
        attestationObject: enc(r.attestationObject),
        transports: r.getTransports(),
      };
    }, regChallenge);

    // A registration answered for another challenge is refused and stores nothing.
    const forged = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'PASSKEY',
      nickname: 'laptop',
      challenge: b64url(randomBytes(32)),
      attestation,
    });
    expect(forged.status).toBe(400);
    const created = await api('POST', '/auth/credentials', {
      accountId: wallet.id,
      type: 'PASSKEY',
      nickname: 'laptop',
      challenge: regChallenge,
      attestation,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      type: 'PASSKEY',
      nickname: 'laptop',
      credentialId: attestation.credentialId,
    });

    // Login: /challenge binds the client key; the browser signs that challenge.
    const keys = generateKeyPair();
    const ch = await api('POST', `/auth/credentials/${encodeURIComponent(created.json.id)}/challenge`, {
      clientPublicKey: keys.publicKey,
    });
    expect(ch.status, ch.text).toBe(200);
    const assertion = await page.evaluate(
      async ({ challenge, credentialId }) => {
        const dec = (s: string) =>
          Uint8Array.from(
            atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)),
            (c) => c.charCodeAt(0),
          );
        const enc = (b: ArrayBuffer) =>
          btoa(String.fromCharCode(...new Uint8Array(b)))
            .replace(/\+/g, '-')
            .replace(/\//g, '_')
            .replace(/=+$/, '');
        const c = (await navigator.credentials.get({
          publicKey: {
            challenge: dec(challenge),
            rpId: 'localhost',
            allowCredentials: [{ type: 'public-key', id: dec(credentialId) }],
            userVerification: 'preferred',
          },
        })) as PublicKeyCredential;
        const r = c.response as AuthenticatorAssertionResponse;
        return {
          credentialId: enc(c.rawId),
          clientDataJson: enc(r.clientDataJSON),
          authenticatorData: enc(r.authenticatorData),
          signature: enc(r.signature),
          ...(r.userHandle ? { userHandle: enc(r.userHandle) } : {}),
        };
      },
      { challenge: ch.json.challenge as string, credentialId: ch.json.credentialId as string },
    );
    // The sandbox magic value means nothing to a production platform.
    const magic = await api(
      'POST',
      `/auth/credentials/${encodeURIComponent(created.json.id)}/verify`,
      { type: 'PASSKEY', assertion: { ...assertion, signature: 'sandbox-valid-passkey-signature' } },
      { 'Request-Id': ch.json.requestId },
    );
    expect(magic.status).toBe(401);
    // The challenge is single-use (the failed attempt consumed it): get a fresh one for the real assertion.
    const ch2 = await api('POST', `/auth/credentials/${encodeURIComponent(created.json.id)}/challenge`, {
      clientPublicKey: keys.publicKey,
    });
    const assertion2 = await page.evaluate(
      async ({ challenge, credentialId }) => {
        const dec = (s: string) =>
          Uint8Array.from(
            atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)),
            (c) => c.charCodeAt(0),
          );
        const enc = (b: ArrayBuffer) =>
          btoa(String.fromCharCode(...new Uint8Array(b)))
            .replace(/\+/g, '-')
            .replace(/\//g, '_')
            .replace(/=+$/, '');
        const c = (await navigator.credentials.get({
          publicKey: {
            challenge: dec(challenge),
            rpId: 'localhost',
            allowCredentials: [{ type: 'public-key', id: dec(credentialId) }],
            userVerification: 'preferred',
          },
        })) as PublicKeyCredential;
        const r = c.response as AuthenticatorAssertionResponse;
        return {
          credentialId: enc(c.rawId),
          clientDataJson: enc(r.clientDataJSON),
          authenticatorData: enc(r.authenticatorData),
          signature: enc(r.signature),
        };
      },
      { challenge: ch2.json.challenge as string, credentialId: ch2.json.credentialId as string },
    );
    const session = await api(
      'POST',
      `/auth/credentials/${encodeURIComponent(created.json.id)}/verify`,
      { type: 'PASSKEY', assertion: assertion2 },
      { 'Request-Id': ch2.json.requestId },
    );
    expect(session.status, session.text).toBe(200);
    const sessionKey = await decryptSessionBundle(session.json.encryptedSessionSigningKey, keys.privateKey);
    // Replaying the same assertion is refused.
    const replay = await api(
      'POST',
      `/auth/credentials/${encodeURIComponent(created.json.id)}/verify`,
      { type: 'PASSKEY', assertion: assertion2 },
      { 'Request-Id': ch2.json.requestId },
    );
    expect(replay.status).toBe(401);

    // Production signed retry: the sandbox header value is refused, a real stamp works.
    const step1 = await api('PATCH', `/internal-accounts/${encodeURIComponent(wallet.id)}`, {
      privateEnabled: true,
    });
    expect(step1.status, step1.text).toBe(202);
    const sandboxHeader = await api(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: true },
      { 'Service-Wallet-Signature': 'sandbox-valid-signature', 'Request-Id': step1.json.requestId },
    );
    expect(sandboxHeader.status).toBe(401);
    const step1b = await api('PATCH', `/internal-accounts/${encodeURIComponent(wallet.id)}`, {
      privateEnabled: true,
    });
    const step2 = await api(
      'PATCH',
      `/internal-accounts/${encodeURIComponent(wallet.id)}`,
      { privateEnabled: true },
      {
        'Service-Wallet-Signature': stamp(step1b.json.payloadToSign, sessionKey),
        'Request-Id': step1b.json.requestId,
      },
    );
    expect(step2.status, step2.text).toBe(200);
    expect(step2.json.privateEnabled).toBe(true);
  });
});
